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
import { EventCodec, EventHash, EventLog, Window, type WindowEvent } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as Anchor from "./Anchor.js"
import type { DriverMissing } from "./Driver.js"
import * as internal from "./internal/logReader.js"
import * as SnapshotState from "./internal/snapshotState.js"
import type * as Signing from "./Signing.js"
import { projectionVersion } from "./SnapshotRepository.js"
import { DatabaseNotFound } from "./SqliteEventLog.js"

/** A stored event as read, before decoding: `data` is the exact text the chain hashed. @since 0.2.0 */
export interface StoredEvent {
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

/** A stored window snapshot. @since 0.2.0 */
export interface StoredSnapshot {
  readonly stream: string
  readonly projectionVersion: number
  readonly version: number
  readonly state: string
  /** The stored seal of `state` (SHA-256, or `hmac-sha256:…` with a key); undefined on old rows. */
  readonly stateHash: string | undefined
}

/** A stream's row in `streams`: what its last append recorded. @since 0.2.0 */
export interface StreamRow {
  readonly version: number
  /** The stored head: the hash, or `hmac-sha256:<key id>:<hash>:<seal>` when keyed. */
  readonly headHash: string
}

/** Which events to read: versions `from..to` (inclusive), optionally of some types only. @since 0.2.0 */
export interface Range {
  readonly from?: number
  readonly to?: number
  readonly types?: ReadonlyArray<string>
}

/** A stream's head: its last version and that event's hash (what is kept elsewhere to anchor a log). @since 0.2.0 */
export interface Head {
  readonly version: number
  readonly hash: string
}

/** Which check found a problem. @since 0.2.0 */
export type Check =
  | "versions"
  | "hash-chain"
  | "stream-row"
  | "expected-head"
  | "snapshot"
  | "stored-output"
  | "signature"
  | "anchor"

/** A problem found in a stream. @since 0.2.0 */
export interface Problem {
  readonly stream: string
  readonly version: number
  readonly check: Check
  readonly detail: string
}

/** What `verify` found in one stream. @since 0.2.0 */
export interface Integrity {
  readonly stream: string
  readonly events: number
  /** The head the chain verified to (undefined when the chain is broken or the stream is empty). */
  readonly head: Head | undefined
  /** The stream's row says it is HMAC-keyed. */
  readonly keyed: boolean
  /** The version of the stored window snapshot, if any. */
  readonly snapshot: number | undefined
  /** Sorted by version; empty when the stream is intact. */
  readonly problems: ReadonlyArray<Problem>
  /**
   * The stream's signed batches, each with its writer and what the keyring said of it (checked only when
   * a keyring is given; unchecked batches report status "unchecked"). Empty for an unsigned stream.
   * @since 0.8.0
   */
  readonly batches?: ReadonlyArray<
    Signing.BatchReport | (Omit<Signing.BatchReport, "status"> & { readonly status: "unchecked" })
  >
}

/** Options of a check. @since 0.2.0 */
export interface VerifyOptions {
  /** The HMAC key the stream was chained with (a keyed stream checked without it fails). */
  readonly key?: EventHash.ChainKey | undefined
  /** A head kept outside the database: the event at its version must still have its hash. */
  readonly expectedHead?: Head | undefined
  /**
   * Public keys of the writers (`Signing.parseKeyring`): every batch must be signed by a key it holds,
   * not revoked, and every event must be in a signed batch. @since 0.8.0
   */
  readonly keyring?: Signing.Keyring | undefined
  /**
   * Heads of this stream an anchor kept outside the database (`Anchor.read`): each must still be in the
   * chain; a head past the end is a truncation or a rollback, another hash a recomputed chain. @since 0.8.0
   */
  readonly anchors?: ReadonlyArray<Anchor.AnchoredHead> | undefined
}

/** The report of `verify`, with what it read (so a caller can go on checking without a second read). @since 0.2.0 */
export interface Verified {
  readonly integrity: Integrity
  /** The stream's stored outputs (file store), checked against their hashes and the handles its events hold. */
  readonly files?: number
  readonly events: ReadonlyArray<StoredEvent>
  readonly row: StreamRow | undefined
  readonly snapshot: StoredSnapshot | undefined
}

/** A read fails with a storage error, or (verified reads) with the damage found. @since 0.2.0 */
export type ReadError = EventLog.StoreError | EventLog.TamperDetected

/** Options every reader takes. @since 0.2.0 */
export interface Options {
  /** `"verified"` (default): check each stream before serving it; `"unverified"`: trust the store. */
  readonly integrity?: "verified" | "unverified"
  /** The HMAC key the log's streams were chained with. */
  readonly hmacKey?: EventHash.ChainKey
  /** Heads kept outside the database, by stream: verified reads fail when one is no longer in the chain. */
  readonly expectedHeads?: ReadonlyMap<string, Head>
  /** Writers' public keys: verified reads check every stream's signed batches with them. @since 0.8.0 */
  readonly keyring?: Signing.Keyring
  /** Heads an anchor kept, by stream (`Anchor.byStream`): verified reads check them. @since 0.8.0 */
  readonly anchors?: ReadonlyMap<string, ReadonlyArray<Anchor.AnchoredHead>>
}

/** Options of a SQLite reader. @since 0.2.0 */
export interface SqliteOptions extends Options {
  readonly filename: string
  /** How long a read waits for a writer's lock (default 5,000 ms). */
  readonly busyTimeoutMs?: number
}

/** Options of a PostgreSQL reader. @since 0.2.0 */
export interface PostgresOptions extends Options {
  readonly url: string
  /** Pool size (default 2). */
  readonly maxConnections?: number
}

/** Read-only access to a log. @since 0.2.0 */
export class LogReader extends Context.Tag("@ctxlog/memory/LogReader")<LogReader, LogReader.Service>() {}

/** @since 0.2.0 */
export declare namespace LogReader {
  /** What a reader does. @since 0.2.0 */
  export interface Service {
    /** What it reads, for messages (`sqlite:./x.db`, `postgres://***@host/db`). */
    readonly target: string
    /** Whether reads are verified. */
    readonly integrity: "verified" | "unverified"
    /** Every stream with events, by id, or only `owner`'s (none when the database records no owners). */
    readonly streams: (owner?: string) => Effect.Effect<ReadonlyArray<EventLog.StreamInfo>, EventLog.StoreError>
    /** The highest version of a stream (0 when it has no events); verified reads check the stream first. */
    readonly version: (stream: string) => Effect.Effect<number, ReadError>
    /** Events of a stream in version order; verified reads serve only events that verified. */
    readonly events: (stream: string, range?: Range) => Effect.Effect<ReadonlyArray<StoredEvent>, ReadError>
    /** The stored window snapshot of a stream, if any (verified reads check its seal). */
    readonly snapshot: (stream: string) => Effect.Effect<StoredSnapshot | undefined, ReadError>
    /** The `streams` row of a stream, if any. */
    readonly streamRow: (stream: string) => Effect.Effect<StreamRow | undefined, EventLog.StoreError>
    /** Check a stream and report every problem (never fails on damage). */
    readonly verify: (stream: string, options?: VerifyOptions) => Effect.Effect<Verified, EventLog.StoreError>
  }
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
 * The window a stream's stored snapshot holds, when this projection version wrote it and it holds a
 * window of its version; undefined otherwise (the window is then folded from the events). It is restored
 * as the store restores it (the JSON text, no Schema decode): a verified reader has checked its seal
 * against the verified chain; an unverified one trusts the store.
 * @since 0.8.0
 */
export const snapshotWindow = (
  reader: LogReader.Service,
  stream: string
): Effect.Effect<Window.Window | undefined, ReadError> =>
  Effect.map(reader.snapshot(stream), (snapshot) => {
    if (snapshot === undefined || snapshot.projectionVersion !== projectionVersion) return undefined
    const window = SnapshotState.windowOf(snapshot.state, snapshot.version)
    return typeof window === "string" ? undefined : window
  })

/** A window rebuilt from a log, and where its fold started. @since 0.8.0 */
export interface WindowAt {
  readonly window: Window.Window
  /** The snapshot version it was folded from (0 = from the first event). */
  readonly from: number
}

/**
 * The window of `stream` at version `at` (the prompt's state after that event): from the stored snapshot
 * when it is at or before `at`, else from the first event; only the events after the starting point are
 * read, decoded (upcasters included) and folded. The caller checks `at` against the stream's head.
 * @since 0.8.0
 */
export const windowAt = (
  reader: LogReader.Service,
  stream: string,
  at: number
): Effect.Effect<WindowAt, ReadError | EventCodec.EventDecodeError> =>
  Effect.gen(function* () {
    const snapshot = yield* snapshotWindow(reader, stream)
    const base = snapshot !== undefined && snapshot.version <= at ? snapshot : Window.empty
    if (base.version === at) return { window: base, from: base.version }
    const tail = yield* Effect.flatMap(reader.events(stream, { from: base.version + 1, to: at }), (events) =>
      Effect.forEach(events, decode)
    )
    return { window: Window.replay(tail, base), from: base.version }
  })

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
