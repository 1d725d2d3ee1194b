/**
 * Recording renders and usage in the log. `recordRender` appends `PromptRendered { provider, model,
 * tokens, sha256 }` where the hash covers the exact bytes the clients send ({@link serialize});
 * `recordUsage` appends `UsageReported`, whose running totals (`window.calibration`) correct later
 * token estimates for models with no local tokenizer.
 *
 * @since 0.1.0
 */
import { ContextService, EventHash, type EventLog, type LanguageModel } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Built } from "./CtxBuilder.js"

/** The exact request body the clients send: `JSON.stringify` of the built request. @since 0.1.0 */
export const serialize = (request: unknown): string => JSON.stringify(request)

/** SHA-256 (hex) of the serialized request. @since 0.1.0 */
export const requestSha256 = (request: unknown): string => EventHash.sha256(serialize(request))

/** Who served (or will serve) a request. @since 0.1.0 */
export interface Target {
  readonly provider: string
  readonly model: string
}

/** Append `PromptRendered` for a built request. @since 0.1.0 */
export const recordRender = (
  stream: EventLog.StreamId,
  built: Built<unknown>,
  target: Target
): Effect.Effect<ContextService.Outcome, ContextService.LogError, ContextService.ContextService> =>
  Effect.flatMap(ContextService.ContextService, (service) =>
    service.run(stream, () =>
      Either.right([
        {
          _tag: "PromptRendered",
          provider: target.provider,
          model: target.model,
          tokens: built.stats.tokens,
          sha256: requestSha256(built.request)
        }
      ])
    )
  )

/**
 * Append `UsageReported`. `estimatedInputTokens` must be the *uncalibrated* local estimate of the
 * prompt (e.g. `built.stats.total`), so the ratio reported/estimated stays a ratio to the raw counter.
 * @since 0.1.0
 */
export const recordUsage = (
  stream: EventLog.StreamId,
  usage: LanguageModel.Usage,
  estimatedInputTokens: number,
  target: Target
): Effect.Effect<ContextService.Outcome, ContextService.LogError, ContextService.ContextService> =>
  Effect.flatMap(ContextService.ContextService, (service) =>
    service.run(stream, () =>
      Either.right([
        {
          _tag: "UsageReported",
          provider: target.provider,
          model: target.model,
          estimatedInputTokens: Math.max(0, Math.round(estimatedInputTokens)),
          inputTokens: usage.inputTokens,
          outputTokens: usage.outputTokens,
          cacheReadTokens: usage.cacheReadTokens,
          cacheWriteTokens: usage.cacheWriteTokens
        }
      ])
    )
  )
