// A SQLite write transaction takes the lock by trying again after short pauses (at most
// `WriteLock.longestPauseMs`), not through SQLite's busy handler, whose sleeps grow to 100 ms and let one
// writer starve the others (issue 24). Another process holds the lock here: an append waits for it and
// then writes, counting its tries; one that cannot get it within `busyTimeoutMs` fails and writes nothing.
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { EventLog, type WindowEvent, WorkCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { SqliteEventLog } from "../src/index.js"
import { counters as metrics } from "../src/internal/workCounters.js"
import { tempFile } from "./support/stores.js"
import { bundledEntrySync } from "../../../scripts/ts-bundle.mjs"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")

const message = (index: number): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `lock-e${index}`,
  message: { id: `lock-m${index}`, role: "user", kind: "chat", parts: [{ type: "text", text: "hi" }], tokens: 1 }
})

/** A child process holding the file's write lock for `holdMs`; resolves once it holds it. */
const holder = (filename: string, holdMs: number) =>
  Effect.acquireRelease(
    Effect.async<{ readonly released: Promise<void>; readonly kill: () => void }>((resume) => {
      const child = spawn(
        process.execPath,
        [bundledEntrySync(join(packageDir, "test", "child", "holdLock.ts")), filename, `${holdMs}`],
        { cwd: packageDir, stdio: ["ignore", "pipe", "inherit"] }
      )
      let out = ""
      const released = new Promise<void>((resolve) => child.on("exit", () => resolve()))
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        if (out.includes("locked\n")) resume(Effect.succeed({ released, kill: () => child.kill() }))
      })
    }),
    (held) =>
      Effect.promise(() => {
        held.kill()
        return held.released
      })
  )

describe("SQLite write lock", () => {
  it.scopedLive("an append waits for another process's lock, then writes", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      const log = Context.get(yield* Layer.build(SqliteEventLog.layer({ filename })), EventLog.EventLog)
      yield* log.append("s", [message(0)], "no_stream")
      yield* holder(filename, 300)
      reset()
      const result = yield* log.append("s", [message(1)], 1)
      assert.strictEqual(result.nextExpectedVersion, 2)
      assert.isAtLeast(counters.lockWaits, 1, "it found the lock held and tried again")
    })
  )

  it.scopedLive("an append that cannot get the lock within busyTimeoutMs fails and writes nothing", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      const log = Context.get(
        yield* Layer.build(SqliteEventLog.layer({ filename, busyTimeoutMs: 50 })),
        EventLog.EventLog
      )
      yield* log.append("s", [message(0)], "no_stream")
      const held = yield* holder(filename, 5000)
      reset()
      const result = yield* Effect.either(log.append("s", [message(1)], 1))
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left._tag, "StoreError")
        assert.include(result.left.message, "locked")
      }
      assert.isAtLeast(counters.lockWaits, 2)
      held.kill()
      yield* Effect.promise(() => held.released)
      assert.strictEqual(yield* log.version("s"), 1, "nothing was written")
      // The connection's own busy_timeout is back for every other statement, and the lock is free again.
      const after = yield* log.append("s", [message(1)], 1)
      assert.strictEqual(after.nextExpectedVersion, 2)
    })
  )
})
