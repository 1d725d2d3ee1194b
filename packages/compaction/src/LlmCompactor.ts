/**
 * A compactor that asks a language model (the core `LanguageModel` port) for a structured summary
 * with fixed sections: goal, decisions, files touched, open tasks. The previous summary is rolled
 * forward; a timeout, a provider failure and an empty answer are typed `CompactionError`s.
 *
 * @since 0.1.0
 */
import { Compactor, LanguageModel } from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/llmPrompt.js"

/** Options of the LLM compactor. @since 0.1.0 */
export interface Options {
  /** Summary length asked for and passed as `maxOutputTokens` (default 1024). */
  readonly maxSummaryTokens?: number
  /** How long one model call may take (default 60 seconds). */
  readonly timeout?: Duration.DurationInput
  /** Sampling temperature (default 0). */
  readonly temperature?: number
  /** Characters of each tool output shown to the model (default 2000). */
  readonly maxToolOutputChars?: number
}

/** The section headings the summary is asked to use, in order. @since 0.1.0 */
export const sections: ReadonlyArray<string> = internal.sections

/** Build an LLM compactor over a language model. @since 0.1.0 */
export const make = (
  model: LanguageModel.LanguageModel.Service,
  options: Options = {}
): Compactor.Compactor.Service => {
  const maxSummaryTokens = options.maxSummaryTokens ?? 1024
  const timeout = Duration.decode(options.timeout ?? Duration.seconds(60))
  const name = `llm(${model.provider}/${model.model})`
  const fail = (reason: Compactor.CompactionError["reason"], detail: string) =>
    new Compactor.CompactionError({ compactor: name, reason, detail })
  return {
    name,
    compact: (input) =>
      Effect.gen(function* () {
        if (input.messages.length === 0 && input.previousSummary === null) {
          return yield* fail("input", "nothing to summarize: no messages and no previous summary")
        }
        const limit = Math.min(maxSummaryTokens, input.maxSummaryTokens ?? maxSummaryTokens)
        const request = internal.request(input, limit, options.maxToolOutputChars ?? 2000, options.temperature ?? 0)
        const response = yield* model.generate(request).pipe(
          Effect.mapError((error) => fail(error.reason === "timeout" ? "timeout" : "model", error.message)),
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () => fail("timeout", `no answer within ${Duration.format(timeout)}`)
          })
        )
        const summary = Compactor.relativeToWorkspace(internal.answerText(response.parts).trim(), input.workspace)
        if (summary.length === 0) return yield* fail("empty", `the model (${response.model}) returned no text`)
        return { summary }
      })
  }
}

/** The LLM compactor as the `Compactor` service, over the `LanguageModel` in context. @since 0.1.0 */
export const layer = (options: Options = {}): Layer.Layer<Compactor.Compactor, never, LanguageModel.LanguageModel> =>
  Layer.effect(
    Compactor.Compactor,
    Effect.map(LanguageModel.LanguageModel, (model) => make(model, options))
  )
