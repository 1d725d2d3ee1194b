// `--pg`: import into a PostgreSQL log, then read it back with the same commands as on SQLite.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { ctxlogInProcess, tempDir, transcripts } from "./support/cli.js"
import { freshDatabase } from "./support/pgUrl.js"

const temp = tempDir("ctxlog-pg-")
afterAll(() => temp.cleanup())

const parse = (result: { readonly code: number; readonly stdout: string; readonly stderr: string }) => {
  assert.strictEqual(result.code, 0, result.stderr)
  const value: unknown = JSON.parse(result.stdout)
  return typeof value === "object" && value !== null ? Object.fromEntries(Object.entries(value)) : {}
}

describe("ctxlog --pg", () => {
  it("imports a transcript and reads it back: verify --renders, window, render, export equals the SQLite export", async () => {
    const url = await freshDatabase()
    const file = join(transcripts, "10-claude-code-agentcmd-navuser-initials.json")
    parse(await ctxlogInProcess(["import", "--format", "openai-chat", "--pg", url, "--stream", "cc", "--json", file]))
    const verified = parse(await ctxlogInProcess(["verify", "--pg", url, "--renders", "--json"]))
    assert.strictEqual(verified.ok, true)
    const window = parse(await ctxlogInProcess(["window", "--pg", url, "cc", "--json"]))
    const render = parse(await ctxlogInProcess(["render", "--pg", url, "cc", "--json"]))
    assert.strictEqual(render.verified, true)
    // The same export imported into SQLite gives the same window.
    const exported = await ctxlogInProcess(["export", "--pg", url, "cc"])
    assert.strictEqual(exported.code, 0, exported.stderr)
    const jsonl = join(temp.dir, "cc.jsonl")
    writeFileSync(jsonl, exported.stdout)
    const db = join(temp.dir, "cc.db")
    parse(await ctxlogInProcess(["import", "--db", db, "--json", jsonl]))
    const copied = parse(await ctxlogInProcess(["window", "--db", db, "cc", "--json"]))
    assert.deepStrictEqual(copied.window, window.window)
  })

  it("an unknown stream on PostgreSQL is named", async () => {
    const url = await freshDatabase()
    const missing = await ctxlogInProcess(["streams", "--pg", url])
    // A database without the ctxlog tables is not a log.
    assert.strictEqual(missing.code, 1)
    assert.include(missing.stderr, 'not a ctxlog database (no "streams" table)')
  })
})
