/**
 * The contract tests' requests against the real services (`pnpm --filter @ctxlog/providers test:live`).
 * Not part of `pnpm test`: they need keys and the network. Every variable they need must be set; a
 * missing one fails the run, it is never skipped. Same fixture window, same builders and clients as the
 * local-server contract tests; the assertions are the shapes the local server answers with.
 */
import { ContextService, Message } from "@ctxlog/core"
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
const reasoningModel = process.env.OPENAI_REASONING_MODEL ?? "gpt-5-mini"

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

  it.live("takes thinking-block clearing (clear_thinking_20251015) on a thinking-enabled request", () =>
    Effect.gen(function* () {
      const built = AnthropicCtx.make({ model: anthropicModel, thinkingBudget: 1024 }).build(fixtureWindow, {
        maxOutputTokens: 2048,
        serverContext: { clearThinking: { keepThinkingTurns: "all" } }
      })
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      const client = AnthropicModel.make({ apiKey: need("ANTHROPIC_API_KEY"), model: anthropicModel })
      const response = yield* client.generateRequest(built.right.request)
      assert.isAbove(response.usage.inputTokens, 0)
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

  it.live("stateless: a reasoning model's reasoning item (encrypted_content) goes back with its function call", () =>
    Effect.gen(function* () {
      const builder = OpenAICtx.makeResponses({ model: reasoningModel })
      const client = OpenAIResponsesModel.make({ apiKey: need("OPENAI_API_KEY"), model: reasoningModel })
      const ctx = yield* ContextService.ContextService
      const asked = yield* ctx.appendMessages("live-reasoning", [
        Message.user("Call read_file on src/date.ts, then say in one line what it exports.")
      ])
      const options = { tools: [readFileTool], maxOutputTokens: 2048, serverContext: { store: false } }
      const first = builder.build(asked.window, options)
      if (Either.isLeft(first)) return yield* Effect.die(first.left)
      const response = yield* client.generateRequest(first.right.request)
      const reasoning = response.parts.filter((part) => part.type === "reasoning")
      assert.isTrue(reasoning.length > 0 && reasoning.every((part) => part.encryptedContent !== undefined))
      const call = response.parts.find((part) => part.type === "tool_call")
      if (call?.type !== "tool_call") return assert.fail("the model did not call read_file")
      yield* ctx.appendMessages("live-reasoning", [{ role: "assistant", parts: response.parts }])
      const answered = yield* ctx.appendMessages("live-reasoning", [
        Message.tool(call.id, "export const parse = (text: string): Date => new Date(text)")
      ])
      const second = builder.build(answered.window, options)
      if (Either.isLeft(second)) return yield* Effect.die(second.left)
      // The API rejects a reasoning item it cannot decrypt or that is out of place: an answer is the check.
      const next = yield* client.generateRequest(second.right.request)
      assert.isAbove(next.usage.inputTokens, 0)
    }).pipe(Effect.provide(ContextService.layerMemory()))
  )
})
