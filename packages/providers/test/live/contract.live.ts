/**
 * The contract tests' requests against the real services (`pnpm --filter @ctxlog/providers test:live`).
 * Not part of `pnpm test`: they need keys and the network. Every variable they need must be set; a
 * missing one fails the run, it is never skipped. Same fixture window, same builders and clients as the
 * local-server contract tests; the assertions are the shapes the local server answers with.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { AnthropicCtx, AnthropicModel, ExactTokenCounter, OpenAICtx, OpenAIResponsesModel } from "../../src/index.js"
import { fixtureWindow, readFileTool } from "../fixture.js"

const need = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value.length === 0) throw new Error(`set ${name} to run the live contract tests`)
  return value
}

const anthropicModel = process.env.ANTHROPIC_MODEL ?? "claude-sonnet-4-5"
const openaiModel = process.env.OPENAI_MODEL ?? "gpt-4.1-mini"

describe("live: Anthropic", () => {
  it.live("streams the fixture render with context editing and the memory tool", () =>
    Effect.gen(function* () {
      const built = AnthropicCtx.make({ model: anthropicModel }).build(fixtureWindow, {
        tools: [readFileTool],
        maxOutputTokens: 256,
        serverContext: { clearToolUses: { triggerInputTokens: 50_000, keepToolUses: 2 }, memoryTool: true }
      })
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      const client = AnthropicModel.make({ apiKey: need("ANTHROPIC_API_KEY"), model: anthropicModel })
      const response = yield* client.generateRequest(built.right.request)
      assert.isAbove(response.usage.inputTokens, 0)
      assert.isAbove(response.parts.length, 0)
    })
  )

  it.live("count_tokens gives an exact count of the fixture window", () =>
    Effect.gen(function* () {
      const counter = ExactTokenCounter.anthropic({ apiKey: need("ANTHROPIC_API_KEY"), model: anthropicModel })
      const count = yield* counter.countWindow(fixtureWindow)
      assert.isTrue(count.exact, "count_tokens failed: the calibrated fallback answered")
      assert.isAbove(count.total, 0)
    })
  )
})

describe("live: OpenAI Responses", () => {
  it.live("streams the fixture render, then continues it with previous_response_id", () =>
    Effect.gen(function* () {
      const builder = OpenAICtx.makeResponses({ model: openaiModel })
      const client = OpenAIResponsesModel.make({ apiKey: need("OPENAI_API_KEY"), model: openaiModel })
      // No tools offered: the first answer is text, so the chained turn owes no function_call_output.
      const first = builder.build(fixtureWindow, { maxOutputTokens: 256 })
      if (Either.isLeft(first)) return yield* Effect.die(first.left)
      const sent = yield* client.send(first.right.request)
      assert.isDefined(sent.responseId)
      assert.isAbove(sent.response.usage.inputTokens, 0)
      if (sent.responseId === undefined) return
      const chained = builder.build(fixtureWindow, {
        maxOutputTokens: 256,
        serverContext: { previousResponseId: sent.responseId, store: true }
      })
      if (Either.isLeft(chained)) return yield* Effect.die(chained.left)
      const next = yield* client.send(chained.right.request)
      assert.isDefined(next.responseId)
    })
  )
})
