/** What the model clients share: collecting a stream into its response, key handling. */
import type { LanguageModel } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { providerError } from "./http.js"

/** Run a chunk stream to its `Done` response. */
export const collect = (
  provider: string,
  stream: Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>
): Effect.Effect<LanguageModel.ModelResponse, LanguageModel.ProviderError> =>
  Effect.flatMap(
    Stream.runFold(stream, undefined as LanguageModel.ModelResponse | undefined, (found, chunk) =>
      chunk._tag === "Done" ? chunk.response : found
    ),
    (response) =>
      response === undefined
        ? Effect.fail(providerError(provider, "malformed_response", "the response never completed"))
        : Effect.succeed(response)
  )

/** A secret given as a string or an Effect `Redacted`. */
export type Secret = string | Redacted.Redacted<string>

/** The secret's value, only at the edge where a header is built. */
export const reveal = (secret: Secret): string => (Redacted.isRedacted(secret) ? Redacted.value(secret) : secret)

/** `https://host/v1/` → `https://host/v1`. */
export const trimSlash = (url: string): string => url.replace(/\/+$/, "")
