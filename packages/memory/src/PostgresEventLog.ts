/**
 * The shared durable log: PostgreSQL through kysely and `pg`, for several processes or machines.
 *
 * - Appends on different streams run at once (ADR 0066): one `ctxlog_append` call each (one round trip
 *   when the store wrote the stream's head last), a compare-and-set on the stream row as the per-stream
 *   lock, a shared advisory lock (the global-read gate) that a reader of the whole log takes exclusively,
 *   so it never skips an event whose smaller position commits later. Hash chains stay linear.
 * - The schema is created and migrated on open (kysely `Migrator`, migrations shipped in code); triggers
 *   reject UPDATE, DELETE and TRUNCATE on `events`. The hot path runs named (prepared) statements.
 * - Besides the `EventLog`, the layer provides a snapshot-backed `WindowRepository`, the `SnapshotStore`
 *   and the `RecallIndex` (`tsvector` + `ts_rank`, a projection that catches up after commit).
 *
 * @since 0.1.0
 */
import type { EventLog } from "@ctxlog/core"
import type * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { DriverMissing } from "./Driver.js"
import { build, type CommonOptions } from "./internal/layer.js"
import * as backend from "./internal/postgresBackend.js"
import type * as SqliteEventLog from "./SqliteEventLog.js"

/** What the layer provides: the services of every durable layer (`SqliteEventLog.Services`). @since 0.1.0 */
export type Services = SqliteEventLog.Services

/** Options of the PostgreSQL log. @since 0.1.0 */
export interface Options extends CommonOptions {
  /** A connection URL, e.g. `postgres://user:pass@127.0.0.1:5432/ctxlog`. */
  readonly url: string
  /**
   * Pool size (default 10): the appends this process runs at once (each holds a connection for its one
   * round trip) plus its reads. Size it to the concurrent writers and readers of the process; the
   * server's `max_connections` bounds every process's pool together.
   */
  readonly maxConnections?: number | undefined
}

/** Connect, migrate and build the services; the pool ends with the scope. @since 0.1.0 */
export const make = (
  options: Options
): Effect.Effect<Context.Context<Services>, EventLog.StoreError | DriverMissing, Scope.Scope> =>
  build(backend.make({ url: options.url, maxConnections: options.maxConnections ?? 10 }), options)

/** The PostgreSQL log and its companions (`EventLog`, `WindowRepository`, `SnapshotStore`, `RecallIndex`). @since 0.1.0 */
export const layer = (options: Options): Layer.Layer<Services, EventLog.StoreError | DriverMissing> =>
  Layer.scopedContext(make(options))
