import { type EventCodec, type EventHash, type EventLog, Lru } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as Anchor from "../Anchor.js"
import type * as Redaction from "../Redaction.js"
import type * as Signing from "../Signing.js"
import type { Backend } from "./backend.js"
import * as RecallProjection from "./recallProjection.js"

/** Options shared by both dialects. */
export interface StoreOptions {
  readonly redactor: Redaction.Redactor
  /** Rows read per query when streaming events. */
  readonly pageSize: number
  /** Largest document chunk, in characters. */
  readonly chunkChars: number
  /** Events the recall projection indexes per transaction. */
  readonly recallBatch: number
  /** Where background catch-ups of the recall index run (closed with the store). */
  readonly scope: Scope.Scope
  /** The HMAC key events are chained and snapshots sealed with (absent: unkeyed). */
  readonly hmacKey?: EventHash.ChainKey | undefined
  /**
   * The owner (tenant) this store acts for: appends record it on new streams and refuse other owners'
   * streams; listings, reads, snapshots and recall see only this owner's streams. Undefined: every stream.
   */
  readonly owner?: string | undefined
  /** The writer's key every append's batch is signed with (absent: unsigned). */
  readonly signer?: Signing.Signer | undefined
  /** Where appended heads are anchored outside the database (absent: nowhere). */
  readonly anchorer?: Anchor.Anchorer | undefined
  /** A sealing store's opener of sealed rows for the recall index (ADR 0139; absent: nothing is sealed). */
  readonly openSealed?: RecallProjection.OpenSealed | undefined
}

/** Event-data bytes this process appended per stream (the snapshot policy's size trigger), bounded. */
export interface AppendedBytes {
  readonly add: (stream: string, stored: ReadonlyArray<EventCodec.StoredEvent>) => void
  readonly get: (stream: string) => number
  readonly forget: (stream: string) => void
}

/**
 * What the four services of a store share: the dialect backend, the options, the owner scope, the recall
 * projection and the appended-bytes counter. Built once per store; each service module takes it.
 */
export interface StoreShared {
  readonly backend: Backend
  readonly options: StoreOptions
  /** The owner this store acts for (undefined: every stream). */
  readonly owner: string | undefined
  /** `stream` is visible to this store: always unscoped; scoped, only when its owner row names the scope. */
  readonly visible: (stream: string) => Effect.Effect<boolean, EventLog.StoreError>
  /** A scoped store asked about another owner: answers as if that owner had nothing. */
  readonly foreignOwner: (owner: string) => boolean
  readonly projection: RecallProjection.RecallProjection
  readonly appendedBytes: AppendedBytes
}

const appendedBytesCounter = (): AppendedBytes => {
  const bytes = Lru.make<string, number>(10_000)
  return {
    add: (stream, stored) => {
      let total = bytes.peek(stream) ?? 0
      for (const record of stored) total += record.data.length
      bytes.set(stream, total)
    },
    get: (stream) => bytes.peek(stream) ?? 0,
    forget: (stream) => {
      bytes.delete(stream)
    }
  }
}

/** The shared part of a store over a dialect backend. */
export const make = (backend: Backend, options: StoreOptions): StoreShared => {
  const owner = options.owner
  return {
    backend,
    options,
    owner,
    visible: (stream) =>
      owner === undefined
        ? Effect.succeed(true)
        : backend.query("read owner", (db) =>
            db
              .selectFrom("stream_owners")
              .select("owner")
              .where("stream_id", "=", stream)
              .where("owner", "=", owner)
              .executeTakeFirst()
              .then((row) => row !== undefined)
          ),
    foreignOwner: (other) => owner !== undefined && other !== owner,
    projection: RecallProjection.make(backend, { batchSize: options.recallBatch, openSealed: options.openSealed }),
    appendedBytes: appendedBytesCounter()
  }
}

/** An event row's metadata column (JSON text on SQLite, JSONB on PostgreSQL), its known fields only. */
export const metadataOf = (raw: unknown): EventLog.EventMetadata => {
  let value: unknown = raw
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw)
    } catch {
      return {}
    }
  }
  if (typeof value !== "object" || value === null) return {}
  const field = (name: string): unknown => Reflect.get(value, name)
  const causationId = field("causationId")
  const correlationId = field("correlationId")
  const turn = field("turn")
  const actor = field("actor")
  return {
    ...(typeof causationId === "string" ? { causationId } : {}),
    ...(typeof correlationId === "string" ? { correlationId } : {}),
    ...(typeof turn === "number" ? { turn } : {}),
    ...(typeof actor === "string" ? { actor } : {})
  }
}

/** The columns of an event row, as the log and LogReader select them. */
export const eventColumns = [
  "global_position",
  "event_id",
  "stream_id",
  "stream_version",
  "type",
  "schema_version",
  "data",
  "metadata",
  "recorded_at",
  "hash"
] as const
