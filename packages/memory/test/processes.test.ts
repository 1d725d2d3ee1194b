import { EventHash, EventLog, Window, WindowRepository } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { SqliteEventLog } from "../src/index.js"
import { lastJsonLine, runChild } from "./support/child.js"
import { tempFile } from "./support/stores.js"

// Real processes on one SQLite file: each child is a separate node process with its own connection.

const child = (script: string, args: ReadonlyArray<string>) => Effect.map(runChild(script, args), lastJsonLine)

describe("SQLite across processes", () => {
  it.live(
    "10 processes append at the same expected version: exactly one wins, the others conflict",
    () =>
      Effect.gen(function* () {
        const filename = tempFile()
        const stream = freshStream("race")
        yield* Effect.flatMap(EventLog.EventLog, (log) => log.append(stream, sampleEvents(1), "no_stream")).pipe(
          Effect.provide(SqliteEventLog.layer({ filename }))
        )
        // Children start at once after a common instant, so their transactions really overlap.
        const startAt = String(Date.now() + 4000)
        const outcomes = yield* Effect.all(
          Array.from({ length: 10 }, (_, index) => child("appendOnce.ts", [filename, stream, startAt, `p${index}`])),
          { concurrency: "unbounded" }
        )
        const written = outcomes.filter((outcome) => JSON.stringify(outcome).includes('"written"'))
        const conflicts = outcomes.filter((outcome) => JSON.stringify(outcome) === '{"outcome":"conflict","actual":3}')
        assert.strictEqual(written.length, 1, JSON.stringify(outcomes))
        assert.strictEqual(conflicts.length, 9, JSON.stringify(outcomes))
        const envelopes = yield* Effect.flatMap(EventLog.EventLog, (log) =>
          Stream.runCollect(log.readAll()).pipe(Effect.map(Chunk.toReadonlyArray))
        ).pipe(Effect.provide(SqliteEventLog.layer({ filename })))
        assert.strictEqual(envelopes.length, 3)
        assert.deepStrictEqual(
          envelopes.map((envelope) => envelope.version),
          [1, 2, 3]
        )
        assert.isTrue(EventHash.verify(envelopes).ok)
      }),
    120_000
  )

  it.live(
    "6 processes create a new file and its stream at once: migrations do not collide, one no_stream wins",
    () =>
      Effect.gen(function* () {
        const filename = tempFile()
        const stream = freshStream("create")
        const startAt = String(Date.now() + 3000)
        const outcomes = yield* Effect.all(
          Array.from({ length: 6 }, (_, index) =>
            child("appendOnce.ts", [filename, stream, startAt, `n${index}`, "no_stream"])
          ),
          { concurrency: "unbounded" }
        )
        const written = outcomes.filter((outcome) => JSON.stringify(outcome).includes('"written"'))
        const conflicts = outcomes.filter((outcome) => JSON.stringify(outcome) === '{"outcome":"conflict","actual":2}')
        assert.strictEqual(written.length, 1, JSON.stringify(outcomes))
        assert.strictEqual(conflicts.length, 5, JSON.stringify(outcomes))
      }),
    120_000
  )

  it.live(
    "a window written by a process that exited loads deep-equal after reopening",
    () =>
      Effect.gen(function* () {
        const filename = tempFile()
        const stream = freshStream("restart")
        const encoded = yield* child("writeWindow.ts", [filename, stream])
        const live = yield* Window.decodeUnknown(encoded)
        assert.isAbove(live.version, 20)
        const reopened = yield* Effect.gen(function* () {
          const repository = yield* WindowRepository.WindowRepository
          const log = yield* EventLog.EventLog
          const loaded = yield* repository.load(stream)
          const events = yield* Stream.runCollect(log.read(stream)).pipe(Effect.map(Chunk.toReadonlyArray))
          return { loaded, replayed: Window.replay(events.map((envelope) => envelope.event)) }
        }).pipe(Effect.provide(SqliteEventLog.layer({ filename })))
        assert.deepStrictEqual(reopened.loaded, live)
        assert.deepStrictEqual(reopened.replayed, live)
      }),
    120_000
  )
})
