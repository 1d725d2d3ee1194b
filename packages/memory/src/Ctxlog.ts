/**
 * One-line setup: a `ContextService` with everything it needs, over SQLite, PostgreSQL or memory.
 *
 * ```ts
 * const live = Ctxlog.sqlite({ filename: "agent.db" })
 * Effect.runPromise(program.pipe(Effect.provide(live)))
 * ```
 *
 * Each layer provides `ContextService` with its log (and, for the durable ones, the snapshot repository,
 * `SnapshotStore` and `RecallIndex`), a token counter (`gpt-tokenizer`, o200k_base), UUIDv7 ids, the
 * Effect clock and a recall source (full-text recall over the log; none in memory). Each of those can be
 * replaced through the options.
 *
 * @since 0.1.0
 */
import {
  ContextService,
  EventLog,
  Ids,
  RecallSource,
  TokenCounter,
  type WindowRepository,
  WindowRepository as WindowRepositoryModule
} from "@ctxlog/core"
import type * as Clock from "effect/Clock"
import * as Layer from "effect/Layer"
import type * as Driver from "./Driver.js"
import * as FullTextRecall from "./FullTextRecall.js"
import * as PostgresEventLog from "./PostgresEventLog.js"
import * as SqliteEventLog from "./SqliteEventLog.js"

/** The companions of `ContextService` every layer here provides. @since 0.1.0 */
export type Companions =
  | ContextService.ContextService
  | EventLog.EventLog
  | WindowRepository.WindowRepository
  | TokenCounter.TokenCounter
  | Ids.Ids
  | RecallSource.RecallSource

/** What the durable layers provide: the companions plus the store's `SnapshotStore` and `RecallIndex`. @since 0.1.0 */
export type Services = Companions | SqliteEventLog.Services

/** Replacements for the defaults; `R` is what a replacement recall source may use. @since 0.1.0 */
export interface Overrides<R> {
  /** Default `TokenCounter.layerGpt()` (o200k_base). */
  readonly tokenCounter?: Layer.Layer<TokenCounter.TokenCounter>
  /** Default `Ids.layerUuidV7`. */
  readonly ids?: Layer.Layer<Ids.Ids>
  /** The clock event timestamps come from (default: Effect's clock). */
  readonly clock?: Clock.Clock
  /** Default: full-text recall over the log (`FullTextRecall.layer()`); none for `memory()`. */
  readonly recall?: Layer.Layer<RecallSource.RecallSource, never, R>
}

/** What a replacement recall source of a durable layer may use. @since 0.1.0 */
export type DurableRecallDeps = SqliteEventLog.Services | TokenCounter.TokenCounter

const assemble = <S, E, R>(
  store: Layer.Layer<S, E>,
  recall: Layer.Layer<RecallSource.RecallSource, never, R>,
  overrides: Overrides<R>
) => {
  const basics = Layer.mergeAll(overrides.tokenCounter ?? TokenCounter.layerGpt(), overrides.ids ?? Ids.layerUuidV7)
  const live = ContextService.layer().pipe(
    Layer.provideMerge(recall),
    Layer.provideMerge(store),
    Layer.provideMerge(basics)
  )
  return overrides.clock === undefined ? live : Layer.merge(live, Layer.setClock(overrides.clock))
}

/** `ContextService` over a SQLite file (`SqliteEventLog` options: `filename`, `readonly`, `create`, ...). @since 0.1.0 */
export const sqlite = (
  options: SqliteEventLog.Options & Overrides<DurableRecallDeps>
): Layer.Layer<Services, SqliteEventLog.OpenError> =>
  assemble(SqliteEventLog.layer(options), options.recall ?? FullTextRecall.layer(), options)

/** `ContextService` over PostgreSQL (`PostgresEventLog` options: `url`, `maxConnections`, ...). @since 0.1.0 */
export const postgres = (
  options: PostgresEventLog.Options & Overrides<DurableRecallDeps>
): Layer.Layer<Services, EventLog.StoreError | Driver.DriverMissing> =>
  assemble(PostgresEventLog.layer(options), options.recall ?? FullTextRecall.layer(), options)

/**
 * `ContextService` over an in-memory log that lives as long as the layer: no driver, no files. With
 * `hmacKey` its chain is keyed; `integrity: "unverified"` skips the chain check on load.
 * @since 0.1.0
 */
export const memory = (
  options: Overrides<TokenCounter.TokenCounter> & WindowRepository.IntegrityOptions = {}
): Layer.Layer<Companions> =>
  assemble(
    Layer.provideMerge(
      WindowRepositoryModule.layerReplay({
        hmacKey: options.hmacKey,
        integrity: options.integrity
      }),
      EventLog.layerMemory({ hmacKey: options.hmacKey })
    ),
    options.recall ?? RecallSource.layerEmpty,
    options
  )
