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
  signatureOf,
  settle
} from "./appendPlan.js"
import { pg as loadPg } from "./drivers.js"
import { type Backend, describe, type EraseOutcome, type SearchRow, type WriteTx } from "./backend.js"
import { appendGateKey, provider } from "./migrations.js"
import type { Database } from "./schema.js"
import { filterSql, tierBonus } from "./search.js"
import { appendStatements, bind, type Compiled } from "./statements.js"
import { claimed, globalBound } from "./postgresGlobal.js"
import { add, counters } from "./workCounters.js"

export interface PostgresOptions {
  readonly url: string
  readonly maxConnections: number
}

/**
 * Heads this process wrote last, per stream, so the next append to the stream is one function call (one
 * round trip) without reading the head first. A stale entry costs a refusal that brings the head back.
 * Bounded: cleared when it holds this many streams.
 */
const headCacheLimit = 10_000

/**
 * Refusals in a row before an append gives up with a `StoreError`: each one means another writer moved
 * the stream (or erased it) between the head read and the write, so a caller with an expected version is
 * refused by the next decision anyway.
 */
const maxAttempts = 100

/** `ctxlog_append` (migration 0011): one statement, its own transaction. */
export const appendCall = `select last_position, version, head_hash, owner, located
  from ctxlog_append($1::text, $2::bigint, $3::text, $4::text, $5::text[], $6::text[], $7::int[], $8::text[], $9::text[],
                     $10::jsonb, $11::bigint, $12::text)`

/**
 * A signed append (issue 43): the same call, and the batch's signature row inserted in the same statement
 * (so the same transaction) when the call wrote the batch; a refused call writes neither. One round trip.
 */
export const signedAppendCall = `with appended as materialized (
    select last_position, version, head_hash, owner, located
    from ctxlog_append($1::text, $2::bigint, $3::text, $4::text, $5::text[], $6::text[], $7::int[], $8::text[], $9::text[],
                       $10::jsonb, $11::bigint, $12::text)),
  signed as (
    insert into batch_signatures (stream_id, first_version, last_version, writer, key_id, signature)
    select $1::text, $13::bigint, $14::bigint, $15::text, $16::text, $17::text
    from appended where appended.last_position is not null)
  select last_position, version, head_hash, owner, located from appended`

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
    // A batch of entries, in order (their ids follow it), as one JSON array parameter.
    const insertEntries: Compiled = {
      sql: `insert into recall_entries
        (source, stream_id, owner, ref, document_id, kind, role, text, tokens, global_position, created_at)
      select v->>'source', v->>'stream_id', v->>'owner', v->>'ref', v->>'document_id', v->>'kind', v->>'role',
             v->>'text', (v->>'tokens')::integer, (v->>'global_position')::bigint, (v->>'created_at')::bigint
      from jsonb_array_elements($1::jsonb) with ordinality as e(v, n)
      order by n
      on conflict (stream_id, ref) do nothing`,
      parameters: [{ slot: "entries" }]
    }
    // The head, the owner and the batch's ids already stored, in one round trip.
    const readHead = `select s.version, s.head_hash,
        (select o.owner from stream_owners o where o.stream_id = $1) as owner,
        (select coalesce(json_agg(json_build_array(e.event_id, e.stream_id, e.stream_version)), '[]'::json)
           from events e where e.event_id = any($2::text[])) as located
      from (select 1) as one left join streams s on s.stream_id = $1`

    const connect = (operation: string) =>
      Effect.tryPromise({ try: () => pool.connect(), catch: storeError(operation) })
    // A connection whose transaction did not end cleanly (interrupted, failed COMMIT, lost server) is
    // discarded; one whose body failed with a typed error was rolled back and is clean.
    const release = <A, E>(client: pg.PoolClient, exit: Exit.Exit<A, E>) =>
      Effect.sync(() => client.release(Exit.isFailure(exit) && !isTyped(exit) ? true : undefined))

    /** What the log holds for a stream, as the append decides on it. */
    interface Head {
      readonly current: number
      readonly previous: string
      readonly owned: string | undefined
      readonly located: Located
    }
    const headOf = (row: Record<string, unknown> | undefined): Head => {
      const located = new Map<string, { stream: string; version: number }>()
      const found: unknown = row?.located
      for (const entry of Array.isArray(found) ? found : []) {
        const [event_id, stream_id, stream_version]: ReadonlyArray<unknown> = Array.isArray(entry) ? entry : []
        if (typeof event_id === "string" && typeof stream_id === "string" && typeof stream_version === "number") {
          located.set(event_id, { stream: stream_id, version: stream_version })
        }
      }
      return {
        current: typeof row?.version === "number" ? row.version : 0,
        previous: typeof row?.head_hash === "string" ? row.head_hash : EventHash.genesis,
        owned: typeof row?.owner === "string" ? row.owner : undefined,
        located
      }
    }
    const heads = new Map<string, Head>()
    const remember = (stream: string, head: Head) => {
      if (heads.size >= headCacheLimit && !heads.has(stream)) heads.clear()
      heads.set(stream, head)
    }

    // One round trip each, on whichever pooled connection is free (a named statement is planned once per
    // connection). An append holds no connection between round trips.
    const roundTrip = (name: string, text: string, values: ReadonlyArray<unknown>) =>
      Effect.tryPromise({
        try: () => pool.query<Record<string, unknown>>({ name: `ctxlog_${name}`, text, values: [...values] }),
        catch: (cause): unknown => cause
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            add(counters.postgresRoundTrips)
          })
        )
      )
    const named = (operation: string, name: string, text: string, values: ReadonlyArray<unknown>) =>
      Effect.mapError(roundTrip(name, text, values), storeError(operation))
    const readHeadOf = (request: AppendRequest) =>
      Effect.map(named("read stream", "read_head", readHead, [request.stream, request.ids]), ({ rows }) =>
        headOf(rows[0])
      )

    type Outcome =
      | { readonly _tag: "Written"; readonly result: EventLog.AppendResult }
      | { readonly _tag: "Refused"; readonly head: Head }
      | { readonly _tag: "Decided"; readonly result: Effect.Effect<EventLog.AppendResult, AppendError> }

    /** What to do with `head`: write (the rows chained from it), or an answer that writes nothing. */
    const decide = (request: AppendRequest, head: Head) => {
      if (request.owner !== undefined) {
        const foreign = ownerRefusal(request, head.current, head.owned)
        if (foreign !== undefined) return { _tag: "Decided", result: Effect.fail(foreign) } satisfies Outcome
      }
      if (!canWrite(request, head.current, head.located)) {
        return { _tag: "Decided", result: settle(request, head.current, head.located) } satisfies Outcome
      }
      const refused = keyRefusal(request, head.current, head.previous)
      if (refused !== undefined) return { _tag: "Decided", result: Effect.fail(refused) } satisfies Outcome
      return undefined
    }

    /** One `ctxlog_append` call: written, or refused with the head the database holds (nothing written). */
    const write = (request: AppendRequest, head: Head) =>
      Effect.gen(function* () {
        const { rows, head: next } = rowsOf(request, head.current, head.previous)
        const signature = signatureOf(request, rows, head.previous)
        const signed =
          signature === undefined
            ? []
            : [signature.first_version, signature.last_version, signature.writer, signature.key_id, signature.signature]
        const outcome = yield* Effect.either(
          roundTrip(
            signature === undefined ? "append" : "append_signed",
            signature === undefined ? appendCall : signedAppendCall,
            [
              request.stream,
              head.current,
              head.previous,
              request.owner ?? null,
              rows.map((row) => row.event_id),
              rows.map((row) => row.type),
              rows.map((row) => row.schema_version),
              rows.map((row) => row.data),
              rows.map((row) => row.hash),
              request.metadata,
              request.now,
              next,
              ...signed
            ]
          )
        )
        if (outcome._tag === "Left") {
          // An id another writer stored while this call ran (the unique index waited for it), or two
          // batches sharing ids in another order (a deadlock, one of them rolled back): refused; the head
          // read next locates the ids.
          if (isRace(outcome.left)) {
            return { _tag: "Refused", head: yield* readHeadOf(request) } satisfies Outcome
          }
          return yield* Effect.fail(storeError("insert events")(outcome.left))
        }
        const row = outcome.right.rows[0]
        const lastPosition = row?.last_position
        if (typeof lastPosition !== "number") return { _tag: "Refused", head: headOf(row) } satisfies Outcome
        const written = rows.length
        remember(request.stream, {
          current: head.current + written,
          previous: next,
          owned: typeof row?.owner === "string" ? row.owner : undefined,
          located: new Map()
        })
        return {
          _tag: "Written",
          result: {
            stream: request.stream,
            nextExpectedVersion: head.current + written,
            written,
            lastPosition,
            ...lastHashOf(rows)
          }
        } satisfies Outcome
      })

    // Appends on different streams run at once: the only lock they share is the gate, taken SHARED (see
    // migration 0011); two appends on one stream meet at its row (compare-and-set on version and head).
    // The common case is one round trip: the head this process wrote last, and one `ctxlog_append` call.
    // Otherwise (first append to a stream here, another writer moved it, an id already stored) the head
    // comes from the database and the decision is the one a serialised append made.
    const append: Backend["append"] = (request) =>
      Effect.gen(function* () {
        const cached = heads.get(request.stream)
        let head = cached !== undefined && decide(request, cached) === undefined ? cached : yield* readHeadOf(request)
        for (let attempt = 0; ; attempt++) {
          const decided = decide(request, head)
          if (decided !== undefined) {
            heads.delete(request.stream)
            return yield* decided.result
          }
          const outcome = yield* write(request, head)
          if (outcome._tag === "Written") return outcome.result
          if (attempt >= maxAttempts) {
            heads.delete(request.stream)
            return yield* Effect.fail(
              new EventLog.StoreError({
                operation: "append",
                detail: `stream "${request.stream}" moved under ${maxAttempts + 1} attempts in a row; nothing was written`
              })
            )
          }
          head = outcome.head
        }
      })

    const makeTx = (client: pg.PoolClient): WriteTx => ({
      indexEntry: (entry) =>
        Effect.suspend(() => {
          add(counters.indexStatements)
          return Effect.asVoid(run(client, "index message", "insert_entry", compiled.insertEntry, entry))
        }),
      // A catch-up's batch in one round trip (it was one per entry: as many as the appends themselves).
      indexEntries: (entries) =>
        Effect.suspend(() => {
          if (entries.length === 0) return Effect.void
          add(counters.indexStatements)
          return Effect.asVoid(
            run(client, "index messages", "insert_entries", insertEntries, { entries: JSON.stringify(entries) })
          )
        }),
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
          yield* q("delete from batch_signatures where stream_id = $1")
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
            // Exclusive: no append is in flight while this transaction runs (erasure needs that; document
            // ingestion keeps its writes apart from each other's).
            if (transactOptions.appendLock !== false) {
              yield* plain(client, operation, "select pg_advisory_xact_lock($1)", [appendGateKey])
            }
            const exit = yield* Effect.exit(body(makeTx(client)))
            if (Exit.isSuccess(exit)) yield* plain(client, operation, "COMMIT")
            else yield* plain(client, operation, "ROLLBACK")
            return yield* exit
          }),
        release
      )

    const query: Backend["query"] = (operation, runQuery) =>
      Effect.tryPromise({
        try: () => {
          add(counters.queries)
          return runQuery(db)
        },
        catch: storeError(operation)
      })

    const readGlobal: Backend["readGlobal"] = (operation, runQuery) =>
      Effect.flatMap(globalBound(pool, operation), (bound) => query(operation, (db) => runQuery(db, bound)))
    const unlessRunningElsewhere = claimed(pool, options.maxConnections)

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

    return {
      dialect: "postgres",
      db,
      append,
      transact,
      query,
      readGlobal,
      unlessRunningElsewhere,
      search
    } satisfies Backend
  })

/** PostgreSQL's unique_violation or deadlock_detected: another writer's batch held one of the ids. */
const isRace = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && (cause.code === "23505" || cause.code === "40P01")

/** A failure the body reported as a typed error (ROLLBACK ran): the connection is clean. */
const isTyped = <A, E>(exit: Exit.Exit<A, E>): boolean => Exit.isFailure(exit) && exit.cause._tag === "Fail"
