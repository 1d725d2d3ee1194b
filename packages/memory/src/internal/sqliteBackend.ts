import { EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import { Kysely, Migrator, SqliteDialect, sql } from "kysely"
import type { DriverMissing } from "../Driver.js"
import { betterSqlite3 } from "./drivers.js"
import { type Backend, describe, type SearchFilter, type SearchRow, type WriteTx } from "./backend.js"
import { provider } from "./migrations.js"
import type { Database } from "./schema.js"
import { filterSql, tierBonus } from "./search.js"
import { appendStatements, bind, type Compiled } from "./statements.js"

export interface SqliteOptions {
  readonly filename: string
  readonly durability: "full" | "normal"
  readonly busyTimeoutMs: number
  /** Open read-only (appends then fail with a StoreError). */
  readonly readonly?: boolean
  /** `false`: the file must exist already. */
  readonly create?: boolean
}

const storeError = (operation: string) => (cause: unknown) =>
  new EventLog.StoreError({ operation, detail: describe(cause) })

/** Open (and migrate) a SQLite database; closed when the scope closes. */
export const make = (
  options: SqliteOptions
): Effect.Effect<Backend, EventLog.StoreError | DriverMissing, Scope.Scope> =>
  Effect.gen(function* () {
    const BetterSqlite3 = yield* betterSqlite3
    const raw = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const database = new BetterSqlite3(options.filename, {
            readonly: options.readonly === true,
            fileMustExist: options.create === false
          })
          // busy_timeout first: switching a new file to WAL waits for another process opening it too.
          // journal_mode persists in the file; the others are per connection, so set them on every open.
          database.pragma(`busy_timeout = ${options.busyTimeoutMs}`)
          database.pragma("journal_mode = WAL")
          database.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`)
          database.pragma("foreign_keys = ON")
          return database
        },
        catch: storeError(`open ${options.filename}`)
      }),
      (database) => Effect.sync(() => database.open && database.close())
    )
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) })
    // Two processes opening a new file at once can collide on the first migration (SQLITE_BUSY or
    // "already exists"); each migration is one transaction, so trying again is safe and then finds
    // the schema in place.
    yield* Effect.tryPromise({
      try: () => new Migrator({ db, provider: provider("sqlite") }).migrateToLatest(),
      catch: storeError(`migrate ${options.filename}`)
    }).pipe(
      Effect.flatMap((migrated) =>
        migrated.error === undefined
          ? Effect.void
          : Effect.fail(storeError(`migrate ${options.filename}`)(migrated.error))
      ),
      Effect.retry(Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(4)))
    )

    const compiled = appendStatements(db)
    const prepare = (statement: Compiled) => {
      const prepared = raw.prepare(statement.sql)
      return {
        run: (values: object) => prepared.run(...bind(statement, values)),
        get: (values: object): unknown => prepared.get(...bind(statement, values))
      }
    }
    const statements = {
      selectStream: prepare(compiled.selectStream),
      upsertStream: prepare(compiled.upsertStream),
      insertEvent: prepare(compiled.insertEvent),
      insertEntry: prepare(compiled.insertEntry),
      insertFact: prepare(compiled.insertFact),
      locate: raw.prepare<[string], { stream_id: string; stream_version: number }>(
        "select stream_id, stream_version from events where event_id = ?"
      ),
      insertFts: raw.prepare<[number, string]>("insert into recall_fts (rowid, text) values (?, ?)"),
      documentEntries: raw.prepare<[string, string], { entry_id: number }>(
        "select entry_id from recall_entries where source = 'document' and owner = ? and document_id = ?"
      ),
      deleteEntry: raw.prepare<[number]>("delete from recall_entries where entry_id = ?"),
      deleteFts: raw.prepare<[number]>("delete from recall_fts where rowid = ?")
    }

    const attempt = <A>(operation: string, run: () => A) => Effect.try({ try: run, catch: storeError(operation) })
    const numberField = (row: unknown, field: string): number | undefined => {
      if (typeof row !== "object" || row === null || !(field in row)) return undefined
      const value: unknown = Reflect.get(row, field)
      return typeof value === "number" ? value : undefined
    }

    const tx: WriteTx = {
      stream: (stream) =>
        attempt("read stream", () => {
          const row = statements.selectStream.get({ stream })
          const version = numberField(row, "version")
          const createdAt = numberField(row, "created_at")
          const head =
            typeof row === "object" && row !== null && "head_hash" in row && typeof row.head_hash === "string"
              ? row.head_hash
              : undefined
          return version === undefined || createdAt === undefined || head === undefined
            ? undefined
            : { version, head, createdAt }
        }),
      locate: (ids) =>
        attempt("locate event ids", () => {
          const found = new Map<string, { stream: string; version: number }>()
          for (const id of ids) {
            const row = statements.locate.get(id)
            if (row !== undefined) found.set(id, { stream: row.stream_id, version: row.stream_version })
          }
          return found
        }),
      saveStream: (stream, version, head, now) =>
        attempt("save stream", () => {
          statements.upsertStream.run({ stream, version, head, now })
        }),
      insertEvent: (row) =>
        attempt("insert event", () => {
          const position = numberField(statements.insertEvent.get(row), "global_position")
          if (position === undefined) throw new Error("insert returned no global_position")
          return position
        }),
      indexEntry: (entry) =>
        attempt("index message", () => {
          const id = numberField(statements.insertEntry.get(entry), "entry_id")
          // No row: the message is indexed already (ON CONFLICT DO NOTHING).
          if (id !== undefined) statements.insertFts.run(id, entry.text)
        }),
      removeDocument: (owner, documentId) =>
        attempt("remove document", () => {
          for (const { entry_id } of statements.documentEntries.all(owner, documentId)) {
            statements.deleteFts.run(entry_id)
            statements.deleteEntry.run(entry_id)
          }
        }),
      insertFact: (fact) =>
        attempt("record fact", () => {
          statements.insertFact.run(fact)
        })
    }

    const transact: Backend["transact"] = <A, E>(operation: string, body: (tx: WriteTx) => Effect.Effect<A, E>) =>
      Effect.suspend((): Effect.Effect<A, E | EventLog.StoreError> => {
        try {
          raw.exec("BEGIN IMMEDIATE")
        } catch (cause) {
          return Effect.fail(storeError(operation)(cause))
        }
        // better-sqlite3 is synchronous: the body runs to completion here, so no other fiber can use this
        // connection while the transaction is open (a yield inside it would let a reader see uncommitted rows).
        const exit = Effect.runSyncExit(body(tx))
        try {
          raw.exec(Exit.isSuccess(exit) ? "COMMIT" : "ROLLBACK")
        } catch (cause) {
          if (raw.inTransaction) raw.exec("ROLLBACK")
          return Effect.fail(storeError(operation)(cause))
        }
        return exit
      })

    const query: Backend["query"] = (operation, run) =>
      Effect.tryPromise({ try: () => run(db), catch: storeError(operation) })

    const matchRows = (match: string, filter: SearchFilter, limit: number, bonus: number) =>
      query("search", async (db) => {
        const result = await sql<SearchRow & { entry_id: number }>`
          select e.entry_id, e.source, e.stream_id, e.ref, e.document_id, e.kind, e.role, e.text, e.tokens,
                 e.global_position, ${bonus} - bm25(recall_fts) as score
          from recall_fts
          join recall_entries e on e.entry_id = recall_fts.rowid
          left join stream_owners o on o.stream_id = e.stream_id
          where recall_fts match ${match} and ${filterSql(filter)}
          order by bm25(recall_fts), e.entry_id
          limit ${limit}`.execute(db)
        return result.rows
      })

    // FTS5 cannot say per row which of several sub-queries it matched, so the tiers are three queries.
    const search: Backend["search"] = ({ terms, words }, filter, limit) =>
      terms.length === 0
        ? Effect.succeed([])
        : Effect.gen(function* () {
            const quoted = terms.map((term) => `"${term}"`)
            const tiers = [
              ...(words.length > 1 ? [{ match: `"${words.join(" ")}"`, bonus: tierBonus.phrase }] : []),
              ...(terms.length > 1 ? [{ match: quoted.join(" AND "), bonus: tierBonus.all }] : []),
              { match: quoted.join(" OR "), bonus: 0 }
            ]
            const seen = new Set<number>()
            const rows: Array<SearchRow> = []
            for (const tier of tiers) {
              if (rows.length >= limit) break
              for (const { entry_id, ...row } of yield* matchRows(tier.match, filter, limit, tier.bonus)) {
                if (seen.has(entry_id) || rows.length >= limit) continue
                seen.add(entry_id)
                rows.push(row)
              }
            }
            return rows
          })

    return { dialect: "sqlite", db, transact, query, search } satisfies Backend
  })
