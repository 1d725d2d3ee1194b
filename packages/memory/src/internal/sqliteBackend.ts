import { Caches, EventHash, EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"
import { Kysely, SqliteDialect } from "kysely"
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
  type BatchSignatureRow,
  settle
} from "./appendPlan.js"
import { betterSqlite3, cachedStatements } from "./drivers.js"
import { type Backend, describe, type EraseOutcome, type WriteTx } from "./backend.js"
import { registerRecallText } from "./indexing.js"
import { ensureMigrated } from "./sqliteMigrate.js"
import type { Database } from "./schema.js"
import { add, counters } from "./workCounters.js"
import { searchEach } from "./search.js"
import * as SqliteConnection from "./sqliteConnection.js"
import * as WriteLock from "./writeLock.js"
import { appendStatements, bind, type Compiled, type NewEntry } from "./statements.js"
import { erasingStatements, lazily } from "./sqliteStatements.js"

export interface SqliteOptions {
  readonly filename: string
  readonly durability: "full" | "normal"
  readonly busyTimeoutMs: number
  /** Open read-only (appends then fail with a StoreError). */
  readonly readonly?: boolean | undefined
  /** `false`: the file must exist already. */
  readonly create?: boolean | undefined
}

const storeError = (operation: string) => (cause: unknown) =>
  new EventLog.StoreError({ operation, detail: describe(cause) })

/** No id of the batch stored (what the common case assumes; the unique index checks it). */
const noneStored: Located = new Map()

/** The insert of an event whose id is stored already (the unique index on `events.event_id`). */
const storedId = (cause: unknown): boolean =>
  cause instanceof Error &&
  "code" in cause &&
  cause.code === "SQLITE_CONSTRAINT_UNIQUE" &&
  cause.message.includes("events.event_id")

/** The append path's statements, compiled on the first open (they depend on the dialect only). */
const sqliteStatements = Caches.slot<ReturnType<typeof appendStatements>>("memory.sqliteBackend.sqliteStatements")

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
          // What the full-text index reads a message's text with (migration 0012, ADR 0072).
          registerRecallText(database)
          return database
        },
        catch: storeError(`open ${options.filename}`)
      }),
      (database) => Effect.sync(() => database.open && database.close())
    )
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachedStatements(raw) }) })
    yield* ensureMigrated(raw, db, options.filename)
    const connection = yield* SqliteConnection.make

    // The same SQL on every SQLite connection: compiled by kysely once per process, not once per open.
    const compiled = sqliteStatements.get(() => appendStatements(db))
    const prepare = (statement: Compiled) => {
      const prepared = raw.prepare(statement.sql)
      return {
        run: (values: object) => prepared.run(...bind(statement, values))
      }
    }
    // The append path binds positional parameters straight to statements prepared once: it runs per event.
    // Write transactions take the lock by trying again after short pauses, not through SQLite's busy
    // handler (writeLock.ts); a read-only connection never writes.
    const writeLocked =
      options.readonly === true ? <A>(block: () => A): A => block() : WriteLock.make(raw, options.busyTimeoutMs)
    const hot = lazily({
      selectStream: () =>
        raw.prepare<[string], { version: number; head_hash: string }>(
          "select version, head_hash from streams where stream_id = ?"
        ),
      // The append's one read: the stream's head (NULLs for a new stream) and the position its events
      // follow, the greater of the last one and the mark an erasure left (`events` has no AUTOINCREMENT,
      // migration 0016, ADR 0132): a position is never handed out twice, and no counter row is written.
      selectHead: () =>
        raw.prepare<[string], { version: number | null; head_hash: string | null; last: number }>(
          `select s.version, s.head_hash,
             max(coalesce((select max(global_position) from events), 0), (select high_water from event_positions)) as last
           from (select 1) as one left join streams s on s.stream_id = ?`
        ),
      // A new stream's row is inserted, a known one's updated (the head read tells which: no upsert's
      // insert attempt and conflict per append).
      insertStream: () =>
        raw.prepare<[string, number, string, number, number]>(
          "insert into streams (stream_id, version, head_hash, created_at, updated_at) values (?, ?, ?, ?, ?)"
        ),
      updateStream: () =>
        raw.prepare<[number, string, number, string]>(
          "update streams set version = ?, head_hash = ?, updated_at = ? where stream_id = ?"
        ),
      insertEvent: () =>
        raw.prepare<[number, string, string, number, string, number, string, string, number, string]>(
          `insert into events (global_position, event_id, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, hash)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
        ),
      insertSignature: () =>
        raw.prepare<[BatchSignatureRow]>(
          `insert into batch_signatures (stream_id, first_version, last_version, writer, key_id, signature)
         values (@stream_id, @first_version, @last_version, @writer, @key_id, @signature)`
        ),
      // Every id of the batch in one statement.
      locate: () =>
        raw.prepare<[string], { event_id: string; stream_id: string; stream_version: number }>(
          "select event_id, stream_id, stream_version from events where event_id in (select value from json_each(?))"
        ),
      selectOwner: () =>
        raw.prepare<[string], { owner: string }>("select owner from stream_owners where stream_id = ?"),
      claimOwner: () =>
        raw.prepare<[string, string]>(
          "insert into stream_owners (stream_id, owner) values (?, ?) on conflict (stream_id) do nothing"
        ),
      locateOne: () =>
        raw.prepare<[string], { event_id: string; stream_id: string; stream_version: number }>(
          "select event_id, stream_id, stream_version from events where event_id = ?"
        )
    })
    const statements = lazily({
      // Positional, and no RETURNING: the new id is the insert's rowid, and no change means the message is
      // indexed already (ON CONFLICT DO NOTHING). A RETURNING statement run between FTS inserts costs about
      // three times as much per row (measured on a store's database: 24 µs against 7 µs a row).
      insertEntry: () =>
        raw.prepare<
          [
            string,
            string | null,
            string | null,
            string,
            string | null,
            string,
            string,
            string,
            number,
            number | null,
            number
          ]
        >(
          `insert into recall_entries (source, stream_id, owner, ref, document_id, kind, role, text, tokens, global_position, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (stream_id, ref) do nothing`
        ),
      insertFact: () => prepare(compiled.insertFact),
      insertFts: () => raw.prepare<[number, string]>("insert into recall_fts (rowid, text) values (?, ?)"),
      documentEntries: () =>
        raw.prepare<[string, string], { entry_id: number }>(
          "select entry_id from recall_entries where source = 'document' and owner = ? and document_id = ?"
        ),
      deleteEntry: () => raw.prepare<[number]>("delete from recall_entries where entry_id = ?"),
      deleteFts: () => raw.prepare<[number]>("delete from recall_fts where rowid = ?"),
      advanceCheckpoint: () =>
        raw.prepare<[number, string, number]>(
          "update projection_checkpoints set position = ? where name = ? and position = ?"
        ),
      insertCheckpoint: () =>
        raw.prepare<[string]>(
          "insert into projection_checkpoints (name, position) values (?, 0) on conflict (name) do nothing"
        ),
      clearMessageFts: () =>
        raw.prepare(
          "delete from recall_fts where rowid in (select entry_id from recall_entries where source = 'message')"
        ),
      clearMessageEntries: () => raw.prepare("delete from recall_entries where source = 'message'"),
      clearFacts: () => raw.prepare("delete from facts"),
      resetRecallCheckpoint: () => raw.prepare("update projection_checkpoints set position = 0 where name = 'recall'")
    })
    const erasing = erasingStatements(raw)

    type Outcome =
      | { readonly _tag: "Written"; readonly result: EventLog.AppendResult }
      | { readonly _tag: "Refused"; readonly current: number; readonly located: Located }
      | { readonly _tag: "KeyRefused"; readonly error: EventLog.StoreError }
      | { readonly _tag: "Foreign"; readonly error: EventLog.OwnerMismatch }

    /** Where the batch's ids are stored already (one statement for the whole batch). */
    const locateIds = (ids: ReadonlyArray<string>): Located => {
      const located = new Map<string, { stream: string; version: number }>()
      if (ids.length > 0) add(counters.appendStatements)
      const found =
        ids.length === 1 ? hot.locateOne.all(ids[0] ?? "") : ids.length > 1 ? hot.locate.all(JSON.stringify(ids)) : []
      for (const row of found) located.set(row.event_id, { stream: row.stream_id, version: row.stream_version })
      return located
    }

    // One synchronous block inside BEGIN IMMEDIATE … COMMIT (better-sqlite3 rolls back when it throws): no
    // Effect per statement, and no other fiber can use the connection while it runs. The common case (new
    // ids, the expected version) runs three statements: read the head, write the stream row, insert the
    // events. The ids are not looked up first: the unique index on `event_id` refuses a stored one, which
    // rolls the whole transaction back (see `append`, which then settles the batch as core decides).
    const appendBlock = raw.transaction((request: AppendRequest): Outcome => {
      add(counters.appends)
      add(counters.appendStatements)
      const read = hot.selectHead.get(request.stream)
      const head =
        read === undefined || read.version === null || read.head_hash === null
          ? undefined
          : { version: read.version, head_hash: read.head_hash }
      const current = head?.version ?? 0
      if (request.owner !== undefined) add(counters.appendStatements)
      const owned = request.owner === undefined ? undefined : hot.selectOwner.get(request.stream)?.owner
      const foreign = ownerRefusal(request, current, owned)
      if (foreign !== undefined) return { _tag: "Foreign", error: foreign }
      // Not the common case (empty, repeated ids, another version): core's rules decide on the stored ids.
      if (!canWrite(request, current, noneStored)) return { _tag: "Refused", current, located: locateIds(request.ids) }
      const refused = keyRefusal(request, current, head?.head_hash ?? EventHash.genesis)
      if (refused !== undefined) return { _tag: "KeyRefused", error: refused }
      const { rows, head: headHash } = rowsOf(request, current, head?.head_hash ?? EventHash.genesis)
      // The stream row first: events reference it.
      if (head === undefined) hot.insertStream.run(request.stream, rows.length, headHash, request.now, request.now)
      else hot.updateStream.run(current + rows.length, headHash, request.now, request.stream)
      add(counters.appendStatements)
      if (request.owner !== undefined && owned === undefined) {
        add(counters.appendStatements)
        hot.claimOwner.run(request.stream, request.owner)
      }
      let lastPosition = read?.last ?? 0
      for (const row of rows) {
        add(counters.appendStatements)
        lastPosition += 1
        hot.insertEvent.run(
          lastPosition,
          row.event_id,
          row.stream_id,
          row.stream_version,
          row.type,
          row.schema_version,
          row.data,
          row.metadata,
          row.recorded_at,
          row.hash
        )
      }
      const signature = signatureOf(request, rows, head?.head_hash ?? EventHash.genesis)
      if (signature !== undefined) {
        add(counters.appendStatements)
        hot.insertSignature.run(signature)
      }
      // Counted once every insert succeeded (a stored id rolls them all back).
      add(counters.rowsWritten, rows.length)
      return {
        _tag: "Written",
        result: {
          stream: request.stream,
          nextExpectedVersion: current + rows.length,
          written: rows.length,
          lastPosition,
          ...lastHashOf(rows)
        }
      }
    })

    // After a stored id rolled the block back: the head and the ids as they are now, in one read
    // transaction, for core's rules (an idempotent retry, a duplicate, or a conflict).
    const storedBlock = raw.transaction((request: AppendRequest): Outcome => {
      add(counters.appendStatements)
      const current = hot.selectStream.get(request.stream)?.version ?? 0
      return { _tag: "Refused", current, located: locateIds(request.ids) }
    })

    const append: Backend["append"] = (request) => connection.writing("append", appendOnce(request))

    const appendOnce = (request: AppendRequest) =>
      Effect.suspend((): Effect.Effect<EventLog.AppendResult, AppendError> => {
        let outcome: Outcome
        try {
          outcome = writeLocked(() => appendBlock.immediate(request))
        } catch (cause) {
          if (!storedId(cause)) return Effect.fail(storeError("append")(cause))
          try {
            outcome = storedBlock.deferred(request)
          } catch (again) {
            return Effect.fail(storeError("append")(again))
          }
        }
        switch (outcome._tag) {
          case "Written":
            return Effect.succeed(outcome.result)
          case "Foreign":
          case "KeyRefused":
            return Effect.fail(outcome.error)
          case "Refused":
            return settle(request, outcome.current, outcome.located)
        }
      })

    const attempt = <A>(operation: string, run: () => A) => Effect.try({ try: run, catch: storeError(operation) })
    /** Index entries in the open transaction: per new entry its row and its FTS row, per indexed one its insert. */
    const indexEntries = (entries: ReadonlyArray<NewEntry>) =>
      attempt("index message", () => {
        for (const entry of entries) {
          add(counters.indexStatements)
          // A message's text is kept once, in its event: the entry holds none, and the index reads it
          // through the view `recall_text` (ADR 0072). A document's chunk, which has no event, keeps its text,
          // and so does a sealed message (its event holds only the seal, ADR 0139).
          const info = statements.insertEntry.run(
            entry.source,
            entry.stream_id,
            entry.owner,
            entry.ref,
            entry.document_id,
            entry.kind,
            entry.role,
            entry.source === "message" && entry.keepText !== true ? "" : entry.text,
            entry.tokens,
            entry.global_position,
            entry.created_at
          )
          // No change: the message is indexed already (ON CONFLICT DO NOTHING).
          if (info.changes === 0) continue
          add(counters.indexStatements)
          statements.insertFts.run(Number(info.lastInsertRowid), entry.text)
        }
      })

    const tx: WriteTx = {
      indexEntry: (entry) => indexEntries([entry]),
      indexEntries,
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
        }),
      advanceCheckpoint: (name, from, to) =>
        attempt("advance checkpoint", () => {
          statements.insertCheckpoint.run(name)
          return statements.advanceCheckpoint.run(to, name, from).changes === 1
        }),
      clearRecall: () =>
        attempt("clear recall index", () => {
          statements.clearMessageFts.run()
          statements.clearMessageEntries.run()
          statements.clearFacts.run()
          statements.resetRecallCheckpoint.run()
        }),
      eraseStream: (stream, audit) =>
        attempt("erase stream", (): EraseOutcome => {
          const head = hot.selectStream.get(stream)
          if (head === undefined || head.version === 0) return { _tag: "Missing" }
          const owner = hot.selectOwner.get(stream)?.owner
          if (audit.owner !== undefined && owner !== audit.owner) return { _tag: "Missing" }
          const checkpoint = erasing.recallCheckpoint.get()?.position ?? 0
          const { events, last } = erasing.lastPosition.get(stream) ?? { events: 0, last: null }
          if (checkpoint < (last ?? 0)) return { _tag: "Behind" }
          erasing.markPending.run(stream)
          erasing.deleteFts.run(stream)
          erasing.deleteEntries.run(stream)
          erasing.deleteFacts.run(stream)
          erasing.deleteSnapshots.run(stream)
          erasing.raiseHighWater.run()
          erasing.deleteEvents.run(stream)
          erasing.deleteStream.run(stream)
          erasing.deleteOwner.run(stream)
          erasing.deleteFiles.run(stream)
          erasing.deleteSignatures.run(stream)
          erasing.clearPending.run(stream)
          erasing.audit.run(
            stream,
            owner ?? null,
            events,
            head.version,
            head.head_hash,
            audit.now,
            audit.actor,
            audit.reason
          )
          return {
            _tag: "Erased",
            record: {
              stream,
              owner,
              events,
              lastVersion: head.version,
              headHash: head.head_hash,
              erasedAt: audit.now,
              actor: audit.actor,
              reason: audit.reason
            }
          }
        })
    }

    // A transaction holds the connection for its body (ADR 0158): the body is an ordinary effect, run in
    // the caller's fiber, not a nested `runSyncExit`. BEGIN IMMEDIATE (through the write lock) is the
    // acquire, ROLLBACK the release on failure or interruption; COMMIT ends a body that succeeded, and a
    // COMMIT that fails rolls back too. The connection is held from before BEGIN to after the release
    // (sqliteConnection.ts), so no other fiber's statement runs inside the transaction.
    const transact: Backend["transact"] = <A, E>(operation: string, body: (tx: WriteTx) => Effect.Effect<A, E>) =>
      connection.transaction(
        operation,
        Effect.acquireRelease(
          attempt(operation, () => writeLocked(() => raw.exec("BEGIN IMMEDIATE"))),
          (_, exit) =>
            Effect.sync(() => {
              if (Exit.isFailure(exit) && raw.inTransaction) raw.exec("ROLLBACK")
            })
        ).pipe(
          Effect.zipRight(body(tx)),
          Effect.tap(() => attempt(operation, () => raw.exec("COMMIT")))
        )
      )

    const query: Backend["query"] = (operation, run) =>
      connection.reading(
        Effect.tryPromise({
          try: () => {
            add(counters.queries)
            return run(db)
          },
          catch: storeError(operation)
        })
      )

    // One scope's search is `searchEach` with one filter: the one SQLite statement, which also reads a
    // message hit's text back from its event (ADR 0072).
    const search: Backend["search"] = (terms, filter, limit) =>
      Effect.map(searchEach(backend, terms, [filter], limit), (each) => each[0] ?? [])

    // Writers are serialised (BEGIN IMMEDIATE): positions commit in order, a global read needs no bound.
    const readGlobal: Backend["readGlobal"] = (operation, run) =>
      query(operation, (db) => run(db, Number.MAX_SAFE_INTEGER))
    const backend: Backend = {
      dialect: "sqlite",
      db,
      append,
      transact,
      query,
      readGlobal,
      unlessRunningElsewhere: (_name, body) => Effect.map(body, Option.some),
      search
    }
    return backend
  })
