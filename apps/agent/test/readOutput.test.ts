// Issue 25 item 2, the agent's side: a 200 KB tool output is stored, the event holds its handle, and the
// `read_output` tool returns it whole (and by lines) from the file store; after erasure it is gone.
// On a SQLite file and on PostgreSQL.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService, Message, TokenCounter } from "@ctxlog/core"
import { Ctxlog, Erasure, FileStore } from "@ctxlog/memory"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { Tools } from "../src/index.js"
import { freshDatabase } from "./support/postgres.js"

const stores: ReadonlyArray<{
  readonly name: string
  readonly open: Effect.Effect<Layer.Layer<Ctxlog.Services, unknown>>
}> = [
  {
    name: "SQLite file",
    open: Effect.sync(() =>
      Ctxlog.sqlite({
        filename: join(mkdtempSync(join(tmpdir(), "ctxlog-agent-files-")), "log.db"),
        tokenCounter: TokenCounter.layerHeuristic(4)
      })
    )
  },
  {
    name: "PostgreSQL",
    open: Effect.map(freshDatabase, (url) => Ctxlog.postgres({ url, tokenCounter: TokenCounter.layerHeuristic(4) }))
  }
]

const output = Array.from({ length: 5000 }, (_, i) => `src/file${i}.ts:${i}: const value${i} = ${i}`).join("\n")

for (const store of stores) {
  describe(`read_output on ${store.name}`, () => {
    it.effect(
      "returns a stored 200 KB output whole and by lines; an erased one is an error result",
      () =>
        Effect.gen(function* () {
          const live = yield* store.open
          yield* Effect.gen(function* () {
            assert.isAbove(output.length, 200_000)
            const ctx = yield* ContextService.ContextService
            const files = yield* FileStore.FileStore
            const workspace = mkdtempSync(join(tmpdir(), "ctxlog-agent-ws-"))
            const tools = Tools.make({ workspace, readOutput: Tools.readOutputFrom(files, "session") })
            assert.include(
              tools.specs.map((spec) => spec.name),
              "read_output"
            )
            assert.notInclude(
              Tools.make({ workspace }).specs.map((spec) => spec.name),
              "read_output"
            )
            const inputs = yield* FileStore.offload("session", [
              Message.user("search everything"),
              Message.assistant("", [Message.toolCall("c1", "search", { pattern: "value" })]),
              Message.tool("c1", output)
            ])
            const appended = yield* ctx.appendMessages("session", inputs)
            const result = appended.window.history.flatMap((message) => Message.toolResultsOf(message))[0]
            const handle = result === undefined ? undefined : FileStore.handleOf(result)
            if (result === undefined || handle === undefined) return assert.fail("the event holds no handle")
            // The model reads the id from the preview's first line and asks for it.
            const id = /id=([0-9a-f]{16})/.exec(result.content)?.[1] ?? ""
            const whole = yield* tools.run("read_output", { id })
            assert.deepStrictEqual(whole, { content: output, isError: false })
            const lines = yield* tools.run("read_output", { id, start: 2, end: 3 })
            assert.strictEqual(
              lines.content,
              "[lines 2-3 of 5000]\nsrc/file1.ts:1: const value1 = 1\nsrc/file2.ts:2: const value2 = 2"
            )
            const wrong = yield* tools.run("read_output", { id: "ffffffffffffffff" })
            assert.isTrue(wrong.isError)
            assert.include(wrong.content, "no stored output")
            yield* Erasure.erase("session", { actor: "test", reason: "cleanup" })
            const erased = yield* tools.run("read_output", { id })
            assert.isTrue(erased.isError)
          }).pipe(Effect.provide(live))
        }),
      60_000
    )
  })
}
