import { EventHash, EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { Kysely, Migrator, PostgresDialect, sql } from "kysely"
import type pg from "pg"
import type { DriverMissing } from "../Driver.js"
import {
  type AppendError,
  type AppendRequest,
  canWrite,
  keyRefusal,
  lastHashOf,
  type Located,
  ownerRefusal,
  rowsOf,
  settle
} from "./appendPlan.js"
import { pg as loadPg } from "./drivers.js"
import { type Backend, describe, type EraseOutcome, type SearchRow, type WriteTx } from "./backend.js"
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
        // A checked-out client (a transaction in flight, or kysely's query) has no pool listener: when the
        // server goes away it emits `error` too, which would be an uncaught ECONNRESET. The query in flight
        // is rejected with the same error (a StoreError) and pg discards the broken client on release.
        pool.on("connect", (client) => {
          client.on("error", () => undefined)
        })
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
    // The head, the owner and the batch's ids already stored, in one round trip.
    const readHead = `select s.version, s.head_hash,
        (select o.owner from stream_owners o where o.stream_id = $1) as owner,
        (select coalesce(json_agg(json_build_array(e.event_id, e.stream_id, e.stream_version)), '[]'::json)
           from events e where e.event_id = any($2::text[])) as located
      from (select 1) as one left join streams s on s.stream_id = $1`
    // The stream row and every event of the batch in one statement (one round trip however many events);
    // metadata and time are shared by every row of a batch. The stream row is written by a data-modifying
    // CTE: the events' foreign key is checked at the end of the statement, when it exists.
    const writeBatch = `with stream as (
        insert into streams (stream_id, version, head_hash, created_at, updated_at) values ($2, $10, $11, $8, $8)
        on conflict (stream_id) do update
          set version = excluded.version, head_hash = excluded.head_hash, updated_at = excluded.updated_at
        returning 1
      )
      insert into events
        (event_id, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, hash)
      select u.event_id, $2, u.stream_version, u.type, u.schema_version, u.data, $7::jsonb, $8::bigint, u.hash
      from unnest($1::text[], $3::bigint[], $4::text[], $5::int[], $6::text[], $9::text[])
        as u(event_id, stream_version, type, schema_version, data, hash)
      order by u.stream_version
      returning global_position`

    const connect = (operation: string) =>
      Effect.tryPromise({ try: () => pool.connect(), catch: storeError(operation) })
    // A connection whose transaction did not end cleanly (interrupted, failed COMMIT, lost server) is
    // discarded; one whose body failed with a typed error was rolled back and is clean.
    const release = <A, E>(client: pg.PoolClient, exit: Exit.Exit<A, E>) =>
      Effect.sync(() => client.release(Exit.isFailure(exit) && !isTyped(exit) ? true : undefined))

    type Outcome =
      | { readonly _tag: "Written"; readonly result: EventLog.AppendResult }
      | { readonly _tag: "Refused"; readonly current: number; readonly located: Located }
      | { readonly _tag: "Foreign"; readonly error: EventLog.OwnerMismatch }

    const appendIn = (client: pg.PoolClient, request: AppendRequest) =>
      Effect.gen(function* () {
        // BEGIN and the append lock in one round trip (a simple query may hold several statements).
        yield* plain(client, "append", `begin; select pg_advisory_xact_lock(${appendLockKey})`)
        const { rows: heads } = yield* Effect.tryPromise({
          try: () =>
            client.query<Record<string, unknown>>({
              name: "ctxlog_read_head",
              text: readHead,
              values: [request.stream, request.ids]
            }),
          catch: storeError("read stream")
        })
        const headRow = heads[0]
        const current = typeof headRow?.version === "number" ? headRow.version : 0
        const previous = typeof headRow?.head_hash === "string" ? headRow.head_hash : EventHash.genesis
        const owned = typeof headRow?.owner === "string" ? headRow.owner : undefined
        if (request.owner !== undefined) {
          const foreign = ownerRefusal(request, current, owned)
          if (foreign !== undefined) {
            yield* plain(client, "append", "rollback")
            return { _tag: "Foreign", error: foreign } satisfies Outcome
          }
        }
        const located = new Map<string, { stream: string; version: number }>()
        const found: unknown = headRow?.located
        for (const entry of Array.isArray(found) ? found : []) {
          const [event_id, stream_id, stream_version]: ReadonlyArray<unknown> = Array.isArray(entry) ? entry : []
          if (typeof event_id === "string" && typeof stream_id === "string" && typeof stream_version === "number") {
            located.set(event_id, { stream: stream_id, version: stream_version })
          }
        }
        if (!canWrite(request, current, located)) {
          yield* plain(client, "append", "rollback")
          return { _tag: "Refused", current, located } satisfies Outcome
        }
        const refused = keyRefusal(request, current, previous)
        if (refused !== undefined) {
          yield* plain(client, "append", "rollback")
          return yield* refused
        }
        const { rows, head } = rowsOf(request, current, previous)
        const next = current + rows.length
        if (request.owner !== undefined && owned === undefined) {
          yield* plain(
            client,
            "claim owner",
            "insert into stream_owners (stream_id, owner) values ($1, $2) on conflict (stream_id) do nothing",
            [request.stream, request.owner]
          )
        }
        const inserted = yield* Effect.tryPromise({
          try: () =>
            client.query<Record<string, unknown>>({
              name: "ctxlog_write_batch",
              text: writeBatch,
              values: [
                rows.map((row) => row.event_id),
                request.stream,
                rows.map((row) => row.stream_version),
                rows.map((row) => row.type),
                rows.map((row) => row.schema_version),
                rows.map((row) => row.data),
                request.metadata,
                request.now,
                rows.map((row) => row.hash),
                next,
                head
              ]
            }),
          catch: storeError("insert events")
        })
        let lastPosition = 0
        for (const { global_position } of inserted.rows) {
          if (typeof global_position === "number" && global_position > lastPosition) lastPosition = global_position
        }
        yield* plain(client, "append", "commit")
        return {
          _tag: "Written",
          result: {
            stream: request.stream,
            nextExpectedVersion: next,
            written: rows.length,
            lastPosition,
            ...lastHashOf(rows)
          }
        } satisfies Outcome
      })

    const append: Backend["append"] = (request) =>
      Effect.acquireUseRelease(connect("append"), (client) => appendIn(client, request), release).pipe(
        Effect.flatMap(
          (outcome): Effect.Effect<EventLog.AppendResult, AppendError> =>
            outcome._tag === "Written"
              ? Effect.succeed(outcome.result)
              : outcome._tag === "Foreign"
                ? Effect.fail(outcome.error)
                : settle(request, outcome.current, outcome.located)
        )
      )

    const makeTx = (client: pg.PoolClient): WriteTx => ({
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
      insertFact: (fact) => Effect.asVoid(run(client, "record fact", "insert_fact", compiled.insertFact, fact)),
      advanceCheckpoint: (name, from, to) =>
        Effect.gen(function* () {
          yield* plain(
            client,
            "advance checkpoint",
            "insert into projection_checkpoints (name, position) values ($1, 0) on conflict (name) do nothing",
            [name]
          )
          // The row lock serialises concurrent projectors: the second one re-reads the row after the first
          // commits and matches nothing.
          const result = yield* plain(
            client,
            "advance checkpoint",
            "update projection_checkpoints set position = $1 where name = $2 and position = $3",
            [to, name, from]
          )
          return result.rowCount === 1
        }),
      clearRecall: () =>
        Effect.gen(function* () {
          yield* plain(client, "clear recall index", "delete from recall_entries where source = 'message'")
          yield* plain(client, "clear recall index", "delete from facts")
          yield* plain(
            client,
            "clear recall index",
            "update projection_checkpoints set position = 0 where name = 'recall'"
          )
        }),
      eraseStream: (stream, audit) =>
        Effect.gen(function* () {
          const q = (text: string, values: Array<unknown> = [stream]) => plain(client, "erase stream", text, values)
          const head = (yield* q("select version, head_hash from streams where stream_id = $1")).rows[0]
          const version = head?.version
          const headHash = head?.head_hash
          if (typeof version !== "number" || version === 0 || typeof headHash !== "string") {
            return { _tag: "Missing" } satisfies EraseOutcome
          }
          const ownerValue = (yield* q("select owner from stream_owners where stream_id = $1")).rows[0]?.owner
          const owner = typeof ownerValue === "string" ? ownerValue : undefined
          if (audit.owner !== undefined && owner !== audit.owner) return { _tag: "Missing" } satisfies EraseOutcome
          // FOR UPDATE: no projection batch moves the checkpoint until this transaction ends.
          const checkpoint = (yield* q(
            "select position from projection_checkpoints where name = 'recall' for update",
            []
          )).rows[0]?.position
          const counts = (yield* q(
            "select count(*)::bigint as events, max(global_position) as last from events where stream_id = $1"
          )).rows[0]
          const events = typeof counts?.events === "number" ? counts.events : 0
          const last = typeof counts?.last === "number" ? counts.last : 0
          if ((typeof checkpoint === "number" ? checkpoint : 0) < last) return { _tag: "Behind" } satisfies EraseOutcome
          yield* q("insert into erasure_pending (stream_id) values ($1)")
          yield* q("delete from recall_entries where source = 'message' and stream_id = $1")
          yield* q("delete from facts where stream_id = $1")
          yield* q("delete from snapshots where stream_id = $1")
          yield* q("delete from events where stream_id = $1")
          yield* q("delete from streams where stream_id = $1")
          yield* q("delete from stream_owners where stream_id = $1")
          yield* q("delete from files where stream_id = $1")
          yield* q("delete from erasure_pending where stream_id = $1")
          yield* q(
            `insert into erasures (stream_id, owner, events, last_version, head_hash, erased_at, actor, reason)
             values ($1, $2, $3, $4, $5, $6, $7, $8)`,
            [stream, owner ?? null, events, version, headHash, audit.now, audit.actor, audit.reason]
          )
          return {
            _tag: "Erased",
            record: {
              stream,
              owner,
              events,
              lastVersion: version,
              headHash,
              erasedAt: audit.now,
              actor: audit.actor,
              reason: audit.reason
            }
          } satisfies EraseOutcome
        })
    })

    const transact: Backend["transact"] = (operation, body, transactOptions = {}) =>
      Effect.acquireUseRelease(
        connect(operation),
        (client) =>
          Effect.gen(function* () {
            yield* plain(client, operation, "BEGIN")
            if (transactOptions.appendLock !== false) {
              yield* plain(client, operation, "select pg_advisory_xact_lock($1)", [appendLockKey])
            }
            const exit = yield* Effect.exit(body(makeTx(client)))
            if (Exit.isSuccess(exit)) yield* plain(client, operation, "COMMIT")
            else yield* plain(client, operation, "ROLLBACK")
            return yield* exit
          }),
        release
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

    return { dialect: "postgres", db, append, transact, query, search } satisfies Backend
  })

/** A failure the body reported as a typed error (ROLLBACK ran): the connection is clean. */
const isTyped = <A, E>(exit: Exit.Exit<A, E>): boolean => Exit.isFailure(exit) && exit.cause._tag === "Fail"
