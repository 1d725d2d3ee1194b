// One agent turn, offline: build the Anthropic request from a window kept in an in-memory log,
// record PromptRendered, answer with the scripted OfflineModel, record the usage.
// Run: pnpm --filter @ctxlog/core build && pnpm --filter @ctxlog/providers build && node packages/providers/examples/offline-turn.mjs
import { ContextService, Ids, LanguageModel, Message } from "@ctxlog/core"
import { AnthropicCtx, OfflineModel, RenderRecord } from "@ctxlog/providers"
import { Effect, Either, Layer } from "effect"

const live = Layer.mergeAll(ContextService.layerMemory({ ids: Ids.layerSequential("ex") }), OfflineModel.layer())

const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5" })

const program = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  const model = yield* LanguageModel.LanguageModel
  yield* ctx.setSystemPrompt("demo", "You are a terse assistant.")
  yield* ctx.setTaskGoal("demo", "List the repository root")
  yield* ctx.appendMessages("demo", [Message.user('/call ls {"path": "."}')])

  const window = yield* ctx.load("demo")
  const built = builder.build(window, { turnReminder: "Answer in one line." })
  if (Either.isLeft(built)) return yield* Effect.fail(built.left)
  const rendered = yield* RenderRecord.recordRender("demo", built.right, {
    provider: model.provider,
    model: model.model
  })
  console.log("PromptRendered sha256:", rendered.events[0].sha256)
  console.log("request:", JSON.stringify(built.right.request, null, 2))

  // The offline model reads the neutral form; AnthropicModel.make(...).generateRequest(built.right.request)
  // would send the built request itself.
  const response = yield* model.generate({
    system: "You are a terse assistant.",
    messages: window.history.map((message) => ({ role: message.role, parts: message.parts }))
  })
  console.log("response parts:", JSON.stringify(response.parts))
  const usage = yield* RenderRecord.recordUsage("demo", response.usage, built.right.stats.total, response)
  console.log("calibration:", usage.window.calibration)
})

Effect.runPromise(Effect.provide(program, live)).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
