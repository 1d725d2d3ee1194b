/**
 * The extension point for vector search. The stores index text for full-text search (BM25 on SQLite,
 * `ts_rank` on PostgreSQL); when an `Embedder` is provided, `FullTextRecall` re-ranks the full-text
 * candidates by cosine similarity to the query. No embedder ships here: plug in any model client.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** An embedding call failed. @since 0.1.0 */
export class EmbedError extends Schema.TaggedError<EmbedError>()("EmbedError", {
  model: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `embedding with ${this.model} failed: ${this.detail}`
  }
}

/** Turns texts into vectors. @since 0.1.0 */
export class Embedder extends Context.Tag("@ctxlog/memory/Embedder")<Embedder, Embedder.Service>() {}

/** @since 0.1.0 */
export declare namespace Embedder {
  /** @since 0.1.0 */
  export interface Service {
    readonly model: string
    /** One vector per text, in order. */
    readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ReadonlyArray<number>>, EmbedError>
  }
}

/** Cosine similarity of two vectors (0 when either is zero). @since 0.1.0 */
export const cosine = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  let dot = 0
  let normA = 0
  let normB = 0
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    const x = a[index] ?? 0
    const y = b[index] ?? 0
    dot += x * y
    normA += x * x
    normB += y * y
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB)
}
