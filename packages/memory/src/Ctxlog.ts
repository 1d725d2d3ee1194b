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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Driver from "./Driver.js"
import * as FullTextRecall from "./FullTextRecall.js"
import type { RecallIndex } from "./RecallIndex.js"
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

type Base = EventLog.EventLog | WindowRepository.WindowRepository | TokenCounter.TokenCounter | Ids.Ids

/** A layer built in the scope of the stack's own layer. */
const built = <I, E, R>(layer: Layer.Layer<I, E, R>): Effect.Effect<Context.Context<I>, E, R | Scope.Scope> =>
  Effect.flatMap(Effect.scope, (scope) => Layer.buildWithScope(layer, scope))

/** A part of the stack: an override's layer, built, or the default's own effect. */
const part = <I, E, R>(
  override: Layer.Layer<I, E, R> | undefined,
  fallback: Effect.Effect<Context.Context<I>, E, R | Scope.Scope>
): Effect.Effect<Context.Context<I>, E, R | Scope.Scope> => (override === undefined ? fallback : built(override))

// One layer whose effect makes the parts in order (counter and ids, the store, recall, the service),
// calling each default's own constructor, instead of a tree of `provideMerge` / `mergeAll` over their
// layers: Effect builds every node of a layer tree with its own memo map lookups, fibers and scope, which
// was about half of opening a store and closing it again (reopening a 100-message conversation: 1.7 ms of
// open and 0.5 ms of close out of ~3 ms; issue 24, ADR 0073). What the stack provides is the same; an
// override given as a layer is built as one, and a clock override still merges.
const assemble = <S, E, R extends S | Base>(
  store: Effect.Effect<Context.Context<S | EventLog.EventLog | WindowRepository.WindowRepository>, E, Scope.Scope>,
  recall: Effect.Effect<Context.Context<RecallSource.RecallSource>, never, R | Scope.Scope>,
  overrides: Overrides<R>
): Layer.Layer<S | Companions, E> => {
  const live: Layer.Layer<S | Companions, E> = Layer.scopedContext(
    Effect.gen(function* () {
      const counter = yield* part(
        overrides.tokenCounter,
        Effect.succeed(Context.make(TokenCounter.TokenCounter, TokenCounter.gpt()))
      )
      const ids = yield* part(overrides.ids, Effect.succeed(Context.make(Ids.Ids, Ids.uuidV7)))
      const stored = yield* store
      const below: Context.Context<S | Base> = Context.merge(Context.merge(counter, ids), stored)
      // What recall may use is a part of `below` (R extends S | Base), as a checked assignment.
      const forRecall: Context.Context<R> = below
      const ports = Context.merge(below, yield* Effect.provide(recall, forRecall))
      const service = yield* Effect.provide(ContextService.make(), ports)
      return Context.add(ports, ContextService.ContextService, service)
    })
  )
  return overrides.clock === undefined ? live : Layer.merge(live, Layer.setClock(overrides.clock))
}

/** Full-text recall over the store, or the override's layer. */
const recallOf = <R>(
  override: Layer.Layer<RecallSource.RecallSource, never, R> | undefined
): Effect.Effect<
  Context.Context<RecallSource.RecallSource>,
  never,
  R | RecallIndex | TokenCounter.TokenCounter | Scope.Scope
> =>
  part<RecallSource.RecallSource, never, R | RecallIndex | TokenCounter.TokenCounter>(
    override,
    Effect.map(FullTextRecall.make(), (source) => Context.make(RecallSource.RecallSource, source))
  )

/** `ContextService` over a SQLite file (`SqliteEventLog` options: `filename`, `readonly`, `create`, ...). @since 0.1.0 */
export const sqlite = (
  options: SqliteEventLog.Options & Overrides<DurableRecallDeps>
): Layer.Layer<Services, SqliteEventLog.OpenError> =>
  assemble(SqliteEventLog.make(options), recallOf(options.recall), options)

/** `ContextService` over PostgreSQL (`PostgresEventLog` options: `url`, `maxConnections`, ...). @since 0.1.0 */
export const postgres = (
  options: PostgresEventLog.Options & Overrides<DurableRecallDeps>
): Layer.Layer<Services, EventLog.StoreError | Driver.DriverMissing> =>
  assemble(PostgresEventLog.make(options), recallOf(options.recall), options)

/**
 * `ContextService` over an in-memory log that lives as long as the layer: no driver, no files. With
 * `hmacKey` its chain is keyed; `integrity: "unverified"` skips the chain check on load.
 * @since 0.1.0
 */
export const memory = (
  options: Overrides<TokenCounter.TokenCounter> & WindowRepository.IntegrityOptions = {}
): Layer.Layer<Companions> =>
  assemble(
    built(
      Layer.provideMerge(
        WindowRepositoryModule.layerReplay({
          hmacKey: options.hmacKey,
          integrity: options.integrity
        }),
        EventLog.layerMemory({ hmacKey: options.hmacKey })
      )
    ),
    built(options.recall ?? RecallSource.layerEmpty),
    options
  )
