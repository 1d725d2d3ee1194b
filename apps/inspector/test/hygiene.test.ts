// CLI hygiene and full content (issue 22, items 3, 4 and 7): unknown event types, streams and options
// are non-zero exits with the nearest names; `message` prints one message whole by id or version;
// `window --full` / `--json` carry whole messages; text layouts fit 80 columns; export and import keep
// event metadata; the inspector's sources hold no SQL (the one door is @ctxlog/memory's LogReader).
import { randomUUID } from "node:crypto"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { EventLog, type Message, WindowEvent } from "@ctxlog/core"
import { freshStream } from "@ctxlog/testing"
import { SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { Suggest } from "../src/index.js"
import { ctxlog, ctxlogInProcess, tempDir } from "./support/cli.js"

const temp = tempDir("ctxlog-hygiene-")
afterAll(() => temp.cleanup())

const longOutput = `${"line of tool output ".repeat(40)}END-OF-OUTPUT`

/** A stream with a tool call and its long result, written in two appends with different metadata. */
const seed = (filename: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* SqliteEventLog.make({ filename })
        const log = Context.get(context, EventLog.EventLog)
        const stream = freshStream("hygiene")
        const message = (fields: Pick<Message.Message, "role" | "parts" | "tokens">): Message.Message => ({
          id: randomUUID(),
          kind: "chat",
          ...fields
        })
        const call = message({
          role: "assistant",
          parts: [
            { type: "reasoning", text: "I should list the files first." },
            { type: "tool_call", id: "call-1", name: "bash", input: { command: "ls -la" } }
          ],
          tokens: 12
        })
        const result = message({
          role: "tool",
          parts: [{ type: "tool_result", toolCallId: "call-1", content: longOutput, isError: false }],
          tokens: 200
        })
        const user = message({ role: "user", parts: [{ type: "text", text: "list the files" }], tokens: 4 })
        yield* log.append(
          stream,
          [WindowEvent.MessageAppended.make({ id: randomUUID(), message: user })],
          "no_stream",
          { turn: 1, actor: "user" }
        )
        yield* log.append(
          stream,
          [
            WindowEvent.MessageAppended.make({ id: randomUUID(), message: call }),
            WindowEvent.MessageAppended.make({ id: randomUUID(), message: result })
          ],
          1,
          { turn: 1, actor: "agent", correlationId: "req-42" }
        )
        return { stream, call, result }
      })
    )
  )

describe("ctxlog hygiene", () => {
  it("an unknown event type, stream or option is a non-zero exit naming the nearest", async () => {
    const db = join(temp.dir, "names.db")
    const { stream } = await seed(db)
    const bogus = await ctxlogInProcess(["events", "--db", db, stream, "--type", "Bogus"])
    assert.strictEqual(bogus.code, 1)
    assert.include(bogus.stderr, "--type Bogus: no such event type (types: ")
    const typo = await ctxlogInProcess(["events", "--db", db, stream, "--type", "MessageAppendd"])
    assert.strictEqual(typo.code, 1)
    assert.include(typo.stderr, 'did you mean "MessageAppended"')
    const ghost = await ctxlogInProcess(["window", "--db", db, `${stream.slice(0, -1)}x`])
    assert.strictEqual(ghost.code, 1)
    assert.include(ghost.stderr, `did you mean "${stream}"?`)
    const flag = await ctxlogInProcess(["window", "--db", db, stream, "--budgt", "5"])
    assert.strictEqual(flag.code, 2)
    assert.include(flag.stderr, "--budgt; did you mean --budget?")
  })

  it("verify checks a heads file: a kept stream that is gone fails (exit 3); a malformed head is named", async () => {
    const db = join(temp.dir, "heads.db")
    const { stream } = await seed(db)
    const heads = await ctxlogInProcess(["heads", "--db", db])
    assert.strictEqual(heads.code, 0, heads.stderr)
    const file = join(temp.dir, "kept.heads")
    writeFileSync(file, `${heads.stdout.trim()}\ngone-stream@4:${"ab".repeat(32)}\n`)
    const verify = await ctxlogInProcess(["verify", "--db", db, "--heads-file", file])
    assert.strictEqual(verify.code, 3, verify.stderr)
    assert.include(verify.stdout, `ok    ${stream}`)
    assert.include(verify.stderr, 'stream "gone-stream" version 1 (expected-head): a head is kept for this stream')
    const bad = await ctxlogInProcess(["window", "--db", db, stream, "--expect-head", `${stream}@3:nothex`])
    assert.strictEqual(bad.code, 1)
    assert.include(bad.stderr, "--expect-head: expected <stream>@<version>:<64 hex sha256>")
  })

  it("message prints one message whole by id suffix or @version, with its reasoning and tool pair", async () => {
    const db = join(temp.dir, "message.db")
    const { stream, call, result } = await seed(db)
    const byId = await ctxlogInProcess(["message", "--db", db, stream, call.id.slice(-12)])
    assert.strictEqual(byId.code, 0, byId.stderr)
    assert.include(byId.stdout, `message ${call.id}`)
    assert.include(byId.stdout, "[reasoning]\nI should list the files first.")
    assert.include(byId.stdout, "[tool call bash id call-1]")
    assert.include(byId.stdout, '"command": "ls -la"')
    // The tool pair: the whole result, not a preview.
    assert.include(byId.stdout, `── tool pair: tool ${result.id}`)
    assert.include(byId.stdout, "END-OF-OUTPUT")
    const byVersion = await ctxlogInProcess(["message", "--db", db, stream, "@3", "--json"])
    assert.strictEqual(byVersion.code, 0, byVersion.stderr)
    const detail: unknown = JSON.parse(byVersion.stdout)
    assert.deepInclude(detail, {
      id: result.id,
      role: "tool",
      partition: "history",
      origin: { version: 3, type: "MessageAppended" }
    })
    const missing = await ctxlogInProcess(["message", "--db", db, stream, "@9"])
    assert.strictEqual(missing.code, 1)
    assert.include(missing.stderr, "no event at version 9")
  })

  // (`heads`, `export`, `render`, `message` and `window --full` print data whole, never cut.)
  it("window --full and window --json carry whole messages; text layouts fit 80 columns", async () => {
    const db = join(temp.dir, "window.db")
    const { stream } = await seed(db)
    const full = await ctxlogInProcess(["window", "--db", db, stream, "--full"])
    assert.strictEqual(full.code, 0, full.stderr)
    assert.include(full.stdout, longOutput)
    const json = await ctxlogInProcess(["window", "--db", db, stream, "--json"])
    assert.include(json.stdout, "END-OF-OUTPUT")
    for (const args of [["streams"], ["events", stream], ["window", stream], ["blame", stream], ["verify"]]) {
      const [command = "", ...rest] = args
      const printed = await ctxlogInProcess([command, "--db", db, ...rest])
      assert.strictEqual(printed.code, 0, printed.stderr)
      for (const line of printed.stdout.split("\n")) {
        assert.isAtMost([...line].length, 80, `${args.join(" ")}: ${line}`)
      }
    }
  })

  it("export and import keep each event's metadata", async () => {
    const db = join(temp.dir, "meta.db")
    const { stream } = await seed(db)
    const exported = await ctxlogInProcess(["export", "--db", db, stream])
    assert.strictEqual(exported.code, 0, exported.stderr)
    assert.include(exported.stdout, '"metadata":{"correlationId":"req-42","turn":1,"actor":"agent"}')
    const file = join(temp.dir, "meta.jsonl")
    writeFileSync(file, exported.stdout)
    const copy = join(temp.dir, "meta-copy.db")
    const imported = await ctxlogInProcess(["import", "--db", copy, file])
    assert.strictEqual(imported.code, 0, imported.stderr)
    // The same ids again under another stream name: one error, the ids summarized.
    const twice = await ctxlogInProcess(["import", "--db", copy, file, "--stream", "another"])
    assert.strictEqual(twice.code, 1)
    assert.strictEqual(twice.stderr.split("ctxlog:").length, 2, twice.stderr)
    assert.include(twice.stderr, "1 event ids are stored already in another stream (", twice.stderr)
    const ids = Array.from({ length: 472 }, (_, index) => `id-${index}`)
    assert.strictEqual(Suggest.summarize(ids), "id-0, id-1, id-2 and 469 more")
    const again = await ctxlogInProcess(["export", "--db", copy, stream])
    const metadataOf = (text: string) =>
      text
        .trim()
        .split("\n")
        .slice(1)
        .map((line) => JSON.stringify(Reflect.get(JSON.parse(line), "metadata")))
    assert.deepStrictEqual(metadataOf(again.stdout), metadataOf(exported.stdout))
  })

  it("colour only on a terminal: piped help and usage errors carry no ANSI escapes, NO_COLOR or not", async () => {
    for (const env of [{ NO_COLOR: "" }, { NO_COLOR: "1" }]) {
      const help = await ctxlog(["--help"], temp.dir, env)
      assert.strictEqual(help.code, 0, help.stderr)
      assert.include(help.stdout, "ctxlog")
      assert.notInclude(help.stdout + help.stderr, String.fromCharCode(27))
    }
  })

  it("the inspector's sources hold no SQL and no database driver: it reads through @ctxlog/memory", () => {
    const dir = new URL("../src/", import.meta.url)
    const sql = /\b(select\s+[\w*,\s.()]+\s+from|insert\s+into|delete\s+from|update\s+\w+\s+set|create\s+table)\b/i
    const drivers = /from\s+"(kysely|better-sqlite3|pg)"/
    const files = readdirSync(dir).filter((name) => name.endsWith(".ts"))
    assert.isAbove(files.length, 5)
    for (const name of files) {
      const text = readFileSync(new URL(name, dir), "utf8")
      assert.notMatch(text, sql, `${name} holds SQL`)
      assert.notMatch(text, drivers, `${name} imports a database driver`)
    }
  })
})
