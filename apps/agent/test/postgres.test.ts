// `--pg`: the same agent on PostgreSQL (a real server, started by the memory package's test setup).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { runCli, sessionOf } from "./support/cli.js"
import { freshDatabase } from "./support/postgres.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-pg-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("--pg", () => {
  it.live(
    "a tool-calling session on PostgreSQL, resumed and listed",
    () =>
      Effect.gen(function* () {
        const url = yield* freshDatabase
        const ws = join(dir, "ws")
        mkdirSync(ws, { recursive: true })
        writeFileSync(join(ws, "data.txt"), "on postgres\n")
        const first = yield* Effect.promise(() =>
          runCli(["run", "--pg", url, "--workspace", ws, "--task", '/call read_file {"path": "data.txt"}'])
        )
        assert.strictEqual(first.code, 0, first.stderr)
        assert.include(first.stdout, "on postgres")
        const stream = sessionOf(first.stdout)
        const second = yield* Effect.promise(() =>
          runCli(["run", "--pg", url, "--session", stream, "--workspace", ws, "--task", "and again"])
        )
        assert.strictEqual(second.code, 0, second.stderr)
        assert.include(second.stdout, `resumed ${stream}`)
        assert.include(second.stdout, "You said: and again")
        const listed = yield* Effect.promise(() => runCli(["sessions", "--pg", url]))
        assert.strictEqual(listed.code, 0, listed.stderr)
        assert.match(listed.stdout, new RegExp(`^${stream}\\s+\\S+\\s+2\\s`, "m"))
      }),
    120_000
  )
})
