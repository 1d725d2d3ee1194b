/**
 * Context management for LangGraph's prebuilt ReAct agent: a `preModelHook` that runs the turn module
 * (`@ctxlog/turn`) on the thread's messages and gives the model what the turn rendered.
 *
 * `createReactAgent({ llm, tools, preModelHook: ctxlogPreModelHook({ sqlite: "agent.db" }) })` runs the
 * hook before every model call. The hook puts the thread's new messages into a ctxlog stream — a user
 * message starts a turn (`Turn.prepare`), a model answer goes in with its tool results (`Turn.complete`)
 * — then renders the window (`Turn.render`: compaction tiers, seams, the fit to the model's window, and a
 * rebuildable `PromptRendered`) and returns it as `llmInputMessages`, which the agent sends instead of
 * `messages`. The thread's `messages` stay as they are: compaction changes what the model sees, not the
 * graph's state. `ctxlog render <stream> --db agent.db` rebuilds every request the model saw.
 *
 * @since 0.1.0
 */
import {
  type Context,
  type ContextOptions,
  CtxlogError,
  createContext,
  type ModelCallSpan,
  type TurnHandle,
  type TurnPolicy
} from "@ctxlog/client"
import { ContextService, type LanguageModel, Message, Window } from "@ctxlog/core"
import { fromLangChain, fromLangChainFormat, type LangChainRequest } from "@ctxlog/providers/langchain"
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type UsageMetadata
} from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import type { StructuredToolInterface } from "@langchain/core/tools"
import { convertToOpenAITool } from "@langchain/core/utils/function_calling"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** Where the hook's stream is: the thread id and checkpoint namespace of the call's config. @since 0.1.0 */
export interface ThreadRef {
  readonly threadId: string
  readonly checkpointNs: string
}

/** Options of {@link ctxlogPreModelHook}: where the log is (as `createContext`, or an open context), and the turn's policy. @since 0.1.0 */
export type PreModelHookOptions = (ContextOptions | { readonly context: Context }) & {
  /** The turn policy (default: the `default` builder for `model`, `contextWindow`, the default compaction tiers). */
  readonly policy?: TurnPolicy | undefined
  /** The model's name, for the default policy (default `langgraph`). */
  readonly model?: string | undefined
  /** The model's context window, for the default policy (default: the builder's default). */
  readonly contextWindow?: number | undefined
  /**
   * The agent's tools: their schemas go in every render (the budget counts them, `PromptRendered`
   * records them). Give the agent's `tools` here.
   */
  readonly tools?: ReadonlyArray<StructuredToolInterface> | undefined
  /** The system prompt of a new stream (instead of `createReactAgent`'s `prompt`, which the budget would not see). */
  readonly system?: string | undefined
  /** The stream of a thread (default {@link contextStream}). */
  readonly stream?: ((thread: ThreadRef) => string) | undefined
  /**
   * The model's provider on its chat spans (`gen_ai.provider.name`: `openai`, `anthropic`, ...), with a
   * `tracerProvider` (default: the policy's builder provider). @since 0.8.0
   */
  readonly provider?: string | undefined
}

/** The hook's update: the rendered window, which the agent sends to the model instead of `messages`. @since 0.1.0 */
export interface PreModelHookUpdate {
  readonly llmInputMessages: Array<BaseMessage>
}

/** A LangGraph node: `preModelHook` of `createReactAgent`, with the stream naming and the context it opened. @since 0.1.0 */
export interface CtxlogPreModelHook {
  (state: { readonly messages: ReadonlyArray<BaseMessage> }, config?: RunnableConfig): Promise<PreModelHookUpdate>
  /**
   * `postModelHook` of `createReactAgent`: a final answer (no tool calls) goes into the stream at once
   * and ends the turn, instead of with the next user message. Changes nothing in the graph's state.
   */
  readonly postModelHook: (
    state: { readonly messages: ReadonlyArray<BaseMessage> },
    config?: RunnableConfig
  ) => Promise<Record<string, never>>
  /** The stream of the thread a config names. */
  readonly streamOf: (config: RunnableConfig | undefined) => string
  /** Close the context the hook opened (an open context given as `context` is left open); the next call reopens. */
  readonly close: () => Promise<void>
}

/** The default stream of a thread: `<thread_id>/model` (and the namespace, when there is one): what the model saw. @since 0.1.0 */
export const contextStream = (thread: ThreadRef): string =>
  thread.checkpointNs === "" ? `${thread.threadId}/model` : `${thread.threadId}/${thread.checkpointNs}/model`

/** The thread a config names; a call without `configurable.thread_id` is refused. @since 0.1.0 */
export const threadOf = (config: RunnableConfig | undefined): ThreadRef => {
  const configurable = config?.configurable ?? {}
  const threadId: unknown = configurable.thread_id
  if (typeof threadId !== "string" && typeof threadId !== "number") {
    throw new CtxlogError(
      "InvalidInput",
      "ctxlogPreModelHook: config.configurable.thread_id is missing (the hook keeps one stream per thread)",
      undefined
    )
  }
  const ns: unknown = configurable.checkpoint_ns
  return { threadId: String(threadId), checkpointNs: typeof ns === "string" ? graphNamespace(ns) : "" }
}

/**
 * The namespace of the graph a node runs in, as its checkpointer names it: inside a node LangGraph's
 * `checkpoint_ns` ends with the node's own task (`pre_model_hook:<task id>`), and a subgraph's segments
 * carry task ids (`agent:<task id>|…`) that change from run to run. Both are dropped, so a thread keeps
 * one stream across runs.
 */
const graphNamespace = (ns: string): string => {
  if (ns === "") return ""
  const segments = ns.split("|")
  const own = segments.at(-1)?.includes(":") === true ? segments.slice(0, -1) : segments
  return own.map((segment) => segment.split(":")[0] ?? segment).join("|")
}

/** The usage an `AIMessage` reports (`usage_metadata`), as ctxlog records it. @since 0.1.0 */
export const usageOf = (usage: UsageMetadata | undefined): LanguageModel.Usage | undefined =>
  usage === undefined
    ? undefined
    : {
        inputTokens: usage.input_tokens,
        outputTokens: usage.output_tokens,
        cacheReadTokens: usage.input_token_details?.cache_read ?? 0,
        cacheWriteTokens: usage.input_token_details?.cache_creation ?? 0
      }

type Json = Message.JsonValue

/** The schema of a LangChain tool as a render's tool spec (OpenAI's function format underneath). */
const toolSpecOf = (tool: StructuredToolInterface) => {
  const spec = convertToOpenAITool(tool).function
  const parameters: unknown = JSON.parse(JSON.stringify(spec.parameters ?? {}))
  return {
    name: spec.name,
    description: spec.description ?? "",
    inputSchema: (typeof parameters === "object" && parameters !== null && !Array.isArray(parameters)
      ? parameters
      : {}) as { readonly [key: string]: Json }
  }
}

/** The policy of the hook: the given one, or the default, with the tools' schemas added to its render. */
const policyOf = (options: PreModelHookOptions): TurnPolicy => {
  const given = options.policy?.builder.format
  if (given !== undefined && given !== "langchain") {
    throw new CtxlogError(
      "InvalidInput",
      `ctxlogPreModelHook: policy.builder.format is "${given}"; the hook hands the model LangChain messages (format "langchain", or leave it out)`,
      undefined
    )
  }
  const base: TurnPolicy = options.policy ?? {
    builder: {
      provider: "default",
      model: options.model ?? "langgraph",
      // The builder config is recorded (`TurnPolicySet`) and its schema's optionals are exact.
      ...(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow })
    },
    compaction: {}
  }
  const tools = (options.tools ?? []).map(toolSpecOf)
  // The render is the prompt: the builder's render in LangChain's form is what the hook returns.
  const formatted: TurnPolicy = { ...base, builder: { ...base.builder, format: "langchain" } }
  return tools.length === 0 ? formatted : { ...formatted, render: { ...formatted.render, tools } }
}

const isLangChainRequest = (request: unknown): request is LangChainRequest =>
  typeof request === "object" &&
  request !== null &&
  Reflect.get(request, "format") === "langchain" &&
  Array.isArray(Reflect.get(request, "messages"))

const converted = (messages: ReadonlyArray<BaseMessage>, at: number): ReadonlyArray<Message.MessageInput> => {
  const result = fromLangChain(messages)
  if (Either.isLeft(result)) {
    throw new CtxlogError(
      result.left._tag,
      `state.messages[${at + result.left.index}]: ${result.left.detail}`,
      result.left
    )
  }
  return result.right
}

/** The result a tool call gets when the thread went on without one. */
const notRun =
  "not run: the thread went on without this tool call's result (an interrupt that was not resumed, or a step that skipped the tool)"

/** What the hook knows of one thread in this process: how many of its messages the stream holds. */
interface ThreadState {
  known: number
  lastId: string | undefined
  /** The thread's turn session (`Turn.open` through the client's handle): it counts the model calls of a turn. */
  turn: TurnHandle
  lastEstimate: number
}

/** The text of an answer's parts (what tells a recorded answer from another: answers keep no LangChain id). */
const answerText = (parts: ReadonlyArray<Message.Part>): string =>
  parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")

/**
 * The index past the last message of `messages` the stream already holds, for a process that has not
 * seen the thread yet (a restart) or whose thread changed under it (time travel): a user message whose
 * id the window holds, or a tool result whose call the window has completed. A model answer goes into
 * the log with its results, or, without tool calls, from the post-model hook or with the next user
 * message: an answer without tool calls right after that point is held when it is the window's newest
 * message, with the same text.
 */
const resumePoint = (window: Window.Window, messages: ReadonlyArray<BaseMessage>): number => {
  let completed: ReadonlySet<string> | undefined
  let point = 0
  for (let index = messages.length - 1; index >= 0 && point === 0; index--) {
    const message = messages[index]
    if (message === undefined) continue
    if (HumanMessage.isInstance(message) && typeof message.id === "string") {
      if (Window.findMessage(window, message.id) !== undefined) point = index + 1
    } else if (ToolMessage.isInstance(message)) {
      completed ??= new Set(window.completedToolIds)
      if (completed.has(message.tool_call_id)) point = index + 1
    }
  }
  const next = messages[point]
  const newest = window.history.at(-1)
  if (
    next !== undefined &&
    AIMessage.isInstance(next) &&
    (next.tool_calls ?? []).length === 0 &&
    newest?.role === "assistant" &&
    Message.toolCallsOf(newest).length === 0
  ) {
    const [answer] = converted([next], point)
    if (answer !== undefined && answerText(answer.parts) === answerText(newest.parts)) return point + 1
  }
  return point
}

/**
 * What a model call answered, from its `AIMessage`: the response id (`response_metadata.id`, else the
 * message's id, which LangChain's provider packages set to the provider's), the model
 * (`response_metadata.model_name`), the finish reason (`finish_reason` or `stop_reason`, else from the
 * tool calls) and the usage.
 */
const answerOf = (message: AIMessage) => {
  const metadata: Readonly<Record<string, unknown>> = message.response_metadata ?? {}
  const text = (key: string): string | undefined => {
    const value = metadata[key]
    return typeof value === "string" && value.length > 0 ? value : undefined
  }
  const called = (message.tool_calls ?? []).length > 0
  return {
    id: text("id") ?? message.id,
    model: text("model_name") ?? text("model"),
    finishReason: text("finish_reason") ?? text("stop_reason") ?? (called ? "tool_calls" : "stop"),
    usage: usageOf(message.usage_metadata),
    parts: converted([message], 0)[0]?.parts ?? []
  }
}

/** The leading system messages of a thread: the system prompt of its stream. */
const leadingSystem = (messages: ReadonlyArray<BaseMessage>): number => {
  let end = 0
  while (end < messages.length && SystemMessage.isInstance(messages[end])) end++
  return end
}

/**
 * A `preModelHook` for `createReactAgent` (`@langchain/langgraph/prebuilt`) that runs the turn module on
 * the thread's messages, one ctxlog stream per thread (see {@link contextStream}):
 *
 * 1. The messages the stream does not hold yet go in: a model answer with the tool results after it
 *    (`Turn.complete`; an answer without tool calls ends the turn), user messages (`Turn.prepare`).
 *    A new stream first takes the thread's leading system messages (or `system`) as its system prompt.
 * 2. The window is rendered (`Turn.render`) and returned as `llmInputMessages`.
 *
 * One hook serves many threads; the calls of one thread come one after another, as the agent makes them.
 * A LangChain message the adapter cannot carry, or a policy the turn refuses, rejects with a `CtxlogError`
 * naming it, and nothing is written.
 *
 * ```ts
 * const preModelHook = ctxlogPreModelHook({ sqlite: "agent.db", tools, contextWindow: 128_000 })
 * const agent = createReactAgent({ llm, tools, preModelHook, checkpointer: new CtxlogSaver({ sqlite: "agent.db" }) })
 * ```
 * @since 0.1.0
 */
export const ctxlogPreModelHook = (options: PreModelHookOptions): CtxlogPreModelHook => {
  const policy = policyOf(options)
  const given = "context" in options ? options.context : undefined
  let opened: Promise<Context> | undefined
  const open = (): Promise<Context> => {
    if (given !== undefined) return Promise.resolve(given)
    if (opened === undefined) {
      const {
        policy: _policy,
        model: _model,
        contextWindow: _window,
        tools: _tools,
        system: _system,
        stream: _stream,
        ...contextOptions
      } = options as ContextOptions & PreModelHookOptions
      opened = createContext(contextOptions as ContextOptions)
      // A failed open is not kept: the next call tries again.
      opened.catch(() => {
        opened = undefined
      })
    }
    return opened
  }
  const threads = new Map<string, ThreadState>()
  // The chat span of each thread's model call: opened with the render, ended by `postModelHook`.
  const spans = new Map<string, ModelCallSpan>()
  const builder = policy.builder as { readonly provider: string; readonly model?: string }
  const target = {
    provider: options.provider ?? builder.provider,
    model: builder.model ?? options.model ?? "langgraph"
  }
  const streamOf = (config: RunnableConfig | undefined) => (options.stream ?? contextStream)(threadOf(config))

  const hook = async (
    state: { readonly messages: ReadonlyArray<BaseMessage> },
    config?: RunnableConfig
  ): Promise<PreModelHookUpdate> => {
    const stream = streamOf(config)
    const context = await open()
    const messages = state.messages
    const system = leadingSystem(messages)

    let thread = threads.get(stream)
    const current = thread
    const stillOurs =
      current !== undefined &&
      current.known <= messages.length &&
      (current.known === 0 || messages[current.known - 1]?.id === current.lastId)
    if (!stillOurs) {
      const window = await context.load(stream)
      if (window.history.length === 0 && window.system.length === 0) {
        const prompt =
          options.system !== undefined ? [Message.system(options.system)] : converted(messages.slice(0, system), 0)
        if (prompt.length > 0) {
          await context.runtime.runPromise(
            Effect.flatMap(ContextService.ContextService, (service) => service.setSystemPrompt(stream, prompt))
          )
        }
      }
      thread = {
        known: Math.max(system, resumePoint(window, messages)),
        lastId: undefined,
        turn: context.turn(stream, policy),
        lastEstimate: 0
      }
      threads.set(stream, thread)
    }
    if (thread === undefined) throw new CtxlogError("Defect", "ctxlogPreModelHook: no thread state", undefined)
    const turn = thread.turn

    // The new messages, in runs: an answer with the tool results after it, or input for the turn.
    let at = thread.known
    while (at < messages.length) {
      const head = messages[at]
      if (head !== undefined && AIMessage.isInstance(head)) {
        let end = at + 1
        while (end < messages.length && ToolMessage.isInstance(messages[end])) end++
        const [answer, ...tools] = converted(messages.slice(at, end), at)
        const parts = answer?.parts ?? []
        const given = tools.flatMap((input) =>
          input.parts.filter((part): part is Message.ToolResultPart => part.type === "tool_result")
        )
        // A call the thread has no result for (the run stopped at an interrupt() and went on without
        // resuming it, or a Command skipped the tool) is kept, answered as not run: the model is about
        // to be called, and a call without its result is a request no provider takes.
        const answered = new Set(given.map((result) => result.toolCallId))
        const results = [
          ...given,
          ...Message.toolCallsOf({ parts: answer?.parts ?? [] })
            .filter((call) => !answered.has(call.id))
            .map((call) => Message.toolResult(call.id, notRun, true))
        ]
        await turn.complete({
          answer: parts,
          results: results.length === 0 ? undefined : results,
          usage: usageOf(head.usage_metadata),
          estimatedInputTokens: thread.lastEstimate === 0 ? undefined : thread.lastEstimate,
          endTurn: Message.toolCallsOf({ parts }).length === 0
        })
        at = end
      } else {
        let end = at + 1
        while (end < messages.length && !AIMessage.isInstance(messages[end])) end++
        const input = messages.slice(at, end)
        // A user message starts the turn: the session renders at iteration 0 again.
        await turn.prepare(converted(input, at))
        at = end
      }
    }
    thread.known = messages.length
    thread.lastId = messages[messages.length - 1]?.id

    const rendered = await turn.render()
    thread.lastEstimate = rendered.stats.total
    if (!isLangChainRequest(rendered.request)) {
      throw new CtxlogError("Defect", "ctxlogPreModelHook: the render is not in the langchain format", undefined)
    }
    await spans.get(stream)?.fail(new CtxlogError("Superseded", "the model call had no postModelHook", undefined))
    spans.set(stream, context.modelCall(stream, rendered, target))
    return { llmInputMessages: fromLangChainFormat(rendered.request.messages) }
  }

  const postModelHook = async (
    state: { readonly messages: ReadonlyArray<BaseMessage> },
    config?: RunnableConfig
  ): Promise<Record<string, never>> => {
    const stream = streamOf(config)
    const thread = threads.get(stream)
    const messages = state.messages
    const last = messages.at(-1)
    const span = spans.get(stream)
    if (span !== undefined && last !== undefined && AIMessage.isInstance(last)) {
      spans.delete(stream)
      await span.end(answerOf(last))
    }
    // Only the answer to the render this process just made, and only a final one: an answer with tool
    // calls goes in with its results at the next pre-model call.
    if (
      thread === undefined ||
      last === undefined ||
      !AIMessage.isInstance(last) ||
      (last.tool_calls ?? []).length > 0 ||
      thread.known !== messages.length - 1 ||
      (thread.known > 0 && messages[thread.known - 1]?.id !== thread.lastId)
    ) {
      return {}
    }
    const [answer] = converted([last], messages.length - 1)
    const context = await open()
    await context.turn(stream, policy).complete({
      answer: answer?.parts ?? [],
      usage: usageOf(last.usage_metadata),
      estimatedInputTokens: thread.lastEstimate === 0 ? undefined : thread.lastEstimate,
      endTurn: true
    })
    thread.known = messages.length
    thread.lastId = last.id
    return {}
  }

  return Object.assign(hook, {
    postModelHook,
    streamOf,
    close: async () => {
      const context = opened
      opened = undefined
      threads.clear()
      spans.clear()
      if (context !== undefined) await (await context).close()
    }
  })
}
