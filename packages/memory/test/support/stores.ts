import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService, type EventLog, Ids, type RecallSource, TokenCounter } from "@ctxlog/core"
import BetterSqlite3 from "better-sqlite3"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import pg from "pg"
import { type Driver, FullTextRecall, PostgresEventLog, SqliteEventLog } from "../../src/index.js"
import { freshDatabase } from "./postgres.js"
import { registerRecallText } from "../../src/internal/indexing.js"

/** Raw SQL access to the database under a store, bypassing it (to try what the store forbids). */
export class RawSql extends Context.Tag("test/RawSql")<
  RawSql,
  {
    readonly dialect: "sqlite" | "postgres"
    readonly exec: (statement: string) => Effect.Effect<void, string>
    readonly rows: (statement: string) => Effect.Effect<ReadonlyArray<Record<string, unknown>>, string>
  }
>() {}

const message = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

export const tempFile = (name = "log.db") => join(mkdtempSync(join(tmpdir(), "ctxlog-memory-")), name)

/** Raw SQL on a SQLite file (its own connection). */
export const sqliteRawLayer = (filename: string) =>
  Layer.scoped(
    RawSql,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => {
          const db = new BetterSqlite3(filename)
          // As every connection of a store does: the full-text index's view reads message text with it.
          registerRecallText(db)
          return db
        }),
        (db) => Effect.sync(() => db.close())
      ),
      (db) => ({
        dialect: "sqlite" as const,
        exec: (statement: string) =>
          Effect.try({
            try: () => {
              db.exec(statement)
            },
            catch: message
          }),
        rows: (statement: string) =>
          Effect.try({
            try: (): ReadonlyArray<Record<string, unknown>> => db.prepare<[], Record<string, unknown>>(statement).all(),
            catch: message
          })
      })
    )
  )

/** Raw SQL on a PostgreSQL database (its own client). */
export const postgresRawLayer = (url: string) =>
  Layer.scoped(
    RawSql,
    Effect.map(
      Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: url })
          await client.connect()
          return client
        }),
        (client) => Effect.promise(() => client.end())
      ),
      (client) => ({
        dialect: "postgres" as const,
        exec: (statement: string) =>
          Effect.tryPromise({ try: () => client.query(statement).then(() => undefined), catch: message }),
        rows: (statement: string) =>
          Effect.tryPromise({
            try: () => client.query<Record<string, unknown>>(statement).then((result) => result.rows),
            catch: message
          })
      })
    )
  )

/** A SQLite file store plus raw access to its file. */
/** A store plus raw SQL access to it. */
export type TestStore = SqliteEventLog.Services | RawSql

/** The façade and its dependencies over a test store. */
export type TestApp =
  | TestStore
  | ContextService.ContextService
  | RecallSource.RecallSource
  | TokenCounter.TokenCounter
  | Ids.Ids

export const sqliteFile = (
  options: Omit<SqliteEventLog.Options, "filename"> = {}
): Layer.Layer<TestStore, SqliteEventLog.OpenError> => {
  const filename = tempFile()
  // The store first: it creates the schema the raw connection then sees.
  return Layer.merge(SqliteEventLog.layer({ ...options, filename }), sqliteRawLayer(filename))
}

/** A PostgreSQL store on a fresh database plus raw access to it. */
export const postgres = (
  label: string,
  options: Omit<PostgresEventLog.Options, "url"> = {}
): Layer.Layer<TestStore, EventLog.StoreError | Driver.DriverMissing> =>
  Layer.unwrapEffect(
    Effect.map(freshDatabase(label), (url) =>
      Layer.merge(PostgresEventLog.layer({ ...options, url }), postgresRawLayer(url))
    )
  )

const core = ContextService.layer().pipe(
  Layer.provideMerge(FullTextRecall.layer()),
  Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7))
)

/** The façade's services. */
export type Facade = ContextService.ContextService | RecallSource.RecallSource | TokenCounter.TokenCounter | Ids.Ids

/** The window façade over a test store, with full-text recall, gpt token counts and UUIDv7 ids. */
export const withContext = <E>(store: Layer.Layer<TestStore, E>): Layer.Layer<TestApp, E> =>
  core.pipe(Layer.provideMerge(store))

/** The window façade over a plain store. */
export const withContextOnly = <E>(
  store: Layer.Layer<SqliteEventLog.Services, E>
): Layer.Layer<SqliteEventLog.Services | Facade, E> => core.pipe(Layer.provideMerge(store))

/** Count the rows of `events` through raw SQL. */
export const countEvents = Effect.flatMap(RawSql, (raw) =>
  Effect.map(raw.rows("select count(*) as n from events"), (rows) => Number(rows[0]?.n ?? -1))
)
