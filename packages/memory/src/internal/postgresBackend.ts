import { EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { Kysely, Migrator, PostgresDialect, sql } from "kysely"
import type pg from "pg"
import type { DriverMissing } from "../Driver.js"
import { pg as loadPg } from "./drivers.js"
import { type Backend, describe, type SearchRow, type WriteTx } from "./backend.js"
import { provider } from "./migrations.js"
import type { Database } from "./schema.js"
import { filterSql, tierBonus } from "./search.js"
import { appendStatements, bind, type Compiled } from "./statements.js"

export interface PostgresOptions {
  readonly url: string
  readonly maxConnections: number
}

/**
 * Every append takes this transaction-scoped advisory lock first: appends serialise, so global positions
 * are handed out in commit order (a reader checkpointing a position never skips a late commit) and each
 * stream's hash chain stays linear. Agent logs append far below the rate where this would matter.
 */
const appendLockKey = 0x6374786c6f67 // "ctxlog"

const storeError = (operation: string) => (cause: unknown) =>
  new EventLog.StoreError({ operation, detail: describe(cause) })

/** Connect to (and migrate) a PostgreSQL database; the pool ends when the scope closes. */
export const make = (
  options: PostgresOptions
): Effect.Effect<Backend, EventLog.StoreError | DriverMissing, Scope.Scope> =>
  Effect.gen(function* () {
    const pg = yield* loadPg
    // int8 (positions, versions, epoch ms) as number: exact below 2^53. Only for this pool's connections.
    const types = new pg.TypeOverrides()
    types.setTypeParser(20, (value: string) => Number(value))
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections, types })
        // An idle connection the server dropped is reported here; without a listener Node would crash the
        // process. The pool discards it, and the next query that needs the server fails with a StoreError.
        pool.on("error", () => undefined)
        return pool
      }),
      (pool) => Effect.promise(() => pool.end())
    )
    // A pool connects lazily: check the server now so a bad URL fails the layer, not the first append.
    yield* Effect.tryPromise({
      try: async () => (await pool.connect()).release(),
      catch: storeError("connect to PostgreSQL")
    })
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    const migrated = yield* Effect.tryPromise({
      try: () => new Migrator({ db, provider: provider("postgres") }).migrateToLatest(),
      catch: storeError("migrate PostgreSQL")
    })
    if (migrated.error !== undefined) return yield* Effect.fail(storeError("migrate PostgreSQL")(migrated.error))

    const compiled = appendStatements(db)
    const run = (client: pg.PoolClient, operation: string, name: string, statement: Compiled, values: object) =>
      Effect.tryPromise({
        // A named query is parsed and planned once per connection, then reused.
        try: () =>
          client.query<Record<string, unknown>>({
            name: `ctxlog_${name}`,
            text: statement.sql,
            values: bind(statement, values)
          }),
        catch: storeError(operation)
      })
    const plain = (client: pg.PoolClient, operation: string, text: string, values: Array<unknown> = []) =>
      Effect.tryPromise({
        try: () => client.query<Record<string, unknown>>(text, values),
        catch: storeError(operation)
      })
    const locate = `select event_id, stream_id, stream_version from events where event_id = any($1::text[])`

    const makeTx = (client: pg.PoolClient): WriteTx => ({
      stream: (stream) =>
        Effect.map(run(client, "read stream", "select_stream", compiled.selectStream, { stream }), ({ rows }) => {
          const row = rows[0]
          if (row === undefined) return undefined
          const { version, head_hash, created_at } = row
          return typeof version === "number" && typeof head_hash === "string" && typeof created_at === "number"
            ? { version, head: head_hash, createdAt: created_at }
            : undefined
        }),
      locate: (ids) =>
        Effect.map(plain(client, "locate event ids", locate, [ids]), ({ rows }) => {
          const found = new Map<string, { stream: string; version: number }>()
          for (const { event_id, stream_id, stream_version } of rows) {
            if (typeof event_id === "string" && typeof stream_id === "string" && typeof stream_version === "number") {
              found.set(event_id, { stream: stream_id, version: stream_version })
            }
          }
          return found
        }),
      saveStream: (stream, version, head, now) =>
        Effect.asVoid(
          run(client, "save stream", "upsert_stream", compiled.upsertStream, { stream, version, head, now })
        ),
      insertEvent: (row) =>
        Effect.flatMap(run(client, "insert event", "insert_event", compiled.insertEvent, row), ({ rows }) => {
          const position = rows[0]?.global_position
          return typeof position === "number"
            ? Effect.succeed(position)
            : Effect.fail(storeError("insert event")("insert returned no global_position"))
        }),
      indexEntry: (entry) => Effect.asVoid(run(client, "index message", "insert_entry", compiled.insertEntry, entry)),
      removeDocument: (owner, documentId) =>
        Effect.asVoid(
          plain(
            client,
            "remove document",
            "delete from recall_entries where source = 'document' and owner = $1 and document_id = $2",
            [owner, documentId]
          )
        ),
      insertFact: (fact) => Effect.asVoid(run(client, "record fact", "insert_fact", compiled.insertFact, fact))
    })

    const transact: Backend["transact"] = (operation, body) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({ try: () => pool.connect(), catch: storeError(operation) }),
        (client) =>
          Effect.gen(function* () {
            yield* plain(client, operation, "BEGIN")
            yield* plain(client, operation, "select pg_advisory_xact_lock($1)", [appendLockKey])
            const exit = yield* Effect.exit(body(makeTx(client)))
            if (Exit.isSuccess(exit)) yield* plain(client, operation, "COMMIT")
            else yield* plain(client, operation, "ROLLBACK")
            return yield* exit
          }),
        // A connection whose transaction did not end cleanly (interrupted, failed COMMIT) is discarded.
        (client, exit) => Effect.sync(() => client.release(Exit.isFailure(exit) && !isTyped(exit) ? true : undefined))
      )

    const query: Backend["query"] = (operation, runQuery) =>
      Effect.tryPromise({ try: () => runQuery(db), catch: storeError(operation) })

    // The query goes through PostgreSQL's own parser (as the indexed text did: `django.core.exceptions` is
    // one host-like token there, three words for us); the any-term query is the all-terms one with its
    // ANDs turned into ORs (lexemes never contain " & ").
    const search: Backend["search"] = ({ terms, text }, filter, limit) =>
      terms.length === 0
        ? Effect.succeed([])
        : query("search", async (db) => {
            const result = await sql<SearchRow>`
              select e.source, e.stream_id, e.ref, e.document_id, e.kind, e.role, e.text, e.tokens,
                     e.global_position,
                     ts_rank(e.tsv, q.any_term)
                       + case when e.tsv @@ q.all_terms then ${tierBonus.all} else 0 end
                       + case when e.tsv @@ q.phrase then ${tierBonus.phrase - tierBonus.all} else 0 end as score
              from recall_entries e
              left join stream_owners o on o.stream_id = e.stream_id
              cross join (select replace(plainto_tsquery('english', ${text})::text, ' & ', ' | ')::tsquery as any_term,
                                 plainto_tsquery('english', ${text}) as all_terms,
                                 phraseto_tsquery('english', ${text}) as phrase) q
              where e.tsv @@ q.any_term and ${filterSql(filter)}
              order by score desc, e.entry_id
              limit ${limit}`.execute(db)
            return result.rows
          })

    return { dialect: "postgres", db, transact, query, search } satisfies Backend
  })

/** A failure the body reported as a typed error (ROLLBACK ran): the connection is clean. */
const isTyped = <A, E>(exit: Exit.Exit<A, E>): boolean => Exit.isFailure(exit) && exit.cause._tag === "Fail"
