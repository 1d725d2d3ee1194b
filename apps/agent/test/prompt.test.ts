// Lines into messages: a paste is one message, `\` continues a line, `"""` lines fence a block; from a
// pipe the same blocks hold, and `/help` or an unknown `/word` never reaches the model. A huge message
// (351 KB) is kept whole in the log's file store, as a large tool output is, and the person is told.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Message } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Prompt from "../src/Prompt.js"
import { FileStore } from "@ctxlog/memory"
import { readLayer, readStream, runCli, sessionOf } from "./support/cli.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-prompt-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const typed = (text: string): Prompt.Line => ({ text, pasted: false })
const pasted = (text: string): Prompt.Line => ({ text, pasted: true })

describe("the prompt's messages", () => {
  it("a line is a message; pasted lines wait for the Enter typed after them", () => {
    const lines = Prompt.assembler()
    assert.strictEqual(lines.push(typed("hello")), "hello")
    assert.isUndefined(lines.push(pasted("look: one")))
    assert.isUndefined(lines.push(pasted("two \\")))
    assert.isUndefined(lines.push(pasted('"""')))
    assert.isTrue(lines.pending())
    assert.strictEqual(lines.push(typed("three")), 'look: one\ntwo \\\n"""\nthree')
    assert.isFalse(lines.pending())
  })

  it("a trailing backslash continues; a fenced block is one message; clear drops what was typed", () => {
    const lines = Prompt.assembler()
    assert.isUndefined(lines.push(typed("first \\")))
    assert.strictEqual(lines.push(typed("second")), "first \nsecond")
    assert.isUndefined(lines.push(typed('"""')))
    assert.isUndefined(lines.push(typed("a")))
    assert.isUndefined(lines.push(typed("")))
    assert.strictEqual(lines.push(typed('"""')), "a\n\n")
    assert.isUndefined(lines.push(typed("dropped \\")))
    lines.clear()
    assert.strictEqual(lines.push(typed("kept")), "kept")
  })

  it.live("from a pipe: a fenced block is one turn; /help and /nope are answered here", () =>
    Effect.gen(function* () {
      const workspace = join(dir, "ws")
      mkdirSync(workspace, { recursive: true })
      const db = join(dir, "pipe.db")
      const ran = yield* Effect.promise(() =>
        runCli(["run", "--workspace", workspace, "--db", db], {
          input: 'first\n/help\n"""\nline 1\nline 2\n"""\n/nope\n/usr/bin is a path\n'
        })
      )
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.include(ran.stdout, "Commands at the prompt")
      assert.include(ran.stdout, "/nope is not a command here (/help lists them); nothing was sent")
      const { window } = yield* readStream(db, sessionOf(ran.stdout))
      const users = window.history.filter((m) => m.role === "user").map((m) => Message.textOf(m))
      assert.deepStrictEqual(users, ["first", "line 1\nline 2", "/usr/bin is a path"])
    })
  )

  it.live("a 351 KB message is kept whole in the file store, with a one-line notice", () =>
    Effect.gen(function* () {
      const workspace = join(dir, "ws-huge")
      mkdirSync(workspace, { recursive: true })
      const db = join(dir, "huge.db")
      const huge = Array.from(
        { length: 6000 },
        (_, index) =>
          `2026-03-01T10:${String(index % 60).padStart(2, "0")} order ${index} failed: card declined (retry ${index % 7})`
      ).join("\n")
      assert.isAbove(huge.length, 350_000)
      const ran = yield* Effect.promise(() =>
        runCli(["run", "--workspace", workspace, "--db", db], { input: `"""\n${huge}\n"""\n` })
      )
      assert.strictEqual(ran.code, 0, ran.stderr)
      const notice = ran.stdout.split("\n").filter((line) => line.includes("kept whole in the log's file store"))
      assert.strictEqual(notice.length, 1, ran.stdout)
      assert.match(
        notice[0] ?? "",
        /^ {2}↳ 3\d\d KB \(6000 lines\) kept whole in the log's file store as [0-9a-f]{16}; the model sees the first \d+ lines/
      )
      const stream = sessionOf(ran.stdout)
      const { window } = yield* readStream(db, stream)
      const user = Message.textOf(window.history.find((m) => m.role === "user") ?? { parts: [] })
      assert.isBelow(user.length, 4000)
      assert.notInclude(user, "elided")
      const id = /read_output \{"id":"([0-9a-f]{16})"\}/.exec(user)?.[1] ?? ""
      const whole = yield* FileStore.read(stream, id).pipe(Effect.provide(readLayer(db)))
      assert.strictEqual(whole.content, huge)
    })
  )
})
