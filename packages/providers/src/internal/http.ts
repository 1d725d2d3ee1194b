/**
 * POST a JSON body and open the answer: an SSE event stream (parsed by eventsource-parser) or a JSON
 * document. Plain `fetch` (Node 20) wrapped at the edge; failures become typed `ProviderError`s;
 * the connection phase is retried by the policy's schedule and bounded by a timeout.
 */
import { LanguageModel } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import * as RetryPolicy from "../RetryPolicy.js"

export interface Settings {
  readonly provider: string
  readonly url: string
  readonly headers: { readonly [name: string]: string }
  /** Time allowed to get the response (headers, or the whole body when it is not a stream). */
  readonly timeoutMs: number
  /** Time allowed between two stream events. */
  readonly idleTimeoutMs: number
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

const events = (
  settings: Settings,
  body: ReadableStream<Uint8Array>
): Stream.Stream<EventSourceMessage, LanguageModel.ProviderError> =>
  Stream.suspend(() => {
    const pending: Array<EventSourceMessage> = []
    const parser = createParser({ onEvent: (event) => pending.push(event) })
    return Stream.fromReadableStream({
      evaluate: () => body,
      onError: (cause) => providerError(settings.provider, "network", `stream broke: ${describe(cause)}`)
    }).pipe(
      Stream.decodeText(),
      Stream.mapConcat((chunk) => {
        parser.feed(chunk)
        return pending.splice(0)
      }),
      Stream.timeoutFail(
        () => providerError(settings.provider, "timeout", `no stream data for ${settings.idleTimeoutMs} ms`),
        settings.idleTimeoutMs
      )
    )
  })

const attempt = (settings: Settings, body: string): Effect.Effect<Opened, LanguageModel.ProviderError> =>
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
    const readText = Effect.tryPromise({
      try: () => response.text(),
      catch: (cause) => providerError(settings.provider, "network", `reading the body failed: ${describe(cause)}`)
    })
    if (!response.ok) {
      const text = yield* Effect.orElseSucceed(readText, () => "")
      return yield* Effect.fail(
        classify(settings.provider, response.status, text, RetryPolicy.parseRetryAfter(response.headers, Date.now()))
      )
    }
    const type = response.headers.get("content-type") ?? ""
    if (type.includes("text/event-stream") && response.body !== null) {
      return { _tag: "Events", events: events(settings, response.body) } satisfies Opened
    }
    const text = yield* readText
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
  Effect.retry(attempt(settings, body), RetryPolicy.schedule(settings.retry))
