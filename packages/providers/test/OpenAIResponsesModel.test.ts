import { LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { OpenAICtx, OpenAIResponsesModel, RenderRecord } from "../src/index.js"
import { assertStreamedReadFile, expectedParts, fixtureWindow, readFileTool } from "./fixture.js"
import { json, parse, type Received, serve, sse } from "./server.js"

const retry = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1_000, jitter: false }

/** What the Responses API documents about a request. */
const shapeProblems = (request: Received, key: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (request.method !== "POST") problems.push(`method ${request.method}`)
  if (request.url !== "/v1/responses") problems.push(`path ${request.url}`)
  if (request.headers.authorization !== `Bearer ${key}`) problems.push("authorization header")
  if (!String(request.headers["content-type"]).includes("application/json")) problems.push("content-type")
  const body = parse(request.body)
  if (typeof body !== "object" || body === null) return [...problems, "body is not a JSON object"]
  const field = (name: string): unknown => (name in body ? Reflect.get(body, name) : undefined)
  if (typeof field("model") !== "string") problems.push("model")
  if ("messages" in body) problems.push("messages is a Chat Completions field")
  const input = field("input")
  if (!Array.isArray(input) || input.length === 0) problems.push("input")
  else {
    for (const item of input) {
      const type = item?.type
      if (type === "message") {
        if (!["system", "developer", "user", "assistant"].includes(item?.role)) problems.push("role")
      } else if (type === "function_call") {
        if (typeof item?.call_id !== "string" || typeof item?.arguments !== "string") problems.push("function_call")
      } else if (type === "function_call_output") {
        if (typeof item?.call_id !== "string" || typeof item?.output !== "string") problems.push("output")
      } else problems.push(`item type ${String(type)}`)
    }
  }
  const tools = field("tools")
  if (Array.isArray(tools)) {
    for (const tool of tools) {
      // Responses tools are flat: `{ type, name, parameters }`, not `{ type, function: {...} }`.
      if (tool?.type !== "function" || typeof tool?.name !== "string" || "function" in tool) problems.push("tool")
    }
  }
  if (field("stream") !== true) problems.push("stream")
  return problems
}

const event = (type: string, rest: object) => ({ event: type, data: JSON.stringify({ type, ...rest }) })

const created = { id: "resp_1", object: "response", model: "gpt-4.1-2025-04-14", status: "in_progress", output: [] }

const callItem = { type: "function_call", id: "fc_1", call_id: "call_1", name: "read_file", arguments: "" }

const streamed = [
  event("response.created", { sequence_number: 0, response: created }),
  event("response.in_progress", { sequence_number: 1, response: created }),
  event("response.output_item.added", {
    output_index: 0,
    item: { type: "message", id: "msg_1", role: "assistant", status: "in_progress", content: [] }
  }),
  event("response.content_part.added", {
    item_id: "msg_1",
    output_index: 0,
    content_index: 0,
    part: { type: "output_text", text: "" }
  }),
  event("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Read" }),
  event("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "ing." }),
  event("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text: "Reading." }),
  event("response.output_item.done", {
    output_index: 0,
    item: { type: "message", id: "msg_1", content: [{ type: "output_text", text: "Reading." }] }
  }),
  event("response.output_item.added", { output_index: 1, item: callItem }),
  event("response.function_call_arguments.delta", { item_id: "fc_1", output_index: 1, delta: '{"path":' }),
  event("response.function_call_arguments.delta", { item_id: "fc_1", output_index: 1, delta: '"src/date.ts"}' }),
  event("response.function_call_arguments.done", {
    item_id: "fc_1",
    output_index: 1,
    arguments: '{"path":"src/date.ts"}'
  }),
  event("response.output_item.done", {
    output_index: 1,
    item: { ...callItem, arguments: '{"path":"src/date.ts"}', status: "completed" }
  }),
  event("response.completed", {
    response: {
      ...created,
      status: "completed",
      usage: {
        input_tokens: 1800,
        input_tokens_details: { cached_tokens: 1536 },
        output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 1820
      }
    }
  })
]

const answer = (request: Received, response: Parameters<Parameters<typeof serve>[0]>[1]) => {
  const problems = shapeProblems(request, "sk-test")
  if (problems.length > 0) {
    json(response, 400, {
      error: { message: `bad request shape: ${problems.join(", ")}`, type: "invalid_request_error" }
    })
  } else sse(response, streamed)
}

const client = (url: string, extra: Partial<OpenAIResponsesModel.ClientConfig> = {}) =>
  OpenAIResponsesModel.make({ baseUrl: `${url}/v1`, apiKey: "sk-test", model: "gpt-4.1", retry, ...extra })

const neutral: LanguageModel.ModelRequest = {
  system: "You are terse.",
  messages: [{ role: "user", parts: [Message.text("Read src/date.ts")] }],
  tools: [readFileTool]
}

describe("OpenAIResponsesModel against a local Responses API", () => {
  it.scopedLive("streams a built Responses request byte for byte: text, call arguments in pieces, usage", () =>
    Effect.gen(function* () {
      const server = yield* serve(answer)
      const result = OpenAICtx.makeResponses({ model: "gpt-4.1" }).build(fixtureWindow, { tools: [readFileTool] })
      if (Either.isLeft(result)) return yield* Effect.die(result.left)
      const request = result.right.request
      const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(client(server.url).streamRequest(request)))
      const response = assertStreamedReadFile(chunks)
      assert.strictEqual(response.model, "gpt-4.1-2025-04-14")
      assert.strictEqual(server.received[0]?.body, RenderRecord.serialize(request))
    })
  )

  it.scopedLive("send returns the response id for a previous_response_id chain", () =>
    Effect.gen(function* () {
      const server = yield* serve(answer)
      const request = client(server.url).toRequest(neutral)
      if (Either.isLeft(request)) return yield* Effect.die(request.left)
      const sent = yield* client(server.url).send(request.right)
      assert.strictEqual(sent.responseId, "resp_1")
      assert.deepStrictEqual(sent.response.parts, expectedParts)
    })
  )

  it.scopedLive("serves the port through the layer, developer role and no temperature for reasoning models", () =>
    Effect.gen(function* () {
      const server = yield* serve(answer)
      const model = yield* Effect.provide(
        LanguageModel.LanguageModel,
        OpenAIResponsesModel.layer({ baseUrl: `${server.url}/v1`, apiKey: "sk-test", model: "o4-mini", retry })
      )
      const response = yield* model.generate({ ...neutral, temperature: 0.2, maxOutputTokens: 100 })
      assert.deepStrictEqual(response.parts, expectedParts)
      const body = parse(server.received[0]?.body ?? "")
      const input = Reflect.get(body ?? {}, "input")
      assert.strictEqual(Array.isArray(input) ? input[0]?.role : undefined, "developer")
      assert.strictEqual(Reflect.get(body ?? {}, "max_output_tokens"), 100)
      assert.isUndefined(Reflect.get(body ?? {}, "temperature"))
    })
  )

  it.scopedLive("reads a non-streamed JSON response; incomplete at max_output_tokens is max_tokens", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        json(response, 200, {
          id: "resp_2",
          object: "response",
          model: "gpt-4.1",
          status: "incomplete",
          incomplete_details: { reason: "max_output_tokens" },
          output: [{ type: "message", id: "m", role: "assistant", content: [{ type: "output_text", text: "Par" }] }],
          usage: { input_tokens: 50, output_tokens: 5, total_tokens: 55 }
        })
      )
      const sent = yield* client(server.url).send({ model: "gpt-4.1", input: [], stream: true })
      assert.deepStrictEqual(sent.response.parts, [Message.text("Par")])
      assert.strictEqual(sent.response.stopReason, "max_tokens")
      assert.strictEqual(sent.response.usage.inputTokens, 50)
      assert.strictEqual(sent.responseId, "resp_2")
    })
  )

  it.scopedLive("retries a 429 after retry-after-ms and a 500, then succeeds", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response, n) =>
        n === 1
          ? json(response, 429, { error: { message: "Rate limit reached" } }, { "retry-after-ms": "5" })
          : n === 2
            ? json(response, 500, { error: { message: "server had an error" } })
            : answer(request, response)
      )
      const response = yield* client(server.url).generate(neutral)
      assert.deepStrictEqual(response.parts, expectedParts)
      assert.strictEqual(server.received.length, 3)
    })
  )

  it.scopedLive("response.failed and error events are typed ProviderErrors", () =>
    Effect.gen(function* () {
      const failed = yield* serve((_request, response) =>
        sse(response, [
          event("response.created", { response: created }),
          event("response.failed", {
            response: { ...created, status: "failed", error: { code: "rate_limit_exceeded", message: "slow down" } }
          })
        ])
      )
      const limited = yield* Effect.flip(client(failed.url, { retry: { maxRetries: 0 } }).generate(neutral))
      assert.strictEqual(limited.reason, "rate_limited")
      assert.strictEqual(limited.detail, "slow down; gave up after 1 attempt (retry.maxRetries 0)")
      assert.strictEqual(limited.attempts, 1)
      const erroring = yield* serve((_request, response) =>
        sse(response, [event("error", { code: "server_error", message: "boom", param: null })])
      )
      const server = yield* Effect.flip(client(erroring.url).generate(neutral))
      assert.strictEqual(server.reason, "server")
      // A server error mid-stream is transient: generate retried the whole call, then gave up.
      assert.strictEqual(server.detail, "boom; gave up after 3 attempts (retry.maxRetries 2)")
      assert.strictEqual(erroring.received.length, 3)
    })
  )

  it.scopedLive("a stream closed cleanly before response.completed is retried like a reset", () =>
    Effect.gen(function* () {
      // The first answer closes cleanly mid-stream; the second is whole.
      const once = yield* serve((_request, response, n) => sse(response, n === 1 ? streamed.slice(0, 6) : streamed))
      const response = yield* client(once.url).generate(neutral)
      assert.strictEqual(once.received.length, 2)
      assert.strictEqual(response.stopReason, "tool_use")
      const always = yield* serve((_request, response) => sse(response, streamed.slice(0, 6)))
      const error = yield* Effect.flip(client(always.url).generate(neutral))
      assert.strictEqual(error.reason, "network")
      assert.include(error.detail, "the stream closed before its final event (response.completed)")
      assert.include(error.detail, "gave up after 3 attempts")
      assert.strictEqual(always.received.length, 3)
    })
  )

  it.scopedLive("arguments only in output_item.done are used; arguments that are not JSON are malformed", () =>
    Effect.gen(function* () {
      const whole = yield* serve((_request, response) =>
        sse(response, [
          event("response.output_item.added", { output_index: 0, item: callItem }),
          event("response.output_item.done", { output_index: 0, item: { ...callItem, arguments: '{"path":"a"}' } }),
          event("response.completed", { response: { ...created, status: "completed" } })
        ])
      )
      const response = yield* client(whole.url).generate(neutral)
      assert.deepStrictEqual(response.parts, [Message.toolCall("call_1", "read_file", { path: "a" })])
      const broken = yield* serve((_request, response) =>
        sse(response, [
          event("response.output_item.added", { output_index: 0, item: callItem }),
          event("response.function_call_arguments.delta", { output_index: 0, delta: "{oops" }),
          event("response.completed", { response: { ...created, status: "completed" } })
        ])
      )
      const error = yield* Effect.flip(client(broken.url).generate(neutral))
      assert.strictEqual(error.reason, "malformed_response")
    })
  )

  it.scopedLive("a stream that goes silent ends in a timeout; a stream past the size cap is cut", () =>
    Effect.gen(function* () {
      const silent = yield* serve((_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        const first = streamed[0]
        response.write(`event: ${first?.event}\ndata: ${first?.data}\n\n`)
      })
      const timeout = yield* Effect.flip(client(silent.url, { idleTimeoutMs: 150 }).generate(neutral))
      assert.strictEqual(timeout.reason, "timeout")
      const big = yield* serve(answer)
      const capped = yield* Effect.flip(client(big.url, { maxResponseBytes: 512 }).generate(neutral))
      assert.strictEqual(capped.reason, "malformed_response")
      assert.include(capped.detail, "maxResponseBytes")
    })
  )

  it.scopedLive("401 is auth and not retried", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        json(response, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } })
      )
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "auth")
      assert.strictEqual(server.received.length, 1)
    })
  )
})
