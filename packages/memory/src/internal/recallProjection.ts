import { EventCodec, EventLog, type WindowEvent } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { sql } from "kysely"
import type { CatchUp } from "../RecallIndex.js"
import * as Sealing from "../Sealing.js"
import type { Backend } from "./backend.js"
import type { EventRow } from "./schema.js"
import { factsOf, type Indexed, indexedOf, indexedTypes, messagesOf, searchableText } from "./indexing.js"
import type { NewEntry, NewFact } from "./statements.js"
import { add, counters } from "./workCounters.js"

// The recall index (message entries, FTS5 / tsvector, facts) as a projection of the log. An append writes
// only the event rows and the stream row; the projection reads the events after its checkpoint (a row of
// `projection_checkpoints`) in global-position order and indexes them in its own transaction, which moves
// the checkpoint with a compare-and-set: several processes on one SQLite file or several PostgreSQL
// connections may catch up at once, and only one of them applies a given batch. Global positions follow
// commit order for a global read on both backends (`Backend.readGlobal`: BEGIN IMMEDIATE serialises SQLite's
// writers; PostgreSQL's reader holds the gate its appends share, ADR 0066), so reading "after the checkpoint"
// never skips an event committed later with a smaller position.

/** The checkpoint name of the recall projection. */
export const name = "recall"

/** A stored event the projection reads: an events row with the checkpoint it was read at. */
export type Row = { readonly checkpoint: number } & Omit<EventRow, "metadata" | "hash">

/** The recall projection over a backend. */
export interface RecallProjection {
  /** Index every committed event after the checkpoint, `batchSize` events per transaction. */
  readonly catchUp: Effect.Effect<CatchUp, EventLog.StoreError>
  /**
   * What an append runs in the background: {@link catchUp}, except that it stops when another process
   * moved the checkpoint first (that process is indexing; a query still catches up whole before it reads).
   * Several writers on one file otherwise each read and prepare the same batch, lose the race, and go again,
   * taking the write lock for each attempt (issue 24: 4 SQLite writers went slower than one). On
   * PostgreSQL it does not even start while another process runs one (`Backend.unlessRunningElsewhere`,
   * ADR 0078): writers that all pass a batch at once each read the whole batch before one of them won.
   */
  readonly catchUpInBackground: Effect.Effect<CatchUp, EventLog.StoreError>
  /** Clear the message entries and facts, then index the whole log again. */
  readonly rebuild: Effect.Effect<CatchUp, EventLog.StoreError>
  /**
   * The newest checkpoint this process has seen, or a batch past it when another process was catching up
   * (a hint for when to catch up after an append).
   */
  readonly known: () => number
  /**
   * The message entries the next catch-up would index, when at most `limit` events wait after the
   * checkpoint (undefined when more wait, or there is no checkpoint yet). Reads; indexes nothing.
   */
  readonly pending: (
    limit: number
  ) => Effect.Effect<
    ReadonlyArray<{ readonly stream: string; readonly ref: string; readonly kind: string }> | undefined,
    EventLog.StoreError
  >
}

/**
 * Opens the sealed rows of a batch for the index (a sealing store, ADR 0139): per global position, the
 * event with its seals opened, or undefined when a key one of them needs is gone (the row gives nothing).
 */
export type OpenSealed = (
  rows: ReadonlyArray<Row>
) => Effect.Effect<ReadonlyMap<number, WindowEvent.WindowEvent | undefined>, EventLog.StoreError>

/** Build the projection. */
export const make = (
  backend: Backend,
  options: { readonly batchSize: number; readonly openSealed?: OpenSealed | undefined }
): RecallProjection => {
  const batchSize = Math.max(1, options.batchSize)
  const noneOpened: ReadonlyMap<number, WindowEvent.WindowEvent | undefined> = new Map()
  // One catch-up at a time in this process; other processes are kept apart by the checkpoint's CAS.
  const lock = Effect.unsafeMakeSemaphore(1)
  let known = 0

  // The checkpoint and the events after it, in one query: with nothing to index, one row of nulls beside
  // the checkpoint (so a catch-up that finds nothing new costs this one query).
  // (`after`: only the events after that position too, for `pending`, which has read those before it.)
  const readAfterCheckpoint = (limit: number, after = 0) =>
    backend.readGlobal("read events to index", async (db, bound) => {
      const from =
        after === 0
          ? sql`c.position`
          : backend.dialect === "sqlite"
            ? sql`max(c.position, ${after})`
            : sql`greatest(c.position, cast(${after} as bigint))`
      const result = await sql<Row | (Pick<Row, "checkpoint"> & { readonly global_position: null })>`
        select c.position as checkpoint, e.global_position, e.event_id, e.stream_id, e.stream_version, e.type,
               e.schema_version, e.data, e.recorded_at
        from projection_checkpoints c
        left join events e on e.global_position > ${from} and e.global_position <= ${bound}
        where c.name = ${name}
        order by e.global_position
        limit ${limit}`.execute(db)
      const rows = result.rows.filter((row): row is Row => row.global_position !== null)
      add(counters.rowsReadToIndex, rows.length)
      return { checkpoint: result.rows[0]?.checkpoint, rows }
    })
  const readBatch = readAfterCheckpoint(batchSize)

  const checkpoint = backend.query("read recall checkpoint", (db) =>
    db
      .selectFrom("projection_checkpoints")
      .select("position")
      .where("name", "=", name)
      .executeTakeFirst()
      .then((row) => row?.position ?? 0)
  )

  /**
   * What one row gives the index, from the stored bytes (what was hashed is what is indexed): read from
   * its JSON (validated on append) when it is of the current schema version, else decoded.
   */
  const indexedRow = (row: Row): Either.Either<Indexed, EventLog.StoreError> => {
    const read = indexedOf(row.type, row.schema_version, row.data)
    if (read !== undefined) return Either.right(read)
    return Either.match(
      EventCodec.decodeEither(
        { type: row.type, schemaVersion: row.schema_version, data: row.data },
        { stream: row.stream_id, version: row.stream_version }
      ),
      {
        onLeft: (error) =>
          Either.left(
            new EventLog.StoreError({
              operation: "index recall",
              detail: `event at position ${row.global_position} (stream "${row.stream_id}", version ${row.stream_version}) does not decode: ${error.message}`
            })
          ),
        onRight: (event) => Either.right({ messages: messagesOf(event), facts: factsOf(event) })
      }
    )
  }

  // The rows of a batch whose content is sealed, opened (a sealing store only): the index holds their
  // plaintext, so recall finds them while the subject's key exists; `SubjectErasure` removes those rows
  // before it destroys the key (ADR 0139).
  const openBatch = (rows: ReadonlyArray<Row>) => {
    const open = options.openSealed
    if (open === undefined) return Effect.succeed(noneOpened)
    const sealed = rows.filter((row) => indexedTypes.has(row.type) && row.data.includes(Sealing.prefix))
    return sealed.length === 0 ? Effect.succeed(noneOpened) : open(sealed)
  }

  /** The index rows of a batch, in one synchronous loop (no effect per row); a row that does not decode fails it. */
  const rowsOf = (
    rows: ReadonlyArray<Row>,
    opened: ReadonlyMap<number, WindowEvent.WindowEvent | undefined> = noneOpened
  ): Either.Either<{ entries: Array<NewEntry>; facts: Array<NewFact> }, EventLog.StoreError> => {
    const entries: Array<NewEntry> = []
    const facts: Array<NewFact> = []
    for (const row of rows) {
      // An event of a type that brings no message and no fact is not read (loads check every row).
      if (!indexedTypes.has(row.type)) continue
      const sealed = opened.has(row.global_position)
      const plain = opened.get(row.global_position)
      // A sealed row whose key is gone gives the index nothing.
      if (sealed && plain === undefined) continue
      const event: Either.Either<Indexed, EventLog.StoreError> =
        plain === undefined ? indexedRow(row) : Either.right({ messages: messagesOf(plain), facts: factsOf(plain) })
      if (Either.isLeft(event)) return Either.left(event.left)
      for (const message of event.right.messages) {
        const text = searchableText(message)
        if (text.trim() === "") continue
        entries.push({
          source: "message",
          stream_id: row.stream_id,
          owner: null,
          ref: message.id,
          document_id: null,
          kind: message.kind,
          role: message.role,
          text,
          tokens: message.tokens,
          global_position: row.global_position,
          created_at: row.recorded_at,
          ...(sealed ? { keepText: true } : {})
        })
      }
      for (const fact of event.right.facts) {
        facts.push({
          stream_id: row.stream_id,
          event_id: row.event_id,
          subject: fact.subject,
          predicate: fact.predicate,
          object: fact.object,
          source_message_id: fact.sourceMessageId,
          global_position: row.global_position
        })
      }
    }
    return Either.right({ entries, facts })
  }

  /** Index one batch; the number of events it covered (0: nothing left). */
  const step = Effect.gen(function* () {
    const { checkpoint: at, rows } = yield* readBatch
    const first = rows[0]
    const last = rows[rows.length - 1]
    if (first === undefined || last === undefined) return { events: 0, done: true, position: at }
    const { entries, facts } = yield* rowsOf(rows, yield* openBatch(rows))
    const applied = yield* backend.transact(
      "index recall",
      (tx) =>
        Effect.gen(function* () {
          if (!(yield* tx.advanceCheckpoint(name, first.checkpoint, last.global_position))) return false
          yield* tx.indexEntries(entries)
          for (const fact of facts) yield* tx.insertFact(fact)
          return true
        }),
      { appendLock: false }
    )
    if (applied) known = Math.max(known, last.global_position)
    // Not applied: another process moved the checkpoint first; read again from where it is now.
    return {
      events: applied ? rows.length : 0,
      done: applied && rows.length < batchSize,
      position: applied ? last.global_position : undefined
    }
  })

  const catchUpUntil = (yieldToOthers: boolean) =>
    lock.withPermits(1)(
      Effect.gen(function* () {
        let events = 0
        let position: number | undefined
        for (;;) {
          const outcome = yield* step
          events += outcome.events
          position = outcome.position
          if (outcome.done || (yieldToOthers && outcome.position === undefined)) break
        }
        // The position the last step saw (the checkpoint it read, or the one it moved); read it only when
        // no step did (no checkpoint row yet, or another process moved it).
        const at = position ?? (yield* checkpoint)
        known = Math.max(known, at)
        return { events, position: at }
      })
    )
  const catchUp = catchUpUntil(false)

  const rebuild = lock
    .withPermits(1)(backend.transact("clear recall index", (tx) => tx.clearRecall(), { appendLock: false }))
    .pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          known = 0
        })
      ),
      Effect.zipRight(catchUp)
    )

  // What the next catch-up would index, read without indexing it (turn29, ADR 0076: a search that skips
  // every scope need not catch up first). What was read is kept while the checkpoint stays where it was,
  // so a search reads the events appended since the last one, not every event waiting (the checkpoint
  // only moves forward, and the events before a position never change while it does not move: an
  // erasure catches the index up first).
  type PendingEntries = ReadonlyArray<{ readonly stream: string; readonly ref: string; readonly kind: string }>
  let pendingRead: { checkpoint: number; through: number; events: number; entries: PendingEntries } | undefined
  const pending = (limit: number) =>
    Effect.gen(function* () {
      const kept = pendingRead
      let read = yield* readAfterCheckpoint(limit + 1, kept?.through ?? 0)
      const base = kept !== undefined && kept.checkpoint === read.checkpoint ? kept : undefined
      // The checkpoint moved (a catch-up): what was kept is indexed now; read from the checkpoint.
      if (base === undefined && kept !== undefined) read = yield* readAfterCheckpoint(limit + 1)
      const at = read.checkpoint
      if (at === undefined) return undefined
      const events = (base?.events ?? 0) + read.rows.length
      if (events > limit) return undefined
      const { entries } = yield* rowsOf(read.rows)
      const all = [
        ...(base?.entries ?? []),
        ...entries.map((entry) => ({ stream: entry.stream_id ?? "", ref: entry.ref, kind: entry.kind }))
      ]
      pendingRead = {
        checkpoint: at,
        through: read.rows.at(-1)?.global_position ?? base?.through ?? at,
        events,
        entries: all
      }
      return all
    })

  // Skipped because another process is catching up: it goes on until the index is caught up, so this one
  // looks again a batch later (the hint moves on; a query still catches up whole before it reads).
  const catchUpInBackground = Effect.flatMap(
    backend.unlessRunningElsewhere(name, catchUpUntil(true)),
    Option.match({
      onSome: (done) => Effect.succeed(done),
      onNone: () =>
        Effect.sync((): CatchUp => {
          const at = known
          known += batchSize
          return { events: 0, position: at }
        })
    })
  )

  return { catchUp, catchUpInBackground, rebuild, known: () => known, pending }
}
