// Sizes and pacing of the fast-check properties, shared by every package's tests.
//
// The run count of each property comes from CTXLOG_PROPERTY_RUNS so that CI (a shared, often loaded
// 2-core box) runs a size that keeps every property file well under ~20 s, while a nightly-style run
// (CTXLOG_PROPERTY_RUNS=1000) keeps the full strength. The generators and assertions are the same in
// both: only the number of generated cases changes.

/** The environment variable holding the run count of every property (unset: the CI-sized defaults). */
const variable = "CTXLOG_PROPERTY_RUNS"

/**
 * The number of fast-check runs for one property. Unset: `ciDefault` (sized for CI). Set to N: N runs
 * scaled by `weight` (at least 1), so that properties whose single case is expensive (a PostgreSQL
 * round trip per step, a whole compaction host) take a fixed fraction of the nightly count.
 */
export const propertyRuns = (ciDefault: number, weight = 1): number => {
  const raw = process.env[variable]
  if (raw === undefined || raw.trim() === "") return ciDefault
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`${variable} must be a positive integer, got ${JSON.stringify(raw)}`)
  }
  return Math.max(1, Math.round(value * weight))
}

/**
 * Resolves on the next turn of the event loop (after pending I/O). Properties await it once per case:
 * a property run entirely in microtasks or synchronously would hold the worker's event loop for its
 * whole duration, and vitest's worker RPC ("onTaskUpdate") times out on a loaded machine.
 */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Whether a generated JSON value holds no object key `"__proto__"`. ctxlog refuses that key (decoding
 * would drop it, so the value could not round-trip), and `fc.jsonValue` generates it on purpose: the
 * generators of storable values filter with this. (Inside a string value the quotes are escaped, so
 * only a key matches.)
 */
export const storableKeys = (value: unknown): boolean => !JSON.stringify(value).includes('"__proto__":')
