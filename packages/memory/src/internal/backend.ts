import type { EventLog } from "@ctxlog/core"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import type { Kysely } from "kysely"
import type { Database, Dialect } from "./schema.js"
import type { AppendError, AppendRequest } from "./appendPlan.js"
import type * as Erasure from "../Erasure.js"
import type { NewEntry, NewFact } from "./statements.js"

type StoreError = EventLog.StoreError

/** Who erases a stream, why, when, and (a store scoped to an owner) for which owner. */
export interface EraseAudit {
  readonly actor: string
  readonly reason: string
  readonly now: number
  /** Only a stream of this owner may be erased (undefined: every stream). */
  readonly owner: string | undefined
}

/**
 * What an erasure transaction did: erased (the audit record written), nothing to erase, or the recall
 * projection has not indexed the stream's last event yet (the caller catches up and tries again, so a
 * projection batch read before the erasure can never write the stream's entries back after it).
 */
export type EraseOutcome =
  | { readonly _tag: "Erased"; readonly record: Erasure.Record }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Behind" }

/**
 * The writes of one non-append transaction (document ingestion, the recall projection). Every call runs a
 * statement prepared once per connection.
 */
export interface WriteTx {
  readonly indexEntry: (entry: NewEntry) => Effect.Effect<void, StoreError>
  /** Index a catch-up's batch of entries, in order: one effect for the batch (one round trip on PostgreSQL). */
  readonly indexEntries: (entries: ReadonlyArray<NewEntry>) => Effect.Effect<void, StoreError>
  readonly removeDocument: (owner: string, documentId: string) => Effect.Effect<void, StoreError>
  readonly insertFact: (fact: NewFact) => Effect.Effect<void, StoreError>
  /**
   * Move a projection's checkpoint from `from` to `to`; false (and nothing changed) when it is no longer at
   * `from` (another process or connection caught up first).
   */
  readonly advanceCheckpoint: (name: string, from: number, to: number) => Effect.Effect<boolean, StoreError>
  /** Remove every message entry of the recall index and every fact, and set its checkpoint to 0. */
  readonly clearRecall: () => Effect.Effect<void, StoreError>
  /**
   * Erase a stream: its recall entries, facts, snapshots, events, stream row and owner row, and write the
   * audit row. Its stream goes into `erasure_pending` for the duration, the only way past the trigger
   * that rejects DELETE on `events`. Needs the appends' lock (no append to the stream can interleave).
   */
  readonly eraseStream: (stream: string, audit: EraseAudit) => Effect.Effect<EraseOutcome, StoreError>
}

/** Which rows a full-text search may see. */
export interface SearchFilter {
  readonly source: "message" | "document"
  readonly stream?: string
  readonly excludeStream?: string
  readonly owner?: string
  /** Only these kinds (messages). */
  readonly kinds?: ReadonlyArray<string>
}

/** A query split into safe words (see `search.ts`). */
export interface SearchTerms {
  /** Distinct terms. */
  readonly terms: ReadonlyArray<string>
  /** Every word, in order (for phrase matching). */
  readonly words: ReadonlyArray<string>
  /** The query text itself, for a database parser that splits words its own way (bound, never spliced). */
  readonly text: string
}

/** A full-text match, best first. */
export interface SearchRow {
  readonly source: string
  readonly stream_id: string | null
  readonly ref: string
  readonly document_id: string | null
  readonly kind: string
  readonly role: string
  readonly text: string
  readonly tokens: number
  readonly global_position: number | null
  readonly score: number
}

/** What a dialect provides to the shared store code. */
export interface Backend {
  readonly dialect: Dialect
  readonly db: Kysely<Database>
  /**
   * Append a batch: read the stream row, locate the ids, and (the common case) write the events and the
   * stream row, in one transaction (SQLite: excluding every other writer; PostgreSQL: excluding writers
   * on the same stream and global readers, ADR 0066). Only the event rows and the stream row are
   * written: the recall index catches up after commit.
   */
  readonly append: (request: AppendRequest) => Effect.Effect<EventLog.AppendResult, AppendError>
  /**
   * Run `body` in one write transaction that excludes every other writer (`BEGIN IMMEDIATE` on SQLite,
   * the global-read gate taken exclusively on PostgreSQL): committed if it succeeds, rolled back otherwise.
   */
  readonly transact: <A, E>(
    operation: string,
    body: (tx: WriteTx) => Effect.Effect<A, E>,
    options?: {
      /** PostgreSQL: hold the gate exclusively, no append meanwhile (default true); the recall projection does not need it. */
      readonly appendLock?: boolean
    }
  ) => Effect.Effect<A, E | StoreError>
  /** Run a kysely query, mapping a throw to a `StoreError` naming the operation. */
  readonly query: <A>(operation: string, run: (db: Kysely<Database>) => Promise<A>) => Effect.Effect<A, StoreError>
  /**
   * Run a read of the whole log by global position (`readAll`, the recall projection), given `bound`: every
   * event at or below it is committed already (or never will be), so a reader that reads no further than
   * `bound` and goes on after the last position it saw skips nothing. `run` must not return an event above
   * `bound`. SQLite: `query`, with no bound (its writers are serialised, so positions commit in order).
   * PostgreSQL, whose appends run at once: the bound is the largest position committed while the
   * global-read gate is held exclusively (ADR 0066), for an instant in one round trip (ADR 0078); the read
   * itself holds no lock, so appends go on meanwhile.
   */
  readonly readGlobal: <A>(
    operation: string,
    run: (db: Kysely<Database>, bound: number) => Promise<A>
  ) => Effect.Effect<A, StoreError>
  /**
   * Run `body` unless another process is running one under the same `name` right now: `None`, and `body`
   * did not run. PostgreSQL: a session advisory lock tried (never waited for) on a pooled connection of
   * its own and held while `body` runs (released when the process or its connection goes); with a pool of
   * one connection `body` always runs (it needs that connection). SQLite: `body` always runs (its writers
   * are serialised; the recall projection's checkpoint keeps them apart).
   */
  readonly unlessRunningElsewhere: <A, E>(
    name: string,
    body: Effect.Effect<A, E>
  ) => Effect.Effect<Option.Option<A>, E | StoreError>
  /**
   * Full-text search in tiers: rows holding the whole query as a phrase first, then rows holding every
   * term, then rows holding any term; within a tier, the dialect's ranking (BM25 on SQLite, `ts_rank`
   * on PostgreSQL).
   */
  readonly search: (
    query: SearchTerms,
    filter: SearchFilter,
    limit: number
  ) => Effect.Effect<ReadonlyArray<SearchRow>, StoreError>
}

/** A short description of a thrown value. */
export const describe = (cause: unknown): string => {
  if (cause instanceof Error) {
    const code = "code" in cause && typeof cause.code === "string" ? ` [${cause.code}]` : ""
    return `${cause.message}${code}`
  }
  return String(cause)
}
