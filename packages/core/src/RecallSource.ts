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
