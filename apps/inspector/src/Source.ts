/**
 * Read-only access to a ctxlog database (SQLite file or PostgreSQL), for inspection.
 *
 * The durable layers of `@ctxlog/memory` migrate on open, which writes; the inspector must not write
 * to a log it inspects (and must not create a database where a path was mistyped), so it reads the
 * tables those layers write (`streams`, `events`, `snapshots`) directly: SQLite through a read-only
 * better-sqlite3 connection, PostgreSQL in `READ ONLY` transactions. Rows are decoded with core's
 * `EventCodec` (upcasters included); a row that does not decode is reported, never skipped.
 *
 * Reads of one call run in one transaction, so they see one consistent state of a log that an agent
 * is appending to.
 *
 * @since 0.1.0
 */
import { existsSync, statSync } from "node:fs"
import { EventCodec, type EventLog, type WindowEvent } from "@ctxlog/core"
import BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import pg from "pg"

/** The database could not be opened or read. @since 0.1.0 */
export class SourceError extends Schema.TaggedError<SourceError>()("SourceError", {
  target: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.target}: ${this.detail}`
  }
}

/** A stored event as read, before decoding. @since 0.1.0 */
export interface RawEvent {
  readonly stream: string
  readonly version: number
  readonly position: number
  readonly eventId: string
  readonly type: string
  readonly schemaVersion: number
  readonly data: string
  readonly metadata: EventLog.EventMetadata
  readonly recordedAt: number
  readonly hash: string
}

/** A stored window snapshot. @since 0.1.0 */
export interface RawSnapshot {
  readonly stream: string
  readonly projectionVersion: number
  readonly version: number
  readonly state: string
  /** The stored seal of `state` (SHA-256, or `hmac-sha256:…` with a key); undefined on old rows. */
  readonly stateHash: string | undefined
}

/** A stream's row in `streams`: the version and stored head hash its appends recorded. @since 0.1.0 */
export interface StreamRow {
  readonly version: number
  readonly headHash: string
}

/** Which events of a stream to read: versions `from..to` (inclusive), optionally of some types only. @since 0.1.0 */
export interface Range {
  readonly from?: number
  readonly to?: number
  readonly types?: ReadonlyArray<string>
}

/** Read-only queries over a log. @since 0.1.0 */
export interface Source {
  /** What the source reads, for messages (`sqlite:./x.db`). */
  readonly target: string
  /** Every stream, or only `owner`'s (none when the database records no owners). */
  readonly streams: (owner?: string) => Effect.Effect<ReadonlyArray<EventLog.StreamInfo>, SourceError>
  /** Events of a stream with `from <= version <= to`. */
  readonly events: (stream: string, range?: Range) => Effect.Effect<ReadonlyArray<RawEvent>, SourceError>
  /** The highest version of a stream (0 when it has no events). */
  readonly version: (stream: string) => Effect.Effect<number, SourceError>
  /** The stored window snapshot of a stream, if any. */
  readonly snapshot: (stream: string) => Effect.Effect<RawSnapshot | undefined, SourceError>
  /** Every snapshot stored. */
  readonly snapshots: () => Effect.Effect<ReadonlyArray<RawSnapshot>, SourceError>
  /** The `streams` row of a stream (what its last append recorded), if any. */
  readonly streamRow: (stream: string) => Effect.Effect<StreamRow | undefined, SourceError>
}

interface EventRow {
  readonly global_position: number | string
  readonly event_id: string
  readonly stream_id: string
  readonly stream_version: number | string
  readonly type: string
  readonly schema_version: number | string
  readonly data: string
  readonly metadata: unknown
  readonly recorded_at: number | string
  readonly hash: string
}

interface StreamsRow {
  readonly stream_id: string
  readonly version: number | string
  readonly created_at: number | string
  readonly updated_at: number | string
}

interface SnapshotRow {
  readonly stream_id: string
  readonly projection_version: number | string
  readonly stream_version: number | string
  readonly state: string
  readonly state_hash?: string | null
}

const metadataOf = (raw: unknown): EventLog.EventMetadata => {
  let value: unknown = raw
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw)
    } catch {
      return {}
    }
  }
  if (typeof value !== "object" || value === null) return {}
  const out: Record<string, string | number> = {}
  for (const key of ["causationId", "correlationId", "actor"]) {
    const field: unknown = Reflect.get(value, key)
    if (typeof field === "string") out[key] = field
  }
  const turn: unknown = Reflect.get(value, "turn")
  if (typeof turn === "number") out.turn = turn
  return out
}

const toRaw = (row: EventRow): RawEvent => ({
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

const toSnapshot = (row: SnapshotRow): RawSnapshot => ({
  stream: row.stream_id,
  projectionVersion: Number(row.projection_version),
  version: Number(row.stream_version),
  state: row.state,
  stateHash: row.state_hash ?? undefined
})

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** The default database path of every command. @since 0.1.0 */
export const defaultDb = "./.ctxlog/ctxlog.db"

const eventColumns =
  "global_position, event_id, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, hash"

/**
 * Open a SQLite file read-only. A missing file is an error (never a new database), and so is a file
 * that does not hold a ctxlog log.
 * @since 0.1.0
 */
export const sqlite = (filename: string): Effect.Effect<Source, SourceError, Scope.Scope> =>
  Effect.gen(function* () {
    const target = `sqlite:${filename}`
    if (!existsSync(filename)) {
      return yield* new SourceError({ target, detail: "no such database file (the inspector never creates one)" })
    }
    if (!statSync(filename).isFile()) return yield* new SourceError({ target, detail: "not a file" })
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const database = new BetterSqlite3(filename, { readonly: true, fileMustExist: true })
          // A writer may hold the lock briefly while it appends; wait for it rather than failing.
          database.pragma("busy_timeout = 5000")
          return database
        },
        catch: (cause) => new SourceError({ target, detail: `cannot open: ${describe(cause)}` })
      }),
      (database) => Effect.sync(() => database.close())
    )
    const run = <A>(what: string, body: () => A): Effect.Effect<A, SourceError> =>
      Effect.try({
        // One read transaction: every statement of the call sees the same state of the file.
        try: () => db.transaction(body)(),
        catch: (cause) => new SourceError({ target, detail: `${what} failed: ${describe(cause)}` })
      })
    const tables = yield* run("reading the schema", () =>
      db.prepare<[], { name: string }>("select name from sqlite_master where type = 'table'").all()
    )
    const names = new Set(tables.map((table) => table.name))
    for (const required of ["streams", "events"]) {
      if (!names.has(required)) {
        return yield* new SourceError({ target, detail: `not a ctxlog database (no "${required}" table)` })
      }
    }
    const hasSnapshots = names.has("snapshots")
    // `state_hash` came with migration 0005: older files have none.
    const hasStateHash =
      hasSnapshots &&
      (yield* run("reading the schema", () =>
        db.prepare<[], { name: string }>("select name from pragma_table_info('snapshots')").all()
      )).some((column) => column.name === "state_hash")
    const snapshotSql = `select stream_id, projection_version, stream_version, state${hasStateHash ? ", state_hash" : ""} from snapshots where projection = 'window'`
    const ownedSql = `select s.stream_id, s.version, s.created_at, s.updated_at from streams s
      join stream_owners o on o.stream_id = s.stream_id where o.owner = ?`
    return {
      target,
      streams: (owner) =>
        run("listing streams", () =>
          (owner === undefined
            ? db
                .prepare<[], StreamsRow>(
                  "select stream_id, version, created_at, updated_at from streams order by stream_id"
                )
                .all()
            : names.has("stream_owners")
              ? db.prepare<[string], StreamsRow>(`${ownedSql} order by s.stream_id`).all(owner)
              : []
          ).map((row) => ({
            stream: row.stream_id,
            version: Number(row.version),
            createdAt: Number(row.created_at),
            updatedAt: Number(row.updated_at)
          }))
        ),
      events: (stream, range = {}) =>
        run(`reading stream "${stream}"`, () => {
          const types = range.types ?? []
          const filter = types.length === 0 ? "" : ` and type in (${types.map(() => "?").join(", ")})`
          return db
            .prepare<Array<string | number>, EventRow>(
              `select ${eventColumns} from events where stream_id = ? and stream_version >= ? and stream_version <= ?${filter} order by stream_version`
            )
            .all(stream, range.from ?? 1, range.to ?? Number.MAX_SAFE_INTEGER, ...types)
            .map(toRaw)
        }),
      version: (stream) =>
        run(`reading the version of "${stream}"`, () => {
          const row = db
            .prepare<[string], { v: number | null }>("select max(stream_version) as v from events where stream_id = ?")
            .get(stream)
          return Number(row?.v ?? 0)
        }),
      snapshot: (stream) =>
        hasSnapshots
          ? run(`reading the snapshot of "${stream}"`, () => {
              const row = db.prepare<[string], SnapshotRow>(`${snapshotSql} and stream_id = ?`).get(stream)
              return row === undefined ? undefined : toSnapshot(row)
            })
          : Effect.succeed(undefined),
      snapshots: () =>
        hasSnapshots
          ? run("reading snapshots", () => db.prepare<[], SnapshotRow>(snapshotSql).all().map(toSnapshot))
          : Effect.succeed([]),
      streamRow: (stream) =>
        run(`reading the stream row of "${stream}"`, () => {
          const row = db
            .prepare<[string], { version: number | string; head_hash: string }>(
              "select version, head_hash from streams where stream_id = ?"
            )
            .get(stream)
          return row === undefined ? undefined : { version: Number(row.version), headHash: row.head_hash }
        })
    } satisfies Source
  })

/** Open a PostgreSQL database for reading (every query in a `READ ONLY` transaction). @since 0.1.0 */
export const postgres = (url: string): Effect.Effect<Source, SourceError, Scope.Scope> =>
  Effect.gen(function* () {
    const target = `postgres:${url.replace(/\/\/[^@/]*@/, "//***@")}`
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => new pg.Pool({ connectionString: url, max: 2 })),
      (opened) => Effect.promise(() => opened.end())
    )
    const run = <A>(what: string, body: (client: pg.PoolClient) => Promise<A>): Effect.Effect<A, SourceError> =>
      Effect.tryPromise({
        try: async () => {
          const client = await pool.connect()
          try {
            await client.query("begin transaction isolation level repeatable read read only")
            const result = await body(client)
            await client.query("commit")
            return result
          } catch (cause) {
            await client.query("rollback").catch(() => undefined)
            throw cause
          } finally {
            client.release()
          }
        },
        catch: (cause) => new SourceError({ target, detail: `${what} failed: ${describe(cause)}` })
      })
    const tables = yield* run("reading the schema", (client) =>
      client.query<{ table_name: string }>(
        "select table_name from information_schema.tables where table_schema = current_schema()"
      )
    )
    const names = new Set(tables.rows.map((row) => row.table_name))
    for (const required of ["streams", "events"]) {
      if (!names.has(required)) {
        return yield* new SourceError({ target, detail: `not a ctxlog database (no "${required}" table)` })
      }
    }
    const columns = yield* run("reading the schema", (client) =>
      client.query<{ column_name: string }>(
        "select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'snapshots'"
      )
    )
    const hasStateHash = columns.rows.some((row) => row.column_name === "state_hash")
    const snapshotSql = `select stream_id, projection_version, stream_version, state${hasStateHash ? ", state_hash" : ""} from snapshots where projection = 'window'`
    return {
      target,
      streams: (owner) =>
        run("listing streams", (client) =>
          owner === undefined
            ? client.query<StreamsRow>(
                "select stream_id, version, created_at, updated_at from streams order by stream_id"
              )
            : names.has("stream_owners")
              ? client.query<StreamsRow>(
                  `select s.stream_id, s.version, s.created_at, s.updated_at from streams s
                   join stream_owners o on o.stream_id = s.stream_id where o.owner = $1 order by s.stream_id`,
                  [owner]
                )
              : Promise.resolve({ rows: [] as Array<StreamsRow> })
        ).pipe(
          Effect.map((result) =>
            result.rows.map((row) => ({
              stream: row.stream_id,
              version: Number(row.version),
              createdAt: Number(row.created_at),
              updatedAt: Number(row.updated_at)
            }))
          )
        ),
      events: (stream, range = {}) =>
        run(`reading stream "${stream}"`, (client) => {
          const types = range.types ?? []
          const filter = types.length === 0 ? "" : " and type = any($4)"
          return client.query<EventRow>(
            `select ${eventColumns} from events where stream_id = $1 and stream_version >= $2 and stream_version <= $3${filter} order by stream_version`,
            [stream, range.from ?? 1, range.to ?? Number.MAX_SAFE_INTEGER, ...(types.length === 0 ? [] : [types])]
          )
        }).pipe(Effect.map((result) => result.rows.map(toRaw))),
      version: (stream) =>
        run(`reading the version of "${stream}"`, (client) =>
          client.query<{ v: string | null }>("select max(stream_version) as v from events where stream_id = $1", [
            stream
          ])
        ).pipe(Effect.map((result) => Number(result.rows[0]?.v ?? 0))),
      snapshot: (stream) =>
        names.has("snapshots")
          ? run(`reading the snapshot of "${stream}"`, (client) =>
              client.query<SnapshotRow>(`${snapshotSql} and stream_id = $1`, [stream])
            ).pipe(
              Effect.map((result) => {
                const row = result.rows[0]
                return row === undefined ? undefined : toSnapshot(row)
              })
            )
          : Effect.succeed(undefined),
      snapshots: () =>
        names.has("snapshots")
          ? run("reading snapshots", (client) => client.query<SnapshotRow>(snapshotSql)).pipe(
              Effect.map((result) => result.rows.map(toSnapshot))
            )
          : Effect.succeed([]),
      streamRow: (stream) =>
        run(`reading the stream row of "${stream}"`, (client) =>
          client.query<{ version: number | string; head_hash: string }>(
            "select version, head_hash from streams where stream_id = $1",
            [stream]
          )
        ).pipe(
          Effect.map((result) => {
            const row = result.rows[0]
            return row === undefined ? undefined : { version: Number(row.version), headHash: row.head_hash }
          })
        )
    } satisfies Source
  })

/** Decode one stored event with its location in error messages. @since 0.1.0 */
export const decode = (raw: RawEvent): Effect.Effect<WindowEvent.WindowEvent, EventCodec.EventDecodeError> =>
  EventCodec.decode(
    { type: raw.type, schemaVersion: raw.schemaVersion, data: raw.data },
    { stream: raw.stream, version: raw.version }
  )
