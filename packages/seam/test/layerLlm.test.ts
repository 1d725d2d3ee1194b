import { ContextService, LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { ArchivedContext, SeamHost } from "../src/index.js"
import { coreLayer } from "./support.js"

/** A scripted language model (a test Layer of the core port) that records each request. */
const scriptedModel = (requests: Array<LanguageModel.ModelRequest>) =>
  Layer.succeed(LanguageModel.LanguageModel, {
    provider: "scripted",
    model: "seam-test",
    generate: (request) =>
      Effect.sync(() => {
        requests.push(request)
        return {
          provider: "scripted",
          model: "seam-test",
          parts: [Message.text("Goal: fix the parser.\nDecisions: keep the old API.")],
          stopReason: "end_turn",
          usage: { inputTokens: 100, outputTokens: 12, cacheReadTokens: 0, cacheWriteTokens: 0 }
        } satisfies LanguageModel.ModelResponse
      }),
    stream: () => Stream.empty
  })

describe("SeamHost.layerLlm", () => {
  it.effect("summarizes a seam with the LanguageModel in context, bounded by the level's summary tokens", () => {
    const requests: Array<LanguageModel.ModelRequest> = []
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("llm", [
        Message.user("please fix the parser"),
        Message.assistant("looking at src/parser.ts"),
        Message.user("and keep the API"),
        Message.assistant("done")
      ])
      const out = yield* SeamHost.runSeamPipeline("llm")
      assert.strictEqual(out.action, "produced")
      assert.strictEqual(requests.length, 1)
      assert.isAtMost(requests[0]?.maxOutputTokens ?? Number.POSITIVE_INFINITY, 300)
      const seam = out.window.history[0]
      assert.deepStrictEqual(
        ArchivedContext.parse(seam === undefined ? "" : Message.textOf(seam)).map((block) => block.body),
        ["Goal: fix the parser.\nDecisions: keep the old API."]
      )
    }).pipe(
      Effect.provide(
        SeamHost.layerLlm({
          thresholds: { level1: 10, level2: 100_000, level3: 200_000 },
          verbatimWindow: 1,
          summaryTokens: { level1: 300, level2: 200, level3: 100 }
        }).pipe(Layer.provide(scriptedModel(requests)), Layer.provideMerge(coreLayer))
      )
    )
  })
})
