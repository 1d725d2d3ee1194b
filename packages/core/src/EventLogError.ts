/**
 * The errors and the expected-version type of the event log. A module of their own, beside `EventLog.ts`,
 * so the append rules (and every backend) can construct them without importing the port module, which
 * imports the rules. `EventLog` re-exports every name.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * What the writer believes the stream's version is: an exact version (0 = no events yet),
 * `"no_stream"`, `"stream_exists"`, or `"any"` (no check).
 * @since 0.1.0
 */
export const ExpectedVersion = Schema.Union(
  Schema.Int.pipe(Schema.nonNegative()),
  Schema.Literal("no_stream", "stream_exists", "any")
)
/** @since 0.1.0 */
export type ExpectedVersion = typeof ExpectedVersion.Type

/** The stream is not at the version the writer expected; nothing was written. @since 0.1.0 */
export class ConcurrencyConflict extends Schema.TaggedError<ConcurrencyConflict>()("ConcurrencyConflict", {
  stream: Schema.String,
  expected: ExpectedVersion,
  actual: Schema.Int
}) {
  override get message(): string {
    return `stream "${this.stream}": expected version ${this.expected}, actual ${this.actual}`
  }
}

/**
 * Some event ids of the batch are stored already (or repeat within the batch, or belong to another
 * stream or position); nothing was written.
 * @since 0.1.0
 */
export class DuplicateEventIds extends Schema.TaggedError<DuplicateEventIds>()("DuplicateEventIds", {
  stream: Schema.String,
  ids: Schema.Array(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}": ${this.detail} (${this.ids.join(", ")})`
  }
}

/**
 * The stream belongs to another owner (tenant), or has events and no owner, and the writer acts for
 * `requested`: an owner is never changed by an append. Nothing was written.
 * @since 0.1.0
 */
export class OwnerMismatch extends Schema.TaggedError<OwnerMismatch>()("OwnerMismatch", {
  stream: Schema.String,
  requested: Schema.String,
  /** The stream's owner; null when the stream has events but no owner. */
  current: Schema.NullOr(Schema.String)
}) {
  override get message(): string {
    return this.current === null
      ? `stream "${this.stream}" has events but no owner: owner "${this.requested}" cannot take it over (nothing written)`
      : `stream "${this.stream}" belongs to owner "${this.current}", not "${this.requested}" (nothing written)`
  }
}

/** The storage failed (I/O, driver, corrupt row). @since 0.1.0 */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `event store ${this.operation} failed: ${this.detail}`
  }
}

/**
 * The log or a snapshot does not hold what was written: a hash-chain link, a snapshot seal or the stream
 * row does not match (edited, truncated, or read with another HMAC key). Names the stream and the
 * first version that failed.
 * @since 0.1.0
 */
export class TamperDetected extends Schema.TaggedError<TamperDetected>()("TamperDetected", {
  stream: Schema.String,
  version: Schema.Int,
  detail: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}" version ${this.version}: ${this.detail}`
  }
}
