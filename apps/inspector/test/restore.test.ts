// `ctxlog restore <stream> <compaction>` (issue 39, build item 3): a compaction undone as an event. On a
// real transcript imported at a small window: restoring a compaction right after it gives back the
// window it replaced (round trip); the CLI restores one at the head of the log, refuses it twice, and
// names an id that is no compaction; the log verifies after the write.
import { join } from "node:path"
import { ContextService, EventLog, Window } from "@ctxlog/core"
import { SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Restore } from "../src/index.js"
import { ctxlogInProcess, tempDir, importTranscript } from "./support/cli.js"

const temp = tempDir("ctxlog-restore-")
afterAll(() => temp.cleanup())

const file = "04-mini-swe-agent-django-11910.json"
const stream = "04-mini-swe-agent-django-11910"

const read = (db: string) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
  }).pipe(Effect.provide(SqliteEventLog.layer({ filename: db, create: false })))

const shape = (window: Window.Window) => ({
  history: window.history.map((message) => message.id),
  seams: window.seams,
  carryOver: window.carryOver,
  tokens: window.tokens
})

describe("ctxlog restore", () => {
  it.live(
    "round-trips a compaction of a real transcript, restores at the head, and refuses what it cannot undo",
    () =>
      Effect.gen(function* () {
        const db = join(temp.dir, "restore.db")
        yield* Effect.promise(() => importTranscript({ db, budget: 4000, file }))
        const envelopes = yield* read(db)
        const compactions = envelopes.flatMap((envelope, index) =>
          envelope.event._tag === "Compacted" && envelope.event.summary !== null ? [index] : []
        )
        assert.isAtLeast(compactions.length, 2, "the small window compacts")

        // Round trip, at every compaction: the log up to it, then restore, equals the window before it.
        for (const at of compactions) {
          const compacted = envelopes[at]
          if (compacted === undefined) continue
          const before = Window.replay(envelopes.slice(0, at).map((envelope) => envelope.event))
          const after = yield* Effect.gen(function* () {
            const log = yield* EventLog.EventLog
            yield* log.append(
              stream,
              envelopes.slice(0, at + 1).map((envelope) => envelope.event),
              "no_stream"
            )
            const restored = yield* Restore.restore(stream, compacted.eventId)
            assert.strictEqual(restored.compactionEventId, compacted.eventId)
            return yield* (yield* ContextService.ContextService).load(stream)
          }).pipe(Effect.provide(ContextService.layerMemory()))
          assert.deepStrictEqual(shape(after), shape(before), `restoring ${compacted.eventId}`)
        }

        // At the head: the newest compaction whose summary is still in the window.
        const head = Window.replay(envelopes.map((envelope) => envelope.event))
        const present = new Set(head.history.map((message) => message.id))
        const undoable = envelopes.findLast(
          (envelope) =>
            envelope.event._tag === "Compacted" &&
            envelope.event.summary !== null &&
            present.has(envelope.event.summary.id)
        )
        assert.isDefined(undoable)
        if (undoable?.event._tag !== "Compacted") return
        const ran = yield* Effect.promise(() =>
          ctxlogInProcess(["restore", "--db", db, stream, undoable.eventId, "--json"])
        )
        assert.strictEqual(ran.code, 0, ran.stderr)
        const restored = JSON.parse(ran.stdout) as Restore.Restored
        const removed = new Set(undoable.event.removedIds)
        assert.isTrue(restored.restored.every((id) => removed.has(id)))
        assert.isAbove(restored.restored.length, 0)
        const later = yield* read(db)
        assert.strictEqual(later.length, envelopes.length + 1)
        assert.strictEqual(later.at(-1)?.event._tag, "CompactionReverted")
        const window = Window.replay(later.map((envelope) => envelope.event))
        const ids = new Set(window.history.map((message) => message.id))
        assert.isTrue(restored.restored.every((id) => ids.has(id)))
        assert.isFalse(ids.has(undoable.event.summary?.id ?? ""))
        const verified = yield* Effect.promise(() => ctxlogInProcess(["verify", "--db", db, "--json"]))
        assert.strictEqual(verified.code, 0, verified.stderr)

        // Twice: refused, typed, nothing written. An id that is no compaction: named.
        const again = yield* Effect.promise(() => ctxlogInProcess(["restore", "--db", db, stream, undoable.eventId]))
        assert.strictEqual(again.code, 1)
        assert.include(again.stderr, `cannot undo compaction "${undoable.eventId}"`)
        const unknown = yield* Effect.promise(() => ctxlogInProcess(["restore", "--db", db, stream, "no-such-event"]))
        assert.strictEqual(unknown.code, 1)
        assert.include(unknown.stderr, 'has no Compacted event with id "no-such-event"')
        assert.strictEqual((yield* read(db)).length, envelopes.length + 1)
        const missing = yield* Effect.promise(() =>
          ctxlogInProcess(["restore", "--db", join(temp.dir, "missing.db"), stream, undoable.eventId])
        )
        assert.strictEqual(missing.code, 1)
      }),
    240_000
  )
})
