/**
 * Durable, append-only storage of window events, one stream per conversation.
 *
 * Guarantees every backend gives (the conformance suite in `@ctxlog/testing` checks them):
 * per-stream versions are 1-based and contiguous; an append is all-or-nothing; `expected` is checked
 * in the same transaction as the write, and a mismatch is a typed {@link ConcurrencyConflict} that
 * writes nothing; re-appending events whose ids are all present already succeeds and writes nothing;
 * ids partly present fail with {@link DuplicateEventIds}; global positions follow commit order.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Stream from "effect/Stream"
import type { EventDecodeError, EventEncodeError } from "./EventCodec.js"
import type { ChainKey } from "./EventHash.js"
import type {
  ConcurrencyConflict,
  DuplicateEventIds,
  ExpectedVersion,
  OwnerMismatch,
  StoreError
} from "./EventLogError.js"
import * as appendRules from "./internal/appendRules.js"
import * as memory from "./internal/memoryEventLog.js"
import * as scratch from "./internal/scratchEventLog.js"
import type { InvalidInput } from "./Validation.js"
import type { WindowEvent } from "./WindowEvent.js"

export {
  ConcurrencyConflict,
  DuplicateEventIds,
  ExpectedVersion,
  OwnerMismatch,
  StoreError,
  TamperDetected
} from "./EventLogError.js"

/** A stream (conversation) id. @since 0.1.0 */
export type StreamId = string

/** Who and why: stored beside each event. @since 0.1.0 */
export interface EventMetadata {
  readonly causationId?: string
  readonly correlationId?: string
  readonly turn?: number
  readonly actor?: string
}

/** A stored event with its position in the log. @since 0.1.0 */
export interface Envelope {
  readonly stream: StreamId
  readonly version: number
  readonly position: number
  readonly eventId: string
  readonly type: WindowEvent["_tag"]
  readonly schemaVersion: number
  readonly event: WindowEvent
  /** The stored JSON text of the event (the hashed bytes). */
  readonly data: string
  readonly metadata: EventMetadata
  /** Epoch milliseconds, from the `Clock` of the writer. */
  readonly recordedAt: number
  readonly hash: string
}

/** What an append did. @since 0.1.0 */
export interface AppendResult {
  readonly stream: StreamId
  /** The stream version after the append: pass it as `expected` next time. */
  readonly nextExpectedVersion: number
  /** Events written (0 for an empty batch or an idempotent retry). */
  readonly written: number
  /** Global position of the last event written, if any. */
  readonly lastPosition: number | undefined
  /**
   * The stored hash of the last event written (where the next event's chain link starts); absent when
   * nothing was written. Every backend reports it (the conformance suite checks); a window cached
   * without it costs its next catch-up one more row.
   */
  readonly lastHash?: string
  /**
   * The events as stored, when the store changed what it was given (a redaction rule removed a secret);
   * absent when the events were stored exactly as given. A caller that keeps a window folds these.
   */
  readonly stored?: ReadonlyArray<WindowEvent>
}

/** A stream and its activity. @since 0.1.0 */
export interface StreamInfo {
  readonly stream: StreamId
  readonly version: number
  readonly createdAt: number
  readonly updatedAt: number
}

/** Options of a stream read. @since 0.1.0 */
export interface ReadOptions {
  /** First version to read (inclusive, default 1). */
  readonly from?: number
  /** Last version to read (inclusive). */
  readonly to?: number
  /**
   * The caller checks each envelope's hash-chain link over its stored bytes before it uses `event` (as
   * `WindowRepository.foldVerifiedHeld` does). A store may then decode rows at the current schema version
   * without a Schema pass (`EventCodec.decodeVerified`); one that ignores this decodes fully.
   * @since 0.5.0
   */
  readonly verifiedByChain?: boolean | undefined
}

/**
 * One page of a stream read, as one effect: the envelopes from version `from`, at most `limit` (fewer at
 * the read's `to` or the stream's end), with the read's options. @since 0.7.0
 */
export type PageReader = (
  from: number,
  limit: number
) => Effect.Effect<ReadonlyArray<Envelope>, StoreError | EventDecodeError>

const pagesKey: unique symbol = Symbol.for("@ctxlog/core/EventLog/pages")

/**
 * `stream` (a `read` of a store), readable page by page as plain effects too: a fold then reads pages
 * without running a `Stream`, whose machinery costs ~0.15 ms a run even for one page (every load and
 * catch-up; ADR 0087). The reader goes with this stream object only: a stream derived from it (mapped,
 * filtered, edited by a wrapper) has none, and is read as a stream.
 * @since 0.7.0
 */
export const withPages = <S extends Stream.Stream<Envelope, StoreError | EventDecodeError>>(
  stream: S,
  pages: PageReader
): S => Object.assign(stream, { [pagesKey]: pages })

/** The page reader `withPages` put on this very stream object, if any. @since 0.7.0 */
export const pagesOf = (stream: Stream.Stream<Envelope, StoreError | EventDecodeError>): PageReader | undefined => {
  const pages: unknown = Reflect.get(stream, pagesKey)
  return typeof pages === "function" ? (pages as PageReader) : undefined
}

/** Options of a read across all streams. @since 0.1.0 */
export interface ReadAllOptions {
  /** Read events after this global position (exclusive, default 0). */
  readonly after?: number
  readonly limit?: number
}

/** Durable, append-only storage of window events. @since 0.1.0 */
export class EventLog extends Context.Tag("@ctxlog/core/EventLog")<EventLog, EventLog.Service>() {}

/** @since 0.1.0 */
export declare namespace EventLog {
  /** What an event log does. @since 0.1.0 */
  export interface Service {
    readonly append: (
      stream: StreamId,
      events: ReadonlyArray<WindowEvent>,
      expected: ExpectedVersion,
      metadata?: EventMetadata
    ) => Effect.Effect<
      AppendResult,
      ConcurrencyConflict | DuplicateEventIds | EventEncodeError | InvalidInput | OwnerMismatch | StoreError
    >
    readonly read: (stream: StreamId, options?: ReadOptions) => Stream.Stream<Envelope, StoreError | EventDecodeError>
    readonly readAll: (options?: ReadAllOptions) => Stream.Stream<Envelope, StoreError | EventDecodeError>
    /** Current version of a stream (0 when it has no events). */
    readonly version: (stream: StreamId) => Effect.Effect<number, StoreError>
    readonly streams: () => Effect.Effect<ReadonlyArray<StreamInfo>, StoreError>
  }
}

/** Options of the in-memory log. @since 0.1.0 */
export interface MemoryOptions {
  /** Chain appended events with HMAC-SHA256 under this key (default: the unkeyed SHA-256 chain). */
  readonly hmacKey?: ChainKey | undefined
}

/**
 * An in-memory event log: for tests, demos and single-process scratch work; options: an HMAC key for
 * its chain. @since 0.1.0
 */
export const layerMemory = (options: MemoryOptions = {}): Layer.Layer<EventLog> =>
  Layer.effect(EventLog, memory.make(options.hmacKey))

/**
 * Build an in-memory event log (each call is a fresh, empty log). (An `Effect` value before 0.3.0: write
 * `makeMemory()`.) @since 0.1.0
 */
export const makeMemory = (options: MemoryOptions = {}): Effect.Effect<EventLog.Service> =>
  Effect.suspend(() => memory.make(options.hmacKey))

/**
 * A scratch log for a single writer that made its events itself (a replay, a what-if run): events are
 * kept as given, with no codec round trip, no hash chain (every `hash` is empty: load its windows
 * unverified) and no boundary validation; the expected-version check stays, and an append costs what
 * it writes, never what the stream holds. Not a store: a log whose events come from outside belongs in
 * {@link layerMemory} or a durable backend.
 * @since 0.8.0
 */
export const layerScratch: Layer.Layer<EventLog> = Layer.effect(EventLog, Effect.suspend(scratch.make))

/**
 * The append rules every backend applies inside its transaction, given what is stored: duplicate-id
 * detection, idempotent retries, expected-version checks. Exported so SQL backends share them.
 * @since 0.1.0
 */
export const checkAppend: (
  input: AppendCheckInput
) => Effect.Effect<AppendDecision, ConcurrencyConflict | DuplicateEventIds> = appendRules.checkAppend

/** Whether a stream at version `current` (0: no events) satisfies `expected`. @since 0.1.0 */
export const matchesExpected: (current: number, expected: ExpectedVersion) => boolean = appendRules.matches

/** What the append rules look at: the batch and what is stored. @since 0.1.0 */
export interface AppendCheckInput {
  readonly stream: string
  /** Current stream version (0 when the stream has no events). */
  readonly current: number
  readonly expected: ExpectedVersion
  /** Ids of the batch, in order. */
  readonly ids: ReadonlyArray<string>
  /** Where each already-stored id of the batch lives. Ids not stored are absent. */
  readonly existing: ReadonlyMap<string, { readonly stream: string; readonly version: number }>
}

/** What the append rules decided: write from a version, an idempotent retry, or nothing. @since 0.1.0 */
export type AppendDecision =
  | { readonly _tag: "Write"; readonly firstVersion: number }
  | { readonly _tag: "AlreadyWritten"; readonly lastVersion: number }
  | { readonly _tag: "Nothing" }
