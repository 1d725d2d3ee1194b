// Issue 25 item 2: a stored tool output's pruning stub still points at its handle, so nothing is lost by
// stubbing: the output reads back whole from the file store. On a SQLite file and on PostgreSQL.
import { ContextService, Message } from "@ctxlog/core"
import { FileStore } from "@ctxlog/memory"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ToolOutputPruning } from "../src/index.js"
import { filler } from "./harness.js"
import { stores, storeLayer } from "./support/stores.js"

const big = Array.from({ length: 3000 }, (_, i) => `row ${i}: ${filler(60)}`).join("\n")

for (const store of stores) {
  describe(`stored outputs under pruning on ${store.name}`, () => {
    it.effect("the stub keeps the handle line; read_output's read returns the output whole", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        for (let i = 0; i < 5; i++) {
          const turn = [
            Message.user(`step ${i}`),
            Message.assistant("", [Message.toolCall(`c${i}`, "run_command", { command: `build ${i}` })]),
            Message.tool(`c${i}`, i === 0 ? big : filler(5000, `out${i}`)),
            Message.assistant(`done ${i}`)
          ]
          yield* ctx.appendMessages("p", yield* FileStore.offload("p", turn))
        }
        const before = (yield* ctx.load("p")).history.flatMap((message) => Message.toolResultsOf(message))[0]
        const handle = before === undefined ? undefined : FileStore.handleOf(before)
        if (handle === undefined) return assert.fail("the first output was not stored")
        const pruned = yield* ToolOutputPruning.pruneToolOutputs("p", { keepRecent: 1, minChars: 100 })
        const stub = pruned.window.history.flatMap((message) => Message.toolResultsOf(message))[0]
        assert.isTrue(stub?.content.startsWith(ToolOutputPruning.stubPrefix))
        assert.include(stub?.content, FileStore.handleLine(handle))
        const id = FileStore.shortIdIn(stub?.content ?? "")
        assert.strictEqual(id, FileStore.shortId(handle.sha256))
        assert.strictEqual((yield* FileStore.read("p", id ?? "")).content, big)
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })
}
