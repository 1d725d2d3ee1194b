/**
 * The types of the event log, below `EventLog.ts` and the in-memory implementation so neither imports
 * the other's types (no import cycle). `EventLog.ts` re-exports every name.
 */
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type { EventDecodeError, EventEncodeError } from "../EventCodec.js"
import type { InvalidInput } from "../Validation.js"
import type { WindowEvent } from "../WindowEvent.js"
import type { ConcurrencyConflict, DuplicateEventIds, ExpectedVersion, OwnerMismatch, StoreError } from "./logErrors.js"

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
}

/** Options of a read across all streams. @since 0.1.0 */
export interface ReadAllOptions {
  /** Read events after this global position (exclusive, default 0). */
  readonly after?: number
  readonly limit?: number
}

/** What an event log does (`EventLog.Service`). @since 0.1.0 */
export interface EventLogService {
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
