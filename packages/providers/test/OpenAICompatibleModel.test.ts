import { LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { OllamaCtx, OpenAICompatibleModel, OpenAICtx, RenderRecord } from "../src/index.js"
import { assertStreamedReadFile, expectedParts, fixtureWindow, readFileTool } from "./fixture.js"
import { json, parse, type Received, serve, sse } from "./server.js"

const retry = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1_000, jitter: false }

/** What Chat Completions documents about a request; `key` is the expected bearer token, if any. */
const shapeProblems = (request: Received, key: string | undefined): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (request.method !== "POST") problems.push(`method ${request.method}`)
  if (request.url !== "/v1/chat/completions") problems.push(`path ${request.url}`)
  const auth = request.headers.authorization
  if (key === undefined ? auth !== undefined : auth !== `Bearer ${key}`) problems.push("authorization header")
  if (!String(request.headers["content-type"]).includes("application/json")) problems.push("content-type")
  const body = parse(request.body)
  if (typeof body !== "object" || body === null) return [...problems, "body is not a JSON object"]
  const field = (name: string): unknown => (name in body ? Reflect.get(body, name) : undefined)
  if (typeof field("model") !== "string") problems.push("model")
  const messages = field("messages")
  if (!Array.isArray(messages) || messages.length === 0) problems.push("messages")
  else {
    for (const message of messages) {
      if (!["system", "developer", "user", "assistant", "tool"].includes(message?.role)) problems.push("role")
      if (message?.role === "tool" && typeof message?.tool_call_id !== "string") problems.push("tool_call_id")
    }
  }
  if (field("stream") !== true) problems.push("stream")
  const options = field("stream_options")
  if (typeof options !== "object" || options === null || Reflect.get(options, "include_usage") !== true) {
    problems.push("stream_options.include_usage")
  }
  return problems
}

const chunk = (delta: unknown, finish: string | null = null) =>
  JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "gpt-4o-2024-08-06",
    choices: [{ index: 0, delta, finish_reason: finish }]
  })

const streamed = [
  { data: chunk({ role: "assistant", content: "" }) },
  { data: chunk({ content: "Read" }) },
  { data: chunk({ content: "ing." }) },
  {
    data: chunk({
      tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read_file", arguments: "" } }]
    })
  },
  { data: chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }) },
  { data: chunk({ tool_calls: [{ index: 0, function: { arguments: '"src/date.ts"}' } }] }) },
  { data: chunk({}, "tool_calls") },
  {
    data: JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "gpt-4o-2024-08-06",
      choices: [],
      usage: {
        prompt_tokens: 1800,
        completion_tokens: 20,
        total_tokens: 1820,
        prompt_tokens_details: { cached_tokens: 1536 }
      }
    })
  },
  { data: "[DONE]" }
]

const answerFor =
  (key: string | undefined) => (request: Received, response: Parameters<Parameters<typeof serve>[0]>[1]) => {
    const problems = shapeProblems(request, key)
    if (problems.length > 0) {
      json(response, 400, {
        error: { message: `bad request shape: ${problems.join(", ")}`, type: "invalid_request_error" }
      })
    } else sse(response, streamed)
  }

const client = (url: string, extra: Partial<OpenAICompatibleModel.ClientConfig> = {}) =>
  OpenAICompatibleModel.make({
    baseUrl: `${url}/v1`,
    apiKey: "sk-test",
    model: "gpt-4o",
    provider: "openai",
    retry,
    ...extra
  })

const neutral: LanguageModel.ModelRequest = {
  system: "You are terse.",
  messages: [{ role: "user", parts: [Message.text("Read src/date.ts")] }],
  tools: [readFileTool]
}

describe("OpenAICompatibleModel against a local Chat Completions API", () => {
  it.scopedLive("streams a built OpenAI request byte for byte, with usage including cached tokens", () =>
    Effect.gen(function* () {
      const server = yield* serve(answerFor("sk-test"))
      const result = OpenAICtx.make({ model: "gpt-4o" }).build(fixtureWindow, { tools: [readFileTool] })
      if (Either.isLeft(result)) return yield* Effect.die(result.left)
      const request = result.right.request
      const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(client(server.url).streamRequest(request)))
      assertStreamedReadFile(chunks)
      assert.strictEqual(server.received[0]?.body, RenderRecord.serialize(request))
    })
  )

  it.scopedLive("sends an Ollama request without a key and reads a non-streamed JSON completion", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response) => {
        const problems = shapeProblems(request, undefined)
        if (problems.length > 0) return json(response, 400, { error: { message: problems.join(", ") } })
        json(response, 200, {
          id: "chatcmpl-2",
          object: "chat.completion",
          model: "llama3.2",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: null,
                tool_calls: [
                  { id: "call_9", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } }
                ]
              },
              finish_reason: "tool_calls"
            }
          ],
          usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 }
        })
      })
      const result = OllamaCtx.make({ model: "llama3.2" }).build(fixtureWindow, { tools: [readFileTool] })
      if (Either.isLeft(result)) return yield* Effect.die(result.left)
      const ollama = OpenAICompatibleModel.make({
        baseUrl: `${server.url}/v1/`,
        model: "llama3.2",
        provider: "ollama",
        retry
      })
      const response = yield* ollama.generateRequest(result.right.request)
      assert.deepStrictEqual(response.parts, [Message.toolCall("call_9", "read_file", { path: "a" })])
      assert.strictEqual(response.provider, "ollama")
      assert.strictEqual(response.usage.inputTokens, 50)
    })
  )

  it.scopedLive("serves the port through the layer, with developer role for reasoning models", () =>
    Effect.gen(function* () {
      const server = yield* serve(answerFor("sk-test"))
      const model = yield* Effect.provide(
        LanguageModel.LanguageModel,
        OpenAICompatibleModel.layer({ baseUrl: `${server.url}/v1`, apiKey: "sk-test", model: "o3-mini", retry })
      )
      const response = yield* model.generate({ ...neutral, temperature: 0.2, maxOutputTokens: 100 })
      assert.deepStrictEqual(response.parts, expectedParts)
      const body = parse(server.received[0]?.body ?? "")
      const messages = Reflect.get(body ?? {}, "messages")
      assert.strictEqual(Array.isArray(messages) ? messages[0]?.role : undefined, "developer")
      assert.strictEqual(Reflect.get(body ?? {}, "max_completion_tokens"), 100)
      assert.isUndefined(Reflect.get(body ?? {}, "temperature"))
    })
  )

  it.scopedLive("retries a 429 after retry-after-ms and succeeds", () =>
    Effect.gen(function* () {
      const answer = answerFor("sk-test")
      const server = yield* serve((request, response, n) =>
        n === 1
          ? json(
              response,
              429,
              { error: { message: "Rate limit reached", type: "requests" } },
              { "retry-after-ms": "5" }
            )
          : answer(request, response)
      )
      const response = yield* client(server.url).generate(neutral)
      assert.deepStrictEqual(response.parts, expectedParts)
      assert.strictEqual(server.received.length, 2)
    })
  )

  it.scopedLive("retries a 500 and succeeds", () =>
    Effect.gen(function* () {
      const answer = answerFor("sk-test")
      const server = yield* serve((request, response, n) =>
        n === 1 ? json(response, 500, { error: { message: "server had an error" } }) : answer(request, response)
      )
      const response = yield* client(server.url).generate(neutral)
      assert.deepStrictEqual(response.parts, expectedParts)
      assert.strictEqual(server.received.length, 2)
    })
  )

  it.scopedLive("a server that never answers ends in a timeout error", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => {})
      const error = yield* Effect.flip(
        client(server.url, { timeoutMs: 150, retry: { ...retry, maxRetries: 0 } }).generate(neutral)
      )
      assert.strictEqual(error.reason, "timeout")
      assert.strictEqual(server.received.length, 1)
    })
  )

  it.scopedLive("a stream that goes silent ends in a timeout error", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) => {
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.write(`data: ${chunk({ content: "Hel" })}\n\n`)
      })
      const error = yield* Effect.flip(client(server.url, { idleTimeoutMs: 150 }).generate(neutral))
      assert.strictEqual(error.reason, "timeout")
    })
  )

  it.scopedLive("malformed JSON is a malformed_response", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) => json(response, 200, '{"choices": [ '))
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "malformed_response")
      assert.strictEqual(server.received.length, 1)
    })
  )

  it.scopedLive("tool arguments that are not JSON are a malformed_response", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        sse(response, [
          {
            data: chunk({
              tool_calls: [{ index: 0, id: "c", type: "function", function: { name: "f", arguments: "{oops" } }]
            })
          },
          { data: chunk({}, "tool_calls") },
          { data: "[DONE]" }
        ])
      )
      const error = yield* Effect.flip(client(server.url).generate(neutral))
      assert.strictEqual(error.reason, "malformed_response")
    })
  )

  it.scopedLive("401 is auth and 400 is bad_request; neither is retried", () =>
    Effect.gen(function* () {
      const unauthorized = yield* serve((_request, response) =>
        json(response, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } })
      )
      const auth = yield* Effect.flip(client(unauthorized.url).generate(neutral))
      assert.strictEqual(auth.reason, "auth")
      assert.strictEqual(auth.detail, "Incorrect API key provided")
      assert.strictEqual(unauthorized.received.length, 1)
      const rejecting = yield* serve((_request, response) => json(response, 400, { error: { message: "bad tool" } }))
      const bad = yield* Effect.flip(client(rejecting.url).generate(neutral))
      assert.strictEqual(bad.reason, "bad_request")
      assert.strictEqual(rejecting.received.length, 1)
    })
  )

  it.live("a refused connection is a network error after the retries", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(client("http://127.0.0.1:9").generate(neutral))
      assert.strictEqual(error.reason, "network")
    })
  )
})
