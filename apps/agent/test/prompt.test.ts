// Lines into messages: a paste is one message, `\` continues a line, `"""` lines fence a block; from a
// pipe the same blocks hold, and `/help` or an unknown `/word` never reaches the model.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Message } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Prompt from "../src/Prompt.js"
import { readStream, runCli, sessionOf } from "./support/cli.js"

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
})
