/**
 * Providers: which builder renders the window, which client sends it, and the numbers the budget is
 * made of (context window, output reserve, tool-output limit). The real clients send the request the
 * builder rendered byte for byte, so the `PromptRendered` hash in the log is the hash of what was sent.
 * The offline scripted model needs no network and no key: it is the default.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { LanguageModel, Message, type Window } from "@ctxlog/core"
import {
  AnthropicCtx,
  AnthropicModel,
  type CtxBuilder,
  DefaultCtx,
  type InvalidRequest,
  OfflineModel,
  OllamaCtx,
  OpenAICompatibleModel,
  OpenAICtx,
  OpenAIResponsesModel,
  RetryPolicy
} from "@ctxlog/providers"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"

/** The providers the agent speaks. @since 0.1.0 */
export const providerNames = ["offline", "anthropic", "openai", "openai-responses", "ollama"] as const
/** @since 0.1.0 */
export type ProviderName = (typeof providerNames)[number]

/** A required environment variable is not set. @since 0.1.0 */
export class MissingEnv extends Schema.TaggedError<MissingEnv>()("MissingEnv", {
  variable: Schema.String,
  provider: Schema.String
}) {
  override get message(): string {
    return `--provider ${this.provider} needs the environment variable ${this.variable}; set it (export ${this.variable}=...) or pick another provider`
  }
}

/**
 * The context window cannot hold a conversation: the output reserve, the tool schemas and the turn
 * reminder leave less than {@link minimumBudget} tokens (or a number is not positive).
 * @since 0.2.0
 */
export class WindowTooSmall extends Schema.TaggedError<WindowTooSmall>()("WindowTooSmall", {
  contextWindow: Schema.Number,
  outputReserve: Schema.Number,
  /** Tokens of the tool schemas and the turn reminder. */
  overhead: Schema.Number
}) {
  override get message(): string {
    if (this.outputReserve <= 0) {
      return `--max-output-tokens ${this.outputReserve} is not a positive number of tokens; give the answer room, e.g. --max-output-tokens 1024`
    }
    const needed = this.outputReserve + this.overhead + minimumBudget
    return `--context-window ${this.contextWindow} is too small: the output reserve (--max-output-tokens ${this.outputReserve}) and the tool schemas and reminder (${this.overhead} tokens) leave ${Math.max(0, this.contextWindow - this.outputReserve - this.overhead)} tokens for the conversation, and the agent needs at least ${minimumBudget}; give --context-window ${needed} or more, or a smaller --max-output-tokens`
  }
}

/** The fewest tokens the conversation itself may have (system prompt, notes, a few turns). @since 0.2.0 */
export const minimumBudget = 1024

/**
 * Check, before anything is built, that the window holds the output reserve, the tool schemas, the
 * reminder and a conversation of at least {@link minimumBudget} tokens. `budget` is the session's
 * budget (`Agent.budgetFor`: the window less all of those); it is returned when it is enough.
 * @since 0.2.0
 */
export const checkWindow = (
  provider: Pick<Provider, "contextWindow" | "outputReserve">,
  budget: number
): Effect.Effect<number, WindowTooSmall> =>
  provider.outputReserve > 0 && budget >= minimumBudget
    ? Effect.succeed(budget)
    : Effect.fail(
        new WindowTooSmall({
          contextWindow: provider.contextWindow,
          outputReserve: provider.outputReserve,
          overhead: provider.contextWindow - provider.outputReserve - budget
        })
      )

/** A render ready to send. @since 0.1.0 */
export interface Rendered {
  readonly built: CtxBuilder.Built<unknown>
  /** Send it: the streamed response. */
  readonly send: Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>
}

/** One provider, as the turn loop sees it. @since 0.1.0 */
export interface Provider {
  /** Recorded as `provider` in `PromptRendered` and `UsageReported`. */
  readonly name: string
  readonly model: string
  /** The model's whole context window in tokens. */
  readonly contextWindow: number
  /** Tokens kept free for the answer (`max_tokens` of every request). */
  readonly outputReserve: number
  /** How the HTTP client retries (the longest `retry-after` it waits is `maxDelayMs`). */
  readonly retry: RetryPolicy.RetryPolicy
  /** Per-provider head + tail truncation of a tool output, before it enters the log. */
  readonly truncate: (result: Message.ToolResultPart, toolName: string) => Message.ToolResultPart
  readonly render: (
    window: Window.Window,
    options: CtxBuilder.BuildOptions
  ) => Either.Either<Rendered, InvalidRequest.InvalidRequest>
}

/** What the command line says about the provider. @since 0.1.0 */
export interface Options {
  readonly provider: ProviderName
  readonly model?: string | undefined
  readonly baseUrl?: string | undefined
  readonly contextWindow?: number | undefined
  readonly maxOutputTokens?: number | undefined
  /** The offline model's script (default: the echo script). */
  readonly script?: OfflineModel.Script | undefined
  readonly retry?: Partial<RetryPolicy.RetryPolicy> | undefined
  /** The environment to read keys from (default `process.env`). */
  readonly env?: NodeJS.ProcessEnv | undefined
}

/** Context windows when `--context-window` is not given. @since 0.1.0 */
export const defaultContextWindows: Record<ProviderName, number> = {
  offline: 16_384,
  anthropic: AnthropicCtx.defaultContextWindow,
  openai: OpenAICtx.defaultContextWindow,
  "openai-responses": OpenAICtx.defaultContextWindow,
  ollama: OllamaCtx.defaultContextWindow
}

/** Output reserves when `--max-output-tokens` is not given. @since 0.1.0 */
export const defaultOutputReserves: Record<ProviderName, number> = {
  offline: 1024,
  anthropic: 4096,
  openai: 4096,
  "openai-responses": 4096,
  ollama: 1024
}

/** Models when `--model` is not given. @since 0.1.0 */
export const defaultModels: Record<ProviderName, string> = {
  offline: "offline-scripted",
  anthropic: "claude-sonnet-4-5",
  openai: "gpt-4.1",
  // The Responses API is the one that takes a reasoning model's reasoning items back.
  "openai-responses": "gpt-5",
  ollama: "llama3.1"
}

/** Rough tokens of text the log did not count (the builders estimate tool schemas the same way). @since 0.1.0 */
export const roughTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * The budget every decision uses: the context window less the output reserve, the tool schemas and
 * the turn reminder. A render of a window within it, plus the answer, fits the model's window.
 * @since 0.1.0
 */
export const budgetOf = (
  provider: Pick<Provider, "contextWindow" | "outputReserve">,
  tools: ReadonlyArray<LanguageModel.ToolSpec>,
  reminder: string
): number =>
  provider.contextWindow -
  provider.outputReserve -
  (tools.length === 0 ? 0 : roughTokens(JSON.stringify(tools))) -
  (reminder.length === 0 ? 0 : roughTokens(reminder) + 8)

/**
 * A tool output may take a quarter of the budget (4 characters a token), never more than the
 * provider's own limit: the cap follows the window, so a small local model gets small outputs.
 * @since 0.1.0
 */
export const toolOutputChars = (budget: number, providerLimit: number): number =>
  Math.max(2_000, Math.min(providerLimit, Math.floor(budget * 0.25 * 4)))

/** The provider-neutral request the offline model reads: the window's partitions as plain messages. */
const neutralRequest = (window: Window.Window, options: CtxBuilder.BuildOptions): LanguageModel.ModelRequest => {
  const state = [
    window.taskState.goal === null ? "" : `goal: ${window.taskState.goal}`,
    ...window.taskState.subgoals.map((subgoal, index) => `${index + 1}. ${subgoal}`),
    ...window.signals.map((signal) => `signal: ${signal.text}`)
  ].filter((line) => line.length > 0)
  return {
    system: [...window.system, ...window.knowledge].map(Message.textOf).join("\n\n"),
    messages: [
      ...(state.length === 0 ? [] : [{ role: "user" as const, parts: [Message.text(state.join("\n"))] }]),
      ...window.history.map((message) => ({
        role: message.role === "system" ? ("user" as const) : message.role,
        parts: message.parts
      }))
    ],
    ...(options.tools === undefined ? {} : { tools: options.tools }),
    ...(options.maxOutputTokens === undefined ? {} : { maxOutputTokens: options.maxOutputTokens })
  }
}

/**
 * The offline model numbers its tool calls from 1 in every process, so a resumed session would reuse
 * an id already in its log. Give every call without an id a unique one.
 */
const uniqueCallIds =
  (script: OfflineModel.Script): OfflineModel.Script =>
  (request, call) => {
    const reply = script(request, call)
    if (reply instanceof LanguageModel.ProviderError || reply.toolCalls === undefined) return reply
    return {
      ...reply,
      toolCalls: reply.toolCalls.map((toolCall) =>
        toolCall.id === undefined ? { ...toolCall, id: `call_${randomUUID().replaceAll("-", "")}` } : toolCall
      )
    }
  }

const bind = <R>(
  builder: CtxBuilder.CtxBuilder<R>,
  send: (request: R, window: Window.Window, options: CtxBuilder.BuildOptions) => Rendered["send"]
): Provider["render"] => {
  return (window, options) =>
    Either.map(builder.build(window, options), (built) => ({
      built,
      send: send(built.request, window, options)
    }))
}

const required = (env: NodeJS.ProcessEnv, variable: string, provider: string) => {
  const value = env[variable]
  return value === undefined || value.trim().length === 0
    ? Effect.fail(new MissingEnv({ variable, provider }))
    : Effect.succeed(Redacted.make(value))
}

/** Build the provider the options name; a missing key fails with {@link MissingEnv}. @since 0.1.0 */
export const make = (options: Options): Effect.Effect<Provider, MissingEnv> =>
  Effect.gen(function* () {
    const env = options.env ?? process.env
    const name = options.provider
    const model = options.model ?? defaultModels[name]
    const contextWindow = options.contextWindow ?? defaultContextWindows[name]
    const outputReserve = options.maxOutputTokens ?? defaultOutputReserves[name]
    const retry = RetryPolicy.make(options.retry)
    // The tool-output limit depends on the budget, which depends on the tool schemas: estimate it
    // with the agent's own tools, the only ones it sends.
    const common = {
      model,
      contextWindow,
      maxOutputTokens: outputReserve,
      // Compaction decides on its own thresholds; the builder's flag is not used by the loop.
      compressionThreshold: 0.85,
      // A tool output may take a quarter of the budget (the builders' default share is a tenth): the agent
      // relies on deferred summaries and pruning to shrink big outputs once the model has seen them.
      toolOutputLimits: { defaultChars: toolOutputChars(contextWindow - outputReserve, Number.POSITIVE_INFINITY) }
    }
    // A provider over a builder and the call that sends its requests.
    const over = <R>(
      builder: CtxBuilder.CtxBuilder<R>,
      send: (request: R, window: Window.Window, options: CtxBuilder.BuildOptions) => Rendered["send"],
      window: number = contextWindow
    ): Provider => ({
      name,
      model,
      contextWindow: window,
      outputReserve,
      retry,
      truncate: builder.truncateToolOutput,
      render: bind(builder, send)
    })
    switch (name) {
      case "offline": {
        const offline = yield* OfflineModel.make(uniqueCallIds(options.script ?? OfflineModel.echoScript), model)
        // The offline model reads a neutral request built from the window, not the builder's.
        return over(DefaultCtx.make(common), (_request, window, buildOptions) =>
          offline.stream(neutralRequest(window, buildOptions))
        )
      }
      case "anthropic": {
        const apiKey = yield* required(env, "ANTHROPIC_API_KEY", name)
        const client = AnthropicModel.make({
          apiKey,
          model,
          maxOutputTokens: outputReserve,
          ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
          retry
        })
        return over(AnthropicCtx.make(common), (request) => client.streamRequest(request))
      }
      case "openai-responses": {
        // Stored (the API default): the reasoning items the render sends back are resolved by id.
        const apiKey = yield* required(env, "OPENAI_API_KEY", name)
        const client = OpenAIResponsesModel.make({
          baseUrl: options.baseUrl ?? "https://api.openai.com/v1",
          model,
          provider: name,
          maxOutputTokens: outputReserve,
          apiKey,
          retry
        })
        return over(OpenAICtx.makeResponses(common), (request) => client.streamRequest(request))
      }
      case "openai":
      case "ollama": {
        const apiKey = name === "openai" ? yield* required(env, "OPENAI_API_KEY", name) : undefined
        const host = env.OLLAMA_HOST !== undefined && env.OLLAMA_HOST.trim().length > 0 ? env.OLLAMA_HOST : undefined
        const ollamaBase = `${(host ?? "http://127.0.0.1:11434").replace(/\/+$/, "").replace(/^(?!https?:\/\/)/, "http://")}/v1`
        const baseUrl = options.baseUrl ?? (name === "openai" ? "https://api.openai.com/v1" : ollamaBase)
        const client = OpenAICompatibleModel.make({
          baseUrl,
          model,
          provider: name,
          maxOutputTokens: outputReserve,
          ...(apiKey === undefined ? {} : { apiKey }),
          retry
        })
        const builder = name === "openai" ? OpenAICtx.make(common) : OllamaCtx.make(common)
        // Ollama's builder floors the window at 4K.
        return over(builder, (request) => client.streamRequest(request), builder.ctxWindow)
      }
    }
  })
