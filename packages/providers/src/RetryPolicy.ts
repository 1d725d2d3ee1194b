/**
 * The one retry policy of provider calls: exponential backoff (optionally jittered) on rate limits,
 * overload, server errors, network errors (a reset, or a stream that closed cleanly before its final
 * event) and timeouts, honouring the provider's `Retry-After` up to `maxDelayMs`. One decision function
 * ({@link decide}) serves both loops that use it: the clients' connection phase (`internal/http.ts`, and
 * `generate`, which retries the whole call) and a caller's whole streamed call ({@link retry}, for an
 * agent that shows the stream as it comes and so must reset its display before a retry).
 *
 * A failure the policy does not retry comes back as it was; one it gave up on says so in its detail
 * ("gave up after 5 attempts", or how long the API asked to wait) and carries `attempts`, which makes
 * it final: {@link isRetryable} is false for it, so an outer loop never retries it again.
 *
 * @since 0.1.0
 */
import { LanguageModel } from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/** How to retry. @since 0.1.0 */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  readonly maxRetries: number
  /** First backoff delay; doubled on each retry. */
  readonly baseDelayMs: number
  /**
   * Longest wait. A `Retry-After` longer than this is not waited for: the call fails at once with an
   * error saying how long the API asked to wait.
   */
  readonly maxDelayMs: number
  /** Randomize each backoff delay by ±20% (not a `Retry-After` delay). */
  readonly jitter: boolean
}

/** Four retries from 500 ms, waits of at most 30 s, jittered. @since 0.1.0 */
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

/**
 * Whether a failure is worth retrying: a transient reason, and not already given up on by the policy
 * (`attempts` set). @since 0.1.0
 */
export const isRetryable = (error: LanguageModel.ProviderError): boolean =>
  error.attempts === undefined && retryableReasons.has(error.reason)

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

/** `1.5 s`, `2 min 5 s`, `250 ms`: a wait as a person reads it. @since 0.2.0 */
export const formatWait = (ms: number): string => {
  if (ms < 1000) return `${Math.round(ms)} ms`
  const seconds = Math.round(ms / 100) / 10
  if (seconds < 120) return `${seconds} s`
  const minutes = Math.floor(seconds / 60)
  const rest = Math.round(seconds - minutes * 60)
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`
}

/** What the policy does after a failure. @since 0.2.0 */
export type Decision =
  | { readonly _tag: "Retry"; readonly delayMs: number }
  | { readonly _tag: "Stop"; readonly error: LanguageModel.ProviderError }

const final = (error: LanguageModel.ProviderError, attempts: number, why: string): LanguageModel.ProviderError =>
  new LanguageModel.ProviderError({
    provider: error.provider,
    reason: error.reason,
    detail: `${error.detail}; ${why}`,
    // A Schema class: an undefined field would be a key of the instance and of its encoding.
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    attempts
  })

/** The backoff before retry number `retries + 1`, without jitter. */
const backoff = (policy: RetryPolicy, retries: number): number =>
  Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retries)

/**
 * The policy's decision after a failure, `retries` retries into the call: retry after a delay (the
 * `Retry-After` when the API gave one, else the backoff), or stop with the error to report: as it was
 * when it is not transient (or was already final), else marked final with a sentence saying why the
 * policy gives up.
 * @since 0.2.0
 */
export const decide = (
  policy: RetryPolicy,
  error: LanguageModel.ProviderError,
  retries: number,
  random: () => number = Math.random
): Decision => {
  if (!isRetryable(error)) return { _tag: "Stop", error }
  const attempts = retries + 1
  if (error.retryAfterMs !== undefined && error.retryAfterMs > policy.maxDelayMs) {
    return {
      _tag: "Stop",
      error: final(
        error,
        attempts,
        `the API asked to wait ${formatWait(error.retryAfterMs)} before retrying (retry-after), longer than the ` +
          `${formatWait(policy.maxDelayMs)} this client waits (retry.maxDelayMs): not retried, try again in ` +
          `${formatWait(error.retryAfterMs)}`
      )
    }
  }
  if (retries >= policy.maxRetries) {
    return {
      _tag: "Stop",
      error: final(
        error,
        attempts,
        `gave up after ${attempts} attempt${attempts === 1 ? "" : "s"} (retry.maxRetries ${policy.maxRetries})`
      )
    }
  }
  const base = backoff(policy, retries)
  const delayMs = error.retryAfterMs ?? (policy.jitter ? Math.round(base * (0.8 + 0.4 * random())) : base)
  return { _tag: "Retry", delayMs }
}

/** What a caller is told before each retry. @since 0.2.0 */
export interface RetryEvent {
  readonly error: LanguageModel.ProviderError
  /** The attempt that failed (1 for the first call). */
  readonly attempt: number
  /** The wait before the next attempt. */
  readonly delayMs: number
}

/**
 * Run a whole provider call under the policy: on a transient failure wait ({@link decide}) and run it
 * again, up to `maxRetries` times; `onRetry` runs before each wait (an agent resets its display of a
 * half-streamed answer there). The last failure comes back marked final, saying that the policy gave
 * up. A failure already final (a client's own connection retries gave up) is not retried again.
 * @since 0.2.0
 */
export const retry =
  (policy: RetryPolicy, options: { readonly onRetry?: (event: RetryEvent) => Effect.Effect<void> } = {}) =>
  <A, R>(self: Effect.Effect<A, LanguageModel.ProviderError, R>): Effect.Effect<A, LanguageModel.ProviderError, R> => {
    const loop = (retries: number): Effect.Effect<A, LanguageModel.ProviderError, R> =>
      Effect.catchAll(self, (error) => {
        const decision = decide(policy, error, retries)
        if (decision._tag === "Stop") return Effect.fail(decision.error)
        const event: RetryEvent = { error, attempt: retries + 1, delayMs: decision.delayMs }
        return (options.onRetry === undefined ? Effect.void : options.onRetry(event)).pipe(
          Effect.zipRight(Effect.sleep(Duration.millis(decision.delayMs))),
          Effect.zipRight(Effect.suspend(() => loop(retries + 1)))
        )
      })
    return loop(0)
  }
