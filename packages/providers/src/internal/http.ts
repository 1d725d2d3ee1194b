/**
 * POST a JSON body and open the answer: an SSE event stream (parsed by eventsource-parser) or a JSON
 * document. Plain `fetch` (Node 20) wrapped at the edge; failures become typed `ProviderError`s;
 * the connection phase is retried by the policy's schedule and bounded by a timeout. Every body is
 * read under a size cap, streams under an idle timeout between events and an overall deadline, and
 * a body past a limit is cancelled (the connection closed) rather than drained.
 */
import { LanguageModel } from "@ctxlog/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import * as RetryPolicy from "../RetryPolicy.js"

export interface Settings {
  readonly provider: string
  readonly url: string
  readonly headers: { readonly [name: string]: string }
  /** Time allowed to get the response (headers, or the whole body when it is not a stream). */
  readonly timeoutMs: number
  /** Time allowed between two stream events (pings and partial events do not count). */
  readonly idleTimeoutMs: number
  /** Time allowed for the whole call, retries and the whole stream included. */
  readonly deadlineMs: number
  /** Most bytes read of a JSON body or of a whole event stream (so also of one SSE line). */
  readonly maxResponseBytes: number
  readonly retry: RetryPolicy.RetryPolicy
}

export type Opened =
  | { readonly _tag: "Events"; readonly events: Stream.Stream<EventSourceMessage, LanguageModel.ProviderError> }
  | { readonly _tag: "Json"; readonly value: unknown }

export const providerError = (
  provider: string,
  reason: LanguageModel.ProviderErrorReason,
  detail: string,
  extra: { readonly status?: number | undefined; readonly retryAfterMs?: number | undefined } = {}
): LanguageModel.ProviderError =>
  new LanguageModel.ProviderError({
    provider,
    reason,
    detail,
    // A Schema class: an undefined field would be a key of the instance and of its encoding.
    ...(extra.status === undefined ? {} : { status: extra.status }),
    ...(extra.retryAfterMs === undefined ? {} : { retryAfterMs: extra.retryAfterMs })
  })

const describe = (cause: unknown): string => {
  if (cause instanceof Error) {
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : ""
    return `${cause.message}${inner}`
  }
  return String(cause)
}

/** The error type and message of a provider's JSON error body, when it has one. */
const errorBody = (text: string): { readonly type: string | undefined; readonly message: string | undefined } => {
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error: unknown = parsed.error
      if (typeof error === "object" && error !== null) {
        const type = "type" in error && typeof error.type === "string" ? error.type : undefined
        const message = "message" in error && typeof error.message === "string" ? error.message : undefined
        return { type, message }
      }
      if (typeof error === "string") return { type: undefined, message: error }
    }
  } catch {
    // Not JSON: the raw text is the detail.
  }
  return { type: undefined, message: undefined }
}

/** Map an HTTP failure to a reason. Anthropic uses 529 (and `overloaded_error`) for overload. */
export const classify = (
  provider: string,
  status: number,
  text: string,
  retryAfterMs: number | undefined
): LanguageModel.ProviderError => {
  const body = errorBody(text)
  const reason: LanguageModel.ProviderErrorReason =
    status === 401 || status === 403
      ? "auth"
      : status === 429
        ? "rate_limited"
        : status === 529 || status === 503 || body.type === "overloaded_error"
          ? "overloaded"
          : status === 408
            ? "timeout"
            : status >= 400 && status < 500
              ? "bad_request"
              : "server"
  const detail = body.message ?? (text.length > 0 ? text.slice(0, 500) : `HTTP ${status}`)
  return providerError(provider, reason, detail, { status, retryAfterMs })
}

/** How many bytes of an error body are read; the rest is dropped (the status already says what failed). */
export const errorBodyLimit = 64 * 1024

const mib = (bytes: number): string => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`)

const tooLarge = (settings: Settings, what: string): LanguageModel.ProviderError =>
  providerError(
    settings.provider,
    "malformed_response",
    `${what} exceeds the response size cap of ${mib(settings.maxResponseBytes)} (maxResponseBytes); the connection was closed`
  )

/** A body reader that is always cancelled when its scope closes, so the connection is released early. */
const acquireReader = (body: ReadableStream<Uint8Array>) =>
  Effect.acquireRelease(
    Effect.sync(() => body.getReader()),
    (reader) => Effect.promise(() => reader.cancel().catch(() => undefined))
  )

const read = (settings: Settings, reader: ReadableStreamDefaultReader<Uint8Array>) =>
  Effect.tryPromise({
    try: () => reader.read(),
    catch: (cause) => providerError(settings.provider, "network", `stream broke: ${describe(cause)}`)
  })

/**
 * Read a whole body, never holding more than `limit` bytes of it: past the limit, either fail
 * (`"fail"`) or keep the first `limit` bytes (`"truncate"`), and in both cases close the connection
 * without reading the rest.
 */
const readCapped = (
  settings: Settings,
  body: ReadableStream<Uint8Array> | null,
  limit: number,
  over: "fail" | "truncate"
): Effect.Effect<string, LanguageModel.ProviderError> =>
  body === null
    ? Effect.succeed("")
    : Effect.scoped(
        Effect.gen(function* () {
          const reader = yield* acquireReader(body)
          const decoder = new TextDecoder()
          let text = ""
          let total = 0
          for (;;) {
            const next = yield* read(settings, reader)
            if (next.done) return text + decoder.decode()
            const room = limit - total
            total += next.value.byteLength
            if (total > limit) {
              if (over === "fail") return yield* Effect.fail(tooLarge(settings, "the response body"))
              return text + decoder.decode(next.value.subarray(0, room))
            }
            text += decoder.decode(next.value, { stream: true })
          }
        })
      )

/**
 * The SSE events of a body. Each pull reads until one whole event is parsed: the idle timeout runs
 * between events (bytes that complete no event, such as a trickle, and `ping` events do not reset
 * it), and the remaining overall deadline bounds every pull. Bytes are counted as they arrive, so a
 * body (or a single unterminated line) past the size cap fails before it is held in memory.
 */
const events = (
  settings: Settings,
  body: ReadableStream<Uint8Array>,
  deadlineAt: number
): Stream.Stream<EventSourceMessage, LanguageModel.ProviderError> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const reader = yield* acquireReader(body)
      const decoder = new TextDecoder()
      const pending: Array<EventSourceMessage> = []
      const parser = createParser({
        // Keep-alives are not progress: an endless run of pings must still end in the idle timeout.
        onEvent: (event) => {
          if (event.event !== "ping") pending.push(event)
        }
      })
      let total = 0
      const nextEvent: Effect.Effect<Option.Option<EventSourceMessage>, LanguageModel.ProviderError> = Effect.gen(
        function* () {
          for (;;) {
            const event = pending.shift()
            if (event !== undefined) return Option.some(event)
            const next = yield* read(settings, reader)
            if (next.done) {
              parser.feed(decoder.decode())
              const last = pending.shift()
              return last === undefined ? Option.none() : Option.some(last)
            }
            total += next.value.byteLength
            if (total > settings.maxResponseBytes) return yield* Effect.fail(tooLarge(settings, "the event stream"))
            parser.feed(decoder.decode(next.value, { stream: true }))
          }
        }
      )
      const pull = Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const left = deadlineAt - now
        const idle = settings.idleTimeoutMs <= left
        return nextEvent.pipe(
          Effect.timeoutFail({
            duration: Math.max(0, idle ? settings.idleTimeoutMs : left),
            onTimeout: () =>
              providerError(
                settings.provider,
                "timeout",
                idle
                  ? `no stream event for ${settings.idleTimeoutMs} ms (idleTimeoutMs)`
                  : `the response did not complete within ${settings.deadlineMs} ms (deadlineMs)`
              )
          })
        )
      })
      return Stream.repeatEffectOption(
        pull.pipe(
          Effect.mapError(Option.some),
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(Option.none()), onSome: Effect.succeed }))
        )
      )
    })
  )

const attempt = (
  settings: Settings,
  body: string,
  deadlineAt: number
): Effect.Effect<Opened, LanguageModel.ProviderError> =>
  Effect.gen(function* () {
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(settings.url, {
          method: "POST",
          headers: { "content-type": "application/json", ...settings.headers },
          body,
          signal
        }),
      catch: (cause) => providerError(settings.provider, "network", describe(cause))
    })
    if (!response.ok) {
      const limit = Math.min(errorBodyLimit, settings.maxResponseBytes)
      const text = yield* Effect.orElseSucceed(readCapped(settings, response.body, limit, "truncate"), () => "")
      return yield* Effect.fail(
        classify(settings.provider, response.status, text, RetryPolicy.parseRetryAfter(response.headers, Date.now()))
      )
    }
    const type = response.headers.get("content-type") ?? ""
    if (type.includes("text/event-stream") && response.body !== null) {
      return { _tag: "Events", events: events(settings, response.body, deadlineAt) } satisfies Opened
    }
    const text = yield* readCapped(settings, response.body, settings.maxResponseBytes, "fail")
    return yield* Effect.try({
      try: (): Opened => ({ _tag: "Json", value: JSON.parse(text) }),
      catch: () =>
        providerError(settings.provider, "malformed_response", `response is not valid JSON: ${text.slice(0, 200)}`, {
          status: response.status
        })
    })
  }).pipe(
    Effect.timeoutFail({
      duration: settings.timeoutMs,
      onTimeout: () => providerError(settings.provider, "timeout", `no response within ${settings.timeoutMs} ms`)
    })
  )

/** Send the body, retrying the connection phase per the policy. */
export const post = (settings: Settings, body: string): Effect.Effect<Opened, LanguageModel.ProviderError> =>
  Effect.flatMap(Clock.currentTimeMillis, (start) =>
    RetryPolicy.retry(settings.retry)(attempt(settings, body, start + settings.deadlineMs)).pipe(
      Effect.timeoutFail({
        duration: settings.deadlineMs,
        onTimeout: () =>
          providerError(
            settings.provider,
            "timeout",
            `the response did not complete within ${settings.deadlineMs} ms (deadlineMs)`
          )
      })
    )
  )

/** Defaults shared by the clients: 60 s between events, 10 min per call, 64 MiB per body. */
export const defaults = { idleTimeoutMs: 60_000, deadlineMs: 600_000, maxResponseBytes: 64 * 1024 * 1024 } as const
