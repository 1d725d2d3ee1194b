// When an anchor writes (issue 43, item 2): every N appends, every T ms (the test clock moves time, no
// waiting), and once when the store closes; to each sink (a JSON-lines file, a separate SQLite database,
// a command), read back by `Anchor.read`. And what signing costs an append (counted, not timed): one
// signature and one statement (SQLite) per batch, no extra round trip (PostgreSQL), no event hashed twice.
import { readFileSync } from "node:fs"
import { EventLog, WorkCounter } from "@ctxlog/core"
import { sampleEvents } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { Anchor, PostgresEventLog, Signing, SqliteEventLog } from "../src/index.js"
import { counters as metrics } from "../src/internal/workCounters.js"
import { freshDatabase } from "./support/postgres.js"
import { tempFile } from "./support/stores.js"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

const appendSome = (log: EventLog.EventLog.Service, stream: string, batches: number, size = 1) =>
  Effect.gen(function* () {
    for (let index = 0; index < batches; index++) {
      yield* log.append(stream, sampleEvents(size), index === 0 ? "no_stream" : index * size)
    }
  })

describe("anchor schedule and sinks", () => {
  it.scoped(
    "every N appends: one write per N, carrying the latest head of each stream; the rest when the store closes",
    () =>
      Effect.gen(function* () {
        const path = tempFile("anchors.jsonl")
        reset()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const context = yield* SqliteEventLog.make({
              filename: tempFile(),
              anchor: { sink: Anchor.file(path), everyAppends: 3, everyMs: 0 }
            })
            const log = Context.get(context, EventLog.EventLog)
            yield* appendSome(log, "a", 4)
            yield* appendSome(log, "b", 3)
            // 7 appends: writes after the 3rd and the 6th.
            assert.strictEqual(counters.anchorWrites, 2)
          })
        )
        // The 7th append's head, written when the store closed.
        assert.strictEqual(counters.anchorWrites, 3)
        const lines = readFileSync(path, "utf8").trim().split("\n")
        assert.strictEqual(lines.length, 3)
        const heads = yield* Anchor.read(path)
        assert.deepStrictEqual(
          heads.map((head) => [head.stream, head.version]),
          [
            ["a", 3],
            ["a", 4],
            ["b", 2],
            ["b", 3]
          ]
        )
      })
  )

  it.scoped(
    "every T ms: pending heads are written when the time has passed (test clock), none when nothing is pending",
    () =>
      Effect.gen(function* () {
        const filename = tempFile("anchors.db")
        reset()
        const context = yield* SqliteEventLog.make({
          filename: tempFile(),
          anchor: { sink: Anchor.sqlite(filename), everyAppends: 0, everyMs: 10_000 }
        })
        const log = Context.get(context, EventLog.EventLog)
        yield* appendSome(log, "a", 2)
        assert.strictEqual(counters.anchorWrites, 0)
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual(counters.anchorWrites, 1)
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual(counters.anchorWrites, 1, "nothing pending: no write")
        yield* appendSome(log, "b", 1)
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual(counters.anchorWrites, 2)
        const heads = yield* Anchor.read(filename)
        assert.deepStrictEqual(
          heads.map((head) => [head.stream, head.version, head.anchoredAt]),
          [
            ["a", 2, 10_000],
            ["b", 1, 30_000]
          ]
        )
      })
  )

  it.scoped(
    "a command sink gets each record on its standard input; a failing command keeps the heads for the next write",
    () =>
      Effect.gen(function* () {
        const kept = tempFile("kept.jsonl")
        const keep = Anchor.command(process.execPath, [
          "-e",
          `require("fs").appendFileSync(${JSON.stringify(kept)}, require("fs").readFileSync(0))`
        ])
        yield* Effect.scoped(
          Effect.gen(function* () {
            const context = yield* SqliteEventLog.make({
              filename: tempFile(),
              anchor: { sink: keep, everyAppends: 1, everyMs: 0 }
            })
            yield* appendSome(Context.get(context, EventLog.EventLog), "a", 2)
          })
        )
        assert.deepStrictEqual(
          (yield* Anchor.read(kept)).map((head) => head.version),
          [1, 2]
        )
        // A command that fails: the appends succeed, and its heads go with the next write.
        const failing = Anchor.command(process.execPath, ["-e", "process.exit(3)"])
        const anchorer = yield* Anchor.make({ sink: failing, everyAppends: 0, everyMs: 0 })
        yield* anchorer.note("a", 1, "0".repeat(64))
        const failed = yield* Effect.either(anchorer.flush)
        assert.isTrue(failed._tag === "Left")
        if (failed._tag === "Left") assert.include(failed.left.message, "anchoring heads to")
      })
  )

  it.scoped("bad anchor input fails naming the line; bad schedule options fail the open", () =>
    Effect.gen(function* () {
      const path = tempFile("bad.jsonl")
      const { writeFileSync } = yield* Effect.promise(() => import("node:fs"))
      writeFileSync(
        path,
        `${Anchor.formatRecord({ anchoredAt: 1, heads: [] })}{"anchoredAt":2,"heads":[{"stream":"a"}]}\n`
      )
      const read = yield* Effect.either(Anchor.read(path))
      assert.isTrue(read._tag === "Left")
      if (read._tag === "Left") assert.include(read.left.message, "line 2")
      const opened = yield* Effect.either(
        SqliteEventLog.make({ filename: tempFile(), anchor: { sink: Anchor.file(path), everyAppends: -1 } })
      )
      assert.isTrue(opened._tag === "Left")
      if (opened._tag === "Left") assert.include(opened.left.message, "everyAppends")
    })
  )
})

describe("what signing costs an append (counted)", () => {
  const signer = Signing.signer("alice", Signing.generate("alice").privateKeyPem)

  const work = (open: (signed: boolean) => ReturnType<typeof SqliteEventLog.make>, signed: boolean) =>
    Effect.scoped(
      Effect.gen(function* () {
        const log = Context.get(yield* open(signed), EventLog.EventLog)
        reset()
        // 20 batches of 10 events.
        yield* appendSome(log, "s", 20, 10)
        return { ...counters }
      })
    )

  it.scoped("SQLite: one signature and one statement per batch; the same rows, the same characters hashed", () =>
    Effect.gen(function* () {
      const open = (signed: boolean) => SqliteEventLog.make({ filename: tempFile(), ...(signed ? { signer } : {}) })
      const plain = yield* work(open, false)
      const signedWork = yield* work(open, true)
      assert.strictEqual(plain.batchesSigned, 0)
      assert.strictEqual(signedWork.batchesSigned, 20)
      assert.strictEqual(signedWork.rowsWritten, plain.rowsWritten)
      assert.strictEqual(signedWork.charsHashed, plain.charsHashed)
      assert.strictEqual(signedWork.appendStatements, plain.appendStatements + 20)
    })
  )

  it.scoped("PostgreSQL: one signature per batch, and no round trip more than unsigned", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("signcost")
      const open = (signed: boolean) => PostgresEventLog.make({ url, ...(signed ? { signer } : {}) })
      const plain = yield* work(open, false)
      // Another stream in the same database: "s" is taken.
      const signedWork = yield* Effect.scoped(
        Effect.gen(function* () {
          const log = Context.get(yield* open(true), EventLog.EventLog)
          reset()
          yield* appendSome(log, "t", 20, 10)
          return { ...counters }
        })
      )
      assert.strictEqual(signedWork.batchesSigned, 20)
      assert.strictEqual(signedWork.rowsWritten, plain.rowsWritten)
      assert.strictEqual(signedWork.charsHashed, plain.charsHashed)
      assert.strictEqual(signedWork.postgresRoundTrips, plain.postgresRoundTrips)
    })
  )
})
