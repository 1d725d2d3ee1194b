/**
 * A deterministic compactor: no model call. It keeps the goal, the user's requests, the assistant's
 * decisions, every tool call with its outcome, the file paths mentioned and the errors seen, and
 * rolls the previous summary forward as carry-over. The summary never exceeds `maxBytes`.
 *
 * @since 0.1.0
 */
import { Compactor } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as internal from "./internal/templateSummary.js"

/** Options of the template compactor. @since 0.1.0 */
export interface Options {
  /** Upper bound of the summary in UTF-8 bytes (default 4096). */
  readonly maxBytes?: number
}

/** The default `maxBytes`. @since 0.1.0 */
export const defaultMaxBytes = 4096

// A token is rarely shorter than 3 bytes of English or code; used to turn `maxSummaryTokens` into bytes.
const bytesPerToken = 3

/** Build a template compactor: a pure function of its input, so it answers at once too (`compactNow`). @since 0.1.0 */
export const make = (options: Options = {}): Compactor.Compactor.Service => {
  const maxBytes = options.maxBytes ?? defaultMaxBytes
  const compactNow = (
    input: Compactor.CompactionInput
  ): Either.Either<Compactor.CompactionOutput, Compactor.CompactionError> => {
    if (!Number.isInteger(maxBytes) || maxBytes < 64) {
      return Either.left(
        new Compactor.CompactionError({
          compactor: "template",
          reason: "input",
          detail: `maxBytes must be an integer of at least 64, got ${maxBytes}`
        })
      )
    }
    if (input.messages.length === 0 && input.previousSummary === null) {
      return Either.left(
        new Compactor.CompactionError({
          compactor: "template",
          reason: "input",
          detail: "nothing to summarize: no messages and no previous summary"
        })
      )
    }
    const cap =
      input.maxSummaryTokens === undefined
        ? maxBytes
        : Math.max(64, Math.min(maxBytes, input.maxSummaryTokens * bytesPerToken))
    const sections = internal.extract(input.messages, input.previousSummary, input.goal ?? null)
    // Relative paths only shorten the text, so the cap still holds.
    return Either.right({
      summary: Compactor.relativeToWorkspace(internal.renderWithin(sections, cap), input.workspace)
    })
  }
  return {
    name: "template",
    compact: (input) => Effect.suspend(() => compactNow(input)),
    compactNow
  }
}

/** The template compactor as the `Compactor` service. @since 0.1.0 */
export const layer = (options: Options = {}): Layer.Layer<Compactor.Compactor> =>
  Layer.succeed(Compactor.Compactor, make(options))
