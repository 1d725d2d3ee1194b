// Bad input: a clear error naming what was wrong, a non-zero exit, and nothing written. Each case runs
// the CLI as a child process against real SQLite files.
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import { ctxlog, ctxlogInProcess, tempDir } from "./support/cli.js"

const temp = tempDir("ctxlog-errors-")
const db = join(temp.dir, "log.db")

const header = (events: number) => JSON.stringify({ format: "ctxlog.events", formatVersion: 1, stream: "s", events })
const line = (version: number, type: string, schemaVersion: number, data: object) =>
  JSON.stringify({ version, eventId: `e${version}`, type, schemaVersion, data })
const goal = (version: number) =>
  line(version, "TaskGoalSet", 1, { _tag: "TaskGoalSet", id: `e${version}`, goal: "g", tokens: 1 })

beforeAll(async () => {
  const file = join(temp.dir, "good.jsonl")
  writeFileSync(
    file,
    [header(3), goal(1), goal(2), line(3, "TurnCompleted", 1, { _tag: "TurnCompleted", id: "e3" })].join("\n")
  )
  const imported = await ctxlogInProcess(["import", "--db", db, file])
  assert.strictEqual(imported.code, 0, imported.stderr)
}, 60_000)
afterAll(() => temp.cleanup())

describe("bad input", () => {
  it("a missing database is an error, and no file is created (default path too)", async () => {
    const missing = join(temp.dir, "nope", "missing.db")
    const result = await ctxlog(["streams", "--db", missing], temp.dir)
    assert.strictEqual(result.code, 1)
    assert.include(result.stderr, `ctxlog: sqlite:${missing}: no such database file`)
    assert.isFalse(existsSync(missing))
    const empty = tempDir("ctxlog-default-")
    const byDefault = await ctxlog(["streams"], empty.dir)
    assert.strictEqual(byDefault.code, 1)
    assert.include(byDefault.stderr, "sqlite:./.ctxlog/ctxlog.db: no such database file")
    assert.deepStrictEqual(readdirSync(empty.dir), [])
    empty.cleanup()
  })

  it("an unknown stream is named", async () => {
    const result = await ctxlog(["window", "--db", db, "ghost"], temp.dir)
    assert.strictEqual(result.code, 1)
    assert.include(result.stderr, `ctxlog: no stream "ghost" in sqlite:${db}`)
  })

  it("a version past the end names the range", async () => {
    const result = await ctxlog(["window", "--db", db, "--at", "9", "s"], temp.dir)
    assert.strictEqual(result.code, 1)
    assert.include(result.stderr, 'ctxlog: stream "s" has versions 1..3; there is no version 9')
  })

  it("a corrupt JSONL line is named, and nothing is written (no database created)", async () => {
    const file = join(temp.dir, "corrupt.jsonl")
    writeFileSync(file, [header(3), goal(1), "{not json", goal(3)].join("\n"))
    const target = join(temp.dir, "corrupt.db")
    const result = await ctxlog(["import", "--db", target, file], temp.dir)
    assert.strictEqual(result.code, 1)
    assert.match(result.stderr, new RegExp(`ctxlog: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, line 3: not JSON`))
    assert.isFalse(existsSync(target))
  })

  it("an unknown event type is named with its schema version, and nothing is written", async () => {
    const file = join(temp.dir, "unknown.jsonl")
    writeFileSync(file, [header(2), goal(1), line(2, "MoodChanged", 7, { _tag: "MoodChanged", id: "e2" })].join("\n"))
    const result = await ctxlog(["import", "--db", db, "--stream", "fresh", file], temp.dir)
    assert.strictEqual(result.code, 1)
    assert.include(result.stderr, "line 3: cannot decode MoodChanged v7")
    assert.include(result.stderr, 'unknown event type "MoodChanged"')
    const streams = await ctxlogInProcess(["streams", "--db", db, "--json"])
    assert.notInclude(streams.stdout, "fresh")
  })

  it("an import into an existing stream is refused and writes nothing", async () => {
    const file = join(temp.dir, "again.jsonl")
    writeFileSync(file, [header(1), goal(1)].join("\n"))
    const result = await ctxlog(["import", "--db", db, file], temp.dir)
    assert.strictEqual(result.code, 1)
    assert.include(result.stderr, 'stream "s"): the stream exists already (version 3); nothing was written')
  })

  it("verify exits non-zero naming the first bad stream and version (a tampered event)", async () => {
    const copy = join(temp.dir, "tampered.db")
    const source = new BetterSqlite3(db, { readonly: true })
    await source.backup(copy)
    source.close()
    const tamper = new BetterSqlite3(copy)
    // The log refuses UPDATE through a trigger; an attacker with the file drops it first.
    tamper.exec("drop trigger events_reject_update")
    tamper.prepare("update events set data = replace(data, '\"g\"', '\"h\"') where stream_version = 2").run()
    tamper.close()
    const result = await ctxlog(["verify", "--db", copy], temp.dir)
    assert.strictEqual(result.code, 3)
    assert.include(result.stdout, "FAIL")
    assert.include(result.stderr, 'ctxlog: verify failed: stream "s" version 2 (hash-chain)')
    const good = await ctxlog(["verify", "--db", db], temp.dir)
    assert.strictEqual(good.code, 0, good.stderr)
  })
})
