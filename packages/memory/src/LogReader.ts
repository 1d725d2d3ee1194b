/**
 * Read-only access to a ctxlog log (SQLite file or PostgreSQL) for tools that inspect it: the streams,
 * their stored events (undecoded, with the bytes that were hashed), snapshots, and the integrity of each
 * stream. This is the one door the inspector and its viewer use; they hold no SQL of their own.
 *
 * - Opening never writes: no migration, no new file (a missing SQLite file is `DatabaseNotFound`), a
 *   read-only better-sqlite3 connection, PostgreSQL queries in `READ ONLY` repeatable-read transactions.
 *   Each call reads in one transaction, so it sees one state of a log an agent is appending to.
 * - Reads are verified by default (`integrity: "verified"`): before a stream is served, its hash chain is
 *   recomputed from the first event (keyed with `hmacKey`), its `streams` row is checked against the last
 *   event (version, head hash and, keyed, the row's seal), its snapshot's seal is checked, and a head kept
 *   elsewhere (`expectedHeads`) must still be in the chain. Damage fails the read with core's
 *   `TamperDetected` naming the first bad version. Every row served afterwards is checked against the
 *   hashes verified (one hash per row), so an edit made after the check is not served either.
 *   `integrity: "unverified"` skips all of it, for a trusted store.
 * - `verify(stream)` runs the same checks and returns the whole report (and the events it read) instead
 *   of failing, for `ctxlog verify`.
 *
 * @since 0.2.0
 */
import { existsSync, statSync } from "node:fs"
import { EventCodec, EventHash, EventLog, type WindowEvent } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { DriverMissing } from "./Driver.js"
import * as internal from "./internal/logReader.js"
import type {
  Head,
  Integrity,
  LogReaderService,
  PostgresOptions,
  SqliteOptions,
  StoredEvent,
  StreamRow,
  StoredSnapshot,
  VerifyOptions
} from "./internal/logReaderTypes.js"
import { DatabaseNotFound } from "./SqliteEventLog.js"

export type {
  StoredEvent,
  StoredSnapshot,
  StreamRow,
  Range,
  Head,
  Check,
  Problem,
  Integrity,
  VerifyOptions,
  Verified,
  ReadError,
  Options,
  SqliteOptions,
  PostgresOptions
} from "./internal/logReaderTypes.js"

/** Read-only access to a log. @since 0.2.0 */
export class LogReader extends Context.Tag("@ctxlog/memory/LogReader")<LogReader, LogReader.Service>() {}

/** @since 0.2.0 */
export declare namespace LogReader {
  /** What a reader does: the methods are documented on `LogReaderService`. @since 0.2.0 */
  export type Service = LogReaderService
}

/** The errors opening a reader can fail with. @since 0.2.0 */
export type OpenError = EventLog.StoreError | DriverMissing | DatabaseNotFound

/**
 * Open a SQLite file read-only; a missing file is `DatabaseNotFound` (never a new database), a file that
 * holds no ctxlog log a `StoreError`. Closed with the scope.
 * @since 0.2.0
 */
export const makeSqlite = (options: SqliteOptions): Effect.Effect<LogReader.Service, OpenError, Scope.Scope> =>
  Effect.suspend((): Effect.Effect<LogReader.Service, OpenError, Scope.Scope> => {
    if (!existsSync(options.filename)) return Effect.fail(new DatabaseNotFound({ filename: options.filename }))
    if (!statSync(options.filename).isFile()) {
      return Effect.fail(new EventLog.StoreError({ operation: `open ${options.filename}`, detail: "not a file" }))
    }
    return internal.makeSqlite(options)
  })

/** Connect to PostgreSQL for reading (no migration; every query in a `READ ONLY` transaction). @since 0.2.0 */
export const makePostgres = (options: PostgresOptions): Effect.Effect<LogReader.Service, OpenError, Scope.Scope> =>
  internal.makePostgres(options)

/** A reader over a SQLite file. @since 0.2.0 */
export const layerSqlite = (options: SqliteOptions): Layer.Layer<LogReader, OpenError> =>
  Layer.scoped(LogReader, makeSqlite(options))

/** A reader over PostgreSQL. @since 0.2.0 */
export const layerPostgres = (options: PostgresOptions): Layer.Layer<LogReader, OpenError> =>
  Layer.scoped(LogReader, makePostgres(options))

/** Decode a stored event (upcasters included), naming its stream and version in errors. @since 0.2.0 */
export const decode = (event: StoredEvent): Effect.Effect<WindowEvent.WindowEvent, EventCodec.EventDecodeError> =>
  EventCodec.decode(
    { type: event.type, schemaVersion: event.schemaVersion, data: event.data },
    { stream: event.stream, version: event.version }
  )

/**
 * Check a stream's stored events, row, snapshot and an expected head (pure; what `verify` runs).
 * @since 0.2.0
 */
export const check: (
  stream: string,
  events: ReadonlyArray<StoredEvent>,
  row: StreamRow | undefined,
  snapshot: StoredSnapshot | undefined,
  options: VerifyOptions
) => Integrity = internal.check

/** Parse `<stream>@<version>:<hash>` (a head as `ctxlog heads` prints it). @since 0.2.0 */
export const parseHead = (text: string): { readonly stream: string; readonly head: Head } | undefined => {
  const match = /^(.+)@(\d+):([0-9a-f]{64})$/.exec(text.trim())
  if (match === null) return undefined
  const [, stream = "", version = "0", hash = ""] = match
  return { stream, head: { version: Number(version), hash } }
}

/** Format a head as `<stream>@<version>:<hash>`. @since 0.2.0 */
export const formatHead = (stream: string, head: Head): string => `${stream}@${head.version}:${head.hash}`

/** The hash before a stream's first event. @since 0.2.0 */
export const genesis = EventHash.genesis
