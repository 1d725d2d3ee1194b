/**
 * The Vercel AI SDK (`ai` 6 and 7; the `LanguageModelV3` and `LanguageModelV4` provider interfaces) on a
 * ctxlog stream, through the turn module:
 *
 * - {@link ctxlogMiddleware}: a language-model middleware. `wrapLanguageModel({ model, middleware })`
 *   runs every call's prompt through `Turn.prepare` / `Turn.complete` / `Turn.render` and sends the
 *   rendered window; the answer and the usage go in with `Turn.complete` (streaming included).
 * - {@link ctxlogPrepareStep}: the same for `generateText` / `streamText` agents as their step hooks
 *   (`prepareStep` returns `{ messages }`, `onStepFinish` records the step).
 *
 * The middleware is typed by the minimal structural shapes of the call options, results and stream
 * parts it reads (the same in V3 and V4), with generic hooks, so one value is both a
 * `LanguageModelV3Middleware` (`ai` 6) and an `ai` 7 `LanguageModelMiddleware` (V4 shapes, any
 * `specificationVersion`).
 *
 * @since 0.1.0
 */
import type { ModelCallSpan, ModelCallTarget, TurnPolicy, TurnRender } from "@ctxlog/client"
import { type LanguageModel, Message } from "@ctxlog/core"
import {
  cacheControlOf,
  fromLanguageModelPrompt,
  fromModelMessages,
  type LanguageModelPrompt
} from "@ctxlog/providers/ai-sdk"
import type { ModelMessage, SystemModelMessage } from "ai"
import * as Either from "effect/Either"
import type { CtxlogOptions } from "./CtxlogOptions.js"
import { type PromptHint, type PromptJson, type PromptMessage, Recorder, refused } from "./internal/recorder.js"

/** @since 0.1.0 */
export { builderOf, type CtxlogOptions, defaultPolicy } from "./CtxlogOptions.js"

type Json = Message.JsonValue
type JsonObject = { readonly [key: string]: Json }

const jsonObject = (value: unknown): JsonObject => {
  const parsed: unknown = JSON.parse(JSON.stringify(value ?? {}))
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as JsonObject) : {}
}

const parseInput = (input: string): Json => {
  try {
    return JSON.parse(input) as Json
  } catch {
    return input
  }
}

const orThrow = <A>(either: Either.Either<A, { readonly _tag: string; readonly message: string }>): A => {
  if (Either.isLeft(either)) throw refused(either.left)
  return either.right
}

/** The model a middleware hook is handed (`LanguageModelV3` or `V4`), by the fields read here. @since 0.4.0 */
export interface MiddlewareModel {
  readonly provider: string
  readonly modelId: string
}

/** A prompt message of the call options (V3 or V4), by the fields read here. @since 0.4.0 */
export interface MiddlewarePromptMessage {
  readonly role: string
  readonly content: unknown
  readonly providerOptions?: unknown
}

/** A tool of the call options: function tools (`type: "function"`) become render options. @since 0.4.0 */
export interface MiddlewareTool {
  readonly type: string
  readonly name?: string
  readonly description?: string | undefined
  readonly inputSchema?: unknown
}

/** The call options of a V3 or V4 call, by the fields read here. @since 0.4.0 */
export interface MiddlewareCallOptions {
  readonly prompt: ReadonlyArray<MiddlewarePromptMessage>
  readonly tools?: ReadonlyArray<MiddlewareTool> | undefined
  readonly maxOutputTokens?: number | undefined
  /** Sampling parameters, recorded on the model call's span (since 0.8.0). */
  readonly temperature?: number | undefined
  readonly topP?: number | undefined
  readonly topK?: number | undefined
  readonly stopSequences?: ReadonlyArray<string> | undefined
  readonly frequencyPenalty?: number | undefined
  readonly presencePenalty?: number | undefined
  readonly seed?: number | undefined
}

/** The usage of a V3 or V4 call (`inputTokens` / `outputTokens` with their parts). @since 0.4.0 */
export interface MiddlewareUsage {
  readonly inputTokens: {
    readonly total: number | undefined
    readonly cacheRead?: number | undefined
    readonly cacheWrite?: number | undefined
  }
  readonly outputTokens: { readonly total: number | undefined }
}

/** A content part of an answer or a stream part (V3 or V4): its kind; the rest is read by kind. @since 0.4.0 */
export interface MiddlewarePart {
  readonly type: string
}

/** A generate result (V3 or V4), by the fields read here. @since 0.4.0 */
export interface MiddlewareGenerateResult {
  readonly content: ReadonlyArray<MiddlewarePart>
  readonly usage: MiddlewareUsage
  /** `{ unified, raw }` (V3, V4), recorded on the model call's span (since 0.8.0). */
  readonly finishReason?: unknown
  /** The response's id and model, recorded on the model call's span (since 0.8.0). */
  readonly response?: { readonly id?: string | undefined; readonly modelId?: string | undefined } | undefined
}

/** A stream result (V3 or V4), by the fields read here. @since 0.4.0 */
export interface MiddlewareStreamResult {
  readonly stream: ReadableStream<MiddlewarePart>
}

const stringField = (part: object, key: string): string | undefined => {
  const value: unknown = key in part ? (part as Record<string, unknown>)[key] : undefined
  return typeof value === "string" ? value : undefined
}

const field = (part: object, key: string): unknown => (key in part ? (part as Record<string, unknown>)[key] : undefined)

/** The usage of a model call (V3 or V4) or of an `ai` step (flat) as ctxlog records it. @since 0.1.0 */
export const usageOf = (usage: MiddlewareUsage | StepOutcome["usage"] | undefined): LanguageModel.Usage | undefined => {
  if (usage === undefined) return undefined
  if (typeof usage.inputTokens === "object" && typeof usage.outputTokens === "object") {
    return {
      inputTokens: usage.inputTokens.total ?? 0,
      outputTokens: usage.outputTokens.total ?? 0,
      cacheReadTokens: usage.inputTokens.cacheRead ?? 0,
      cacheWriteTokens: usage.inputTokens.cacheWrite ?? 0
    }
  }
  const flat = usage as StepOutcome["usage"]
  return {
    inputTokens: flat.inputTokens ?? 0,
    outputTokens: flat.outputTokens ?? 0,
    cacheReadTokens: flat.inputTokenDetails?.cacheReadTokens ?? 0,
    cacheWriteTokens: flat.inputTokenDetails?.cacheWriteTokens ?? 0
  }
}

type AssistantPart = { readonly type: string; readonly [key: string]: unknown }

/**
 * A model's answer (the content of a V3 or V4 generate result) as ctxlog parts: text, reasoning (with
 * its provider metadata), tool calls, and provider-executed tool calls and results. Sources and
 * generated files are not message content and are not recorded.
 * @since 0.1.0
 */
export const answerOf = (content: ReadonlyArray<MiddlewarePart>): ReadonlyArray<Message.Part> => {
  const parts: Array<AssistantPart> = []
  for (const part of content) {
    // The part's provider metadata is what the AI SDK hands back as its `providerOptions` next step.
    const metadata = field(part, "providerMetadata")
    const options = metadata === undefined || metadata === null ? {} : { providerOptions: metadata }
    switch (part.type) {
      case "text":
        parts.push({ type: "text", text: stringField(part, "text") ?? "", ...options })
        break
      case "reasoning":
        parts.push({ type: "reasoning", text: stringField(part, "text") ?? "", ...options })
        break
      case "tool-call":
        parts.push({
          type: "tool-call",
          toolCallId: stringField(part, "toolCallId") ?? "",
          toolName: stringField(part, "toolName") ?? "",
          input: parseInput(stringField(part, "input") ?? ""),
          ...(field(part, "providerExecuted") === true ? { providerExecuted: true } : {}),
          ...options
        })
        break
      case "tool-result":
        parts.push({
          type: "tool-result",
          toolCallId: stringField(part, "toolCallId") ?? "",
          toolName: stringField(part, "toolName") ?? "",
          output: { type: "json", value: field(part, "result") ?? null },
          ...options
        })
        break
      default:
        break
    }
  }
  if (parts.length === 0) return []
  const prompt = [{ role: "assistant", content: parts }] as unknown as LanguageModelPrompt
  return orThrow(fromLanguageModelPrompt(prompt, { cacheHints: "apart" })).flatMap((message) => message.parts)
}

/**
 * An `ai-sdk` render's prompt (JSON) as the model's prompt: a file part's `data` that is an `http(s)`
 * URL becomes a `URL` (the provider interface takes URLs as `URL`s; base64 text never holds `://`).
 */
const revive = (prompt: ReadonlyArray<PromptJson>): ReadonlyArray<PromptJson> =>
  prompt.map((message) =>
    Array.isArray(message.content) && message.content.some(isUrlFile)
      ? {
          ...message,
          content: message.content.map((part) =>
            isUrlFile(part) ? ({ ...part, data: new URL(part.data) } as unknown as Message.JsonValue) : part
          )
        }
      : message
  )

const isUrlFile = (part: Message.JsonValue): part is { readonly type: "file"; readonly data: string } => {
  if (typeof part !== "object" || part === null || Array.isArray(part)) return false
  const record = part as { readonly [key: string]: Message.JsonValue }
  return record.type === "file" && typeof record.data === "string" && /^https?:\/\//.test(record.data)
}

/** The caller's prompt, message by message, as ctxlog messages. */
const promptMessages = (prompt: ReadonlyArray<MiddlewarePromptMessage>): ReadonlyArray<PromptMessage> =>
  prompt.map((message, index) => {
    // Hints apart: they are this call's (read by `hintsOf`), never stored on history.
    const converted = fromLanguageModelPrompt([message] as unknown as LanguageModelPrompt, { cacheHints: "apart" })
    if (Either.isLeft(converted)) {
      throw refused({ _tag: converted.left._tag, message: `prompt[${index}]: ${converted.left.message}` })
    }
    const role = message.role
    if (role !== "system" && role !== "user" && role !== "assistant" && role !== "tool") {
      throw refused({ _tag: "AdapterError", message: `prompt[${index}]: unsupported role ${role}` })
    }
    return { role, messages: converted.right }
  })

/** The caller's cache breakpoints (`providerOptions.anthropic.cacheControl`) on its prompt messages. */
const hintsOf = (
  prompt: ReadonlyArray<{ readonly providerOptions?: unknown; readonly content: unknown }>,
  converted: ReadonlyArray<PromptMessage>
): ReadonlyArray<PromptHint> =>
  prompt.flatMap((message, index) => {
    const content = message.content
    const hint = cacheControlOf({
      providerOptions: message.providerOptions,
      content: typeof content === "string" ? content : Array.isArray(content) ? content : []
    })
    const target = converted[index]
    return hint === undefined || target === undefined ? [] : [{ message: target, ttl: hint.ttl }]
  })

/** The render options a call's parameters set: its function tools and its output limit. */
const renderOf = (params: MiddlewareCallOptions): Partial<NonNullable<TurnPolicy["render"]>> => {
  const tools = (params.tools ?? []).flatMap((tool) =>
    tool.type === "function" && tool.name !== undefined
      ? [{ name: tool.name, description: tool.description ?? "", inputSchema: jsonObject(tool.inputSchema) }]
      : []
  )
  // Part of the policy (recorded as `TurnPolicySet`), whose schema's optionals are exact.
  return {
    ...(tools.length === 0 ? {} : { tools }),
    ...(params.maxOutputTokens === undefined ? {} : { maxOutputTokens: params.maxOutputTokens })
  }
}

/** A finish reason as the AI SDK gives it (`{ unified, raw }` in V3 and V4, a string before and in steps). */
const finishOf = (reason: unknown): string => {
  if (typeof reason === "string") return reason
  if (typeof reason === "object" && reason !== null) {
    const unified = (reason as { readonly unified?: unknown }).unified
    if (typeof unified === "string") return unified
  }
  return "other"
}

/** The span target of a call: the model, whether it streams, the sampling parameters it set. */
const targetOf = (model: MiddlewareModel, params: object, stream: boolean): ModelCallTarget => {
  const options = params as MiddlewareCallOptions
  const parameters = {
    maxTokens: options.maxOutputTokens,
    temperature: options.temperature,
    topP: options.topP,
    topK: options.topK,
    stopSequences: options.stopSequences,
    frequencyPenalty: options.frequencyPenalty,
    presencePenalty: options.presencePenalty,
    seed: options.seed
  }
  const set = Object.fromEntries(Object.entries(parameters).filter(([, value]) => value !== undefined))
  return { provider: model.provider, model: model.modelId, stream, parameters: set }
}

/**
 * The AI SDK middleware, with the context it opened. Its hooks are generic in the call options and
 * results, so it is a `LanguageModelV3Middleware` for `ai` 6 and a `LanguageModelMiddleware` (V4) for
 * `ai` 7: each hook returns what it was given, of the caller's own type.
 * @since 0.1.0
 */
export interface CtxlogMiddleware {
  /** `v3`: `ai` 6 requires it; `ai` 7 takes any. */
  readonly specificationVersion: "v3"
  /** The stream every call goes to. */
  readonly stream: string
  /** Close the context (the database); the middleware reopens it on its next call. */
  readonly close: () => Promise<void>
  readonly transformParams: <P extends MiddlewareCallOptions>(options: {
    readonly type: "generate" | "stream"
    readonly params: P
    readonly model: MiddlewareModel
  }) => Promise<P>
  readonly wrapGenerate: <R extends MiddlewareGenerateResult>(options: {
    readonly doGenerate: () => PromiseLike<R>
    readonly params: object
    readonly model: MiddlewareModel
  }) => Promise<R>
  readonly wrapStream: <S extends MiddlewareStreamResult>(options: {
    readonly doStream: () => PromiseLike<S>
    readonly params: object
    readonly model: MiddlewareModel
  }) => Promise<S>
}

/**
 * A language-model middleware that runs every call through the turn module on one stream:
 *
 * 1. `transformParams`: the prompt's new messages go in — the previous call's answer with its tool
 *    results (`Turn.complete`), then new input, a user message starting a turn (`Turn.prepare`; on an
 *    empty stream the prompt's system message is appended first) — and the window is rendered with
 *    the policy's builder (`Turn.render`: compaction tiers, seams, the fit, a rebuildable
 *    `PromptRendered`). The model receives the rendered window as its prompt.
 * 2. `wrapGenerate` / `wrapStream`: the answer and the usage go in with `Turn.complete` (a streamed
 *    answer is collected from its parts). An answer without tool calls ends the turn; one with tool
 *    calls is completed with their results on the next call.
 *
 * One middleware serves one stream; its calls are expected one after another, as an agent makes them.
 *
 * ```ts
 * const model = wrapLanguageModel({ model: openai("gpt-4o"), middleware: ctxlogMiddleware({ sqlite: "agent.db", stream: "s1" }) })
 * ```
 * @since 0.1.0
 */
export const ctxlogMiddleware = (options: CtxlogOptions): CtxlogMiddleware => {
  const recorder = new Recorder(options)
  const policies = new WeakMap<object, TurnPolicy>()
  // The render each call's params came from: its span carries the render's provenance.
  const renders = new WeakMap<object, TurnRender>()
  let lastPolicy: TurnPolicy | undefined
  let lastRender: TurnRender | undefined
  const renderFor = (params: object) => renders.get(params) ?? lastRender
  const policyOf = (params: object, model: MiddlewareModel) =>
    policies.get(params) ?? lastPolicy ?? recorder.policyFor(model)

  const collect = (policy: TurnPolicy, span: ModelCallSpan) => {
    type Open = { type: "text" | "reasoning"; id: string; text: string; providerMetadata?: unknown }
    const entries: Array<Open | MiddlewarePart> = []
    let usage: MiddlewareUsage | undefined
    let finish: unknown
    let failure: unknown
    const response: { id?: string | undefined; modelId?: string | undefined } = {}
    const open = (type: "text" | "reasoning", id: string): Open => {
      const found = entries.find(
        (entry): entry is Open => entry.type === type && "id" in entry && entry.id === id && "text" in entry
      )
      if (found !== undefined) return found
      const created: Open = { type, id, text: "" }
      entries.push(created)
      return created
    }
    // A part's provider metadata is the latest its start, deltas and end gave (as the AI SDK keeps it).
    const note = (entry: Open, part: MiddlewarePart) => {
      const metadata = field(part, "providerMetadata")
      if (metadata !== undefined && metadata !== null) entry.providerMetadata = metadata
    }
    return new TransformStream<MiddlewarePart, MiddlewarePart>({
      transform(part, controller) {
        const id = stringField(part, "id") ?? ""
        const kind = part.type.startsWith("text-")
          ? "text"
          : part.type.startsWith("reasoning-")
            ? "reasoning"
            : undefined
        if (kind !== undefined && /-(start|delta|end)$/.test(part.type)) {
          const entry = open(kind, id)
          if (part.type.endsWith("-delta")) entry.text += stringField(part, "delta") ?? ""
          note(entry, part)
        } else if (part.type === "tool-call" || part.type === "tool-result") entries.push(part)
        else if (part.type === "finish") {
          usage = field(part, "usage") as MiddlewareUsage | undefined
          finish = field(part, "finishReason")
        } else if (part.type === "response-metadata") {
          response.id = stringField(part, "id") ?? response.id
          response.modelId = stringField(part, "modelId") ?? response.modelId
        } else if (part.type === "error") failure = field(part, "error")
        controller.enqueue(part)
      },
      async flush(controller) {
        try {
          const answer = answerOf(entries)
          await (failure === undefined
            ? span.end({
                id: response.id,
                model: response.modelId,
                finishReason: finishOf(finish),
                usage: usageOf(usage),
                parts: answer
              })
            : span.fail(failure))
          await recorder.answered(answer, usageOf(usage), policy)
        } catch (error) {
          const failure: MiddlewarePart & { readonly error: unknown } = { type: "error", error }
          controller.enqueue(failure)
        }
      }
    })
  }

  return {
    specificationVersion: "v3",
    stream: options.stream,
    close: () => recorder.close(),
    transformParams: async ({ params, model }) => {
      const policy = recorder.policyFor(model, renderOf(params))
      const converted = promptMessages(params.prompt)
      const rendered = await recorder.ingestAndRender(converted, policy, hintsOf(params.prompt, converted))
      // The render is the prompt (the `ai-sdk` format, recorded): it takes the caller's prompt's place,
      // with the caller's breakpoints on the messages they fell on; the other options are the caller's own.
      const next = { ...params, prompt: revive(rendered.prompt) } as unknown as typeof params
      policies.set(next, policy)
      renders.set(next, rendered.render)
      lastPolicy = policy
      lastRender = rendered.render
      return next
    },
    wrapGenerate: async ({ doGenerate, params, model }) => {
      const span = await recorder.modelCall(renderFor(params), targetOf(model, params, false))
      const result = await doGenerate().then(undefined, async (error: unknown) => {
        await span.fail(error)
        throw error
      })
      await span.end({
        id: result.response?.id,
        model: result.response?.modelId,
        finishReason: finishOf(result.finishReason),
        usage: usageOf(result.usage),
        parts: answerOf(result.content)
      })
      await recorder.answered(answerOf(result.content), usageOf(result.usage), policyOf(params, model))
      return result
    },
    wrapStream: async ({ doStream, params, model }) => {
      const span = await recorder.modelCall(renderFor(params), targetOf(model, params, true))
      const result = await doStream().then(undefined, async (error: unknown) => {
        await span.fail(error)
        throw error
      })
      // Every part passes through unchanged (the answer is collected on the side): the stream keeps its type.
      const stream = result.stream.pipeThrough(collect(policyOf(params, model), span)) as typeof result.stream
      return { ...result, stream }
    }
  }
}

/** A content part of a finished step (`StepResult.content` of `ai`), by the fields read here. @since 0.1.0 */
export interface StepPart {
  readonly type: string
  readonly text?: string | undefined
  readonly toolCallId?: string | undefined
  readonly toolName?: string | undefined
  readonly input?: unknown
  readonly output?: unknown
  readonly error?: unknown
  readonly providerExecuted?: boolean | undefined
  /** The provider metadata of the part (handed back as `providerOptions` next step). @since 0.8.0 */
  readonly providerMetadata?: unknown
  /** A `tool-approval-request` part's id and the call it asks about. @since 0.8.0 */
  readonly approvalId?: string | undefined
  readonly toolCall?: { readonly toolCallId: string } | undefined
}

/** A finished step (`StepResult` of `ai`), by the fields read here. @since 0.1.0 */
export interface StepOutcome {
  readonly content: ReadonlyArray<StepPart>
  readonly usage: {
    readonly inputTokens: number | undefined
    readonly outputTokens: number | undefined
    readonly inputTokenDetails?:
      | { readonly cacheReadTokens?: number | undefined; readonly cacheWriteTokens?: number | undefined }
      | undefined
  }
  readonly model: { readonly provider: string; readonly modelId: string }
  /** The step's finish reason (`stop`, `tool-calls`, ...), recorded on its model call's span (since 0.8.0). */
  readonly finishReason?: unknown
  /** The step's response id and model, recorded on its model call's span (since 0.8.0). */
  readonly response?: { readonly id?: string | undefined; readonly modelId?: string | undefined } | undefined
}

/** The step hooks of a `generateText` / `streamText` agent on a ctxlog stream. @since 0.1.0 */
export interface CtxlogSteps {
  readonly stream: string
  /** `prepareStep`: the step's new messages go in, the window is rendered; returns `{ messages }` for the step. */
  readonly prepareStep: (options: {
    readonly messages: Array<ModelMessage>
    readonly model: unknown
    readonly stepNumber: number
  }) => Promise<{ messages: Array<ModelMessage>; system?: Array<SystemModelMessage> }>
  /** `onStepFinish`: the step's answer, tool results and usage go in (`Turn.complete`). */
  readonly onStepFinish: (step: StepOutcome) => Promise<void>
  readonly close: () => Promise<void>
}

const modelIdOf = (model: unknown): { provider: string; modelId: string } => {
  if (typeof model === "string") {
    const [provider, ...rest] = model.split("/")
    return rest.length === 0
      ? { provider: "default", modelId: model }
      : { provider: provider ?? "default", modelId: rest.join("/") }
  }
  if (typeof model === "object" && model !== null && "provider" in model && "modelId" in model) {
    return { provider: String(model.provider), modelId: String(model.modelId) }
  }
  return { provider: "default", modelId: "unknown" }
}

const resultText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value ?? null))

/**
 * `prepareStep` and `onStepFinish` for `generateText` / `streamText`: the same pipeline as
 * {@link ctxlogMiddleware}, as step hooks. Pass both:
 *
 * ```ts
 * const steps = ctxlogPrepareStep({ sqlite: "agent.db", stream: "s1" })
 * await generateText({ model, tools, messages, prepareStep: steps.prepareStep, onStepFinish: steps.onStepFinish })
 * ```
 *
 * `prepareStep` runs the step's new messages through the turn module and returns the rendered
 * window as the step's `messages` (the system prompt given to `generateText` stays the AI SDK's);
 * `onStepFinish` records the step's answer, its tool results and usage, ending the turn when the step
 * called no tools.
 * @since 0.1.0
 */
export const ctxlogPrepareStep = (options: CtxlogOptions): CtxlogSteps => {
  const recorder = new Recorder(options)
  let policy: TurnPolicy | undefined
  // The step's model call runs between the hooks: its span opens with the render, ends with the step.
  let span: ModelCallSpan | undefined
  return {
    stream: options.stream,
    close: () => recorder.close(),
    prepareStep: async ({ messages, model }) => {
      policy = policy ?? recorder.policyFor(modelIdOf(model))
      const prompt = messages.map((message, index): PromptMessage => {
        const converted = fromModelMessages([message])
        if (Either.isLeft(converted)) {
          throw refused({ _tag: converted.left._tag, message: `messages[${index}]: ${converted.left.message}` })
        }
        return { role: message.role, messages: converted.right }
      })
      const rendered = await recorder.ingestAndRender(prompt, policy, hintsOf(messages, prompt))
      const target = modelIdOf(model)
      await span?.fail(new Error("the step did not finish"))
      span = await recorder.modelCall(rendered.render, { provider: target.provider, model: target.modelId })
      // The render is the step's prompt: its leading system messages take the place of `system`
      // (when it has some), the rest are the step's messages.
      const lead = rendered.prompt.findIndex((message) => message.role !== "system")
      const split = lead === -1 ? rendered.prompt.length : lead
      const system = revive(rendered.prompt.slice(0, split)) as unknown as Array<SystemModelMessage>
      const rest = revive(rendered.prompt.slice(split)) as unknown as Array<ModelMessage>
      return system.length === 0 ? { messages: rest } : { system, messages: rest }
    },
    onStepFinish: async (step) => {
      policy = policy ?? recorder.policyFor(step.model)
      const answer = answerOf(
        step.content.flatMap((part): Array<MiddlewarePart & { readonly [key: string]: unknown }> => {
          const id = { toolCallId: part.toolCallId ?? "", toolName: part.toolName ?? "" }
          const metadata = part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata }
          switch (part.type) {
            case "text":
            case "reasoning":
              return [{ type: part.type, text: part.text ?? "", ...metadata }]
            case "tool-call":
              return [
                {
                  type: "tool-call",
                  ...id,
                  input: JSON.stringify(part.input ?? {}),
                  ...(part.providerExecuted === true ? { providerExecuted: true } : {}),
                  ...metadata
                }
              ]
            case "tool-result":
              return part.providerExecuted === true
                ? [{ type: "tool-result", ...id, result: jsonOf(part.output), ...metadata }]
                : []
            default:
              return []
          }
        })
      )
      const results = step.content.flatMap((part): Array<Message.ToolResultPart> => {
        if (part.type === "tool-result" && part.providerExecuted !== true) {
          return [Message.toolResult(part.toolCallId ?? "", resultText(part.output))]
        }
        if (part.type === "tool-error") return [Message.toolResult(part.toolCallId ?? "", String(part.error), true)]
        return []
      })
      // A call waiting for the user's approval: its request is kept with the answer (the call stays
      // pending in the log, shown, until its result comes with the next step).
      const approvals = step.content.flatMap(
        (part): ReadonlyArray<Message.Part> =>
          part.type === "tool-approval-request" && part.approvalId !== undefined && part.toolCall !== undefined
            ? [Message.toolApprovalRequest(part.approvalId, part.toolCall.toolCallId)]
            : []
      )
      await span?.end({
        id: step.response?.id,
        model: step.response?.modelId,
        finishReason: finishOf(step.finishReason),
        usage: usageOf(step.usage),
        parts: answer
      })
      span = undefined
      await recorder.answered([...answer, ...approvals], usageOf(step.usage), policy, results)
    }
  }
}

const jsonOf = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null)) ?? ""
