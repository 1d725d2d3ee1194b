/**
 * A verified load checks each row's hash-chain link over its stored bytes, so its rows decode without a
 * second Schema pass (`EventCodec.decodeVerified`); a plain read, which checks nothing, validates every
 * row. Counted, not timed. (An edited row failing the verified load: `tamper.test.ts`.)
 */
import { EventLog, Message, type WindowEvent, WindowRepository, WorkCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { SqliteEventLog } from "../src/index.js"
import { cachedStatements } from "../src/internal/drivers.js"
import { counters as metrics } from "../src/internal/workCounters.js"
import { tempFile } from "./support/stores.js"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

const event = (n: number): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `0190a000-0000-7000-8000-${String(n).padStart(12, "0")}`,
  message: { id: `m-${n}`, role: "user", kind: "chat", parts: [Message.text(`message ${n}`)], tokens: 3 }
})

const open = (filename: string) => SqliteEventLog.layer({ filename, durability: "normal", snapshotEvery: 100_000 })

describe("load work", () => {
  it.effect("a verified load decodes no row with a Schema pass; a plain read decodes every row", () =>
    Effect.gen(function* () {
      yield* Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        yield* log.append(
          "s",
          Array.from({ length: 300 }, (_, k) => event(k + 1)),
          "no_stream"
        )
        reset()
        const window = yield* Effect.flatMap(WindowRepository.WindowRepository, (repository) => repository.load("s"))
        assert.strictEqual(window.history.length, 300)
        assert.deepStrictEqual(
          { decoded: counters.rowsDecoded, verified: counters.rowsVerifiedByChain },
          { decoded: 0, verified: 300 }
        )
        reset()
        assert.strictEqual(yield* Stream.runCount(log.read("s")), 300)
        assert.deepStrictEqual(
          { decoded: counters.rowsDecoded, verified: counters.rowsVerifiedByChain },
          { decoded: 300, verified: 0 }
        )
      }).pipe(Effect.provide(Layer.fresh(open(tempFile()))))
    })
  )
})

describe("pages", () => {
  it.effect(
    "a load reads the tail's pages as plain effects, no Stream run; a read consumed as a stream, and one derived from it, still page as streams",
    () =>
      Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        yield* log.append(
          "s",
          Array.from({ length: 1200 }, (_, k) => event(k + 1)),
          "no_stream"
        )
        reset()
        const window = yield* Effect.flatMap(WindowRepository.WindowRepository, (repository) => repository.load("s"))
        const load = { effect: counters.effectPages, stream: counters.streamPages }
        reset()
        assert.strictEqual(yield* Stream.runCount(log.read("s")), 1200)
        const streamed = { effect: counters.effectPages, stream: counters.streamPages }
        reset()
        // A wrapper's read (a stream derived from the store's) has no page reader: the fold runs it as a stream.
        const wrapped = { ...log, read: (stream: string) => Stream.map(log.read(stream), (envelope) => envelope) }
        const folded = yield* WindowRepository.foldVerifiedTail(wrapped, "s")
        const derived = { effect: counters.effectPages, stream: counters.streamPages }
        console.log(
          `pages of a 1200-event stream: load ${JSON.stringify(load)}, read as a stream ${JSON.stringify(streamed)}, a wrapper's read folded ${JSON.stringify(derived)}`
        )
        assert.strictEqual(window.history.length, 1200)
        assert.deepStrictEqual(folded, window)
        assert.deepStrictEqual(load, { effect: 3, stream: 0 })
        assert.deepStrictEqual(streamed, { effect: 0, stream: 3 })
        assert.deepStrictEqual(derived, { effect: 0, stream: 3 })
      }).pipe(Effect.provide(Layer.fresh(open(tempFile()))))
  )
})

describe("a keyed load from a snapshot", () => {
  it.effect("reads the event its seal is anchored at and the tail as plain effects, no Stream run", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      const keyed = (every: number) =>
        SqliteEventLog.layer({ filename, durability: "normal", snapshotEvery: every, hmacKey: "load-work key" })
      yield* Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        const repository = yield* WindowRepository.WindowRepository
        yield* log.append(
          "s",
          Array.from({ length: 300 }, (_, k) => event(k + 1)),
          "no_stream"
        )
        yield* repository.committed("s", yield* repository.load("s"))
        yield* log.append("s", [event(301), event(302)], 300)
      }).pipe(Effect.provide(Layer.fresh(keyed(300))))
      reset()
      const window = yield* Effect.flatMap(WindowRepository.WindowRepository, (repository) =>
        repository.load("s")
      ).pipe(Effect.provide(Layer.fresh(keyed(100_000))))
      const pages = {
        effect: counters.effectPages,
        stream: counters.streamPages,
        verified: counters.rowsVerifiedByChain
      }
      console.log(`a keyed load from a snapshot at 300 of 302 events: pages ${JSON.stringify(pages)}`)
      assert.strictEqual(window.history.length, 302)
      // The anchor (one row) and the tail (two rows, checked from it).
      assert.deepStrictEqual(pages, { effect: 2, stream: 0, verified: 2 })
    })
  )
})

describe("statements", () => {
  it.effect(
    "a query kysely runs again reuses its prepared statement: reading a stream ten times prepares nothing new",
    () =>
      Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        yield* log.append("s", [event(1), event(2)], "no_stream")
        assert.strictEqual(yield* Stream.runCount(log.read("s")), 2)
        reset()
        for (let round = 0; round < 10; round++) assert.strictEqual(yield* Stream.runCount(log.read("s")), 2)
        assert.strictEqual(counters.statementsPrepared, 0)
        assert.isAtLeast(counters.queries, 10)
      }).pipe(Effect.provide(Layer.fresh(open(tempFile()))))
  )
})

describe("rows read as arrays", () => {
  it("make the same objects better-sqlite3 makes, a repeated column name included, for all and iterate", () => {
    const raw = new BetterSqlite3(":memory:")
    raw.exec("create table a (id integer, name text, data blob); create table b (id integer, a_id integer, note text)")
    raw.exec(
      "insert into a values (1, 'one', x'0102'), (2, null, null); insert into b values (10, 1, 'n1'), (20, 2, null)"
    )
    const text = "select a.id, a.name, a.data, b.id, b.note, ? as extra from a join b on b.a_id = a.id order by a.id"
    const cached = cachedStatements(raw).prepare(text)
    const native = raw.prepare(text).all(7)
    assert.deepStrictEqual(cached.all([7]), native)
    assert.deepStrictEqual([...cached.iterate([7])], native)
    assert.strictEqual(cached.reader, true)
    raw.close()
  })
})
