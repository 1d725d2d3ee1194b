// Logs to damage in tests, on a SQLite file or PostgreSQL: a database's CLI arguments, a durable store
// over it, and raw SQL access (what someone with the database can do, triggers included).
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { EventLog } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { PostgresEventLog, SnapshotRepository, SnapshotStore, SqliteEventLog } from "@ctxlog/memory"
import BetterSqlite3 from "better-sqlite3"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import pg from "pg"
import { freshDatabase } from "./pgUrl.js"

/** Raw SQL on the database under test (what an attacker with the database can do). */
export interface Raw {
  readonly exec: (statement: string) => Promise<void>
  readonly rows: (statement: string) => Promise<ReadonlyArray<Record<string, unknown>>>
  readonly disableTriggers: () => Promise<void>
  readonly close: () => Promise<void>
}

/** A database: its CLI arguments, a store over it, and raw access. */
export interface Target {
  readonly args: ReadonlyArray<string>
  readonly open: (
    hmacKey: string | undefined
  ) => Effect.Effect<Context.Context<SqliteEventLog.Services>, unknown, Scope.Scope>
  readonly raw: () => Promise<Raw>
}

/** A fresh SQLite file in `dir`. */
export const sqliteTargetIn = async (dir: string): Promise<Target> => {
  const filename = join(dir, `${randomUUID()}.db`)
  return {
    args: ["--db", filename],
    open: (hmacKey) => SqliteEventLog.make({ filename, hmacKey }),
    raw: () => {
      const db = new BetterSqlite3(filename)
      return Promise.resolve({
        exec: (statement) => Promise.resolve(void db.exec(statement)),
        rows: (statement) => Promise.resolve(db.prepare<[], Record<string, unknown>>(statement).all()),
        disableTriggers: () =>
          Promise.resolve(void db.exec("drop trigger events_reject_update; drop trigger events_reject_delete")),
        close: () => Promise.resolve(void db.close())
      })
    }
  }
}

/** A fresh PostgreSQL database on the test server. */
export const postgresTarget = async (): Promise<Target> => {
  const url = new URL(await freshDatabase("ctxlog_tamper"))
  return {
    args: ["--pg", url.toString()],
    open: (hmacKey) => PostgresEventLog.make({ url: url.toString(), maxConnections: 2, hmacKey }),
    raw: async () => {
      const raw = new pg.Client({ connectionString: url.toString() })
      await raw.connect()
      return {
        exec: (statement) => raw.query(statement).then(() => undefined),
        rows: (statement) => raw.query<Record<string, unknown>>(statement).then((result) => result.rows),
        disableTriggers: () => raw.query("alter table events disable trigger user").then(() => undefined),
        close: () => raw.end()
      }
    }
  }
}

/** A SQL string literal. */
export const quote = (text: string) => `'${text.replaceAll("'", "''")}'`

/** Write `count` events to a fresh stream with `hmacKey`, and snapshot the window at `snapshotAt`. */
export const seed = (target: Target, hmacKey: string | undefined, count: number, snapshotAt?: number) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* target.open(hmacKey)
        const log = Context.get(context, EventLog.EventLog)
        const stream = freshStream("tamper")
        const first = snapshotAt ?? count
        yield* log.append(stream, sampleEvents(first), "no_stream")
        if (snapshotAt !== undefined) {
          const repository = SnapshotRepository.make(log, Context.get(context, SnapshotStore.SnapshotStore), {
            every: 1,
            hmacKey
          })
          yield* repository.committed(stream, yield* repository.load(stream))
          if (count > first) yield* log.append(stream, sampleEvents(count - first, "later"), first)
        }
        return stream
      })
    )
  )
