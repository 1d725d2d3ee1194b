/**
 * The retry policy and the output limit against local Anthropic, OpenAI Chat Completions and OpenAI
 * Responses servers (issue 21, item 6): a 429 with a short `retry-after` is waited for and retried; one
 * with a long `retry-after` fails at once, saying how long the API asked to wait, and is final; a stream
 * that closes cleanly before its final event is retried like a reset (by `generate`, and by a caller
 * that wraps its own streamed call in `RetryPolicy.retry`, told before each retry); the last failure
 * says the policy gave up; a reply cut by the output limit inside a tool call's arguments keeps its
 * text and marks the call in `cutToolCalls` instead of failing.
 */
import { LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { AnthropicModel, OpenAICompatibleModel, OpenAIResponsesModel, RetryPolicy } from "../src/index.js"
import { json, serve, sse } from "./server.js"

const retry = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 2_000, jitter: false }

const request: LanguageModel.ModelRequest = {
  messages: [{ role: "user", parts: [Message.text("Write a.txt")] }],
  tools: [
    {
      name: "write_file",
      description: "Write a file",
      inputSchema: { type: "object", properties: { path: { type: "string" }, content: { type: "string" } } }
    }
  ],
  maxOutputTokens: 64
}

type Events = ReadonlyArray<{ readonly event?: string; readonly data: string }>

/** One provider: its client, a whole reply, a reply cut mid-stream, a reply cut inside a tool call. */
interface Provider {
  readonly name: string
  readonly client: (url: string) => LanguageModel.LanguageModel.Service
  readonly whole: Events
  /** The whole reply without its final event(s): a clean close mid-stream. */
  readonly early: Events
  readonly cutInToolCall: Events
  /** The error body of a 429. */
  readonly rateLimited: unknown
}

const anthropicEvent = (type: string, rest: object) => ({ event: type, data: JSON.stringify({ type, ...rest }) })
const anthropicStart = anthropicEvent("message_start", {
  message: { id: "msg_1", model: "claude-sonnet-4-5", content: [], usage: { input_tokens: 12, output_tokens: 1 } }
})
const anthropicText = [
  anthropicEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
  anthropicEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Writing a.txt now." } }),
  anthropicEvent("content_block_stop", { index: 0 })
]
const anthropicEnd = (reason: string) => [
  anthropicEvent("message_delta", { delta: { stop_reason: reason }, usage: { output_tokens: 64 } }),
  anthropicEvent("message_stop", {})
]
const anthropic: Provider = {
  name: "Anthropic",
  client: (url) => AnthropicModel.make({ apiKey: "k", model: "claude-sonnet-4-5", baseUrl: url, retry }),
  whole: [anthropicStart, ...anthropicText, ...anthropicEnd("end_turn")],
  early: [anthropicStart, ...anthropicText],
  cutInToolCall: [
    anthropicStart,
    ...anthropicText,
    anthropicEvent("content_block_start", {
      index: 1,
      content_block: { type: "tool_use", id: "toolu_1", name: "write_file", input: {} }
    }),
    anthropicEvent("content_block_delta", {
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"path": "a.txt", "content": "lorem ip' }
    }),
    anthropicEvent("content_block_stop", { index: 1 }),
    ...anthropicEnd("max_tokens")
  ],
  rateLimited: { type: "error", error: { type: "rate_limit_error", message: "Number of request tokens exceeded" } }
}

const chatChunk = (delta: unknown, finish: string | null = null) => ({
  data: JSON.stringify({ id: "c1", model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: finish }] })
})
const chatText = chatChunk({ role: "assistant", content: "Writing a.txt now." })
const chat: Provider = {
  name: "OpenAI Chat",
  client: (url) => OpenAICompatibleModel.make({ baseUrl: `${url}/v1`, model: "gpt-4o", provider: "openai", retry }),
  whole: [chatText, chatChunk({}, "stop"), { data: "[DONE]" }],
  early: [chatText],
  cutInToolCall: [
    chatText,
    chatChunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "write_file" } }] }),
    chatChunk({ tool_calls: [{ index: 0, function: { arguments: '{"path": "a.txt", "content": "lorem ip' } }] }),
    chatChunk({}, "length"),
    { data: "[DONE]" }
  ],
  rateLimited: { error: { message: "Rate limit reached for gpt-4o", type: "requests" } }
}

const responsesEvent = (type: string, rest: object) => ({ event: type, data: JSON.stringify({ type, ...rest }) })
const created = { id: "resp_1", object: "response", model: "gpt-4.1", status: "in_progress", output: [] }
const responsesText = [
  responsesEvent("response.created", { response: created }),
  responsesEvent("response.output_text.delta", { output_index: 0, content_index: 0, delta: "Writing a.txt now." })
]
const responses: Provider = {
  name: "OpenAI Responses",
  client: (url) => OpenAIResponsesModel.make({ baseUrl: `${url}/v1`, model: "gpt-4.1", apiKey: "k", retry }),
  whole: [...responsesText, responsesEvent("response.completed", { response: { ...created, status: "completed" } })],
  early: responsesText,
  cutInToolCall: [
    ...responsesText,
    responsesEvent("response.output_item.added", {
      output_index: 1,
      item: { type: "function_call", id: "fc_1", call_id: "call_1", name: "write_file", arguments: "" }
    }),
    responsesEvent("response.function_call_arguments.delta", {
      output_index: 1,
      delta: '{"path": "a.txt", "content": "lorem ip'
    }),
    responsesEvent("response.incomplete", {
      response: { ...created, status: "incomplete", incomplete_details: { reason: "max_output_tokens" } }
    })
  ],
  rateLimited: { error: { message: "Rate limit reached for gpt-4.1", type: "requests" } }
}

const textOf = (response: LanguageModel.ModelResponse): string =>
  response.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("")

for (const provider of [anthropic, chat, responses]) {
  describe(`${provider.name}: retry policy and output limit`, () => {
    it.scopedLive("a 429 with a short retry-after is waited for and retried", () =>
      Effect.gen(function* () {
        const server = yield* serve((_request, response, n) =>
          n === 1 ? json(response, 429, provider.rateLimited, { "retry-after": "1" }) : sse(response, provider.whole)
        )
        const answer = yield* provider.client(server.url).generate(request)
        assert.strictEqual(textOf(answer), "Writing a.txt now.")
        assert.strictEqual(server.received.length, 2)
      })
    )

    it.scopedLive("a 429 with a long retry-after fails at once, saying how long the API asked to wait", () =>
      Effect.gen(function* () {
        const server = yield* serve((_request, response) =>
          json(response, 429, provider.rateLimited, { "retry-after": "120" })
        )
        const error = yield* Effect.flip(provider.client(server.url).generate(request))
        assert.strictEqual(error.reason, "rate_limited")
        assert.strictEqual(error.retryAfterMs, 120_000)
        assert.include(error.detail, "the API asked to wait 2 min before retrying (retry-after)")
        assert.include(error.detail, "longer than the 2 s this client waits (retry.maxDelayMs)")
        assert.include(error.message, "try again in 2 min")
        // Final: no outer loop (an agent's) sends it again.
        assert.strictEqual(error.attempts, 1)
        assert.isFalse(RetryPolicy.isRetryable(error))
        assert.strictEqual(server.received.length, 1)
      })
    )

    it.scopedLive("a stream closed cleanly before its final event is retried like a reset", () =>
      Effect.gen(function* () {
        const server = yield* serve((_request, response, n) => sse(response, n === 1 ? provider.early : provider.whole))
        const answer = yield* provider.client(server.url).generate(request)
        assert.strictEqual(textOf(answer), "Writing a.txt now.")
        assert.strictEqual(server.received.length, 2)
      })
    )

    it.scopedLive("a caller streaming its own call retries it with RetryPolicy.retry, told before each retry", () =>
      Effect.gen(function* () {
        const server = yield* serve((_request, response) => sse(response, provider.early))
        const client = provider.client(server.url)
        const told: Array<RetryPolicy.RetryEvent> = []
        let shown = ""
        const attempt = Stream.runForEach(client.stream(request), (chunk) =>
          Effect.sync(() => {
            if (chunk._tag === "TextDelta") shown += chunk.text
          })
        )
        const error = yield* Effect.flip(
          attempt.pipe(
            RetryPolicy.retry(RetryPolicy.make(retry), {
              onRetry: (event) =>
                Effect.sync(() => {
                  told.push(event)
                  shown = "" // the display of the broken attempt is reset before the next
                })
            })
          )
        )
        assert.strictEqual(server.received.length, 3)
        assert.deepStrictEqual(
          told.map((event) => [event.attempt, event.error.reason]),
          [
            [1, "network"],
            [2, "network"]
          ]
        )
        assert.strictEqual(shown, "Writing a.txt now.")
        assert.strictEqual(error.reason, "network")
        assert.include(error.detail, "the stream closed before its final event")
        assert.include(error.detail, "gave up after 3 attempts (retry.maxRetries 2)")
        assert.strictEqual(error.attempts, 3)
      })
    )

    it.scopedLive("a reply cut by the output limit inside a tool call keeps its text and marks the call", () =>
      Effect.gen(function* () {
        const server = yield* serve((_request, response) => sse(response, provider.cutInToolCall))
        const answer = yield* provider.client(server.url).generate(request)
        assert.strictEqual(answer.stopReason, "max_tokens")
        assert.strictEqual(textOf(answer), "Writing a.txt now.")
        const call = answer.parts.find((part) => part.type === "tool_call")
        assert.deepStrictEqual(call, Message.toolCall(call?.type === "tool_call" ? call.id : "", "write_file", {}))
        assert.deepStrictEqual(answer.cutToolCalls, [
          {
            id: call?.type === "tool_call" ? call.id : "",
            name: "write_file",
            receivedChars: '{"path": "a.txt", "content": "lorem ip'.length
          }
        ])
        assert.strictEqual(server.received.length, 1)
      })
    )
  })
}

describe("RetryPolicy.decide", () => {
  const failure = (reason: LanguageModel.ProviderErrorReason, retryAfterMs?: number) =>
    new LanguageModel.ProviderError({
      provider: "p",
      reason,
      detail: "d",
      ...(retryAfterMs === undefined ? {} : { retryAfterMs })
    })
  const policy = RetryPolicy.make({ maxRetries: 2, baseDelayMs: 100, maxDelayMs: 5_000, jitter: false })

  it("backs off exponentially, honours retry-after up to the limit, and stops with a sentence", () => {
    assert.deepStrictEqual(RetryPolicy.decide(policy, failure("server"), 0), { _tag: "Retry", delayMs: 100 })
    assert.deepStrictEqual(RetryPolicy.decide(policy, failure("network"), 1), { _tag: "Retry", delayMs: 200 })
    assert.deepStrictEqual(RetryPolicy.decide(policy, failure("rate_limited", 4_000), 0), {
      _tag: "Retry",
      delayMs: 4_000
    })
    const long = RetryPolicy.decide(policy, failure("rate_limited", 150_000), 0)
    assert.isTrue(long._tag === "Stop" && long.error.detail.includes("asked to wait 2 min 30 s"))
    const spent = RetryPolicy.decide(policy, failure("overloaded"), 2)
    assert.isTrue(spent._tag === "Stop" && spent.error.detail === "d; gave up after 3 attempts (retry.maxRetries 2)")
    // Not transient, or already final: returned as it was.
    const auth = failure("auth")
    assert.deepStrictEqual(RetryPolicy.decide(policy, auth, 0), { _tag: "Stop", error: auth })
    if (spent._tag === "Stop") assert.deepStrictEqual(RetryPolicy.decide(policy, spent.error, 0), spent)
  })

  it("jitters backoff within ±20% and never a retry-after", () => {
    const jittered = RetryPolicy.make({ ...policy, jitter: true })
    assert.deepStrictEqual(
      RetryPolicy.decide(jittered, failure("server"), 0, () => 0),
      { _tag: "Retry", delayMs: 80 }
    )
    assert.deepStrictEqual(
      RetryPolicy.decide(jittered, failure("server"), 0, () => 1),
      {
        _tag: "Retry",
        delayMs: 120
      }
    )
    assert.deepStrictEqual(
      RetryPolicy.decide(jittered, failure("rate_limited", 1_000), 0, () => 0),
      {
        _tag: "Retry",
        delayMs: 1_000
      }
    )
  })
})
