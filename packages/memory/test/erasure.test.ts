import { ContextService, EventLog, Message, Window, type WindowEvent } from "@ctxlog/core"
import { freshStream } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Erasure, RecallIndex } from "../src/index.js"
import { RawSql } from "./support/stores.js"
import { sharedBackends } from "./support/tenants.js"

// The right to erasure: one audited operation removes a conversation's events, snapshots, recall entries,
// facts and owner row, and records that it happened; the append-only triggers still reject every other
// UPDATE and DELETE. After it the stream is empty; appending again starts a new conversation.

const texts = (window: Window.Window) => Window.messages(window).map(Message.textOf)

const say = (stream: string, text: string) =>
  Effect.flatMap(ContextService.ContextService, (ctx) => ctx.appendMessages(stream, [Message.user(text)]))

const load = (stream: string) => Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load(stream))

const search = (scope: RecallIndex.SearchScope, query: string) =>
  Effect.flatMap(RecallIndex.RecallIndex, (index) => index.search({ scope, query }))

/** Rows of `table` whose stream_id is `stream`. */
const rowsOf = (table: string, stream: string) =>
  Effect.flatMap(RawSql, (raw) =>
    Effect.map(raw.rows(`select count(*) as n from ${table} where stream_id = '${stream}'`), (rows) =>
      Number(rows[0]?.n ?? -1)
    )
  )

const traces = (stream: string) =>
  Effect.all({
    events: rowsOf("events", stream),
    streams: rowsOf("streams", stream),
    snapshots: rowsOf("snapshots", stream),
    recall: rowsOf("recall_entries", stream),
    facts: rowsOf("facts", stream),
    owners: rowsOf("stream_owners", stream)
  })

for (const [label, open] of sharedBackends) {
  describe(`erasure on ${label}`, () => {
    it.scoped(
      "a process that cached an erased window, when the id was written past its version again, fails once with TamperDetected and then serves the new conversation",
      () =>
        Effect.gen(function* () {
          const db = yield* open
          const holder = yield* Layer.build(db.as("alice"))
          const other = yield* Layer.build(db.as("alice"))
          const stream = freshStream("rewritten")
          yield* Effect.provide(
            Effect.gen(function* () {
              for (const text of ["old one", "old two"]) yield* say(stream, text)
              assert.deepStrictEqual(texts(yield* load(stream)), ["old one", "old two"])
            }),
            holder
          )
          yield* Effect.provide(
            Effect.gen(function* () {
              yield* Erasure.erase(stream, { actor: "dpo@example.com", reason: "erasure request" })
              for (const text of ["new one", "new two", "new three"]) yield* say(stream, text)
            }),
            other
          )
          // The holder's window (version 2) is behind the stream (version 3), but event 3 does not link to
          // the event its window ended at: the stale window is refused, never folded onto.
          const stale = yield* Effect.either(Effect.provide(load(stream), holder))
          assert.isTrue(Either.isLeft(stale) && stale.left._tag === "TamperDetected", JSON.stringify(stale))
          if (Either.isLeft(stale) && stale.left._tag === "TamperDetected") assert.strictEqual(stale.left.version, 3)
          assert.deepStrictEqual(texts(yield* Effect.provide(load(stream), holder)), [
            "new one",
            "new two",
            "new three"
          ])
        }),
      { timeout: 120_000 }
    )

    it.scoped(
      "erase removes every trace of one stream, keeps the others, and leaves an audit row",
      () =>
        Effect.gen(function* () {
          const db = yield* open
          // One store (one window cache) for the whole test: it held the window that gets erased.
          const alice = yield* Layer.build(db.as("alice", { snapshotEvery: 2 }))
          const gone = freshStream("gone")
          const kept = freshStream("kept")
          yield* Effect.provide(
            Effect.gen(function* () {
              const ctx = yield* ContextService.ContextService
              yield* say(gone, "My home address is 12 Zeppelinstrasse, Frankfurt")
              yield* say(gone, "and my zeppelin licence number is ZL-99812")
              yield* ctx.run(gone, () =>
                Either.right([
                  {
                    _tag: "FactsRecorded",
                    facts: [{ subject: "Alice", predicate: "lives in", object: "Frankfurt", sourceMessageId: null }]
                  }
                ])
              )
              yield* say(kept, "The zeppelin hangar opens at nine")
              // The index has caught up with both streams.
              assert.isAbove((yield* search(RecallIndex.inStream(gone), "zeppelin")).length, 0)
              // The cache of this process holds the window about to be erased.
              assert.strictEqual(texts(yield* load(gone)).length, 2)
            }),
            alice
          )
          const before = yield* Effect.provide(
            Effect.all({
              gone: traces(gone),
              kept: traces(kept),
              head: Effect.flatMap(RawSql, (raw) =>
                raw.rows(`select version, head_hash from streams where stream_id = '${gone}'`)
              )
            }),
            db.raw
          )
          assert.isAbove(before.gone.events, 0)
          assert.isAbove(before.gone.snapshots, 0)
          assert.isAbove(before.gone.recall, 0)
          assert.isAbove(before.gone.facts, 0)
          assert.strictEqual(before.gone.owners, 1)

          const record = yield* Effect.provide(
            Erasure.erase(gone, { actor: "dpo@example.com", reason: "GDPR art. 17 request #42" }),
            alice
          )
          assert.deepStrictEqual(
            { ...record, erasedAt: 0 },
            {
              stream: gone,
              owner: "alice",
              events: before.gone.events,
              lastVersion: Number(before.head[0]?.version),
              headHash: String(before.head[0]?.head_hash),
              erasedAt: 0,
              actor: "dpo@example.com",
              reason: "GDPR art. 17 request #42"
            }
          )

          const after = yield* Effect.provide(
            Effect.all({
              gone: traces(gone),
              kept: traces(kept),
              pending: Effect.flatMap(RawSql, (raw) => raw.rows("select * from erasure_pending")),
              audit: Effect.flatMap(RawSql, (raw) =>
                raw.rows(`select stream_id, owner, events, actor, reason from erasures where stream_id = '${gone}'`)
              ),
              // SQLite keeps an FTS5 index beside recall_entries: no orphan may remain in either.
              fts: Effect.flatMap(RawSql, (raw) =>
                raw.dialect === "sqlite"
                  ? raw.rows(
                      "select (select count(*) from recall_fts) as fts, (select count(*) from recall_entries) as entries"
                    )
                  : Effect.succeed([{ fts: 0, entries: 0 }])
              )
            }),
            db.raw
          )
          assert.deepStrictEqual(after.gone, { events: 0, streams: 0, snapshots: 0, recall: 0, facts: 0, owners: 0 })
          assert.deepStrictEqual(after.kept, before.kept)
          assert.deepStrictEqual(after.pending, [])
          assert.strictEqual(after.audit.length, 1)
          assert.strictEqual(Number(after.audit[0]?.events), before.gone.events)
          assert.strictEqual(Number(after.fts[0]?.fts), Number(after.fts[0]?.entries))

          // The same process (whose cache held the window) and a fresh one both see an empty stream.
          yield* Effect.provide(
            Effect.gen(function* () {
              const log = yield* EventLog.EventLog
              assert.strictEqual(yield* log.version(gone), 0)
              assert.strictEqual(Chunk.size(yield* Stream.runCollect(log.read(gone))), 0)
              assert.deepStrictEqual(texts(yield* load(gone)), [])
              assert.deepStrictEqual(yield* search(RecallIndex.inStream(gone), "zeppelin licence"), [])
              const owned = yield* search(RecallIndex.acrossOwner("alice"), "zeppelin")
              assert.isTrue(owned.length > 0 && owned.every((hit) => hit.stream === kept))
              const index = yield* RecallIndex.RecallIndex
              assert.deepStrictEqual(yield* index.factsFor({ _tag: "Owner", owner: "alice" }, "Alice Frankfurt"), [])
              assert.deepStrictEqual(
                (yield* log.streams()).map((info) => info.stream),
                [kept]
              )
              const trail = yield* Effect.flatMap(Erasure.Erasure, (erasure) => erasure.erasures(gone))
              assert.deepStrictEqual(trail, [record])
            }),
            alice
          )

          // Writing to the id again starts a new conversation: nothing of the old one comes back, not even
          // after the recall index is rebuilt from the log.
          yield* Effect.provide(
            Effect.gen(function* () {
              yield* say(gone, "A new conversation")
              assert.deepStrictEqual(texts(yield* load(gone)), ["A new conversation"])
              assert.strictEqual(yield* Effect.flatMap(EventLog.EventLog, (log) => log.version(gone)), 1)
              yield* Effect.flatMap(RecallIndex.RecallIndex, (index) => index.rebuild())
              assert.deepStrictEqual(yield* search(RecallIndex.inStream(gone), "zeppelin licence"), [])
            }),
            alice
          )
          const fresh = yield* Effect.provide(load(gone), db.as("alice"))
          assert.deepStrictEqual(texts(fresh), ["A new conversation"])
          const audit = yield* Effect.provide(
            Effect.flatMap(Erasure.Erasure, (erasure) => erasure.erasures()),
            db.as()
          )
          assert.deepStrictEqual(audit, [record])
        }),
      { timeout: 120_000 }
    )

    it.scoped(
      "an erasure racing appends and recall catch-ups in another store leaves no index entry without its event",
      () =>
        Effect.gen(function* () {
          const db = yield* open
          const stream = freshStream("raced")
          // Small recall batches: both stores catch the index up in the background while they append.
          const writer = yield* Layer.build(db.as(undefined, { recallBatch: 2 }))
          const eraser = yield* Layer.build(db.as(undefined, { recallBatch: 2 }))
          const append = (round: number) =>
            Effect.flatMap(EventLog.EventLog, (log) =>
              log.append(
                stream,
                [0, 1, 2].map(
                  (index): WindowEvent.WindowEvent => ({
                    _tag: "MessageAppended",
                    id: `${stream}-${round}-${index}`,
                    message: {
                      id: `${stream}-m-${round}-${index}`,
                      role: "user",
                      kind: "chat",
                      parts: [{ type: "text", text: `zeppelin round ${round} part ${index}` }],
                      tokens: 4
                    }
                  })
                ),
                "any"
              )
            ).pipe(Effect.provide(writer))
          yield* append(0)
          const erased = yield* Effect.all(
            [
              Effect.forEach(
                Array.from({ length: 20 }, (_, round) => round + 1),
                append,
                { discard: true }
              ),
              Effect.zipRight(
                Effect.yieldNow(),
                Effect.provide(Erasure.erase(stream, { actor: "ops", reason: "race" }), eraser)
              )
            ],
            { concurrency: 2 }
          )
          assert.isAbove(erased[1].events, 0)
          // Both indexes caught up: every message entry still has its event, and the stream's entries
          // are exactly its surviving messages.
          yield* Effect.provide(RecallIndex.catchUp, writer)
          yield* Effect.provide(RecallIndex.catchUp, eraser)
          yield* Effect.provide(
            Effect.gen(function* () {
              const raw = yield* RawSql
              const orphans = yield* raw.rows(
                `select count(*) as n from recall_entries e where e.source = 'message'
                 and not exists (select 1 from events v where v.global_position = e.global_position)`
              )
              assert.strictEqual(Number(orphans[0]?.n), 0)
              const events = yield* rowsOf("events", stream)
              assert.strictEqual(yield* rowsOf("recall_entries", stream), events)
              assert.strictEqual(events + erased[1].events, 63)
            }),
            db.raw
          )
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "the append-only triggers still reject UPDATE and DELETE on events and on the audit trail",
      () =>
        Effect.gen(function* () {
          const db = yield* open
          const stream = freshStream("kept")
          const erased = freshStream("erased")
          yield* Effect.provide(
            Effect.gen(function* () {
              yield* say(stream, "stays")
              yield* say(erased, "goes")
              yield* Erasure.erase(erased, { actor: "ops", reason: "test" })
            }),
            db.as()
          )
          yield* Effect.provide(
            Effect.gen(function* () {
              const raw = yield* RawSql
              const refused = (statement: string) =>
                Effect.map(Effect.flip(raw.exec(statement)), (message) => {
                  assert.match(message, /append-only/, statement)
                })
              yield* refused(`delete from events where stream_id = '${stream}'`)
              yield* refused("delete from events")
              yield* refused(`update events set data = '{}' where stream_id = '${stream}'`)
              yield* refused("update erasures set reason = 'nothing happened'")
              yield* refused("delete from erasures")
              if (raw.dialect === "postgres") {
                yield* refused("truncate events cascade")
                yield* refused("truncate erasures")
              }
              assert.strictEqual(yield* rowsOf("events", stream), 1)
              assert.strictEqual(yield* rowsOf("erasures", erased), 1)
            }),
            db.raw
          )
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "erase refuses what it cannot do: another owner's stream, an unknown one, a blank actor or reason",
      () =>
        Effect.gen(function* () {
          const db = yield* open
          const stream = freshStream("alice")
          yield* Effect.provide(say(stream, "Alice's secret"), db.as("alice"))
          const byBob = yield* Effect.provide(
            Effect.flip(Erasure.erase(stream, { actor: "bob", reason: "curiosity" })),
            db.as("bob")
          )
          assert.strictEqual(byBob._tag, "NothingToErase")
          const unknown = yield* Effect.provide(
            Effect.flip(Erasure.erase(freshStream("never"), { actor: "ops", reason: "cleanup" })),
            db.as()
          )
          assert.strictEqual(unknown._tag, "NothingToErase")
          for (const request of [
            { actor: " ", reason: "why" },
            { actor: "who", reason: "" }
          ]) {
            const blank = yield* Effect.provide(Effect.flip(Erasure.erase(stream, request)), db.as("alice"))
            assert.strictEqual(blank._tag, "InvalidErasure")
            assert.include(blank.message, `erasure of stream "${stream}" refused: the`)
          }
          const badId = yield* Effect.provide(Effect.flip(Erasure.erase("", { actor: "ops", reason: "x" })), db.as())
          assert.strictEqual(badId._tag, "InvalidErasure")
          // Nothing was erased or recorded.
          assert.deepStrictEqual(texts(yield* Effect.provide(load(stream), db.as("alice"))), ["Alice's secret"])
          const trail = yield* Effect.provide(
            Effect.flatMap(Erasure.Erasure, (erasure) => erasure.erasures()),
            db.as()
          )
          assert.deepStrictEqual(trail, [])
        }),
      { timeout: 120_000 }
    )
  })
}
