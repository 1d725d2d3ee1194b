/**
 * The right to erasure: one audited operation that removes a conversation from a durable store — its
 * events, its stream row, its snapshots, its recall entries and facts, and its owner row — and records
 * that it happened in the append-only `erasures` table (stream, events removed, the last version and head
 * hash, when, who and why). The audit row outlives the data; the append-only triggers still reject every
 * other UPDATE and DELETE on `events`.
 *
 * After an erasure the stream is empty: its version is 0, a read yields nothing and a load gives the
 * empty window (as for a stream never written). Appending to the same id again starts a new conversation
 * at version 1 with a new hash chain; nothing of the erased one comes back.
 *
 * @since 0.1.0
 */
import type { EventLog } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** Who asked for an erasure and why (both required, kept in the audit row). @since 0.1.0 */
export interface Request {
  readonly actor: string
  readonly reason: string
}

/** The audit record of one erasure. @since 0.1.0 */
export interface Record {
  readonly stream: string
  /** The stream's owner when it was erased, if it had one. */
  readonly owner: string | undefined
  /** Events removed. */
  readonly events: number
  /** The stream's version and head hash when it was erased (what the removed chain ended with). */
  readonly lastVersion: number
  readonly headHash: string
  /** Epoch milliseconds, from the `Clock` of the process that erased. */
  readonly erasedAt: number
  readonly actor: string
  readonly reason: string
}

/** The stream has no events to erase (never written, erased already, or not visible to this owner). @since 0.1.0 */
export class NothingToErase extends Schema.TaggedError<NothingToErase>()("NothingToErase", {
  stream: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}" has no events to erase (never written, already erased, or another owner's)`
  }
}

/** The erasure request is incomplete (blank stream id, actor or reason); nothing was erased. @since 0.1.0 */
export class InvalidErasure extends Schema.TaggedError<InvalidErasure>()("InvalidErasure", {
  /** The stream id as given, shortened and escaped for display (`Validation.excerpt`). */
  stream: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `erasure of stream ${this.stream} refused: ${this.detail}`
  }
}

/** Erasure of whole conversations, audited. @since 0.1.0 */
export class Erasure extends Context.Tag("@ctxlog/memory/Erasure")<Erasure, Erasure.Service>() {}

/** @since 0.1.0 */
export declare namespace Erasure {
  /** @since 0.1.0 */
  export interface Service {
    /**
     * Remove every trace of `stream` in one transaction and record the erasure. A store scoped to an
     * owner erases only that owner's streams (another owner's is `NothingToErase`).
     */
    readonly erase: (
      stream: string,
      request: Request
    ) => Effect.Effect<Record, NothingToErase | InvalidErasure | EventLog.StoreError>
    /** The audit trail, oldest first; only `stream`'s erasures when given. */
    readonly erasures: (stream?: string) => Effect.Effect<ReadonlyArray<Record>, EventLog.StoreError>
  }
}

/** Erase a stream through the `Erasure` in context. @since 0.1.0 */
export const erase = (
  stream: string,
  request: Request
): Effect.Effect<Record, NothingToErase | InvalidErasure | EventLog.StoreError, Erasure> =>
  Effect.flatMap(Erasure, (service) => service.erase(stream, request))
