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
import { type EventLog, Lru, Message, RecallSource, TokenCounter, Window } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { cosine, type EmbedError, Embedder } from "./Embedder.js"
import * as RecallIndex from "./RecallIndex.js"

/** Tuning. @since 0.1.0 */
export interface Options {
  /** Full-text candidates fetched before the budget is applied (default 20). */
  readonly candidates?: number
  /**
   * A hit larger than the budget left is cut to an excerpt around its first matching word, if at least
   * this many tokens are left (default 48; 0 = never cut, skip instead).
   */
  readonly minExcerptTokens?: number
}

type Hit = RecallSource.RecallHit

/** Hit token counts one source keeps (most recently used), of hits up to `maxCountedChars` long. */
const maxCounted = 512
const maxCountedChars = 8192

// A short header only: where a hit came from is in `RecallHit.source`, not worth prompt tokens.
const header = (hit: RecallIndex.SearchHit): string =>
  hit.source === "document" ? `[document ${hit.documentId ?? ""}]` : `[earlier ${hit.role} message]`

const toHit = (hit: RecallIndex.SearchHit, body: string): Hit => ({
  // Recalled text is injected as plain text: a recalled tool result must not look like a real one.
  message: { role: "system", parts: [Message.text(`${header(hit)}\n${body}`)] },
  score: hit.score,
  ...(hit.source === "message" && hit.stream !== undefined
    ? { source: { stream: hit.stream, messageId: hit.ref } }
    : {})
})

/** At most `maxChars` of `text`, starting a little before the first word of the query it contains. */
const excerpt = (text: string, query: string, maxChars: number): string => {
  const lower = text.toLowerCase()
  const words = (query.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? []).map((word) => lower.indexOf(word))
  const found = words.filter((at) => at >= 0)
  const first = found.length === 0 ? 0 : Math.min(...found)
  const start = Math.max(0, Math.min(first - Math.floor(maxChars / 4), text.length - maxChars))
  const end = Math.min(text.length, start + maxChars)
  return `${start > 0 ? "…" : ""}${text.slice(start, end)}${end < text.length ? "…" : ""}`
}

/** A hit, and how to make a smaller one from it (search hits; facts are one line and never cut). */
interface Candidate {
  readonly hit: Hit
  readonly shrink?: (maxChars: number) => Hit
  readonly length: number
}

/** The kinds whose searches {@link together} can share: the conversation's own and the owner's others. @since 0.6.0 */
export type SharedKind = "recall" | "cross_session"

interface Shared {
  readonly kinds: ReadonlySet<SharedKind>
  readonly found: Map<
    string,
    Effect.Effect<ReadonlyMap<SharedKind, ReadonlyArray<RecallIndex.SearchHit>>, EventLog.StoreError>
  >
}

const sharedSearches = FiberRef.unsafeMake<Shared | undefined>(undefined)

/**
 * Run `effect` with the searches of `kinds` shared: the first recall request of one of them searches for
 * all of them at once (one catch-up of the index and one `RecallIndex.searchEach`: one statement on
 * SQLite), and the requests of the others for the same stream, query and owner take their part of it.
 * What each request returns is unchanged; use it around requests that run at one state of the index (a
 * turn's prepare asks for recall and cross-session context inside one batch, before it appends anything).
 * @since 0.6.0
 */
export const together =
  (kinds: ReadonlyArray<SharedKind>) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => Effect.locally(effect, sharedSearches, { kinds: new Set(kinds), found: new Map() }))

/** Build the source from the index and token counter (and an optional embedder). @since 0.1.0 */
export const make = (
  options: Options = {}
): Effect.Effect<RecallSource.RecallSource.Service, never, RecallIndex.RecallIndex | TokenCounter.TokenCounter> =>
  Effect.gen(function* () {
    const index = yield* RecallIndex.RecallIndex
    const counter = yield* TokenCounter.TokenCounter
    const embedder = yield* Effect.serviceOption(Embedder)
    const candidates = options.candidates ?? 20
    const minExcerptTokens = options.minExcerptTokens ?? 48

    const rerank = (
      query: string,
      hits: ReadonlyArray<RecallIndex.SearchHit>
    ): Effect.Effect<ReadonlyArray<RecallIndex.SearchHit>, EmbedError> =>
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

    // The messages the caller holds are the request's stream's: they bear on a search of that stream only.
    const heldFor = (request: RecallSource.RecallRequest, scope: RecallIndex.SearchScope) =>
      request.held !== undefined && scope._tag === "Stream" && scope.stream === request.stream
        ? { held: request.held }
        : {}

    const ownerOf = (request: RecallSource.RecallRequest) =>
      request.owner === undefined ? index.ownerOf(request.stream) : Effect.succeed(Option.some(request.owner))

    const toCandidates = (request: RecallSource.RecallRequest, found: ReadonlyArray<RecallIndex.SearchHit>) =>
      rerank(request.query, found).pipe(
        Effect.map((hits) =>
          hits.map(
            (hit): Candidate => ({
              hit: toHit(hit, hit.text),
              shrink: (maxChars) => toHit(hit, excerpt(hit.text, request.query, maxChars)),
              length: hit.text.length
            })
          )
        )
      )

    const search = (
      request: RecallSource.RecallRequest,
      scope: RecallIndex.SearchScope,
      kinds?: ReadonlyArray<string>
    ) =>
      index
        .search({ scope, query: request.query, limit: candidates, kinds, ...heldFor(request, scope) })
        .pipe(Effect.flatMap((found) => toCandidates(request, found)))

    /** The scope a request of a shareable kind searches (none: a cross-session search without an owner). */
    const scopeOf = (
      kind: SharedKind,
      request: RecallSource.RecallRequest
    ): Effect.Effect<Option.Option<RecallIndex.SearchScope>, EventLog.StoreError> =>
      kind === "recall"
        ? Effect.succeed(Option.some(RecallIndex.inStream(request.stream)))
        : Effect.map(
            ownerOf(request),
            Option.map((owner) => RecallIndex.acrossOwner(owner, request.stream))
          )

    /**
     * Inside {@link together}: the searches of every kind it names for this request's stream, query and
     * owner, run once (one catch-up, one `searchEach`) when the first of them is asked for.
     */
    const sharedSearch = (
      shared: Shared,
      kind: SharedKind,
      request: RecallSource.RecallRequest
    ): Effect.Effect<ReadonlyArray<Candidate>, EventLog.StoreError | EmbedError> =>
      Effect.gen(function* () {
        const key = `${request.stream}\u0000${request.owner ?? ""}\u0000${request.query}`
        let found = shared.found.get(key)
        if (found === undefined) {
          found = yield* Effect.cached(
            Effect.gen(function* () {
              const kinds = [...shared.kinds]
              const scopes = yield* Effect.forEach(kinds, (each) => scopeOf(each, { ...request, kind: each }))
              const asked = kinds.flatMap((each, at) => {
                const scope = scopes[at]
                return scope === undefined || Option.isNone(scope) ? [] : [{ kind: each, scope: scope.value }]
              })
              const each = yield* index.searchEach(
                asked.map(({ scope }) => ({
                  scope,
                  query: request.query,
                  limit: candidates,
                  ...heldFor(request, scope)
                }))
              )
              return new Map(asked.map(({ kind: asking }, at) => [asking, each[at] ?? []]))
            })
          )
          shared.found.set(key, found)
        }
        return yield* toCandidates(request, (yield* found).get(kind) ?? [])
      })

    const lookup = (
      request: RecallSource.RecallRequest
    ): Effect.Effect<ReadonlyArray<Candidate>, EventLog.StoreError | EmbedError> => {
      return Effect.flatMap(FiberRef.get(sharedSearches), (shared) => {
        const kind = request.kind
        return shared !== undefined && (kind === "recall" || kind === "cross_session") && shared.kinds.has(kind)
          ? sharedSearch(shared, kind, request)
          : lookupAlone(request)
      })
    }

    const lookupAlone = (
      request: RecallSource.RecallRequest
    ): Effect.Effect<ReadonlyArray<Candidate>, EventLog.StoreError | EmbedError> => {
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
                    (fact): Candidate => ({
                      length: 0,
                      hit: {
                        message: {
                          role: "system",
                          parts: [Message.text(`${fact.subject} ${fact.predicate} ${fact.object}`)]
                        },
                        score: fact.mentions,
                        ...(fact.sourceMessageId === undefined
                          ? {}
                          : { source: { stream: fact.stream, messageId: fact.sourceMessageId } })
                      }
                    })
                  )
                )
              )
          )
        default:
          return Effect.succeed<ReadonlyArray<Candidate>>([])
      }
    }

    // A hit is one text part (header and body): its count depends on the kind and that text only, and
    // the same messages come back turn after turn, so the counts of recent hits are kept.
    const counted = Lru.make<string, number>(maxCounted)
    /** A hit's tokens as the window will count it: inside its `<context kind="…">` wrapper. */
    const tokensOf = (kind: string, message: Hit["message"]): number => {
      const only = message.parts.length === 1 ? message.parts[0] : undefined
      if (only?.type !== "text" || message.role !== "system" || only.text.length > maxCountedChars) {
        return Window.wrappedTokens(counter, kind, message, counter.countMessage(message))
      }
      const key = `${kind}\u0000${only.text}`
      const known = counted.get(key)
      if (known !== undefined) return known
      const tokens = Window.wrappedTokens(counter, kind, message, counter.countMessage(message))
      counted.set(key, tokens)
      return tokens
    }

    /** The longest excerpt of a candidate that fits in `room` tokens (binary search on its length). */
    const fitted = (kind: string, candidate: Candidate, room: number): Hit | undefined => {
      const shrink = candidate.shrink
      if (shrink === undefined || minExcerptTokens <= 0 || room < minExcerptTokens) return undefined
      let low = 0
      let high = candidate.length
      let best: Hit | undefined
      while (low <= high) {
        const middle = Math.floor((low + high) / 2)
        const hit = shrink(middle)
        if (tokensOf(kind, hit.message) <= room) {
          best = middle > 0 ? hit : best
          low = middle + 1
        } else {
          high = middle - 1
        }
      }
      return best
    }

    const withinBudget = (kind: string, found: ReadonlyArray<Candidate>, budget: number): ReadonlyArray<Hit> => {
      const kept: Array<Hit> = []
      let used = 0
      for (const candidate of found) {
        const tokens = tokensOf(kind, candidate.hit.message)
        // Counted once: a hit that fits whole adds the tokens just counted, only an excerpt is counted again.
        if (used + tokens <= budget) {
          kept.push(candidate.hit)
          used += tokens
          continue
        }
        const hit = fitted(kind, candidate, budget - used)
        // What does not fit even cut is skipped; a smaller, lower-ranked hit may still fit.
        if (hit === undefined) continue
        kept.push(hit)
        used += tokensOf(kind, hit.message)
      }
      return kept
    }

    return {
      recall: (request) =>
        // Nothing fits in no budget (every hit costs at least its header): no search is run.
        (request.budget <= 0 ? Effect.succeed<ReadonlyArray<Candidate>>([]) : lookup(request)).pipe(
          Effect.map((hits) => withinBudget(request.kind, hits, request.budget)),
          Effect.mapError((error) => new RecallSource.RecallError({ kind: request.kind, detail: error.message }))
        )
    }
  })

/** The full-text recall source. @since 0.1.0 */
export const layer = (
  options: Options = {}
): Layer.Layer<RecallSource.RecallSource, never, RecallIndex.RecallIndex | TokenCounter.TokenCounter> =>
  Layer.effect(RecallSource.RecallSource, make(options))
