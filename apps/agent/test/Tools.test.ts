// The workspace tools on a real directory: effects happen inside it, and every way out is refused
// with an error result for the model (never a failed effect).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Tools from "../src/Tools.js"

const root = mkdtempSync(join(tmpdir(), "ctxlog-agent-tools-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const ws = join(root, "ws")
mkdirSync(join(ws, "src"), { recursive: true })
writeFileSync(join(ws, "src", "a.js"), ["one", "two", "three", "four", "five"].join("\n"))
writeFileSync(join(root, "outside.txt"), "SECRET")
symlinkSync(root, join(ws, "escape"))
const tools = Tools.make({ workspace: ws, timeoutMs: 2_000, outputCap: 200 })

describe("Tools", () => {
  it.effect("read_file reads a line range with line numbers", () =>
    Effect.gen(function* () {
      const out = yield* tools.run("read_file", { path: "src/a.js", start: 2, end: 3 })
      assert.isFalse(out.isError)
      assert.strictEqual(out.content, "src/a.js lines 2-3 of 5\n2| two\n3| three")
    })
  )

  it.effect("paths outside the workspace are refused, through .. , absolute paths and symlinks", () =>
    Effect.gen(function* () {
      for (const path of ["../outside.txt", join(root, "outside.txt"), "escape/outside.txt", "src/../../outside.txt"]) {
        const out = yield* tools.run("read_file", { path })
        assert.isTrue(out.isError, path)
        assert.include(out.content, "is outside the workspace", path)
        assert.notInclude(out.content, "SECRET")
      }
      const written = yield* tools.run("write_file", { path: "escape/new.txt", content: "x" })
      assert.isTrue(written.isError)
      const listed = yield* tools.run("list_dir", { path: ".." })
      assert.isTrue(listed.isError)
    })
  )

  it.effect("write_file creates directories inside the workspace; search finds by regex", () =>
    Effect.gen(function* () {
      const out = yield* tools.run("write_file", { path: "deep/er/b.js", content: "const answer = 42\n" })
      assert.isFalse(out.isError)
      assert.strictEqual(readFileSync(join(ws, "deep", "er", "b.js"), "utf8"), "const answer = 42\n")
      const found = yield* tools.run("search", { pattern: "answer = \\d+" })
      assert.strictEqual(found.content, "deep/er/b.js:1: const answer = 42")
      const bad = yield* tools.run("search", { pattern: "(" })
      assert.isTrue(bad.isError)
      assert.include(bad.content, "bad pattern")
    })
  )

  it.effect("run_command: allow-list, exit codes, output cap, timeout", () =>
    Effect.gen(function* () {
      const refused = yield* tools.run("run_command", { command: "rm -rf /" })
      assert.isTrue(refused.isError)
      assert.include(refused.content, '"rm" is not allowed')
      const ok = yield* tools.run("run_command", { command: "node -e 'console.log(6 * 7)'" })
      assert.strictEqual(ok.exitCode, 0)
      assert.include(ok.content, "42")
      const failed = yield* tools.run("run_command", { command: "node -e 'process.exit(3)'" })
      assert.isTrue(failed.isError)
      assert.strictEqual(failed.exitCode, 3)
      const long = yield* tools.run("run_command", { command: "node -e 'console.log(\"x\".repeat(5000))'" })
      assert.include(long.content, "chars cut by the output cap")
      assert.isBelow(long.content.length, 400)
      const slow = yield* tools.run("run_command", { command: "node -e 'setTimeout(() => {}, 60000)'" })
      assert.isTrue(slow.isError)
      assert.include(slow.content, "timed out after 2000 ms")
    })
  )

  it.effect("unknown tools and bad inputs are errors for the model", () =>
    Effect.gen(function* () {
      const unknown = yield* tools.run("delete_everything", {})
      assert.include(unknown.content, "no such tool")
      const bad = yield* tools.run("read_file", { path: 3 })
      assert.isTrue(bad.isError)
      assert.include(bad.content, "invalid input")
    })
  )

  it("splitCommand groups quotes and nothing else", () => {
    assert.deepStrictEqual(Tools.splitCommand(`node -e "a b" 'c d' e`), ["node", "-e", "a b", "c d", "e"])
    assert.deepStrictEqual(Tools.splitCommand("ls ''"), ["ls", ""])
  })
})
