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
import * as appendRules from "./internal/appendRules.js"
import * as memory from "./internal/memoryEventLog.js"
import type { ChainKey } from "./EventHash.js"
import type { EventLogService } from "./internal/eventLogTypes.js"
import type { ExpectedVersion, ConcurrencyConflict, DuplicateEventIds } from "./internal/logErrors.js"

export {
  ConcurrencyConflict,
  DuplicateEventIds,
  ExpectedVersion,
  OwnerMismatch,
  StoreError,
  TamperDetected
} from "./internal/logErrors.js"
export type {
  AppendResult,
  Envelope,
  EventMetadata,
  ReadAllOptions,
  ReadOptions,
  StreamId,
  StreamInfo
} from "./internal/eventLogTypes.js"

/** Durable, append-only storage of window events. @since 0.1.0 */
export class EventLog extends Context.Tag("@ctxlog/core/EventLog")<EventLog, EventLog.Service>() {}

/** @since 0.1.0 */
export declare namespace EventLog {
  /** What an event log does: the methods are documented on `EventLogService`. @since 0.1.0 */
  export type Service = EventLogService
}

/** Options of the in-memory log. @since 0.1.0 */
export interface MemoryOptions {
  /** Chain appended events with HMAC-SHA256 under this key (default: the unkeyed SHA-256 chain). */
  readonly hmacKey?: ChainKey
}

/** An in-memory event log: for tests, demos and single-process scratch work. @since 0.1.0 */
export const layerMemory: Layer.Layer<EventLog> = Layer.effect(EventLog, memory.make())

/** An in-memory event log with options (an HMAC key for its chain). @since 0.1.0 */
export const layerMemoryWith = (options: MemoryOptions): Layer.Layer<EventLog> =>
  Layer.effect(EventLog, memory.make(options.hmacKey))

/** Build an in-memory event log (each call is a fresh, empty log). @since 0.1.0 */
export const makeMemory: Effect.Effect<EventLog.Service> = Effect.suspend(() => memory.make())

/**
 * The append rules every backend applies inside its transaction, given what is stored: duplicate-id
 * detection, idempotent retries, expected-version checks. Exported so SQL backends share them.
 * @since 0.1.0
 */
export const checkAppend: (
  input: appendRules.AppendCheckInput
) => Effect.Effect<appendRules.AppendDecision, ConcurrencyConflict | DuplicateEventIds> = appendRules.checkAppend

/** Whether a stream at version `current` (0: no events) satisfies `expected`. @since 0.1.0 */
export const matchesExpected: (current: number, expected: ExpectedVersion) => boolean = appendRules.matches

/** @since 0.1.0 */
export type AppendCheckInput = appendRules.AppendCheckInput
/** @since 0.1.0 */
export type AppendDecision = appendRules.AppendDecision
