import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { EventLog } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SqliteEventLog } from "../src/index.js"
import { tempFile } from "./support/stores.js"
import { bundledEntrySync } from "../../../scripts/ts-bundle.mjs"

// A process SIGKILLed at any point of the first open of a new SQLite file (while the schema is created)
// must leave a file that opens: the migrations run in one transaction. Each run creates a new file,
// kills the child at a random point of its open, then opens the file here and appends.

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const runs = Number(process.env.CTXLOG_KILL_RUNS ?? 20)

interface Outcome {
  /** The child finished opening before the kill (its open took `openMicros`). */
  readonly opened: boolean
  readonly openMicros: number
}

/** Start the child; kill it `killAfterMs` after it says "ready" (never when undefined). */
const openInChild = (filename: string, killAfterMs: number | undefined) =>
  Effect.async<Outcome, Error>((resume) => {
    const child = spawn(
      process.execPath,
      [bundledEntrySync(join(packageDir, "test", "child", "openNew.ts")), filename],
      { cwd: packageDir, stdio: ["ignore", "pipe", "inherit"] }
    )
    let output = ""
    let timer: NodeJS.Timeout | undefined
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (timer === undefined && killAfterMs !== undefined && output.includes("ready\n")) {
        timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs)
      }
    })
    child.on("error", (cause) => resume(Effect.fail(cause)))
    child.on("close", () => {
      if (timer !== undefined) clearTimeout(timer)
      const opened = /opened (\d+)/.exec(output)
      if (output.includes("failed")) resume(Effect.fail(new Error(`the child could not open: ${output}`)))
      else resume(Effect.succeed({ opened: opened !== null, openMicros: Number(opened?.[1] ?? 0) }))
    })
    return Effect.sync(() => {
      if (timer !== undefined) clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })

describe("first open of a new SQLite file", () => {
  it.live(
    `a process killed at a random point of it leaves a file that opens (${runs} runs)`,
    () =>
      Effect.gen(function* () {
        // How long an open takes here: kill points are drawn from that span.
        const calibration = yield* openInChild(tempFile(), undefined)
        assert.isTrue(calibration.opened)
        const span = Math.max(5, calibration.openMicros / 1000)
        let killedMidOpen = 0
        for (let run = 0; run < runs; run++) {
          const filename = tempFile()
          const outcome = yield* openInChild(filename, Math.random() * span)
          if (!outcome.opened) killedMidOpen++
          const stream = freshStream("after-kill")
          const appended = yield* Effect.flatMap(EventLog.EventLog, (log) =>
            log.append(stream, sampleEvents(2), "no_stream")
          ).pipe(Effect.provide(SqliteEventLog.layer({ filename })), Effect.either)
          assert.isTrue(appended._tag === "Right", `run ${run}: ${JSON.stringify(appended)}`)
          if (appended._tag === "Right") assert.strictEqual(appended.right.nextExpectedVersion, 2)
        }
        // The kills did land inside opens (otherwise this test proves nothing).
        assert.isAbove(killedMidOpen, 0)
      }),
    600_000
  )
})
