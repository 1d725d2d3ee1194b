import { EventHash, EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Kysely, PostgresDialect, SqliteDialect } from "kysely"
import type { DriverMissing } from "../Driver.js"
import type * as LogReader from "../LogReader.js"
import { projection } from "../SnapshotRepository.js"
import { describe } from "./backend.js"
import { betterSqlite3, cachedStatements, pg as loadPg } from "./drivers.js"
import { registerRecallText } from "./indexing.js"
import { check, sealProblem } from "./integrity.js"
import type { Database } from "./schema.js"
import * as SnapshotState from "./snapshotState.js"
import { streamEvents, streamListing, streamRow } from "./logQueries.js"
import { metadataOf } from "./storeShared.js"

export { check }

/** Run the queries of one call in one read transaction. */
type Reader = <A>(
  operation: string,
  body: (db: Kysely<Database>) => Promise<A>
) => Effect.Effect<A, EventLog.StoreError>

interface Shape {
  readonly hasSnapshots: boolean
  readonly hasStateHash: boolean
  /** The file store's table (migration 0009). */
  readonly hasFiles: boolean
  readonly hasOwners: boolean
  /** Signed batches (migration 0014). */
  readonly hasSignatures: boolean
}

/** What one verified stream is known to hold: its row as checked and the hash of every event. */
interface Known {
  readonly rowHead: string
  readonly rowVersion: number
  readonly hashes: ReadonlyArray<string>
}

const make = (target: string, read: Reader, shape: Shape, options: LogReader.Options): LogReader.LogReader.Service => {
  const key = options.hmacKey
  const verified = options.integrity !== "unverified"

  const streamRowIn = (db: Kysely<Database>, stream: string) =>
    streamRow(db, stream, undefined)
      .executeTakeFirst()
      .then((row) => (row === undefined ? undefined : { version: Number(row.version), headHash: row.head_hash }))

  const eventsIn = (db: Kysely<Database>, stream: string, range: LogReader.Range) =>
    streamEvents(db, stream, range)
      .execute()
      .then((rows) =>
        rows.map(
          (row): LogReader.StoredEvent => ({
            stream: row.stream_id,
            version: Number(row.stream_version),
            position: Number(row.global_position),
            eventId: row.event_id,
            type: row.type,
            schemaVersion: Number(row.schema_version),
            data: row.data,
            metadata: metadataOf(row.metadata),
            recordedAt: Number(row.recorded_at),
            hash: row.hash
          })
        )
      )

  const snapshotIn = (db: Kysely<Database>, stream: string): Promise<LogReader.StoredSnapshot | undefined> =>
    shape.hasSnapshots
      ? db
          .selectFrom("snapshots")
          .select(["stream_id", "projection_version", "stream_version", "state"])
          .$if(shape.hasStateHash, (query) => query.select("state_hash"))
          .where("projection", "=", projection)
          .where("stream_id", "=", stream)
          .executeTakeFirst()
          .then((row) => {
            if (row === undefined) return undefined
            const stateHash: unknown = Reflect.get(row, "state_hash")
            return {
              stream: row.stream_id,
              projectionVersion: Number(row.projection_version),
              version: Number(row.stream_version),
              state: SnapshotState.decode(row.state),
              stateHash: typeof stateHash === "string" ? stateHash : undefined
            }
          })
      : Promise.resolve(undefined)

  const verify: LogReader.LogReader.Service["verify"] = (stream, verifyOptions = {}) =>
    read(`verifying stream "${stream}"`, async (db) => {
      // One transaction: the row, the events and the snapshot are of one state of the log.
      const row = await streamRowIn(db, stream)
      const events = await eventsIn(db, stream, {})
      const snapshot = await snapshotIn(db, stream)
      const files = shape.hasFiles
        ? await db
            .selectFrom("files")
            .select(["sha256", "content"])
            .where("stream_id", "=", stream)
            .orderBy("sha256")
            .execute()
        : []
      const batches = shape.hasSignatures
        ? (
            await db
              .selectFrom("batch_signatures")
              .select(["first_version", "last_version", "writer", "key_id", "signature"])
              .where("stream_id", "=", stream)
              .orderBy("first_version")
              .execute()
          ).map((batch) => ({
            firstVersion: Number(batch.first_version),
            lastVersion: Number(batch.last_version),
            writer: batch.writer,
            keyId: batch.key_id,
            signature: batch.signature
          }))
        : []
      return { row, events, snapshot, files, batches }
    }).pipe(
      Effect.map(({ row, events, snapshot, files, batches }) => ({
        integrity: check(stream, events, row, snapshot, verifyOptions, files, batches),
        events,
        row,
        snapshot,
        files: files.length
      }))
    )

  const tamper = (problem: LogReader.Problem) =>
    new EventLog.TamperDetected({
      stream: problem.stream,
      version: problem.version,
      detail: `${problem.check}: ${problem.detail}`
    })

  // A CLI process checks each stream once; a long-running viewer re-checks a stream when its row moved.
  const known = new Map<string, Known>()
  const guard = (stream: string): Effect.Effect<Known, LogReader.ReadError> =>
    Effect.gen(function* () {
      const row = yield* read(`reading the stream row of "${stream}"`, (db) => streamRowIn(db, stream))
      const held = known.get(stream)
      if (held !== undefined && row !== undefined && held.rowHead === row.headHash && held.rowVersion === row.version) {
        return held
      }
      const expectedHead = options.expectedHeads?.get(stream)
      const anchors = options.anchors?.get(stream)
      const result = yield* verify(stream, {
        key,
        expectedHead,
        ...(options.keyring === undefined ? {} : { keyring: options.keyring }),
        ...(anchors === undefined ? {} : { anchors })
      })
      const first = result.integrity.problems[0]
      if (first !== undefined) return yield* Effect.fail(tamper(first))
      const fresh: Known = {
        rowHead: result.row?.headHash ?? "",
        rowVersion: result.row?.version ?? 0,
        hashes: result.events.map((event) => event.hash)
      }
      known.set(stream, fresh)
      return fresh
    })

  /** A row served after the check must be the row that was checked (one hash per row). */
  const recheck = (stream: string, held: Known, events: ReadonlyArray<LogReader.StoredEvent>) =>
    Effect.forEach(events, (event) => {
      const stored = held.hashes[event.version - 1]
      const previous = event.version === 1 ? EventHash.genesis : held.hashes[event.version - 2]
      return stored === event.hash && previous !== undefined && EventHash.chain(previous, event, key) === stored
        ? Effect.void
        : Effect.fail(
            tamper({
              stream,
              version: event.version,
              check: "hash-chain",
              detail: "the event changed after the stream was verified"
            })
          )
    }).pipe(Effect.as(events))

  return {
    target,
    integrity: verified ? "verified" : "unverified",
    streams: (owner) =>
      read("listing streams", async (db) =>
        owner !== undefined && !shape.hasOwners ? [] : streamListing(db, owner, "id").execute()
      ).pipe(
        Effect.map((rows) =>
          rows.map((row) => ({
            stream: row.stream_id,
            version: Number(row.version),
            createdAt: Number(row.created_at),
            updatedAt: Number(row.updated_at)
          }))
        )
      ),
    version: (stream) =>
      verified
        ? Effect.map(guard(stream), (held) => held.hashes.length)
        : read(`reading the version of "${stream}"`, (db) =>
            db
              .selectFrom("events")
              .select((eb) => eb.fn.max("stream_version").as("v"))
              .where("stream_id", "=", stream)
              .executeTakeFirst()
              .then((row) => Number(row?.v ?? 0))
          ),
    events: (stream, range = {}) =>
      verified
        ? Effect.gen(function* () {
            const held = yield* guard(stream)
            // Only what was verified: events appended after the check wait for the next one.
            const to = Math.min(range.to ?? held.hashes.length, held.hashes.length)
            const events = yield* read(`reading stream "${stream}"`, (db) => eventsIn(db, stream, { ...range, to }))
            return yield* recheck(stream, held, events)
          })
        : read(`reading stream "${stream}"`, (db) => eventsIn(db, stream, range)),
    snapshot: (stream) =>
      verified
        ? Effect.gen(function* () {
            const held = yield* guard(stream)
            const snapshot = yield* read(`reading the snapshot of "${stream}"`, (db) => snapshotIn(db, stream))
            // A snapshot saved after the check, past what was verified, is not used.
            if (snapshot === undefined || snapshot.version > held.hashes.length) return undefined
            const anchor = snapshot.version === 0 ? EventHash.genesis : held.hashes[snapshot.version - 1]
            const problem = sealProblem(snapshot, anchor, key)
            if (problem !== undefined) {
              return yield* Effect.fail(
                tamper({ stream, version: snapshot.version, check: "snapshot", detail: problem })
              )
            }
            return snapshot
          })
        : read(`reading the snapshot of "${stream}"`, (db) => snapshotIn(db, stream)),
    streamRow: (stream) => read(`reading the stream row of "${stream}"`, (db) => streamRowIn(db, stream)),
    verify
  }
}

const storeError = (target: string, operation: string) => (cause: unknown) =>
  new EventLog.StoreError({ operation: `${operation} (${target})`, detail: describe(cause) })

/** Which tables and columns the database has; a database without `streams` and `events` is not a log. */
const inspect = (target: string, db: Kysely<Database>): Effect.Effect<Shape, EventLog.StoreError> =>
  Effect.gen(function* () {
    const tables = yield* Effect.tryPromise({
      try: () => db.introspection.getTables(),
      catch: storeError(target, "reading the schema")
    })
    const names = new Map(tables.map((table) => [table.name, table]))
    for (const required of ["streams", "events"]) {
      if (!names.has(required)) {
        return yield* new EventLog.StoreError({
          operation: `open ${target}`,
          detail: `not a ctxlog database (no "${required}" table)`
        })
      }
    }
    const snapshots = names.get("snapshots")
    return {
      hasSnapshots: snapshots !== undefined,
      // `state_hash` came with migration 0005: older files have none.
      hasStateHash: snapshots?.columns.some((column) => column.name === "state_hash") ?? false,
      hasOwners: names.has("stream_owners"),
      hasFiles: names.has("files"),
      hasSignatures: names.has("batch_signatures")
    }
  })

/** Open a SQLite file read-only (the caller checked that it exists). */
export const makeSqlite = (
  options: LogReader.SqliteOptions
): Effect.Effect<LogReader.LogReader.Service, EventLog.StoreError | DriverMissing, Scope.Scope> =>
  Effect.gen(function* () {
    const target = `sqlite:${options.filename}`
    const BetterSqlite3 = yield* betterSqlite3
    const raw = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const database = new BetterSqlite3(options.filename, { readonly: true, fileMustExist: true })
          // A writer may hold the lock briefly while it appends; wait for it rather than failing.
          database.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`)
          // The full-text index's view reads a message's text with it (ADR 0072).
          registerRecallText(database)
          return database
        },
        catch: storeError(target, "open")
      }),
      (database) => Effect.sync(() => database.open && database.close())
    )
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachedStatements(raw) }) })
    const read: Reader = (operation, body) =>
      Effect.tryPromise({
        // One deferred read transaction: every statement of the call sees the same state of the file.
        try: () => db.transaction().execute(body),
        catch: storeError(target, operation)
      })
    const shape = yield* inspect(target, db)
    return make(target, read, shape, options)
  })

/** Connect to PostgreSQL for reading; the pool ends with the scope. */
export const makePostgres = (
  options: LogReader.PostgresOptions
): Effect.Effect<LogReader.LogReader.Service, EventLog.StoreError | DriverMissing, Scope.Scope> =>
  Effect.gen(function* () {
    const target = `postgres:${options.url.replace(/\/\/[^@/]*@/, "//***@")}`
    const pg = yield* loadPg
    const types = new pg.TypeOverrides()
    types.setTypeParser(20, (value: string) => Number(value))
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? 2, types })
        // A dropped idle connection is reported here; without a listener Node would crash the process.
        pool.on("error", () => undefined)
        pool.on("connect", (client) => {
          client.on("error", () => undefined)
        })
        return pool
      }),
      (pool) => Effect.promise(() => pool.end())
    )
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    const read: Reader = (operation, body) =>
      Effect.tryPromise({
        try: () => db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only").execute(body),
        catch: storeError(target, operation)
      })
    const shape = yield* inspect(target, db)
    return make(target, read, shape, options)
  })
