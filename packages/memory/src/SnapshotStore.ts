/**
 * Where folded projections (windows) are kept so that loading reads only the tail of a stream. One
 * snapshot per stream and projection: saving replaces the previous one. Snapshots are a cache of the
 * log, never a source of truth; a snapshot of another projection version is ignored by its reader.
 *
 * @since 0.1.0
 */
import type { EventLog } from "@ctxlog/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"

/** A stored projection state. @since 0.1.0 */
export interface Snapshot {
  readonly stream: string
  /** Which projection this is (`"window"` for the context window). */
  readonly projection: string
  /** The version of the projection code that produced `state`. */
  readonly projectionVersion: number
  /** The stream version folded into `state`. */
  readonly version: number
  /** The encoded state (JSON text). */
  readonly state: string
  /**
   * The seal of `state`, computed by the store on save (`EventHash.seal`): its SHA-256 (hex), or with an
   * HMAC key `hmac-sha256:<key id>:<mac>`; absent on rows written before hashes were kept.
   */
  readonly stateHash: string | undefined
  /** Epoch milliseconds. */
  readonly createdAt: number
  /**
   * The state as the store keeps it, and the SHA-256 (hex) of exactly those bytes, written by the same
   * save as `stateHash` (SQLite: the deflated BLOB, about a tenth of the text; ADR 0086). A reader checking
   * an unkeyed seal checks these bytes instead of hashing `state`: they are what `state` was decoded from.
   * Absent when the store keeps no such digest (PostgreSQL, rows saved before it, a state stored as text).
   * @since 0.7.0
   */
  readonly stored?: StoredState | undefined
}

/** A state's stored bytes and their SHA-256 (hex), as {@link Snapshot} `stored` carries them. @since 0.7.0 */
export interface StoredState {
  readonly bytes: Uint8Array
  readonly sha256: string
}

/** Stores snapshots beside the log. @since 0.1.0 */
export class SnapshotStore extends Context.Tag("@ctxlog/memory/SnapshotStore")<
  SnapshotStore,
  SnapshotStore.Service
>() {}

/** @since 0.1.0 */
export declare namespace SnapshotStore {
  /** @since 0.1.0 */
  export interface Service {
    /** The newest snapshot of a stream's projection, whatever its projection version. */
    readonly latest: (stream: string, projection: string) => Effect.Effect<Option.Option<Snapshot>, EventLog.StoreError>
    /**
     * Save (replace) the snapshot of a stream's projection, storing the seal of its state beside it. A
     * snapshot of the same projection version at an older stream version never replaces a newer one.
     */
    readonly save: (
      snapshot: Omit<Snapshot, "createdAt" | "stateHash" | "stored">
    ) => Effect.Effect<void, EventLog.StoreError>
  }
}
