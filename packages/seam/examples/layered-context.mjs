// Layered context in a few lines: append turns, run the seam pipeline after each, watch the window.
// Run from packages/seam after building core, compaction and seam: `pnpm example`.
import { ContextService, Message } from "@ctxlog/core"
import { SeamHost } from "@ctxlog/seam"
import { Effect, Layer, Option } from "effect"

const core = ContextService.layerMemory()
// Seams are due at 60% / 75% / 90% of a 600-token budget; the last 4 messages always stay verbatim.
const live = SeamHost.layer({ budget: 600, verbatimWindow: 4 }).pipe(Layer.provideMerge(core))

const program = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  yield* ctx.setSystemPrompt("demo", "You are a coding agent.")
  for (let i = 1; i <= 8; i++) {
    yield* ctx.appendMessages("demo", [
      Message.user(`Step ${i}: read src/module${i}.ts and tell me what it exports.`),
      Message.assistant("", [Message.toolCall(`call-${i}`, "read_file", { path: `src/module${i}.ts` })]),
      Message.tool(`call-${i}`, `export const value${i} = ${i}\n`.repeat(12)),
      Message.assistant(`src/module${i}.ts exports value${i}.`)
    ])
    const out = yield* SeamHost.runSeamPipeline("demo", { workspace: "/work/demo" })
    const level = Option.getOrElse(out.level, () => 0)
    const note = out.action === "none" ? "" : `  <- ${out.action} a level-${level} seam`
    console.log(`turn ${i}: ${out.window.tokens.total} tokens, ${out.window.history.length} messages${note}`)
  }
  const window = yield* ctx.load("demo")
  const host = yield* SeamHost.SeamHost
  for (const seam of host.collectSeamTexts(window.history)) {
    console.log(`\nlevel ${seam.level} seam (${seam.messageId}):\n${seam.body.slice(0, 400)}`)
  }
})

Effect.runPromise(Effect.provide(program, live)).catch((error) => {
  console.error(error)
  process.exit(1)
})
