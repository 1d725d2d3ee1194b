/**
 * Retries of provider calls: exponential backoff (optionally jittered) on rate limits, overload,
 * server errors, network errors and timeouts, honouring the provider's `Retry-After`. Built from
 * Effect `Schedule`s; only the connection phase is retried (a stream that already produced output is
 * never replayed).
 *
 * @since 0.1.0
 */
import type { LanguageModel } from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Schedule from "effect/Schedule"

/** How to retry. @since 0.1.0 */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly maxRetries: number
  /** First backoff delay; doubled on each retry. */
  readonly baseDelayMs: number
  /** Longest wait. A `Retry-After` longer than this is not waited for: the error is returned at once. */
  readonly maxDelayMs: number
  /** Randomize each backoff delay (not a `Retry-After` delay). */
  readonly jitter: boolean
}

/** Four retries from 500 ms, at most 30 s, jittered. @since 0.1.0 */
export const defaults: RetryPolicy = { maxRetries: 4, baseDelayMs: 500, maxDelayMs: 30_000, jitter: true }

/** Fill a partial policy from the defaults. @since 0.1.0 */
export const make = (policy: Partial<RetryPolicy> = {}): RetryPolicy => ({ ...defaults, ...policy })

const retryableReasons: ReadonlySet<LanguageModel.ProviderErrorReason> = new Set([
  "rate_limited",
  "overloaded",
  "server",
  "network",
  "timeout"
])

/** Whether a failure is worth retrying. @since 0.1.0 */
export const isRetryable = (error: LanguageModel.ProviderError): boolean => retryableReasons.has(error.reason)

/**
 * The delay a response asks for: `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an
 * HTTP date. `now` is epoch milliseconds.
 * @since 0.1.0
 */
export const parseRetryAfter = (
  headers: { readonly get: (name: string) => string | null },
  now: number
): number | undefined => {
  const ms = headers.get("retry-after-ms")
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms))
  const value = headers.get("retry-after")
  if (value === null || value.trim() === "") return undefined
  if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** The retry schedule for a policy: its input is the failure, so `Retry-After` can set the delay. @since 0.1.0 */
export const schedule = (policy: RetryPolicy): Schedule.Schedule<unknown, LanguageModel.ProviderError> => {
  const exponential = Schedule.exponential(Duration.millis(policy.baseDelayMs))
  const backoff = policy.jitter ? Schedule.jittered(exponential) : exponential
  return Schedule.identity<LanguageModel.ProviderError>().pipe(
    Schedule.intersect(backoff),
    Schedule.intersect(Schedule.recurs(policy.maxRetries)),
    Schedule.whileInput(
      (error: LanguageModel.ProviderError) =>
        isRetryable(error) && (error.retryAfterMs === undefined || error.retryAfterMs <= policy.maxDelayMs)
    ),
    Schedule.modifyDelay(([[error]], delay) =>
      Duration.millis(Math.min(policy.maxDelayMs, error.retryAfterMs ?? Duration.toMillis(delay)))
    )
  )
}
