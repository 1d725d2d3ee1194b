/**
 * Where injected context comes from: semantic recall within a conversation, cross-session context
 * across an owner's other conversations, summaries, document RAG, graph facts. `@ctxlog/memory`
 * implements it over its full-text index.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { InjectedKind, MessageInput } from "./Message.js"

/** A recall request. @since 0.1.0 */
export interface RecallRequest {
  readonly kind: InjectedKind
  readonly stream: string
  readonly query: string
  /** Token budget for everything returned. */
  readonly budget: number
  /** Scope for cross-session recall: a search never crosses the owner it was asked for. */
  readonly owner?: string | undefined
  /**
   * The messages of `stream` the caller already holds and drops from what it is given (a prepare's
   * dedupe against the window). A source may use it to leave out work whose every result the caller
   * would drop: when each message of the stream it could return is held, it need not search the
   * stream at all. What it returns is unchanged otherwise.
   * @since 0.7.0
   */
  readonly held?: HeldMessages | undefined
}

/**
 * Messages of one stream a caller holds, by id. `growing` lets a source remember what it checked: a
 * request with the same `from` object and a `size` at least as large holds every id an earlier one held.
 * @since 0.7.0
 */
export interface HeldMessages {
  readonly has: (messageId: string) => boolean
  readonly growing?: { readonly from: object; readonly size: number } | undefined
}

/** One recalled item. @since 0.1.0 */
export interface RecallHit {
  readonly message: MessageInput
  readonly score: number
  /** Where it came from (stream and message id), for blame. */
  readonly source?: { readonly stream: string; readonly messageId: string } | undefined
}

/** A recall lookup failed. @since 0.1.0 */
export class RecallError extends Schema.TaggedError<RecallError>()("RecallError", {
  kind: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `recall (${this.kind}) failed: ${this.detail}`
  }
}

/** A source of injected context. @since 0.1.0 */
export class RecallSource extends Context.Tag("@ctxlog/core/RecallSource")<RecallSource, RecallSource.Service>() {}

/** @since 0.1.0 */
export declare namespace RecallSource {
  /** @since 0.1.0 */
  export interface Service {
    readonly recall: (request: RecallRequest) => Effect.Effect<ReadonlyArray<RecallHit>, RecallError>
  }
}

/** A source that answers from a fixed list of hits per kind (for tests and demos). @since 0.1.0 */
export const layerStatic = (hits: Partial<Record<InjectedKind, ReadonlyArray<RecallHit>>>): Layer.Layer<RecallSource> =>
  Layer.succeed(RecallSource, { recall: (request) => Effect.succeed(hits[request.kind] ?? []) })

/** A source that never finds anything. @since 0.1.0 */
export const layerEmpty: Layer.Layer<RecallSource> = layerStatic({})
