/**
 * The prompt size of a window, exact where the provider offers a count. Core's `TokenCounter`
 * counts each message once, synchronously, when it enters the log; this service answers the
 * question a compaction decision asks ("how big is the prompt now?") and may ask the network:
 *
 * - `anthropic`: Anthropic's `POST /v1/messages/count_tokens` over the window rendered as
 *   `AnthropicCtx` renders it (tools and reminder aside, as the budget counts them apart). Exact
 *   counts are cached per message id, so a turn whose messages were all counted before sends
 *   nothing; the messages not yet counted are counted together in one call (the call counts the
 *   whole window, and what the cached messages do not explain is attributed to the new ones). When
 *   the call fails (offline, rate limited, 5xx after retries) the count falls back to the cached
 *   exact counts plus the usage-calibrated estimate of the rest.
 * - `tokenizer`: o200k_base / cl100k_base counts with `gpt-tokenizer` (OpenAI models), cached per id.
 * - `calibrated`: the log's counts corrected by reported usage (`Window.calibrationRatio`), for the rest.
 *
 * Pass `total` as `needsCompression(window, options, total)`.
 *
 * @since 0.2.0
 */
import { type Message, TokenCounter, Tracing, Window } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as anthropicRender from "./internal/anthropicRender.js"
import * as http from "./internal/http.js"
import { reveal, type Secret, trimSlash } from "./internal/modelClient.js"
import { fromWindow } from "./internal/sections.js"
import * as RetryPolicy from "./RetryPolicy.js"

/** A window's prompt size and where it came from. @since 0.2.0 */
export interface Count {
  /** Tokens of the window's prompt (tools and turn reminder not included). */
  readonly total: number
  /** Whether `total` is the provider's (or its tokenizer's) own count rather than an estimate. */
  readonly exact: boolean
  /** `count_tokens`, an encoding name, or `calibrated`. */
  readonly source: string
}

/** Counts the prompt size of windows. @since 0.2.0 */
export class ExactTokenCounter extends Context.Tag("@ctxlog/providers/ExactTokenCounter")<
  ExactTokenCounter,
  ExactTokenCounter.Service
>() {}

/** @since 0.2.0 */
export declare namespace ExactTokenCounter {
  /** @since 0.2.0 */
  export interface Service {
    readonly name: string
    /** Never fails: an unavailable exact count falls back to the calibrated estimate. */
    readonly countWindow: (window: Window.Window) => Effect.Effect<Count>
  }
}

/** Every message of a window, in render order. */
const messagesOf = (window: Window.Window): ReadonlyArray<Message.Message> => [
  ...window.system,
  ...window.knowledge,
  ...window.history
]

/** Tokens the log holds outside messages (task state, signals), by its own counter. */
const nonMessageTokens = (window: Window.Window, messages: ReadonlyArray<Message.Message>): number =>
  Math.max(0, window.tokens.total - messages.reduce((sum, message) => sum + message.tokens, 0))

/** The log's counts corrected by reported usage. @since 0.2.0 */
export const calibrated: ExactTokenCounter.Service = {
  name: "calibrated",
  countWindow: (window) =>
    Effect.succeed({
      total: Math.round(window.tokens.total * Window.calibrationRatio(window)),
      exact: false,
      source: "calibrated"
    })
}

/** Message counts a counter keeps by default. @since 0.2.0 */
export const defaultMaxCachedMessages = 100_000

/** Set a count, dropping the oldest ones past `limit` (a Map iterates in insertion order). */
const setBounded = (cache: Map<string, number>, limit: number, id: string, tokens: number): void => {
  cache.set(id, tokens)
  for (const oldest of cache.keys()) {
    if (cache.size <= Math.max(1, limit)) break
    cache.delete(oldest)
  }
}

/** The encoding of an OpenAI model, if `gpt-tokenizer` has it. @since 0.2.0 */
export const encodingFor = (model: string): TokenCounter.Encoding | undefined => {
  const name = model.toLowerCase()
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-4o|o1|o3|o4)([-.]|$)/.test(name)) return "o200k_base"
  if (/^(gpt-4|gpt-3\.5)([-.]|$)/.test(name)) return "cl100k_base"
  return undefined
}

/**
 * Exact counts with a local tokenizer, cached per message id (a message never changes under its id).
 * Task state and signals keep the log's counts.
 * @since 0.2.0
 */
export const tokenizer = (
  encoding: TokenCounter.Encoding = "o200k_base",
  maxCachedMessages = defaultMaxCachedMessages
): ExactTokenCounter.Service => {
  const counter = TokenCounter.gpt(encoding)
  const cache = new Map<string, number>()
  return {
    name: encoding,
    countWindow: (window) =>
      Effect.sync(() => {
        const messages = messagesOf(window)
        let total = nonMessageTokens(window, messages)
        for (const message of messages) {
          let tokens = cache.get(message.id)
          if (tokens === undefined) {
            tokens = counter.countMessage(message)
            setBounded(cache, maxCachedMessages, message.id, tokens)
          }
          total += tokens
        }
        return { total, exact: true, source: encoding }
      })
  }
}

/** Settings of the `count_tokens` counter. @since 0.2.0 */
export interface AnthropicConfig {
  readonly apiKey: Secret
  readonly model: string
  /** Default `https://api.anthropic.com`. */
  readonly baseUrl?: string
  /** Default `2023-06-01`. */
  readonly anthropicVersion?: string
  /** Default 30 s for the whole count, retries included. */
  readonly timeoutMs?: number
  /** Default: one retry. A count is advice; the fallback is always there. */
  readonly retry?: Partial<RetryPolicy.RetryPolicy>
  /** Most message counts kept (oldest dropped first). Default 100,000. */
  readonly maxCachedMessages?: number
}

const CountResponse = Schema.Struct({ input_tokens: Schema.Number })

/** The request body `count_tokens` takes: the Messages request without `max_tokens` and `stream`. @since 0.2.0 */
export const countBody = (
  window: Window.Window,
  model: string
): Either.Either<{ readonly model: string; readonly system?: unknown; readonly messages: unknown }, string> =>
  Either.mapBoth(
    anthropicRender.render(fromWindow(window, undefined), {
      model,
      maxTokens: 1,
      tools: undefined,
      reminder: undefined,
      minCacheableTokens: Number.POSITIVE_INFINITY,
      cache: false
    }),
    {
      onLeft: (invalid) => invalid.message,
      onRight: ({ request }) => ({
        model: request.model,
        // The count_tokens body: absent stays absent.
        ...(request.system === undefined ? {} : { system: request.system }),
        messages: request.messages
      })
    }
  )

/** Exact counts from Anthropic's `count_tokens`, cached per message id, with the calibrated fallback. @since 0.2.0 */
export const anthropic = (config: AnthropicConfig): ExactTokenCounter.Service => {
  const timeoutMs = config.timeoutMs ?? 30_000
  const settings: http.Settings = {
    provider: "anthropic",
    url: `${trimSlash(config.baseUrl ?? "https://api.anthropic.com")}/v1/messages/count_tokens`,
    headers: {
      "x-api-key": reveal(config.apiKey),
      "anthropic-version": config.anthropicVersion ?? "2023-06-01",
      accept: "application/json"
    },
    timeoutMs,
    idleTimeoutMs: timeoutMs,
    deadlineMs: timeoutMs,
    maxResponseBytes: 64 * 1024,
    retry: RetryPolicy.make({ maxRetries: 1, ...config.retry })
  }
  const cache = new Map<string, number>()
  const limit = config.maxCachedMessages ?? defaultMaxCachedMessages
  const remember = (id: string, tokens: number) => setBounded(cache, limit, id, tokens)
  const ask = (body: string): Effect.Effect<number, string> =>
    http.post(settings, body).pipe(
      Effect.mapError((error) => error.message),
      Effect.flatMap((opened) =>
        opened._tag === "Json"
          ? Effect.mapError(Schema.decodeUnknown(CountResponse)(opened.value), (error) => error.message)
          : Effect.fail("count_tokens answered with an event stream")
      ),
      Effect.map((response) => response.input_tokens)
    )
  return {
    name: "count_tokens",
    countWindow: (window) => {
      const messages = messagesOf(window)
      const fresh = messages.filter((message) => !cache.has(message.id))
      const cachedSum = messages.reduce((sum, message) => sum + (cache.get(message.id) ?? 0), 0)
      const rest = nonMessageTokens(window, messages)
      const ratio = Window.calibrationRatio(window)
      // Task state and signals change every turn; they keep the calibrated local count.
      const restCalibrated = Math.round(rest * ratio)
      if (fresh.length === 0) {
        return Effect.succeed({ total: cachedSum + restCalibrated, exact: true, source: "count_tokens" })
      }
      const fallback: Count = {
        total: cachedSum + Math.round((fresh.reduce((sum, message) => sum + message.tokens, 0) + rest) * ratio),
        exact: false,
        source: "calibrated"
      }
      return Either.match(countBody(window, config.model), {
        onLeft: () => Effect.succeed(fallback),
        onRight: (body) =>
          ask(JSON.stringify(body)).pipe(
            Effect.map((total): Count => {
              // What the cached messages and the task state do not explain belongs to the new messages,
              // shared in proportion to their local counts.
              const unexplained = Math.max(0, total - cachedSum - restCalibrated)
              const weights = fresh.reduce((sum, message) => sum + Math.max(1, message.tokens), 0)
              let given = 0
              fresh.forEach((message, index) => {
                const share =
                  index === fresh.length - 1
                    ? unexplained - given
                    : Math.round((unexplained * Math.max(1, message.tokens)) / weights)
                given += share
                remember(message.id, share)
              })
              return { total, exact: true, source: "count_tokens" }
            }),
            Effect.catchAll(() => Effect.succeed(fallback)),
            (counted) =>
              Tracing.span(counted, "ctxlog.count_tokens", { "ctxlog.messages.uncounted": fresh.length }, (count) => ({
                "ctxlog.tokens.counted": count.total,
                "ctxlog.tokens.exact": count.exact
              }))
          )
      })
    }
  }
}

/** `anthropic` as a layer. @since 0.2.0 */
export const layerAnthropic = (config: AnthropicConfig): Layer.Layer<ExactTokenCounter> =>
  Layer.sync(ExactTokenCounter, () => anthropic(config))

/** `tokenizer` as a layer. @since 0.2.0 */
export const layerTokenizer = (encoding: TokenCounter.Encoding = "o200k_base"): Layer.Layer<ExactTokenCounter> =>
  Layer.sync(ExactTokenCounter, () => tokenizer(encoding))

/** `calibrated` as a layer. @since 0.2.0 */
export const layerCalibrated: Layer.Layer<ExactTokenCounter> = Layer.succeed(ExactTokenCounter, calibrated)

/**
 * The best counter for a model: `count_tokens` for Anthropic when a key is given, the tokenizer for
 * OpenAI models it knows, the calibrated estimate otherwise.
 * @since 0.2.0
 */
export const layerFor = (provider: string, model: string, anthropicKey?: Secret): Layer.Layer<ExactTokenCounter> => {
  if (provider === "anthropic" && anthropicKey !== undefined) return layerAnthropic({ apiKey: anthropicKey, model })
  const encoding = provider === "anthropic" ? undefined : encodingFor(model)
  return encoding === undefined ? layerCalibrated : layerTokenizer(encoding)
}
