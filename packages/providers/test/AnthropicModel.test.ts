import { LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { AnthropicCtx, AnthropicModel, RenderRecord, RetryPolicy } from "../src/index.js"
import { fixtureWindow, readFileTool } from "./fixture.js"
import { json, parse, type Received, serve, sse } from "./server.js"

const retry = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1_000, jitter: false }

/** What the Messages API documents about a request; an empty list means it is well-formed. */
const shapeProblems = (request: Received): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (request.method !== "POST") problems.push(`method ${request.method}`)
  if (request.url !== "/v1/messages") problems.push(`path ${request.url}`)
  if (request.headers["x-api-key"] !== "test-key") problems.push("x-api-key header")
  if (request.headers["anthropic-version"] !== "2023-06-01") problems.push("anthropic-version header")
  if (!String(request.headers["content-type"]).includes("application/json")) problems.push("content-type")
  const body = parse(request.body)
  if (typeof body !== "object" || body === null) return [...problems, "body is not a JSON object"]
  const field = (name: string): unknown => (name in body ? Reflect.get(body, name) : undefined)
  if (typeof field("model") !== "string") problems.push("model")
  const maxTokens = field("max_tokens")
  if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1) problems.push("max_tokens")
  const messages = field("messages")
  if (!Array.isArray(messages) || messages.length === 0) problems.push("messages")
  else {
    for (const message of messages) {
      if (message?.role !== "user" && message?.role !== "assistant") problems.push("message role")
      if (typeof message?.content !== "string" && !Array.isArray(message?.content)) problems.push("message content")
    }
  }
  const system = field("system")
  if (system !== undefined && typeof system !== "string" && !Array.isArray(system)) problems.push("system")
  if (field("stream") !== true) problems.push("stream")
  return problems
}

const invalid = (problems: ReadonlyArray<string>) => ({
  type: "error",
  error: { type: "invalid_request_error", message: `bad request shape: ${problems.join(", ")}` }
})

/** A recorded-shape streamed reply: text, then a tool_use whose input arrives in two pieces. */
const streamed = [
  {
    event: "message_start",
    data: JSON.stringify({
      type: "message_start",
      message: {
        id: "msg_01",
        type: "message",
        role: "assistant",
        content: [],
        model: "claude-sonnet-4-5-20250929",
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 25, cache_creation_input_tokens: 1200, cache_read_input_tokens: 300, output_tokens: 1 }
      }
    })
  },
  {
    event: "content_block_start",
    data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'
  },
  { event: "ping", data: '{"type": "ping"}' },
  {
    event: "content_block_delta",
    data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading "}}'
  },
  {
    event: "content_block_delta",
    data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"it."}}'
  },
  { event: "content_block_stop", data: '{"type":"content_block_stop","index":0}' },
  {
    event: "content_block_start",
    data: '{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"read_file","input":{}}}'
  },
  {
    event: "content_block_delta",
    data: '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": \\"src/"}}'
  },
  {
    event: "content_block_delta",
    data: '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"date.ts\\"}"}}'
  },
  { event: "content_block_stop", data: '{"type":"content_block_stop","index":1}' },
  {
    event: "message_delta",
    data: '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}'
  },
  { event: "message_stop", data: '{"type":"message_stop"}' }
]

const answer = (request: Received, response: Parameters<Parameters<typeof serve>[0]>[1]) => {
  const problems = shapeProblems(request)
  if (problems.length > 0) json(response, 400, invalid(problems))
  else sse(response, streamed)
}

const built = () => {
  const result = AnthropicCtx.make({ model: "claude-sonnet-4-5" }).build(fixtureWindow, { tools: [readFileTool] })
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

const client = (url: string, extra: Partial<AnthropicModel.ClientConfig> = {}) =>
  AnthropicModel.make({ apiKey: "test-key", model: "claude-sonnet-4-5", baseUrl: url, retry, ...extra })

const neutral: LanguageModel.ModelRequest = {
  system: "You are terse.",
  messages: [{ role: "user", parts: [Message.text("Read src/date.ts")] }],
  tools: [readFileTool]
}

describe("AnthropicModel against a local Messages API", () => {
  it.scopedLive("streams a built request byte for byte and normalizes usage", () =>
    Effect.gen(function* () {
      const server = yield* serve(answer)
      const { request } = built()
      const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(client(server.url).streamRequest(request)))
      assert.deepStrictEqual(
        chunks.filter((chunk) => chunk._tag === "TextDelta").map((chunk) => chunk.text),
        ["Reading ", "it."]
      )
      assert.deepStrictEqual(
        chunks.flatMap((chunk) => (chunk._tag === "ToolCallDelta" ? [chunk.inputJson] : [])),
        ["", '{"path": "src/', 'date.ts"}']
      )
      const done = chunks[chunks.length - 1]
      assert.strictEqual(done?._tag, "Done")
      if (done?._tag !== "Done") return
      assert.deepStrictEqual(done.response.parts, [
        Message.text("Reading it."),
        Message.toolCall("toolu_01", "read_file", { path: "src/date.ts" })
      ])
      assert.strictEqual(done.response.stopReason, "tool_use")
      assert.strictEqual(done.response.model, "claude-sonnet-4-5-20250929")
      assert.deepStrictEqual(done.response.usage, {
        inputTokens: 1525,
        outputTokens: 42,
        cacheReadTokens: 300,
        cacheWriteTokens: 1200
      })
      assert.strictEqual(server.received.length, 1)
      // The bytes on the wire are the bytes PromptRendered hashes.
      assert.strictEqual(server.received[0]?.body, RenderRecord.serialize(request))
      assert.strictEqual(
        RenderRecord.requestSha256(request),
        (yield* Effect.promise(() => import("node:crypto")))
          .createHash("sha256")
          .update(server.received[0]?.body ?? "")
          .digest("hex")
      )
    })
  )

  it.scopedLive("serves the LanguageModel port through the layer", () =>
    Effect.gen(function* () {
      const server = yield* serve(answer)
      const model = yield* Effect.provide(
        LanguageModel.LanguageModel,
        AnthropicModel.layer({ apiKey: "test-key", model: "claude-sonnet-4-5", baseUrl: server.url, retry })
      )
      const response = yield* model.generate(neutral)
      assert.strictEqual(response.provider, "anthropic")
      assert.strictEqual(response.parts.length, 2)
      const body = parse(server.received[0]?.body ?? "")
      assert.deepStrictEqual(Reflect.get(body ?? {}, "system"), [{ type: "text", text: "You are terse." }])
    })
  )

  it.scopedLive("retries a 429 after its Retry-After and succeeds", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response, n) =>
        n === 1
          ? json(
              response,
              429,
              { type: "error", error: { type: "rate_limit_error", message: "slow down" } },
              { "retry-after": "0" }
            )
          : answer(request, response)
      )
      const response = yield* client(server.url).generate(neutral)
      assert.strictEqual(response.stopReason, "tool_use")
      assert.strictEqual(server.received.length, 2)
    })
  )

  it.scopedLive("does not wait for a Retry-After longer than the policy allows: rate_limited at once", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        json(
          response,
          429,
          { type: "error", error: { type: "rate_limit_error", message: "later" } },
          { "retry-after": "120" }
        )
      )
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "rate_limited")
      assert.strictEqual(error.retryAfterMs, 120_000)
      assert.strictEqual(error.status, 429)
      assert.strictEqual(server.received.length, 1)
    })
  )

  it.scopedLive("retries a 500 and succeeds", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response, n) =>
        n === 1
          ? json(response, 500, { type: "error", error: { type: "api_error", message: "boom" } })
          : answer(request, response)
      )
      const response = yield* client(server.url).generate(neutral)
      assert.strictEqual(response.parts.length, 2)
      assert.strictEqual(server.received.length, 2)
    })
  )

  it.scopedLive("gives up on a persistent 529 as overloaded after the configured retries", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        json(response, 529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
      )
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "overloaded")
      // The last failure says the policy gave up, and is final: no caller retries it again.
      assert.strictEqual(error.detail, "Overloaded; gave up after 3 attempts (retry.maxRetries 2)")
      assert.strictEqual(error.attempts, 3)
      assert.isFalse(RetryPolicy.isRetryable(error))
      assert.strictEqual(server.received.length, 3)
    })
  )

  it.scopedLive("a server that never answers ends in a timeout error", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => {})
      const error = yield* Effect.flip(
        client(server.url, { timeoutMs: 150, retry: { ...retry, maxRetries: 1 } }).generate(neutral)
      )
      assert.strictEqual(error.reason, "timeout")
      assert.strictEqual(server.received.length, 2)
    })
  )

  it.scopedLive("malformed JSON is a malformed_response, not retried", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) => json(response, 200, '{"content": [ {"type": "te'))
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "malformed_response")
      assert.strictEqual(server.received.length, 1)
    })
  )

  it.scopedLive("malformed SSE data is a malformed_response", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        sse(response, [streamed[0] ?? { data: "" }, { event: "content_block_delta", data: "{not json" }])
      )
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "malformed_response")
    })
  )

  it.scopedLive("a stream closed cleanly before message_stop is a network failure, retried like a reset", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) => sse(response, streamed.slice(0, 5)))
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "network")
      assert.include(error.detail, "the stream closed before its final event (message_stop)")
      assert.strictEqual(server.received.length, 3)
    })
  )

  it.scopedLive("an error event mid-stream keeps its reason", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        sse(response, [
          streamed[0] ?? { data: "" },
          { event: "error", data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }
        ])
      )
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "overloaded")
    })
  )

  it.scopedLive("401 is auth and is not retried", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        json(response, 401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } })
      )
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "auth")
      assert.strictEqual(error.detail, "invalid x-api-key")
      assert.strictEqual(server.received.length, 1)
    })
  )

  it.scopedLive("a non-streamed JSON message is read too", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        json(response, 200, {
          id: "msg_02",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [{ type: "text", text: "Hi." }],
          stop_reason: "end_turn",
          usage: { input_tokens: 10, output_tokens: 3, cache_read_input_tokens: 5, cache_creation_input_tokens: 0 }
        })
      )
      const response = yield* client(server.url).generate(neutral)
      assert.deepStrictEqual(response.parts, [Message.text("Hi.")])
      assert.strictEqual(response.usage.inputTokens, 15)
    })
  )

  it.effect("an invalid neutral request fails as bad_request before any network call", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        client("http://127.0.0.1:9").generate({
          messages: [{ role: "tool", parts: [Message.toolResult("nope", "orphan")] }]
        })
      )
      assert.strictEqual(error.reason, "bad_request")
      assert.include(error.detail, "nope")
    })
  )
})
