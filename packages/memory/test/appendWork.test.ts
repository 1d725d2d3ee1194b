/**
 * The append path by counting work: one append of one event at 1k and at 10k events costs the same
 * three statements, writes one row and hashes only that event's bytes (nothing grows with the log), and
 * `ContextService.appendMessages` of one message is one append and no other query.
 */
import { ContextService, EventLog, Message, TokenCounter, type WindowEvent, WorkCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import BetterSqlite3 from "better-sqlite3"
import { Ctxlog } from "../src/index.js"
import { counters as metrics } from "../src/internal/workCounters.js"
import { tempFile } from "./support/stores.js"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

let next = 0
const event = (text: string): WindowEvent.WindowEvent => {
  next++
  const id = `0190a000-0000-7000-8000-${String(next).padStart(12, "0")}`
  return {
    _tag: "MessageAppended",
    id,
    message: { id: `m-${next}`, role: "user", kind: "chat", parts: [Message.text(text)], tokens: 3 }
  }
}

describe("append work", () => {
  it.scoped("one append costs the same at 1k and 10k events, and appendMessages of one message is one append", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      const stack = Ctxlog.sqlite({
        filename,
        durability: "normal",
        tokenCounter: TokenCounter.layerHeuristic()
      })
      yield* Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        let version = 0
        const grow = (to: number) =>
          Effect.gen(function* () {
            while (version < to) {
              const batch = Array.from({ length: 1000 }, (_, k) => event(`filler ${version + k}`))
              yield* log.append("s", batch, version)
              version += batch.length
            }
          })
        const one = Effect.gen(function* () {
          const single = event("the measured event")
          reset()
          yield* log.append("s", [single], version)
          version++
          return { ...counters }
        })
        yield* grow(1000)
        const at1k = yield* one
        yield* grow(10_000)
        const at10k = yield* one
        console.log("one append at 1k events:", JSON.stringify(at1k), "at 10k:", JSON.stringify(at10k))
        // The same work, but for the event's own bytes (its number has one more digit at 10k).
        assert.deepStrictEqual({ ...at10k, charsHashed: 0 }, { ...at1k, charsHashed: 0 })
        assert.isBelow(Math.abs(at10k.charsHashed - at1k.charsHashed), 3)
        assert.strictEqual(at1k.appends, 1)
        assert.strictEqual(at1k.rowsWritten, 1)
        // Read the head, write the stream row, insert the event: the id is not looked up first (the
        // unique index refuses a stored one; the conformance suites cover retries and duplicates).
        assert.strictEqual(at1k.appendStatements, 3)
        assert.strictEqual(at1k.queries, 0)
        assert.isBelow(at1k.charsHashed, 400)
        // A message is encoded by the fast path (EventCodec.encodeKnown): no Schema pass (ADR 0079).
        assert.strictEqual(at1k.eventsEncodedBySchema, 0)

        // A batch of 100: the head, the stream row and one insert per event, nothing per stored event.
        const batch = Array.from({ length: 100 }, (_, k) => event(`batched ${k}`))
        reset()
        yield* log.append("s", batch, version)
        version += batch.length
        assert.strictEqual(counters.appendStatements, 102)
        assert.strictEqual(counters.rowsWritten, 100)
        assert.strictEqual(counters.eventsEncodedBySchema, 0)
        // A retried batch writes nothing and succeeds; its ids are looked up once the insert is refused.
        reset()
        const retried = yield* log.append("s", batch, "any")
        assert.strictEqual(retried.written, 0)
        assert.strictEqual(retried.nextExpectedVersion, version)
        assert.strictEqual(counters.rowsWritten, 0)
        // An event of another type takes the Schema pass, and so does a message a redaction rule changed.
        reset()
        yield* log.append(
          "s",
          [
            { _tag: "TaskGoalSet", id: "0190a000-0000-7000-9000-000000000001", goal: "ship", tokens: 2 },
            event("my key is sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789")
          ],
          version
        )
        version += 2
        assert.strictEqual(counters.eventsEncodedBySchema, 2)

        // The metadata column: `{}` is written as its JSON text directly, other metadata redacted and
        // stringified; both are the bytes `JSON.stringify` gives of the metadata and its time.
        yield* log.append("meta", [event("with metadata")], 0, { actor: "me", correlationId: "c-1" })
        const raw = new BetterSqlite3(filename, { readonly: true })
        const rows = raw
          .prepare<[], { stream_id: string; metadata: string; recorded_at: number }>(
            "select stream_id, metadata, recorded_at from events where stream_id in ('s', 'meta') and stream_version = 1"
          )
          .all()
        raw.close()
        const plain = rows.find((row) => row.stream_id === "s")
        const withFields = rows.find((row) => row.stream_id === "meta")
        assert.strictEqual(plain?.metadata, JSON.stringify({ recordedAt: plain?.recorded_at }))
        assert.strictEqual(
          withFields?.metadata,
          JSON.stringify({ actor: "me", correlationId: "c-1", recordedAt: withFields?.recorded_at })
        )

        const ctx = yield* ContextService.ContextService
        yield* ctx.appendMessages("conversation", [Message.user("hello")])
        reset()
        yield* ctx.appendMessages("conversation", [Message.user("one more message")])
        console.log("appendMessages of one message:", JSON.stringify(counters))
        assert.strictEqual(counters.appends, 1)
        assert.strictEqual(counters.rowsWritten, 1)
        assert.strictEqual(counters.queries, 0)
        assert.strictEqual(counters.eventsEncodedBySchema, 0)
      }).pipe(Effect.provide(Layer.fresh(stack)))
    })
  )
})
