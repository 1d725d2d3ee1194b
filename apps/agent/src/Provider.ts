/**
 * Providers: which builder renders the window, which client sends it, and the numbers the budget is
 * made of (context window, output reserve, tool-output limit). The real clients send the request the
 * builder rendered byte for byte, so the `PromptRendered` hash in the log is the hash of what was sent.
 * The offline scripted model needs no network and no key: it is the default.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import * as net from "node:net"
import { LanguageModel, Message, Transcript } from "@ctxlog/core"
import {
  AnthropicCtx,
  AnthropicModel,
  CtxBuilder,
  type DefaultCtx,
  OfflineModel,
  OllamaCtx,
  OpenAICompatibleModel,
  OpenAICtx,
  OpenAIResponsesModel,
  ProviderPair,
  RetryPolicy
} from "@ctxlog/providers"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

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

/** A call's answer, streamed back. @since 0.8.0 */
export type Reply = Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>

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

/** The provider's API cannot be reached: nothing was sent or written. @since 0.3.0 */
export class Unreachable extends Schema.TaggedError<Unreachable>()("Unreachable", {
  provider: Schema.String,
  url: Schema.String,
  given: Schema.Boolean,
  reason: Schema.String
}) {
  override get message(): string {
    const next = this.given
      ? "start the server there, or give the right --base-url"
      : "check the network connection (or give --base-url)"
    return `cannot reach ${this.provider} at ${this.url} (${this.reason}); nothing was sent or written: ${next}`
  }
}

const reasons: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name does not resolve",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ECONNRESET: "connection reset"
}

/**
 * Before a session is opened: open (and close) a TCP connection to the provider's API, so a server that
 * is not running fails at once, in one sentence, and leaves no empty session behind. The offline model
 * needs none. Up to `timeoutMs` (default 5 s) for a host that does not answer.
 * @since 0.3.0
 */
export const reachable = (provider: Provider, timeoutMs = 5000): Effect.Effect<void, Unreachable> => {
  const endpoint = provider.endpoint
  if (endpoint === undefined) return Effect.void
  const fail = (reason: string) =>
    new Unreachable({ provider: provider.name, url: endpoint.url, given: endpoint.given, reason })
  let url: URL
  try {
    url = new URL(endpoint.url)
  } catch {
    return Effect.fail(fail("not a URL"))
  }
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port)
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  return Effect.async<void, Unreachable>((resume) => {
    const socket = net.connect({ host, port })
    socket.setTimeout(timeoutMs)
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.void)
    })
    socket.once("timeout", () => {
      socket.destroy()
      resume(Effect.fail(fail(`no answer in ${Math.round(timeoutMs / 1000)} s`)))
    })
    socket.once("error", (error: NodeJS.ErrnoException) => {
      socket.destroy()
      resume(Effect.fail(fail(reasons[error.code ?? ""] ?? error.code ?? error.message)))
    })
    return Effect.sync(() => socket.destroy())
  })
}

/** One provider, as the turn loop sees it. @since 0.1.0 */
export interface Provider {
  /** Recorded as `provider` in `PromptRendered` and `UsageReported`. */
  readonly name: string
  readonly model: string
  /** The model's whole context window in tokens (after the builder's clamps). */
  readonly contextWindow: number
  /** Tokens kept free for the answer (`max_tokens` of every request). */
  readonly outputReserve: number
  /** The API root requests go to (undefined for the offline model), and whether `--base-url` gave it. */
  readonly endpoint?: { readonly url: string; readonly given: boolean } | undefined
  /** The builder that renders every request (the turn policy's `builder`): rebuildable from the log. */
  readonly config: CtxBuilder.ProviderConfig
  /**
   * That builder config paired with the client that sends what it renders (`ProviderPair`): the turn
   * opened on `pair.config` renders the request type `pair.send` takes. `pair.config` is `config`.
   */
  readonly pair: ProviderPair.AnyPair<Reply>
  /** How the HTTP client retries (the longest `retry-after` it waits is `maxDelayMs`). */
  readonly retry: RetryPolicy.RetryPolicy
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

/**
 * A tool output may take a quarter of the budget (4 characters a token), never more than the
 * provider's own limit: the cap follows the window, so a small local model gets small outputs.
 * @since 0.1.0
 */
export const toolOutputChars = (budget: number, providerLimit: number): number =>
  Math.max(2_000, Math.min(providerLimit, Math.floor(budget * 0.25 * 4)))

/**
 * The offline model reads the request the generic builder rendered (Chat Completions messages), as
 * ctxlog messages: the leading system messages are its system text, the rest its conversation. So the
 * demo renders through a real builder, and every render it records rebuilds.
 */
const chatToModelRequest = (request: DefaultCtx.ChatCompletionsRequest, turnReminder: string | undefined) =>
  Effect.map(Transcript.fromOpenAIChat(request.messages), (inputs): LanguageModel.ModelRequest => {
    let lead = 0
    while (lead < inputs.length && inputs[lead]?.role === "system") lead++
    // The script answers the user's words: the reminder the harness prepended is not one of them.
    const prefix = turnReminder === undefined || turnReminder.length === 0 ? undefined : `${turnReminder}\n\n`
    let lastUser = -1
    inputs.forEach((input, index) => {
      if (input.role === "user") lastUser = index
    })
    const unprompted = (input: Message.MessageInput, index: number): Message.MessageInput =>
      prefix === undefined || index !== lastUser
        ? input
        : {
            ...input,
            parts: input.parts.map((part, position) =>
              position === 0 && part.type === "text" && part.text.startsWith(prefix)
                ? { ...part, text: part.text.slice(prefix.length) }
                : part
            )
          }
    return {
      system: inputs
        .slice(0, lead)
        .map((input) => Message.textOf(input))
        .join("\n\n"),
      messages: inputs
        .map(unprompted)
        .slice(lead)
        .map((input) => ({
          role: input.role === "system" ? ("user" as const) : input.role,
          parts: input.parts
        })),
      ...(request.tools === undefined
        ? {}
        : {
            tools: request.tools.map((tool) => ({
              name: tool.function.name,
              description: tool.function.description ?? "",
              inputSchema: tool.function.parameters ?? {}
            }))
          }),
      // core's `ModelRequest` is exact (`maxOutputTokens?: number`).
      ...(request.max_tokens === undefined ? {} : { maxOutputTokens: request.max_tokens })
    }
  })

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
      compressionThreshold: 0.85
    }
    // A tool output may take a quarter of the budget (the builders' default share is a tenth): the agent
    // relies on deferred summaries and pruning to shrink big outputs once the model has seen them. The
    // budget is the builder's, after its clamps (Ollama floors the window at 4K), not the raw option.
    const clampedWindow = (config: CtxBuilder.ProviderConfig) => CtxBuilder.forProvider(config).ctxWindow
    const limited = <const C extends CtxBuilder.ProviderConfig>(base: C) => ({
      ...base,
      toolOutputLimits: { defaultChars: toolOutputChars(clampedWindow(base) - outputReserve, Number.POSITIVE_INFINITY) }
    })
    // A provider over a builder config paired with the call that sends what that builder renders
    // (`ProviderPair.make` checks the call takes the config's request type).
    const over = (pair: ProviderPair.AnyPair<Reply>, url?: string): Provider => ({
      name,
      model,
      contextWindow: clampedWindow(pair.config),
      outputReserve,
      endpoint: url === undefined ? undefined : { url, given: options.baseUrl !== undefined },
      config: pair.config,
      retry,
      pair
    })
    switch (name) {
      case "offline": {
        const offline = yield* OfflineModel.make(uniqueCallIds(options.script ?? OfflineModel.echoScript), model)
        return over(
          ProviderPair.make(limited({ provider: "default", ...common }), (request, { turnReminder }) =>
            Stream.unwrap(
              Effect.map(
                Effect.mapError(
                  chatToModelRequest(request, turnReminder),
                  (error) =>
                    new LanguageModel.ProviderError({
                      provider: name,
                      reason: "bad_request",
                      detail: `the offline model could not read the rendered request: ${error.message}`
                    })
                ),
                (modelRequest) => offline.stream(modelRequest)
              )
            )
          )
        )
      }
      case "anthropic": {
        const apiKey = yield* required(env, "ANTHROPIC_API_KEY", name)
        const client = AnthropicModel.make({
          apiKey,
          model,
          maxOutputTokens: outputReserve,
          baseUrl: options.baseUrl,
          retry
        })
        return over(
          ProviderPair.make(limited({ provider: "anthropic", ...common }), (request) => client.streamRequest(request)),
          options.baseUrl ?? "https://api.anthropic.com"
        )
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
        return over(
          ProviderPair.make(limited({ provider: "openai", api: "responses", ...common }), (request) =>
            client.streamRequest(request)
          ),
          options.baseUrl ?? "https://api.openai.com/v1"
        )
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
          apiKey,
          retry
        })
        // Ollama's builder floors the window at 4K (`contextWindow` is the builder's, after clamps).
        return over(
          name === "openai"
            ? ProviderPair.make(limited({ provider: "openai", ...common }), (request) => client.streamRequest(request))
            : ProviderPair.make(limited({ provider: "ollama", ...common }), (request) => client.streamRequest(request)),
          baseUrl
        )
      }
    }
  })
