import type { EventHash, EventLog } from "@ctxlog/core"
import type * as Effect from "effect/Effect"

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
export type Check = "versions" | "hash-chain" | "stream-row" | "expected-head" | "snapshot" | "stored-output"

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
}

/** Options of a check. @since 0.2.0 */
export interface VerifyOptions {
  /** The HMAC key the stream was chained with (a keyed stream checked without it fails). */
  readonly key?: EventHash.ChainKey | undefined
  /** A head kept outside the database: the event at its version must still have its hash. */
  readonly expectedHead?: Head | undefined
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

/** What a reader does. @since 0.2.0 */
export interface LogReaderService {
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

/** Options every reader takes. @since 0.2.0 */
export interface Options {
  /** `"verified"` (default): check each stream before serving it; `"unverified"`: trust the store. */
  readonly integrity?: "verified" | "unverified"
  /** The HMAC key the log's streams were chained with. */
  readonly hmacKey?: EventHash.ChainKey
  /** Heads kept outside the database, by stream: verified reads fail when one is no longer in the chain. */
  readonly expectedHeads?: ReadonlyMap<string, Head>
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
