/** What the model clients share: collecting a stream into its response, key handling. */
import type { LanguageModel } from "@ctxlog/core"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import type { InvalidRequest } from "../InvalidRequest.js"
import * as RetryPolicy from "../RetryPolicy.js"
import { defaults, providerError, type Settings } from "./http.js"

/** Run a chunk stream to its `Done` response. */
export const collect = (
  provider: string,
  stream: Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>
): Effect.Effect<LanguageModel.ModelResponse, LanguageModel.ProviderError> =>
  Effect.flatMap(
    Stream.runFold(stream, Option.none<LanguageModel.ModelResponse>(), (found, chunk) =>
      chunk._tag === "Done" ? Option.some(chunk.response) : found
    ),
    Option.match({
      onNone: () => Effect.fail(providerError(provider, "malformed_response", "the response never completed")),
      onSome: Effect.succeed
    })
  )

/** A secret given as a string or an Effect `Redacted`. */
export type Secret = string | Redacted.Redacted<string>

/** The secret's value, only at the edge where a header is built. */
export const reveal = (secret: Secret): string => (Redacted.isRedacted(secret) ? Redacted.value(secret) : secret)

/** `https://host/v1/` → `https://host/v1`. */
export const trimSlash = (url: string): string => url.replace(/\/+$/, "")

/** The limits every client takes from its config. */
export interface Limits {
  readonly timeoutMs?: number | undefined
  readonly idleTimeoutMs?: number | undefined
  readonly deadlineMs?: number | undefined
  readonly maxResponseBytes?: number | undefined
  readonly retry?: Partial<RetryPolicy.RetryPolicy> | undefined
}

/** A client's HTTP settings: its endpoint and headers, and its limits (120 s to the response, `http.defaults`). */
export const httpSettings = (
  provider: string,
  url: string,
  headers: { readonly [name: string]: string },
  limits: Limits
): Settings => ({
  provider,
  url,
  headers,
  timeoutMs: limits.timeoutMs ?? 120_000,
  idleTimeoutMs: limits.idleTimeoutMs ?? defaults.idleTimeoutMs,
  deadlineMs: limits.deadlineMs ?? defaults.deadlineMs,
  maxResponseBytes: limits.maxResponseBytes ?? defaults.maxResponseBytes,
  retry: RetryPolicy.make(limits.retry)
})

/**
 * The members every client has, from how it renders a request and how it streams one: a request that
 * does not render fails the stream with `bad_request`; `generate` collects the stream, retrying the
 * whole call under the policy.
 */
export const clientMembers = <Request>(
  provider: string,
  model: string,
  toRequest: (request: LanguageModel.ModelRequest) => Either.Either<Request, InvalidRequest>,
  streamRequest: (request: Request) => Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>,
  settings: Pick<Settings, "retry" | "deadlineMs">
) => {
  // `generate` shows nothing until the end, so it can replay the whole call: a stream broken or closed
  // early mid-way is retried by the same policy as the connection phase (whose final failures it skips),
  // all of it within the one deadline.
  const whole = <A>(call: Effect.Effect<A, LanguageModel.ProviderError>) =>
    RetryPolicy.retry(settings.retry)(call).pipe(
      Effect.timeoutFail({
        duration: settings.deadlineMs,
        onTimeout: () =>
          providerError(
            provider,
            "timeout",
            `the response did not complete within ${settings.deadlineMs} ms (deadlineMs)`
          )
      })
    )
  const stream = (request: LanguageModel.ModelRequest) =>
    Either.match(toRequest(request), {
      onLeft: (invalid) => Stream.fail(providerError(provider, "bad_request", invalid.message)),
      onRight: streamRequest
    })
  return {
    provider,
    model,
    generate: (request: LanguageModel.ModelRequest) => whole(collect(provider, stream(request))),
    stream,
    toRequest,
    streamRequest,
    generateRequest: (request: Request) => whole(collect(provider, streamRequest(request)))
  }
}

/**
 * OpenAI's environment: `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), `OPENAI_API_KEY`
 * (optional: local servers need none), `OPENAI_MODEL` (required).
 */
export const openAIEnvironment = Config.all({
  baseUrl: Config.withDefault(Config.string("OPENAI_BASE_URL"), "https://api.openai.com/v1"),
  apiKey: Config.option(Config.redacted("OPENAI_API_KEY")),
  model: Config.string("OPENAI_MODEL")
})

/** The headers of an OpenAI-style streaming call: a bearer key when there is one, then the caller's headers. */
export const bearerHeaders = (
  apiKey: Secret | undefined,
  headers: { readonly [name: string]: string } = {}
): { readonly [name: string]: string } => ({
  accept: "text/event-stream",
  // Headers: an undefined value would be sent as the string "undefined".
  ...(apiKey === undefined ? {} : { authorization: `Bearer ${reveal(apiKey)}` }),
  ...headers
})
