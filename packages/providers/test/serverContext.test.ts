import { ContextService, EventLog, Message, TokenCounter, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import {
  AnthropicCtx,
  AnthropicModel,
  CtxBuilder,
  OpenAICtx,
  OpenAIResponsesModel,
  RenderRecord
} from "../src/index.js"
import { fixtureWindow, readFileTool } from "./fixture.js"
import { json, parse, type Received, serve, sse } from "./server.js"

const retry = { maxRetries: 0, baseDelayMs: 1, jitter: false }

const anthropicAnswer = [
  {
    event: "message_start",
    data: JSON.stringify({
      type: "message_start",
      message: { model: "claude-sonnet-4-5", usage: { input_tokens: 90 } }
    })
  },
  {
    event: "content_block_start",
    data: JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "ok" } })
  },
  {
    event: "message_delta",
    data: JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } })
  },
  { event: "message_stop", data: JSON.stringify({ type: "message_stop" }) }
]

/** What the context-editing docs require of a request, as problems. */
const contextEditingProblems = (request: Received): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (!String(request.headers["anthropic-beta"]).split(",").includes("context-management-2025-06-27")) {
    problems.push("anthropic-beta header")
  }
  const body = parse(request.body)
  if (typeof body !== "object" || body === null) return ["body"]
  const management = Reflect.get(body, "context_management")
  const edits = typeof management === "object" && management !== null ? Reflect.get(management, "edits") : undefined
  const edit = Array.isArray(edits) ? edits[0] : undefined
  if (edit?.type !== "clear_tool_uses_20250919") problems.push("edit type")
  if (edit?.trigger?.type !== "input_tokens" || edit?.trigger?.value !== 30000) problems.push("trigger")
  if (edit?.keep?.type !== "tool_uses" || edit?.keep?.value !== 3) problems.push("keep")
  if (edit?.clear_at_least?.type !== "input_tokens" || edit?.clear_at_least?.value !== 5000)
    problems.push("clear_at_least")
  if (JSON.stringify(edit?.exclude_tools) !== '["memory"]') problems.push("exclude_tools")
  if (edit?.clear_tool_inputs !== true) problems.push("clear_tool_inputs")
  const tools = Reflect.get(body, "tools")
  if (!Array.isArray(tools) || !tools.some((tool) => tool?.type === "memory_20250818" && tool?.name === "memory")) {
    problems.push("memory tool")
  }
  if (!Array.isArray(tools) || !tools.some((tool) => tool?.name === "read_file" && tool?.input_schema !== undefined)) {
    problems.push("user tools kept")
  }
  return problems
}

const anthropicContext = {
  clearToolUses: {
    triggerInputTokens: 30000,
    keepToolUses: 3,
    clearAtLeastInputTokens: 5000,
    excludeTools: ["memory"],
    clearToolInputs: true
  },
  memoryTool: true
}

const live = ContextService.layerMemory().pipe(Layer.provideMerge(TokenCounter.layerGpt()))

describe("server-side context management", () => {
  it.scopedLive("Anthropic context editing and the memory tool are in the request, with their beta header", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response) => {
        const problems = contextEditingProblems(request)
        if (problems.length > 0) {
          return json(response, 400, {
            type: "error",
            error: { type: "invalid_request_error", message: problems.join(", ") }
          })
        }
        sse(response, anthropicAnswer)
      })
      const built = AnthropicCtx.make({ model: "claude-sonnet-4-5" }).build(fixtureWindow, {
        tools: [readFileTool],
        serverContext: anthropicContext
      })
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      const client = AnthropicModel.make({
        apiKey: "sk-ant-test",
        model: "claude-sonnet-4-5",
        baseUrl: server.url,
        retry
      })
      const response = yield* client.generateRequest(built.right.request)
      assert.deepStrictEqual(response.parts, [Message.text("ok")])
      assert.strictEqual(server.received[0]?.body, RenderRecord.serialize(built.right.request))
      // Without server context the request has neither field and no beta header.
      const plain = AnthropicCtx.make({ model: "claude-sonnet-4-5" }).build(fixtureWindow, { tools: [readFileTool] })
      if (Either.isLeft(plain)) return yield* Effect.die(plain.left)
      yield* Effect.flip(client.generateRequest(plain.right.request))
      assert.isUndefined(server.received[1]?.headers["anthropic-beta"])
      assert.notInclude(server.received[1]?.body ?? "", "context_management")
    })
  )

  it.scopedLive(
    "Anthropic thinking clearing (clear_thinking_20251015 with keep) goes first in the edits, with its beta header",
    () =>
      Effect.gen(function* () {
        const server = yield* serve((request, response) => {
          const body = parse(request.body)
          const management =
            typeof body === "object" && body !== null ? Reflect.get(body, "context_management") : undefined
          const problems: Array<string> = []
          if (!String(request.headers["anthropic-beta"]).split(",").includes("context-management-2025-06-27")) {
            problems.push("anthropic-beta header")
          }
          const edits = JSON.stringify(management)
          const expected =
            server.received.length === 1
              ? '{"edits":[{"type":"clear_thinking_20251015","keep":{"type":"thinking_turns","value":2}},' +
                '{"type":"clear_tool_uses_20250919","keep":{"type":"tool_uses","value":3}}]}'
              : '{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]}'
          if (edits !== expected) problems.push(`context_management ${edits}`)
          if (problems.length > 0) {
            return json(response, 400, {
              type: "error",
              error: { type: "invalid_request_error", message: problems.join(", ") }
            })
          }
          sse(response, anthropicAnswer)
        })
        const client = AnthropicModel.make({
          apiKey: "sk-ant-test",
          model: "claude-sonnet-4-5",
          baseUrl: server.url,
          retry
        })
        const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5", thinkingBudget: 2048, maxOutputTokens: 8192 })
        for (const serverContext of [
          { clearThinking: { keepThinkingTurns: 2 }, clearToolUses: { keepToolUses: 3 } },
          { clearThinking: { keepThinkingTurns: "all" as const } }
        ]) {
          const built = builder.build(fixtureWindow, { tools: [readFileTool], serverContext })
          if (Either.isLeft(built)) return yield* Effect.die(built.left)
          const response = yield* client.generateRequest(built.right.request)
          assert.deepStrictEqual(response.parts, [Message.text("ok")])
          assert.strictEqual(server.received.at(-1)?.body, RenderRecord.serialize(built.right.request))
        }
        assert.strictEqual(server.received.length, 2)
      })
  )

  it.scopedLive("cleared thinking counts in the cleared input tokens of the usage", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        sse(response, [
          anthropicAnswer[0] ?? { data: "" },
          anthropicAnswer[1] ?? { data: "" },
          {
            event: "message_delta",
            data: JSON.stringify({
              type: "message_delta",
              delta: { stop_reason: "end_turn" },
              usage: { output_tokens: 2 },
              context_management: {
                applied_edits: [
                  { type: "clear_thinking_20251015", cleared_thinking_turns: 2, cleared_input_tokens: 3000 },
                  { type: "clear_tool_uses_20250919", cleared_tool_uses: 1, cleared_input_tokens: 500 }
                ]
              }
            })
          },
          anthropicAnswer[3] ?? { data: "" }
        ])
      )
      const built = AnthropicCtx.make({
        model: "claude-sonnet-4-5",
        thinkingBudget: 2048,
        maxOutputTokens: 8192
      }).build(fixtureWindow, { serverContext: { clearThinking: { keepThinkingTurns: 1 }, clearToolUses: {} } })
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      const client = AnthropicModel.make({
        apiKey: "sk-ant-test",
        model: "claude-sonnet-4-5",
        baseUrl: server.url,
        retry
      })
      const response = yield* client.generateRequest(built.right.request)
      assert.deepStrictEqual(response.contextEdits, { clearedInputTokens: 3500, clearedToolUses: 1, compactions: 0 })
    })
  )

  it.scopedLive("a Responses chain sends only the new items, with previous_response_id, store and compaction", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response) => {
        const body = parse(request.body)
        const field = (name: string): unknown =>
          typeof body === "object" && body !== null ? Reflect.get(body, name) : undefined
        const problems: Array<string> = []
        if (field("previous_response_id") !== "resp_prev") problems.push("previous_response_id")
        if (field("store") !== true) problems.push("store")
        if (JSON.stringify(field("context_management")) !== '[{"type":"compaction","compact_threshold":200000}]') {
          problems.push("context_management")
        }
        if (problems.length > 0) return json(response, 400, { error: { message: problems.join(", ") } })
        sse(response, [
          { data: JSON.stringify({ type: "response.created", response: { id: "resp_next", model: "gpt-5" } }) },
          { data: JSON.stringify({ type: "response.output_text.delta", output_index: 0, delta: "Done." }) },
          {
            data: JSON.stringify({
              type: "response.completed",
              response: {
                id: "resp_next",
                model: "gpt-5",
                status: "completed",
                usage: { input_tokens: 12, output_tokens: 2 }
              }
            })
          }
        ])
      })
      const serverContext = { previousResponseId: "resp_prev", store: true, compactThreshold: 200000 }
      const builder = OpenAICtx.makeResponses({ model: "gpt-5" })
      const built = builder.build(fixtureWindow, { serverContext, turnReminder: "Be brief." })
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      // The fixture's history ends with an assistant message and then "Go ahead.": only that is new.
      assert.deepStrictEqual(built.right.request.input, [
        { type: "message", role: "user", content: "Be brief.\n\nGo ahead." }
      ])
      const full = builder.build(fixtureWindow, { turnReminder: "Be brief." })
      if (Either.isLeft(full)) return yield* Effect.die(full.left)
      assert.isAbove(full.right.request.input.length, 5)
      assert.isUndefined(full.right.request.previous_response_id)
      const client = OpenAIResponsesModel.make({
        baseUrl: `${server.url}/v1`,
        apiKey: "sk-test",
        model: "gpt-5",
        retry
      })
      const sent = yield* client.send(built.right.request)
      assert.strictEqual(sent.responseId, "resp_next")
      assert.strictEqual(server.received[0]?.body, RenderRecord.serialize(built.right.request))
    })
  )

  it.effect("PromptRendered records the server context, and the render rebuilds from the log", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const log = yield* EventLog.EventLog
      yield* ctx.setSystemPrompt("server-context", "You are helpful.")
      yield* ctx.appendMessages("server-context", [Message.user("hi")])
      const configs: ReadonlyArray<[CtxBuilder.ProviderConfig, typeof anthropicContext | object]> = [
        [{ provider: "anthropic", model: "claude-sonnet-4-5" }, anthropicContext],
        [{ provider: "anthropic", model: "claude-sonnet-4-5" }, { clearThinking: { keepThinkingTurns: 1 } }],
        [
          { provider: "openai", api: "responses", model: "gpt-5" },
          { previousResponseId: "resp_1", store: false, compactThreshold: 100000 }
        ]
      ]
      for (const [config, serverContext] of configs) {
        const window = yield* ctx.load("server-context")
        const options = { serverContext }
        const built = CtxBuilder.forProvider(config).build(window, options)
        if (Either.isLeft(built)) return yield* Effect.die(built.left)
        yield* RenderRecord.recordRender(
          "server-context",
          built.right,
          { provider: config.provider, model: config.model },
          { config, options }
        )
      }
      const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("server-context")))
      const renders = envelopes.filter((envelope) => envelope.event._tag === "PromptRendered")
      assert.strictEqual(renders.length, configs.length)
      for (const [index, render] of renders.entries()) {
        if (render.event._tag !== "PromptRendered") continue
        assert.deepStrictEqual(render.event.serverContext, configs[index]?.[1])
        const before = Window.replay(
          envelopes.filter((envelope) => envelope.version < render.version).map((envelope) => envelope.event)
        )
        const rebuilt = RenderRecord.rebuild(before, render.event, render.version, new Map())
        assert.isTrue(Either.isRight(rebuilt), Either.isLeft(rebuilt) ? rebuilt.left.message : "")
        // Dropping the recorded server context rebuilds other bytes: the record is what explains the prompt.
        const { serverContext: _dropped, ...without } = render.event
        assert.isTrue(Either.isLeft(RenderRecord.rebuild(before, without, render.version, new Map())))
      }
    }).pipe(Effect.provide(live))
  )

  it.scopedLive("the usage of a call the provider edited is recorded with what it cleared", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        sse(response, [
          anthropicAnswer[0] ?? { data: "" },
          anthropicAnswer[1] ?? { data: "" },
          {
            event: "message_delta",
            data: JSON.stringify({
              type: "message_delta",
              delta: { stop_reason: "end_turn" },
              usage: { output_tokens: 2 },
              context_management: {
                applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 5, cleared_input_tokens: 12000 }]
              }
            })
          },
          anthropicAnswer[3] ?? { data: "" }
        ])
      )
      const built = AnthropicCtx.make({ model: "claude-sonnet-4-5" }).build(fixtureWindow, {
        serverContext: anthropicContext
      })
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      const client = AnthropicModel.make({
        apiKey: "sk-ant-test",
        model: "claude-sonnet-4-5",
        baseUrl: server.url,
        retry
      })
      const response = yield* client.generateRequest(built.right.request)
      assert.deepStrictEqual(response.contextEdits, { clearedInputTokens: 12000, clearedToolUses: 5, compactions: 0 })
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("edited", [Message.user("hi")])
      const outcome = yield* RenderRecord.recordUsage("edited", response.usage, 11000, response)
      const event = outcome.events[0]
      assert.deepStrictEqual(event?._tag === "UsageReported" ? event.contextEdits : undefined, response.contextEdits)
      // Calibration compares the estimate with the prompt as sent: 90 reported + 12,000 cleared.
      assert.strictEqual(Window.calibrationRatio(outcome.window), (90 + 12000) / 11000)

      const compacting = yield* serve((_request, response) =>
        sse(response, [
          {
            data: JSON.stringify({
              type: "response.output_item.done",
              output_index: 0,
              item: { type: "compaction", id: "cmp_1", encrypted_content: "opaque" }
            })
          },
          { data: JSON.stringify({ type: "response.output_text.delta", output_index: 1, delta: "Go on." }) },
          {
            data: JSON.stringify({
              type: "response.completed",
              response: {
                id: "resp_2",
                model: "gpt-5",
                status: "completed",
                usage: { input_tokens: 900, output_tokens: 3 }
              }
            })
          }
        ])
      )
      const responses = OpenAIResponsesModel.make({ baseUrl: `${compacting.url}/v1`, model: "gpt-5", retry })
      const compacted = yield* responses.generateRequest({ model: "gpt-5", input: [], stream: true })
      assert.deepStrictEqual(compacted.contextEdits, { clearedInputTokens: 0, clearedToolUses: 0, compactions: 1 })
      assert.deepStrictEqual(compacted.parts, [Message.text("Go on.")])
    }).pipe(Effect.provide(live))
  )
})
