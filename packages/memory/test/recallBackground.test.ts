// Several writers on one SQLite file each catch the recall index up in the background after their
// appends. The one that loses the race for a batch (another process moved the checkpoint first) stops
// there: that process is indexing, and a query still catches up whole before it reads. Before, each
// loser read and prepared the next batch again, raced again and took the write lock for every attempt:
// four writers on one file went slower than one (issue 24).
import { EventLog, type WindowEvent } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqliteEventLog } from "../src/index.js"
import type { Backend } from "../src/internal/backend.js"
import * as RecallProjection from "../src/internal/recallProjection.js"
import * as SqliteBackend from "../src/internal/sqliteBackend.js"
import { tempFile } from "./support/stores.js"

const message = (index: number): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `bg-e${index}`,
  message: {
    id: `bg-m${index}`,
    role: "user",
    kind: "chat",
    parts: [{ type: "text", text: `note ${index} about the zeppelin` }],
    tokens: 5
  }
})

/**
 * Two projections over two connections to one file, batches of 5, and a log of 5 events. B reads them,
 * and before its write transaction starts, A indexes them and `more` events are appended: B loses that
 * race. B's reads of the log are counted.
 */
const race = (more: number) =>
  Effect.gen(function* () {
    const filename = tempFile()
    const store = yield* Layer.build(SqliteEventLog.layer({ filename, recallBatch: 1_000_000 }))
    const log = Context.get(store, EventLog.EventLog)
    yield* log.append(
      "s",
      Array.from({ length: 5 }, (_, index) => message(index)),
      "no_stream"
    )
    const open = SqliteBackend.make({ filename, durability: "normal", busyTimeoutMs: 5000 })
    const a = RecallProjection.make(yield* open, { batchSize: 5 })
    const backendB = yield* open
    let reads = 0
    let raced = false
    const b: Backend = {
      ...backendB,
      readGlobal: (operation, run) =>
        backendB.readGlobal(operation, (db, bound) => {
          reads++
          return run(db, bound)
        }),
      transact: (operation, body, options) =>
        Effect.suspend(() => {
          if (raced || operation !== "index recall") return backendB.transact(operation, body, options)
          raced = true
          const after = Array.from({ length: more }, (_, index) => message(5 + index))
          return a.catchUp.pipe(
            Effect.zipRight(more > 0 ? Effect.orDie(log.append("s", after, 5)) : Effect.void),
            Effect.zipRight(backendB.transact(operation, body, options))
          )
        })
    }
    return { a, b: RecallProjection.make(b, { batchSize: 5 }), reads: () => reads }
  })

describe("recall catch-up in the background", () => {
  it.scoped("stops when another process moved the checkpoint first; a full catch-up goes on", () =>
    Effect.gen(function* () {
      const background = yield* race(7)
      const stopped = yield* background.b.catchUpInBackground
      // B read one batch, lost it to A, and stopped: one read, nothing indexed by B, the rest left to the
      // other writers' catch-ups or the next query.
      assert.strictEqual(background.reads(), 1)
      assert.strictEqual(stopped.events, 0)
      assert.strictEqual(stopped.position, 5, "it knows where the other process got to")
      assert.strictEqual(background.b.known(), 5)
      const rest = yield* background.a.catchUp
      assert.strictEqual(rest.events, 7)
      assert.strictEqual(rest.position, 12)

      // The same race for the catch-up a query runs: it reads again and indexes what is left.
      const full = yield* race(7)
      const done = yield* full.b.catchUp
      assert.strictEqual(done.events, 7)
      assert.strictEqual(done.position, 12)
      assert.strictEqual(full.reads(), 3, "the lost batch and the two after it")
    })
  )
})

describe("recall catch-up under a loop of appends", () => {
  it("never leaves more than two batches unindexed, even when the caller never waits on anything", async () => {
    const filename = tempFile()
    const runtime = ManagedRuntime.make(SqliteEventLog.layer({ filename, recallBatch: 100 }))
    const log = await runtime.runPromise(EventLog.EventLog)
    const peek = new BetterSqlite3(filename, { readonly: true })
    try {
      const behind = peek.prepare<[], { n: number }>(
        `select (select max(global_position) from events) -
                coalesce((select position from projection_checkpoints where name = 'recall'), 0) as n`
      )
      let worst = 0
      // What a bulk import through the Promise API does: one append after another, nothing in between.
      for (let call = 0; call < 40; call++) {
        const events = Array.from({ length: 50 }, (_, index) => message(call * 50 + index))
        await runtime.runPromise(log.append("s", events, call === 0 ? "no_stream" : call * 50))
        worst = Math.max(worst, behind.get()?.n ?? 0)
      }
      assert.isAtMost(worst, 2 * 100 + 50, "the backlog stays under two batches and one append")
    } finally {
      peek.close()
      await runtime.dispose()
    }
  })
})
