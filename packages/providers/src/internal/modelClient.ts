/** What the model clients share: collecting a stream into its response, key handling. */
import type { LanguageModel } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { providerError } from "./http.js"

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
