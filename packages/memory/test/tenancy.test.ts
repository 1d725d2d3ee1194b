import { ContextService, EventLog, Message, Window } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { RecallIndex } from "../src/index.js"
import { RawSql } from "./support/stores.js"
import { sharedBackends } from "./support/tenants.js"

// Tenancy: a store opened for an owner records that owner on the streams it creates, in the append's
// transaction, and sees only that owner's streams — in listings, reads, snapshots and recall. Another
// owner's stream is never taken over: the append fails with OwnerMismatch and writes nothing.

const texts = (window: Window.Window) => Window.messages(window).map(Message.textOf)

const say = (stream: string, text: string) =>
  Effect.flatMap(ContextService.ContextService, (ctx) => ctx.appendMessages(stream, [Message.user(text)]))

const search = (scope: RecallIndex.SearchScope, query: string) =>
  Effect.flatMap(RecallIndex.RecallIndex, (index) => index.search({ scope, query }))

const eventCount = (stream: string) =>
  Effect.flatMap(RawSql, (raw) =>
    Effect.map(raw.rows(`select count(*) as n from events where stream_id = '${stream}'`), (rows) =>
      Number(rows[0]?.n ?? -1)
    )
  )

for (const [label, open] of sharedBackends) {
  describe(`tenancy on ${label}`, () => {
    it.effect(
      "listings, reads, loads and recall of one owner never return another owner's streams or messages",
      () =>
        Effect.gen(function* () {
          const db = yield* open
          const alice = db.as("alice", { snapshotEvery: 2 })
          const bob = db.as("bob", { snapshotEvery: 2 })
          const a1 = freshStream("alice")
          const a2 = freshStream("alice")
          const b1 = freshStream("bob")
          yield* Effect.provide(
            Effect.all([
              say(a1, "Alice keeps the zeppelin hangar keys in Frankfurt"),
              say(a1, "and the spare set in Hamburg"),
              say(a2, "Alice asks about the weather")
            ]),
            alice
          )
          yield* Effect.provide(
            Effect.all([say(b1, "Bob's zeppelin hangar is in Frankfurt too"), say(b1, "Bob owes Alice money")]),
            bob
          )

          yield* Effect.provide(
            Effect.gen(function* () {
              const log = yield* EventLog.EventLog
              const index = yield* RecallIndex.RecallIndex
              const ctx = yield* ContextService.ContextService
              assert.deepStrictEqual((yield* log.streams()).map((info) => info.stream).sort(), [a1, a2].sort())
              assert.deepStrictEqual(
                (yield* index.streamsOf("alice")).map((info) => info.stream).sort(),
                [a1, a2].sort()
              )
              assert.deepStrictEqual(yield* index.streamsOf("bob"), [])
              assert.deepStrictEqual(Option.getOrUndefined(yield* index.ownerOf(a1)), "alice")
              assert.isTrue(Option.isNone(yield* index.ownerOf(b1)))
              // Bob's stream reads as one never written: no version, no events, an empty window (even
              // though a snapshot of it exists in the database).
              assert.strictEqual(yield* log.version(b1), 0)
              assert.strictEqual(Chunk.size(yield* Stream.runCollect(log.read(b1))), 0)
              assert.strictEqual((yield* ctx.load(b1)).version, 0)
              const everything = yield* Stream.runCollect(log.readAll())
              assert.isTrue(Chunk.every(everything, (envelope) => envelope.stream === a1 || envelope.stream === a2))
              // Recall: alice's owner scope finds only alice's messages; bob's scopes find nothing.
              const mine = yield* search(RecallIndex.acrossOwner("alice"), "zeppelin hangar Frankfurt")
              assert.isAbove(mine.length, 0)
              assert.isTrue(mine.every((hit) => hit.stream === a1))
              assert.deepStrictEqual(yield* search(RecallIndex.acrossOwner("bob"), "zeppelin hangar"), [])
              assert.deepStrictEqual(yield* search(RecallIndex.inStream(b1), "zeppelin hangar"), [])
              assert.deepStrictEqual(yield* index.factsFor({ _tag: "Owner", owner: "bob" }, "Bob"), [])
            }),
            alice
          )

          // The administrator's view (no owner) sees every stream, each with its owner.
          yield* Effect.provide(
            Effect.gen(function* () {
              const log = yield* EventLog.EventLog
              const index = yield* RecallIndex.RecallIndex
              assert.deepStrictEqual((yield* log.streams()).map((info) => info.stream).sort(), [a1, a2, b1].sort())
              assert.deepStrictEqual(Option.getOrUndefined(yield* index.ownerOf(b1)), "bob")
              const all = yield* search(RecallIndex.acrossOwner("bob"), "zeppelin hangar")
              assert.deepStrictEqual([...new Set(all.map((hit) => hit.stream))], [b1])
            }),
            db.as()
          )
          // Bob still sees his own stream whole.
          const own = yield* Effect.provide(
            Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load(b1)),
            bob
          )
          assert.deepStrictEqual(texts(own), ["Bob's zeppelin hangar is in Frankfurt too", "Bob owes Alice money"])
        }),
      { timeout: 120_000 }
    )

    it.effect(
      "an append for another owner fails with OwnerMismatch and writes nothing; the owner never changes",
      () =>
        Effect.gen(function* () {
          const db = yield* open
          const a1 = freshStream("alice")
          const loose = freshStream("unowned")
          yield* Effect.provide(say(a1, "Alice's first message"), db.as("alice"))
          yield* Effect.provide(say(loose, "written without an owner"), db.as())
          const events = yield* Effect.provide(Effect.all([eventCount(a1), eventCount(loose)]), db.raw)

          const stolen = yield* Effect.provide(
            Effect.flip(Effect.flatMap(EventLog.EventLog, (log) => log.append(a1, sampleEvents(1), "any"))),
            db.as("bob")
          )
          assert.strictEqual(stolen._tag, "OwnerMismatch")
          if (stolen._tag === "OwnerMismatch") {
            assert.deepStrictEqual([stolen.stream, stolen.current, stolen.requested], [a1, "alice", "bob"])
          }
          // Through the façade too (its retries never turn it into something else).
          const viaFacade = yield* Effect.provide(Effect.flip(say(a1, "Bob writes into Alice's stream")), db.as("bob"))
          assert.strictEqual(viaFacade._tag, "OwnerMismatch")
          // A stream with events and no owner is not taken over by a tenant either.
          const claimed = yield* Effect.provide(Effect.flip(say(loose, "alice claims it")), db.as("alice"))
          assert.strictEqual(claimed._tag, "OwnerMismatch")
          if (claimed._tag === "OwnerMismatch") assert.strictEqual(claimed.current, null)

          // Nothing was written, and the owners are as before.
          assert.deepStrictEqual(yield* Effect.provide(Effect.all([eventCount(a1), eventCount(loose)]), db.raw), events)
          yield* Effect.provide(
            Effect.gen(function* () {
              const index = yield* RecallIndex.RecallIndex
              assert.deepStrictEqual(Option.getOrUndefined(yield* index.ownerOf(a1)), "alice")
              assert.isTrue(Option.isNone(yield* index.ownerOf(loose)))
              // setOwner is set-once: the same owner again is fine, another one is refused.
              yield* index.setOwner(a1, "alice")
              const moved = yield* Effect.flip(index.setOwner(a1, "bob"))
              assert.strictEqual(moved._tag, "OwnerMismatch")
              assert.deepStrictEqual(Option.getOrUndefined(yield* index.ownerOf(a1)), "alice")
              // The administrator may give the unowned stream an owner, once.
              yield* index.setOwner(loose, "carol")
            }),
            db.as()
          )
          const carol = yield* Effect.provide(
            Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load(loose)),
            db.as("carol")
          )
          assert.deepStrictEqual(texts(carol), ["written without an owner"])
          // Alice still appends to her own stream.
          yield* Effect.provide(say(a1, "Alice's second message"), db.as("alice"))
          assert.strictEqual(yield* Effect.provide(eventCount(a1), db.raw), (events[0] ?? 0) + 1)
        }),
      { timeout: 120_000 }
    )
  })
}

describe("opening a store for an owner", () => {
  for (const [label, open] of sharedBackends) {
    it.effect(`${label}: a blank owner is refused when the layer opens`, () =>
      Effect.gen(function* () {
        const db = yield* open
        const exit = yield* Effect.exit(
          Effect.provide(
            Effect.flatMap(EventLog.EventLog, (log) => log.streams()),
            db.as(" ")
          )
        )
        assert.isTrue(Exit.isFailure(exit) && Cause.pretty(exit.cause).includes("the owner must be a non-blank id"))
      })
    )
  }
})
