import { ContextService, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { TemplateCompactor, TieredCompaction } from "../src/index.js"

// The README example, with its output checked instead of printed.
const live = Layer.mergeAll(ContextService.layerMemory(), TemplateCompactor.layer({ maxBytes: 2048 }))

describe("README example", () => {
  it.effect("keeps the window within its budget", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("demo", "You are a coding agent.")
      const tags: Array<string> = []
      for (let i = 0; i < 30; i++) {
        yield* ctx.appendMessages("demo", [
          Message.user(`step ${i}: look at src/module${i}.ts`),
          Message.assistant("", [Message.toolCall(`c${i}`, "read", { path: `src/module${i}.ts` })]),
          Message.tool(`c${i}`, "export const x = 1\n".repeat(40)),
          Message.assistant(`module ${i} is fine: ${"it exports one constant and nothing else. ".repeat(12)}`)
        ])
        const result = yield* TieredCompaction.maybeCompact("demo", { budget: 4000 })
        tags.push(result._tag)
        assert.isAtMost(result.window.tokens.total, 4000)
        yield* ctx.completeTurn("demo")
      }
      assert.include(tags, "SoftCompacted")
      assert.include(tags, "Compacted")
    }).pipe(Effect.provide(live))
  )
})
