/**
 * Progress of a compaction, for a UI or a log: `maybeCompact` and `maybeProactiveCompress` report to
 * the `CompactionStatus` in context when there is one (started, the tier it runs, tokens before and
 * after, finished or failed). With none provided nothing is reported: the service is optional, and
 * `layerNoop` is the explicit default.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/** Which entry point reported. @since 0.1.0 */
export type Operation = "maybeCompact" | "maybeProactiveCompress"

/** The tier a compaction step runs: the soft tier, model summarization, the template fallback, or truncation to fit. @since 0.1.0 */
export type Tier = "soft" | "hard" | "proactive" | "template" | "fit"

/** One progress report. @since 0.1.0 */
export type Status =
  | { readonly _tag: "Started"; readonly operation: Operation; readonly stream: string; readonly tokensBefore: number }
  | { readonly _tag: "TierStarted"; readonly operation: Operation; readonly stream: string; readonly tier: Tier }
  | {
      readonly _tag: "Finished"
      readonly operation: Operation
      readonly stream: string
      /** The result's tag: `NoChange`, `SoftCompacted` or `Compacted`. */
      readonly result: string
      readonly tokensBefore: number
      readonly tokensAfter: number
    }
  | {
      readonly _tag: "Failed"
      readonly operation: Operation
      readonly stream: string
      readonly reason: string
      readonly tokensBefore: number
    }

/** Receives compaction progress. @since 0.1.0 */
export class CompactionStatus extends Context.Tag("@ctxlog/compaction/CompactionStatus")<
  CompactionStatus,
  CompactionStatus.Service
>() {}

/** @since 0.1.0 */
export declare namespace CompactionStatus {
  /** @since 0.1.0 */
  export interface Service {
    /** Called for every report; it must not fail (a slow sink slows compaction down). */
    readonly report: (status: Status) => Effect.Effect<void>
  }
}

/** A status service that drops every report. @since 0.1.0 */
export const noop: CompactionStatus.Service = { report: () => Effect.void }

/** The no-op status service as a layer. @since 0.1.0 */
export const layerNoop: Layer.Layer<CompactionStatus> = Layer.succeed(CompactionStatus, noop)

/** A status service that hands every report to `sink`. @since 0.1.0 */
export const layer = (sink: (status: Status) => Effect.Effect<void>): Layer.Layer<CompactionStatus> =>
  Layer.succeed(CompactionStatus, { report: sink })

/** Report to the status service in context, if any. @since 0.1.0 */
export const report = (status: Status): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(CompactionStatus), (service) =>
    Option.isSome(service) ? service.value.report(status) : Effect.void
  )
