import { type EventCodec, EventHash, EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Signing from "../Signing.js"
import type { NewEvent } from "./statements.js"
import { add, counters } from "./workCounters.js"

// The append decision and row building both backends share. The common case (new ids, expected version
// matches) is decided here in plain code, inside the backend's transaction; every other case is handed to
// core's `checkAppend` after the transaction wrote nothing, so errors and idempotent retries stay exactly
// core's.

/** One append, encoded and redacted, ready for a backend's transaction. */
export interface AppendRequest {
  readonly stream: string
  readonly expected: EventLog.ExpectedVersion
  /** Event ids, in order. */
  readonly ids: ReadonlyArray<string>
  /** The events as stored: the bytes hashed are the bytes written. */
  readonly stored: ReadonlyArray<EventCodec.StoredEvent>
  /** The metadata JSON of every row. */
  readonly metadata: string
  readonly now: number
  /** The HMAC key the store chains with (absent: the unkeyed chain). */
  readonly key?: EventHash.ChainKey | undefined
  /**
   * The owner (tenant) the writer acts for, when the store is scoped to one: a new stream is recorded as
   * theirs in the same transaction, and a stream of another owner (or an unowned one with events) is
   * refused with `OwnerMismatch`.
   */
  readonly owner?: string | undefined
  /** The writer's key: the batch is signed (one signature) and its row written in the same transaction. */
  readonly signer?: Signing.Signer | undefined
}

/** Where already-stored ids of a batch live. */
export type Located = ReadonlyMap<string, { readonly stream: string; readonly version: number }>

/** What an append may fail with. */
export type AppendError =
  | EventLog.StoreError
  | EventLog.ConcurrencyConflict
  | EventLog.DuplicateEventIds
  | EventLog.OwnerMismatch

/**
 * Whether a writer acting for `request.owner` may append to a stream at version `current` whose owner is
 * `stored` (undefined: no owner row): always without an owner; with one, a stream of that owner, or a
 * stream with no owner and no events (which the append then claims).
 */
export const ownerRefusal = (
  request: AppendRequest,
  current: number,
  stored: string | undefined
): EventLog.OwnerMismatch | undefined => {
  const owner = request.owner
  if (owner === undefined || stored === owner || (stored === undefined && current === 0)) return undefined
  return new EventLog.OwnerMismatch({ stream: request.stream, requested: owner, current: stored ?? null })
}

const matches = EventLog.matchesExpected

/**
 * Whether the batch is written as is: ids present, none repeated, none stored, version as expected. When
 * false, `checkAppend` never answers `Write` for the same input (see `settle`).
 */
export const canWrite = (request: AppendRequest, current: number, located: Located): boolean =>
  request.ids.length > 0 &&
  located.size === 0 &&
  // One id cannot repeat: no set for the commonest append.
  (request.ids.length === 1 || new Set(request.ids).size === request.ids.length) &&
  matches(current, request.expected)

/**
 * Why this store may not extend the stream whose stored head is `head` (keyed with another key, keyed
 * when the store is not, or the reverse), as the error the append fails with; undefined when it may.
 */
export const keyRefusal = (request: AppendRequest, current: number, head: string): EventLog.StoreError | undefined => {
  if (current === 0) return undefined
  const problem = EventHash.keyProblem(EventHash.parseHead(head).keyId, request.key)
  return problem === undefined
    ? undefined
    : new EventLog.StoreError({
        operation: "append",
        detail: `stream "${request.stream}" at version ${current}: ${problem}; nothing was written`
      })
}

/** The stored hash of the last row written, as the append result reports it (absent for no rows). */
export const lastHashOf = (rows: ReadonlyArray<NewEvent>): { readonly lastHash?: string } => {
  const last = rows[rows.length - 1]
  return last === undefined ? {} : { lastHash: last.hash }
}

/**
 * The rows of a batch written after `current`, chained from the stored head `previous` (either form),
 * and the new stored head (keyed form when the request has a key).
 */
export const rowsOf = (
  request: AppendRequest,
  current: number,
  previous: string
): { readonly rows: ReadonlyArray<NewEvent>; readonly head: string } => {
  let hash = EventHash.parseHead(previous).hash
  const rows: Array<NewEvent> = []
  for (let index = 0; index < request.stored.length; index++) {
    const record = request.stored[index]
    if (record === undefined) continue
    const version = current + 1 + index
    const eventId = request.ids[index] ?? ""
    add(counters.charsHashed, record.data.length)
    hash = EventHash.chain(
      hash,
      {
        stream: request.stream,
        version,
        eventId,
        type: record.type,
        schemaVersion: record.schemaVersion,
        data: record.data
      },
      request.key
    )
    rows.push({
      event_id: eventId,
      stream_id: request.stream,
      stream_version: version,
      type: record.type,
      schema_version: record.schemaVersion,
      data: record.data,
      metadata: request.metadata,
      recorded_at: request.now,
      hash
    })
  }
  return {
    rows,
    head: EventHash.formatHead({ stream: request.stream, version: current + rows.length, hash }, request.key)
  }
}

/** The `batch_signatures` row of a batch. */
export interface BatchSignatureRow {
  readonly stream_id: string
  readonly first_version: number
  readonly last_version: number
  readonly writer: string
  readonly key_id: string
  readonly signature: string
}

/**
 * The signature row of the rows `rowsOf` built after the stored head `previous`, when the request has a
 * signer: one Ed25519 signature over the batch's hashes and the previous hash, the only per-batch work
 * signing adds (no per-event hashing beyond the chain's).
 */
export const signatureOf = (
  request: AppendRequest,
  rows: ReadonlyArray<NewEvent>,
  previous: string
): BatchSignatureRow | undefined => {
  const signer = request.signer
  const first = rows[0]
  const last = rows[rows.length - 1]
  if (signer === undefined || first === undefined || last === undefined) return undefined
  add(counters.batchesSigned)
  const batch = {
    stream: request.stream,
    firstVersion: first.stream_version,
    lastVersion: last.stream_version,
    writer: signer.writer,
    keyId: signer.keyId,
    previous: EventHash.parseHead(previous).hash,
    hashes: rows.map((row) => row.hash)
  }
  return {
    stream_id: request.stream,
    first_version: batch.firstVersion,
    last_version: batch.lastVersion,
    writer: signer.writer,
    key_id: signer.keyId,
    signature: signer.sign(Signing.payload(batch))
  }
}

/** The outcome of a batch `canWrite` refused: an error, an idempotent retry, or an empty batch. */
export const settle = (
  request: AppendRequest,
  current: number,
  located: Located
): Effect.Effect<EventLog.AppendResult, EventLog.ConcurrencyConflict | EventLog.DuplicateEventIds> =>
  Effect.flatMap(
    EventLog.checkAppend({
      stream: request.stream,
      current,
      expected: request.expected,
      ids: request.ids,
      existing: located
    }),
    (decision) => {
      switch (decision._tag) {
        case "AlreadyWritten":
          return Effect.succeed({
            stream: request.stream,
            nextExpectedVersion: decision.lastVersion,
            written: 0,
            lastPosition: undefined
          })
        case "Nothing":
          return Effect.succeed({
            stream: request.stream,
            nextExpectedVersion: current,
            written: 0,
            lastPosition: undefined
          })
        case "Write":
          return Effect.dieMessage(`append to "${request.stream}": checkAppend allowed a batch canWrite refused`)
      }
    }
  )
