// The compaction tests that touch the log run on both durable stores: a SQLite file and a fresh
// database on the real PostgreSQL server the memory package's global setup starts.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Compactor, ContextService, type EventLog, Ids, RecallSource, TokenCounter } from "@ctxlog/core"
import { SqliteEventLog } from "@ctxlog/memory"
import * as Layer from "effect/Layer"
import { layer as postgresLog } from "../../../memory/test/support/postgres.js"
import type {} from "../../../memory/test/support/postgresServer.js"
import { type CompactorProbe, countingCompactor } from "../harness.js"

/** A store under test: its name and a fresh log each time. */
export interface Store {
  readonly name: "SQLite" | "PostgreSQL"
  readonly log: () => Layer.Layer<SqliteEventLog.Services, SqliteEventLog.OpenError>
}

/** Both durable stores. */
export const stores: ReadonlyArray<Store> = [
  {
    name: "SQLite",
    log: () => SqliteEventLog.layer({ filename: join(mkdtempSync(join(tmpdir(), "ctxlog-compaction-")), "log.db") })
  },
  { name: "PostgreSQL", log: () => postgresLog("compaction") }
]

/** The window service over a fresh log of `store`, without a compactor (bring your own). */
export const storeCore = (
  store: Store
): Layer.Layer<
  ContextService.ContextService | EventLog.EventLog | TokenCounter.TokenCounter | Ids.Ids | RecallSource.RecallSource,
  SqliteEventLog.OpenError
> =>
  ContextService.layer().pipe(
    Layer.provideMerge(store.log()),
    Layer.provideMerge(
      Layer.mergeAll(TokenCounter.layerHeuristic(4), Ids.layerSequential("t"), RecallSource.layerEmpty)
    )
  )

/** The window service and the counting compactor over a fresh log of `store` (and its file store). */
export const storeLayer = (
  store: Store
): Layer.Layer<
  | ContextService.ContextService
  | SqliteEventLog.Services
  | TokenCounter.TokenCounter
  | Ids.Ids
  | RecallSource.RecallSource
  | Compactor.Compactor
  | CompactorProbe,
  SqliteEventLog.OpenError
> =>
  Layer.merge(
    ContextService.layer().pipe(
      Layer.provideMerge(store.log()),
      Layer.provideMerge(
        Layer.mergeAll(TokenCounter.layerHeuristic(4), Ids.layerSequential("t"), RecallSource.layerEmpty)
      )
    ),
    countingCompactor
  )
