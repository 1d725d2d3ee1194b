/**
 * Usage-calibrated token estimates, for models with no local tokenizer (Claude 3+, most local
 * models). The log counts each message once with a local counter; after each call the provider's
 * reported prompt size is recorded (`UsageReported`), and the running ratio reported/estimated
 * (`Window.calibrationRatio`) corrects the next estimate.
 *
 * @since 0.1.0
 */
import { type LanguageModel, type TokenCounter, Window } from "@ctxlog/core"

/** A prompt-size estimate: raw (local counter) and corrected by observed usage. @since 0.1.0 */
export interface TokenEstimate {
  /** Stored message counts plus what the log does not hold (reminder, tool schemas), by the local counter. */
  readonly raw: number
  /** reported / estimated, observed so far (1 before any usage was reported). */
  readonly ratio: number
  /** `round(raw * ratio)`: what the provider is expected to report. */
  readonly calibrated: number
}

/** Text sent with the window that the log does not count. @since 0.1.0 */
export interface Extra {
  readonly turnReminder?: string
  readonly tools?: ReadonlyArray<LanguageModel.ToolSpec>
}

/**
 * Estimate the prompt a window renders to. Record `raw` (not `calibrated`) as the estimate in
 * `UsageReported`, or the correction would compound.
 * @since 0.1.0
 */
export const estimateTokens = (
  window: Window.Window,
  counter: TokenCounter.TokenCounter.Service,
  extra: Extra = {}
): TokenEstimate => {
  const reminder = extra.turnReminder === undefined ? 0 : counter.count(extra.turnReminder)
  const tools = extra.tools === undefined || extra.tools.length === 0 ? 0 : counter.count(JSON.stringify(extra.tools))
  const raw = window.tokens.total + reminder + tools
  const ratio = Window.calibrationRatio(window)
  return { raw, ratio, calibrated: Math.round(raw * ratio) }
}

/** Correct any raw estimate by the window's observed ratio. @since 0.1.0 */
export const calibrate = (window: Window.Window, raw: number): number =>
  Math.round(raw * Window.calibrationRatio(window))
