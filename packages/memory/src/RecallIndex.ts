/**
 * The recall index of the durable logs, a projection of the log kept off the append path: it catches up
 * from the global position after commit, in batches, and before every query that may find something (so
 * a query never misses a committed message; a search whose every scope finds nothing, counting what a
 * catch-up would add, leaves it for later: ADR 0076), and can be rebuilt from the log. It holds message text for full-text search (SQLite FTS5 with BM25, PostgreSQL `tsvector` with
 * `ts_rank`), ingested documents in chunks, knowledge-graph facts from `FactsRecorded` events, and the
 * owner of each stream. A search is always scoped: to one stream, to one owner's streams, or to one
 * owner's documents; it never crosses the owner it was asked for.
 *
 * @since 0.1.0
 */
import type { EventLog, RecallSource } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** Where a search looks. @since 0.1.0 */
export type SearchScope =
  | { readonly _tag: "Stream"; readonly stream: string }
  | { readonly _tag: "Owner"; readonly owner: string; readonly except?: string }
  | { readonly _tag: "Documents"; readonly owner: string }

/** The messages of one stream. @since 0.1.0 */
export const inStream = (stream: string): SearchScope => ({ _tag: "Stream", stream })
/** The messages of every stream of `owner`, optionally but one. @since 0.1.0 */
export const acrossOwner = (owner: string, except?: string): SearchScope =>
  except === undefined ? { _tag: "Owner", owner } : { _tag: "Owner", owner, except }
/** The documents `owner` ingested. @since 0.1.0 */
export const documentsOf = (owner: string): SearchScope => ({ _tag: "Documents", owner })

/** A full-text search. @since 0.1.0 */
export interface SearchRequest {
  readonly scope: SearchScope
  readonly query: string
  /** Most hits returned (default 20). */
  readonly limit?: number | undefined
  /** Message kinds to search (default: every kind but re-injected context, see `recallableKinds`). */
  readonly kinds?: ReadonlyArray<string> | undefined
  /**
   * For a `Stream` scope: the stream's messages the caller holds (and drops from the hits). When every
   * message of the scope is held, the search is not run and finds nothing, which is what the caller
   * would have kept of it (ADR 0076). The index checks only the entries new since its last check under
   * the same `held.growing`.
   * @since 0.7.0
   */
  readonly held?: RecallSource.HeldMessages | undefined
}

/** One search hit, best first. @since 0.1.0 */
export interface SearchHit {
  readonly source: "message" | "document"
  /** The stream of a message hit. */
  readonly stream: string | undefined
  /** The message id, or the chunk number of a document. */
  readonly ref: string
  readonly documentId: string | undefined
  readonly kind: string
  readonly role: string
  readonly text: string
  /** Token count stored with the message (an estimate for document chunks). */
  readonly tokens: number
  readonly position: number | undefined
  /** Higher is better; comparable within one search only. */
  readonly score: number
}

/** Where facts are looked up. @since 0.1.0 */
export type FactScope =
  | { readonly _tag: "Stream"; readonly stream: string }
  | { readonly _tag: "Owner"; readonly owner: string }

/** A recorded fact and where it came from. @since 0.1.0 */
export interface FactHit {
  readonly stream: string
  readonly subject: string
  readonly predicate: string
  readonly object: string
  readonly sourceMessageId: string | undefined
  readonly eventId: string
  readonly position: number
  /** How many of its entities (subject, object) the text mentions. */
  readonly mentions: number
}

/** A stream with its owner. @since 0.1.0 */
export interface OwnedStream extends EventLog.StreamInfo {
  readonly owner: string
}

/** A document (or its owner or id) is empty; nothing was written. @since 0.1.0 */
export class InvalidDocument extends Schema.TaggedError<InvalidDocument>()("InvalidDocument", {
  owner: Schema.String,
  documentId: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `document "${this.documentId}" of owner "${this.owner}": ${this.detail}`
  }
}

/**
 * Message kinds searched by default: everything but context that was itself injected from an index
 * (recall, cross-session, document RAG, graph facts, session digests), so recall never echoes itself.
 * @since 0.1.0
 */
export const recallableKinds: ReadonlyArray<string> = [
  "chat",
  "correction",
  "persona_facts",
  "trajectory_hints",
  "tree_memory",
  "reasoning_strategies",
  "lsp",
  "code_context",
  "summary",
  "seam",
  "briefing"
]

/** The recall index of a durable log. @since 0.1.0 */
export class RecallIndex extends Context.Tag("@ctxlog/memory/RecallIndex")<RecallIndex, RecallIndex.Service>() {}

/** @since 0.1.0 */
export declare namespace RecallIndex {
  /** @since 0.1.0 */
  export interface Service {
    /**
     * Record who owns a stream; cross-session search, facts and a scoped store's listings follow it. Set
     * once: the same owner again is a no-op, another owner is `OwnerMismatch` (nothing changed).
     */
    readonly setOwner: (
      stream: string,
      owner: string
    ) => Effect.Effect<void, EventLog.OwnerMismatch | EventLog.StoreError>
    readonly ownerOf: (stream: string) => Effect.Effect<Option.Option<string>, EventLog.StoreError>
    /** The streams of an owner, most recently active first. */
    readonly streamsOf: (owner: string) => Effect.Effect<ReadonlyArray<OwnedStream>, EventLog.StoreError>
    readonly search: (request: SearchRequest) => Effect.Effect<ReadonlyArray<SearchHit>, EventLog.StoreError>
    /**
     * Several searches at one state of the index: what `search` returns for each request, in order. The
     * index catches up once, and requests for the same query and limit are answered together (on SQLite
     * by one statement: each tier's full-text match runs once for all their scopes).
     * @since 0.6.0
     */
    readonly searchEach: (
      requests: ReadonlyArray<SearchRequest>
    ) => Effect.Effect<ReadonlyArray<ReadonlyArray<SearchHit>>, EventLog.StoreError>
    /** Index a document for `owner` in chunks (re-ingesting an id replaces it). Text is redacted first. */
    readonly ingestDocument: (
      owner: string,
      documentId: string,
      text: string
    ) => Effect.Effect<{ readonly chunks: number }, InvalidDocument | EventLog.StoreError>
    /** Facts whose subject or object the text mentions, most mentions first, then newest. */
    readonly factsFor: (
      scope: FactScope,
      text: string,
      limit?: number
    ) => Effect.Effect<ReadonlyArray<FactHit>, EventLog.StoreError>
    /**
     * Index every committed event not indexed yet (in batches, each in its own transaction). `search`
     * (unless it finds nothing either way, ADR 0076), `factsFor` and `streamsOf` run it first, so a query
     * never misses a committed message.
     */
    readonly catchUp: () => Effect.Effect<CatchUp, EventLog.StoreError>
    /** Drop the message entries and facts and index the whole log again (documents are kept). */
    readonly rebuild: () => Effect.Effect<CatchUp, EventLog.StoreError>
  }
}

/** What a catch-up did. @since 0.1.0 */
export interface CatchUp {
  /** Events read and indexed. */
  readonly events: number
  /** The global position the index now covers. */
  readonly position: number
}

/** Bring the recall index in context up to date with the log. @since 0.1.0 */
export const catchUp: Effect.Effect<CatchUp, EventLog.StoreError, RecallIndex> = Effect.flatMap(RecallIndex, (index) =>
  index.catchUp()
)

/** Rebuild the recall index in context from the log (message entries and facts). @since 0.1.0 */
export const rebuild: Effect.Effect<CatchUp, EventLog.StoreError, RecallIndex> = Effect.flatMap(RecallIndex, (index) =>
  index.rebuild()
)
