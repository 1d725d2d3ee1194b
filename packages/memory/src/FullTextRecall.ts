/**
 * A `RecallSource` over the `RecallIndex` of a durable log:
 *
 * - `recall`: messages of the same conversation (stream);
 * - `summary`: summaries and seams of the same conversation;
 * - `cross_session`: messages of the owner's other conversations (the owner given in the request, or the
 *   stream's recorded owner; with neither, nothing is found: a search never crosses owners);
 * - `document_rag`: chunks of documents the owner ingested;
 * - `graph_facts`: recorded facts whose subject or object the query mentions, one line per fact.
 *
 * Hits come best first and fit the request's token budget (counted with the `TokenCounter` in use).
 * With an `Embedder` in context, full-text candidates are re-ranked by embedding similarity.
 *
 * @since 0.1.0
 */
import { Message, RecallSource, TokenCounter } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { cosine, Embedder } from "./Embedder.js"
import * as RecallIndex from "./RecallIndex.js"

/** Tuning. @since 0.1.0 */
export interface Options {
  /** Full-text candidates fetched before the budget is applied (default 20). */
  readonly candidates?: number
}

type Hit = RecallSource.RecallHit

// A short header only: where a hit came from is in `RecallHit.source`, not worth prompt tokens.
const line = (hit: RecallIndex.SearchHit): string =>
  hit.source === "document"
    ? `[document ${hit.documentId ?? ""}]\n${hit.text}`
    : `[earlier ${hit.role} message]\n${hit.text}`

const toHit = (hit: RecallIndex.SearchHit): Hit => ({
  // Recalled text is injected as plain text: a recalled tool result must not look like a real one.
  message: { role: "system", parts: [Message.text(line(hit))] },
  score: hit.score,
  ...(hit.source === "message" && hit.stream !== undefined
    ? { source: { stream: hit.stream, messageId: hit.ref } }
    : {})
})

/** Build the source from the index and token counter (and an optional embedder). @since 0.1.0 */
export const make = (
  options: Options = {}
): Effect.Effect<RecallSource.RecallSource.Service, never, RecallIndex.RecallIndex | TokenCounter.TokenCounter> =>
  Effect.gen(function* () {
    const index = yield* RecallIndex.RecallIndex
    const counter = yield* TokenCounter.TokenCounter
    const embedder = yield* Effect.serviceOption(Embedder)
    const candidates = options.candidates ?? 20

    const rerank = (query: string, hits: ReadonlyArray<RecallIndex.SearchHit>) =>
      Option.match(embedder, {
        onNone: () => Effect.succeed(hits),
        onSome: (model) =>
          hits.length === 0
            ? Effect.succeed(hits)
            : Effect.map(model.embed([query, ...hits.map((hit) => hit.text)]), ([first, ...rest]) =>
                hits
                  .map((hit, position) => ({ ...hit, score: cosine(first ?? [], rest[position] ?? []) }))
                  .sort((a, b) => b.score - a.score)
              )
      })

    const ownerOf = (request: RecallSource.RecallRequest) =>
      request.owner === undefined ? index.ownerOf(request.stream) : Effect.succeed(Option.some(request.owner))

    const search = (
      request: RecallSource.RecallRequest,
      scope: RecallIndex.SearchScope,
      kinds?: ReadonlyArray<string>
    ) =>
      index.search({ scope, query: request.query, limit: candidates, ...(kinds === undefined ? {} : { kinds }) }).pipe(
        Effect.flatMap((hits) => rerank(request.query, hits)),
        Effect.map((hits) => hits.map(toHit))
      )

    const lookup = (request: RecallSource.RecallRequest) => {
      switch (request.kind) {
        case "recall":
          return search(request, RecallIndex.inStream(request.stream))
        case "summary":
          return search(request, RecallIndex.inStream(request.stream), ["summary", "seam"])
        case "cross_session":
          return Effect.flatMap(ownerOf(request), (owner) =>
            Option.isNone(owner)
              ? Effect.succeed([])
              : search(request, RecallIndex.acrossOwner(owner.value, request.stream))
          )
        case "document_rag":
          return Effect.flatMap(ownerOf(request), (owner) =>
            Option.isNone(owner) ? Effect.succeed([]) : search(request, RecallIndex.documentsOf(owner.value))
          )
        case "graph_facts":
          return Effect.flatMap(ownerOf(request), (owner) =>
            index
              .factsFor(
                Option.isSome(owner)
                  ? { _tag: "Owner", owner: owner.value }
                  : { _tag: "Stream", stream: request.stream },
                request.query,
                candidates
              )
              .pipe(
                Effect.map((facts) =>
                  facts.map(
                    (fact): Hit => ({
                      message: {
                        role: "system",
                        parts: [Message.text(`${fact.subject} ${fact.predicate} ${fact.object}`)]
                      },
                      score: fact.mentions,
                      ...(fact.sourceMessageId === undefined
                        ? {}
                        : { source: { stream: fact.stream, messageId: fact.sourceMessageId } })
                    })
                  )
                )
              )
          )
        default:
          return Effect.succeed([])
      }
    }

    const withinBudget = (hits: ReadonlyArray<Hit>, budget: number): ReadonlyArray<Hit> => {
      const kept: Array<Hit> = []
      let used = 0
      for (const hit of hits) {
        const tokens = counter.countMessage(hit.message)
        // Skip what does not fit but keep looking: a smaller, lower-ranked hit may still fit.
        if (used + tokens > budget) continue
        kept.push(hit)
        used += tokens
      }
      return kept
    }

    return {
      recall: (request) =>
        lookup(request).pipe(
          Effect.map((hits) => withinBudget(hits, request.budget)),
          Effect.mapError((error) => new RecallSource.RecallError({ kind: request.kind, detail: error.message }))
        )
    }
  })

/** The full-text recall source. @since 0.1.0 */
export const layer = (
  options: Options = {}
): Layer.Layer<RecallSource.RecallSource, never, RecallIndex.RecallIndex | TokenCounter.TokenCounter> =>
  Layer.effect(RecallSource.RecallSource, make(options))
