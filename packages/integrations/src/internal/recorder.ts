/**
 * What the AI SDK middleware and the `prepareStep` helper share: one stream of one context, the turn
 * module under one policy, and the bookkeeping that tells the new messages of a caller's prompt from
 * the ones the log already holds.
 *
 * The caller's prompt is the whole conversation on every call. The recorder counts how many of its
 * messages (system messages aside) the log holds (`known`): the messages past that count are new. A
 * process that starts on a stream that already has history does not know the count, and a prompt
 * shorter than that count is not the whole conversation (ai 7's `response.messages` holds the last
 * step only); then the messages after the prompt's last assistant message are new (every answer went
 * into the log when it was recorded through this package).
 */
import {
  type Context,
  type ContextOptions,
  CtxlogError,
  createContext,
  type ModelCallSpan,
  type ModelCallTarget,
  type TurnPolicy,
  type TurnRender
} from "@ctxlog/client"
import { ContextService, type LanguageModel, Message, Window, type WindowEvent } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { type CtxlogOptions, defaultPolicy } from "../CtxlogOptions.js"

/** An answer the model gave that the log does not hold yet (it called tools whose results come next). */
interface Pending {
  readonly answer: ReadonlyArray<Message.Part>
  readonly usage: LanguageModel.Usage | undefined
  readonly estimatedInputTokens: number
}

/** One caller-side prompt message, converted: its ctxlog messages (a tool message may hold several results). */
export interface PromptMessage {
  readonly role: "user" | "assistant" | "tool" | "system"
  readonly messages: ReadonlyArray<Message.MessageInput>
}

const isToolResult = (part: Message.Part): part is Message.ToolResultPart => part.type === "tool_result"

/** A caller's cache breakpoint on one of its prompt messages. */
export interface PromptHint {
  readonly message: PromptMessage
  readonly ttl?: "5m" | "1h" | undefined
}

/**
 * What identifies a message between the caller's prompt and the log: its tool-result ids, else its
 * tool-call ids (both unique), else its role and text. Tool results are matched by id because the log
 * may hold a cut copy of their text.
 */
const keyOf = (message: { readonly role: string; readonly parts: ReadonlyArray<Message.Part> }): string => {
  const results = message.parts.filter(isToolResult).map((part) => part.toolCallId)
  if (results.length > 0) return `results:${results.join(",")}`
  const calls = Message.toolCallsOf(message).map((call) => call.id)
  if (calls.length > 0) return `calls:${calls.join(",")}`
  return `${message.role}:${Message.textOf(message)}`
}

/**
 * The caller's hints as window cache hints: each hinted prompt message (its last ctxlog message, for a
 * tool message that became several) is found in the window by {@link keyOf}, newest first. A hint on
 * a message the window does not hold (compacted, trimmed) places nothing.
 */
export const cacheHintsIn = (
  window: Window.Window,
  hints: ReadonlyArray<PromptHint>
): ReadonlyArray<WindowEvent.CacheHint> => {
  const all = Window.messages(window)
  const found: Array<WindowEvent.CacheHint> = []
  for (const hint of hints) {
    const last = hint.message.messages[hint.message.messages.length - 1]
    if (last === undefined) continue
    const key = keyOf(last)
    const match = all.findLast((message) => message.role === last.role && keyOf(message) === key)
    if (match !== undefined && !found.some((known) => known.messageId === match.id)) {
      found.push(hint.ttl === undefined ? { messageId: match.id } : { messageId: match.id, ttl: hint.ttl })
    }
  }
  return found
}

/** A render: the prompt it recorded (the `ai-sdk` format's), its window messages, the caller's cache hints it placed. */
export interface RenderedWindow {
  readonly prompt: ReadonlyArray<PromptJson>
  readonly messages: ReadonlyArray<Message.Message>
  readonly cacheHints: ReadonlyArray<WindowEvent.CacheHint>
  /** The render itself, for the model call's span. */
  readonly render: TurnRender
}

/** One message of an `ai-sdk` render's prompt, as JSON. */
export interface PromptJson {
  readonly role: string
  readonly content: Message.JsonValue
  readonly providerOptions?: { readonly [namespace: string]: Message.JsonValue }
}

/** The prompt of an `ai-sdk` render, or the error naming what the render was instead. */
const promptOf = (request: unknown): ReadonlyArray<PromptJson> => {
  if (
    typeof request === "object" &&
    request !== null &&
    "format" in request &&
    request.format === "ai-sdk" &&
    "prompt" in request &&
    Array.isArray(request.prompt)
  ) {
    return request.prompt as ReadonlyArray<PromptJson>
  }
  throw new CtxlogError(
    "InvalidRequest",
    'the render is not an ai-sdk prompt (the builder config of the policy needs format: "ai-sdk")',
    request
  )
}

/** The recorder of one stream. */
export class Recorder {
  private context: Promise<Context> | undefined
  private known: number | undefined
  private pending: Pending | undefined
  private iteration = 0
  private lastEstimate = 0

  constructor(private readonly options: CtxlogOptions) {}

  get stream(): string {
    return this.options.stream
  }

  open(): Promise<Context> {
    if (this.context === undefined) {
      const { stream: _stream, policy: _policy, contextWindow: _window, ...contextOptions } = this.options
      this.context = createContext(contextOptions as ContextOptions)
    }
    return this.context
  }

  /**
   * The policy of a call: the caller's (else the default for the model) with the call's render options,
   * its builder config in the `ai-sdk` format, so the render is the prompt the model receives.
   */
  policyFor(
    model: { readonly provider: string; readonly modelId: string },
    extra: Partial<TurnPolicy["render"]> = {}
  ): TurnPolicy {
    const given: TurnPolicy = this.options.policy ?? defaultPolicy(model, this.options.contextWindow)
    const base: TurnPolicy = { ...given, builder: { ...given.builder, format: "ai-sdk" } }
    const render = { ...base.render, ...extra }
    return Object.keys(render).length === 0 ? base : { ...base, render }
  }

  /**
   * Put the prompt's new messages in the log: the answer of the previous call with its tool results
   * (`Turn.complete`), then the rest, a user message first among them (`Turn.prepare`). Then render
   * the window (`Turn.render`, recorded) and return its messages in render order.
   */
  async ingestAndRender(
    prompt: ReadonlyArray<PromptMessage>,
    policy: TurnPolicy,
    hints: ReadonlyArray<PromptHint> = []
  ): Promise<RenderedWindow> {
    const context = await this.open()
    const turn = context.turn(this.stream, policy)
    const conversation = prompt.filter((message) => message.role !== "system")
    if (this.known === undefined) {
      const window = await context.load(this.stream)
      if (window.history.length === 0 && window.system.length === 0) {
        this.known = 0
        const system = prompt.filter((message) => message.role === "system").flatMap((message) => message.messages)
        if (system.length > 0) {
          const stream = this.stream
          await context.runtime.runPromise(
            Effect.flatMap(ContextService.ContextService, (service) => service.setSystemPrompt(stream, system))
          )
        }
      } else {
        // Every answer went in when it was given, except one whose tool calls waited for their results
        // (the process stopped in between, say for the user's approval): that one goes in now with them.
        const lastAssistant = conversation.map((message) => message.role).lastIndexOf("assistant")
        const answer = conversation[lastAssistant]?.messages.at(-1)
        const held =
          answer === undefined ||
          Window.messages(window).some((message) => message.role === "assistant" && keyOf(message) === keyOf(answer))
        this.known = held ? lastAssistant + 1 : lastAssistant
      }
    }
    // A prompt shorter than what the log holds is not the whole conversation (ai 7's
    // `response.messages` holds the last step only): its new messages are those after its last answer.
    const lastAnswer = conversation.map((message) => message.role).lastIndexOf("assistant")
    const fresh =
      conversation.length >= this.known
        ? conversation.slice(this.known)
        : await this.unheld(context, conversation.slice(lastAnswer + 1))
    let rest = fresh
    let prepared = false
    const head = fresh[0]
    if (head !== undefined && head.role === "assistant") {
      let end = 1
      while (end < fresh.length && fresh[end]?.role === "tool") end++
      const answer = this.pending?.answer ?? head.messages.flatMap((message) => message.parts)
      const results = fresh
        .slice(1, end)
        .flatMap((message) => message.messages.flatMap((input) => input.parts.filter(isToolResult)))
      await turn.complete({
        answer,
        results,
        usage: this.pending?.usage,
        estimatedInputTokens: this.pending?.estimatedInputTokens,
        endTurn: false
      })
      this.pending = undefined
      rest = fresh.slice(end)
    }
    if (rest.length > 0) {
      await turn.prepare(rest.flatMap((message) => message.messages))
      prepared = rest.some((message) => message.role === "user")
    }
    this.known = conversation.length
    this.iteration = prepared ? 0 : this.iteration + 1
    // The caller's breakpoints, by the window messages they fell on (one more load, only when there are any).
    const cacheHints = hints.length === 0 ? [] : cacheHintsIn(await context.load(this.stream), hints)
    const rendered = await turn.render({
      iteration: this.iteration,
      ...(cacheHints.length === 0 ? {} : { cacheHints })
    })
    this.lastEstimate = rendered.stats.total
    const placed = new Set(Window.messages(rendered.window).map((message) => message.id))
    return {
      prompt: promptOf(rendered.request),
      messages: Window.messages(rendered.window),
      cacheHints: cacheHints.filter((hint) => placed.has(hint.messageId)),
      render: rendered
    }
  }

  /**
   * The tool messages of a short prompt whose results the log already holds are not new: ai 7 builds a
   * step's prompt on the messages `prepareStep` returned (the render) plus the last step's answer and
   * results, which `onStepFinish` recorded. Tool results are matched by their call ids (unique; the
   * window's set of answered calls, also those compaction folded since); other messages are kept (a user
   * may repeat a question word for word).
   */
  private async unheld(context: Context, fresh: ReadonlyArray<PromptMessage>): Promise<ReadonlyArray<PromptMessage>> {
    if (!fresh.some((message) => message.role === "tool")) return fresh
    const window = await context.load(this.stream)
    const held = (input: { readonly parts: ReadonlyArray<Message.Part> }) => {
      const results = input.parts.filter(isToolResult)
      return results.length > 0 && results.every((part) => Window.hasToolResult(window, part.toolCallId))
    }
    return fresh.filter((message) => message.role !== "tool" || !message.messages.every(held))
  }

  /**
   * The model answered: an answer without tool calls completes the turn now; one with tool calls waits
   * for its results (the next call's prompt) and goes in with them.
   */
  async answered(
    answer: ReadonlyArray<Message.Part>,
    usage: LanguageModel.Usage | undefined,
    policy: TurnPolicy,
    results?: ReadonlyArray<Message.ToolResultPart>
  ): Promise<void> {
    const calls = Message.toolCallsOf({ parts: answer })
    if (calls.length > 0 && results === undefined) {
      this.pending = { answer, usage, estimatedInputTokens: this.lastEstimate }
      return
    }
    const context = await this.open()
    await context.turn(this.stream, policy).complete({
      answer,
      results,
      usage,
      estimatedInputTokens: this.lastEstimate,
      // Calls still without results (waiting for an approval, or for the caller) keep the turn open.
      endTurn: calls.length === 0 || results === undefined
    })
    // The caller's next prompt holds the answer (and one tool message when there were results).
    if (this.known !== undefined) this.known += results !== undefined && results.length > 0 ? 2 : 1
  }

  /**
   * Open the chat span of the model call that sends `render` (`Context.modelCall` of the client: the
   * span every path makes, with the render's provenance); records nothing without a tracer provider.
   */
  async modelCall(render: TurnRender | undefined, target: ModelCallTarget): Promise<ModelCallSpan> {
    const context = await this.open()
    return context.modelCall(this.stream, render, target)
  }

  async close(): Promise<void> {
    if (this.context !== undefined) await (await this.context).close()
    this.context = undefined
  }
}

/** A conversion the adapters refused, as the client's error. */
export const refused = (error: { readonly _tag: string; readonly message: string }): CtxlogError =>
  new CtxlogError(error._tag, error.message, error)
