/**
 * Work counters: how much of some work ctxlog did (item references copied by the projection, rows the
 * store decoded, statements it ran, turns a builder rendered), kept as effect `Metric` counters in
 * Effect's metric registry. Tests count work with them instead of timing it; an application can read
 * them like any other metric (`Metric.value`, `Metric.snapshot`, an exporter).
 *
 * The counters sit on synchronous hot paths (a window fold, an append transaction), so they are
 * incremented with the metric's synchronous hook (`unsafeUpdate`), not with an effect, and carry no
 * labels (the fiber's `Effect.labelMetrics` labels do not apply). A counter is process-global, as every
 * metric of the registry is: a reader takes the change over what it ran ({@link since}), never resets.
 *
 * @since 0.8.0
 */
import * as Metric from "effect/Metric"
import type * as MetricLabel from "effect/MetricLabel"

/** A work counter: an effect counter metric of numbers. @since 0.8.0 */
export type WorkCounter = Metric.Metric.Counter<number>

/** No labels: the one array every update and read passes (none is allocated per call). */
const noLabels: ReadonlyArray<MetricLabel.MetricLabel> = Object.freeze([])

/**
 * A work counter named `name` (`ctxlog.<package>.<what>`): `Metric.counter(name, { description })`. Two
 * counters of one name and description are one metric.
 *
 * @since 0.8.0
 */
export const make = (name: string, description: string): WorkCounter => Metric.counter(name, { description })

/** Add `amount` (1 unless given) to `counter`, synchronously: for the hot paths that count. @since 0.8.0 */
export const add = (counter: WorkCounter, amount = 1): void => counter.unsafeUpdate(amount, noLabels)

/** The count of `counter` (what `Metric.value` reads, without an effect). @since 0.8.0 */
export const value = (counter: WorkCounter): number => counter.unsafeValue(noLabels).count

/**
 * A reading of a set of counters: each counter's change since the reading was taken or last
 * `reset`. The counts are enumerable properties read when asked (so `{ ...reading }` and
 * `JSON.stringify(reading)` give the numbers at that moment); `reset` is not enumerable.
 *
 * @since 0.8.0
 */
export type Reading<Counters extends Record<string, WorkCounter>> = {
  readonly [K in keyof Counters]: number
} & {
  /** Start counting again from the counters' present values. */
  readonly reset: () => void
}

/**
 * Take a {@link Reading} of `counters` (a record of work counters): what tests count work with. The
 * metrics are global to the process, so a reading subtracts the values it started from instead of
 * zeroing them: test files sharing a worker (ADR 0149) and counters another reading watches are left
 * alone.
 *
 * @since 0.8.0
 */
export const since = <Counters extends Record<string, WorkCounter>>(counters: Counters): Reading<Counters> => {
  const entries = Object.entries(counters)
  const base = new Map<string, number>()
  const reset = () => {
    for (const [name, counter] of entries) base.set(name, value(counter))
  }
  reset()
  const reading = {}
  for (const [name, counter] of entries) {
    Object.defineProperty(reading, name, {
      enumerable: true,
      get: () => value(counter) - (base.get(name) ?? 0)
    })
  }
  Object.defineProperty(reading, "reset", { enumerable: false, value: reset })
  return reading as Reading<Counters>
}
