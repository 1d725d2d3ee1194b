import { ContextService, Ids, TokenCounter } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FullTextRecall, PostgresEventLog, SqliteEventLog } from "../../src/index.js"
import { freshDatabase } from "./postgres.js"
import { postgresRawLayer, type RawSql, sqliteRawLayer, tempFile } from "./stores.js"

// Several stores over ONE database, each acting for an owner (or for none: the administrator's view), as
// separate services of a multi-tenant deployment would open it.

/** A store's services plus the window façade over it. */
export type Tenant = SqliteEventLog.Services | ContextService.ContextService

/** One database, opened per owner. */
export interface Shared {
  /** The store acting for `owner` (every stream when undefined), with the window façade over it. */
  readonly as: (owner?: string, options?: Omit<SqliteEventLog.Options, "filename" | "owner">) => Layer.Layer<Tenant>
  /** Raw SQL on the database (open it after a store created the schema). */
  readonly raw: Layer.Layer<RawSql>
}

const facade = ContextService.layer().pipe(
  Layer.provideMerge(FullTextRecall.layer()),
  Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7))
)

const withOwner = (owner: string | undefined) => (owner === undefined ? {} : { owner })

/** The backends, each a fresh database per call. */
export const sharedBackends: ReadonlyArray<readonly [string, Effect.Effect<Shared>]> = [
  [
    "SQLite",
    Effect.sync(() => {
      const filename = tempFile()
      return {
        as: (owner, options = {}) =>
          facade.pipe(
            Layer.provideMerge(SqliteEventLog.layer({ ...options, ...withOwner(owner), filename })),
            Layer.orDie
          ),
        raw: sqliteRawLayer(filename).pipe(Layer.orDie)
      }
    })
  ],
  [
    "PostgreSQL",
    Effect.map(
      Effect.orDie(freshDatabase("tenancy")),
      (url): Shared => ({
        as: (owner, options = {}) =>
          facade.pipe(
            Layer.provideMerge(PostgresEventLog.layer({ ...options, ...withOwner(owner), url, maxConnections: 3 })),
            Layer.orDie
          ),
        raw: postgresRawLayer(url).pipe(Layer.orDie)
      })
    )
  ]
]
