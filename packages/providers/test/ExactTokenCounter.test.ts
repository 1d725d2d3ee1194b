import { Message, TokenCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { AnthropicCtx, ExactTokenCounter } from "../src/index.js"
import { fixtureEvents, fixtureWindow, msg, windowOf } from "./fixture.js"
import { json, parse, type Received, serve } from "./server.js"

/** What `count_tokens` documents: the Messages request without `max_tokens` and `stream`. */
const shapeProblems = (request: Received): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (request.method !== "POST") problems.push(`method ${request.method}`)
  if (request.url !== "/v1/messages/count_tokens") problems.push(`path ${request.url}`)
  if (request.headers["x-api-key"] !== "sk-ant-test") problems.push("x-api-key")
  if (request.headers["anthropic-version"] !== "2023-06-01") problems.push("anthropic-version")
  if (!String(request.headers["content-type"]).includes("application/json")) problems.push("content-type")
  const body = parse(request.body)
  if (typeof body !== "object" || body === null) return [...problems, "body is not a JSON object"]
  if (Reflect.get(body, "model") !== "claude-sonnet-4-5") problems.push("model")
  const messages = Reflect.get(body, "messages")
  if (!Array.isArray(messages) || messages.length === 0) problems.push("messages")
  if (!Array.isArray(Reflect.get(body, "system"))) problems.push("system")
  for (const field of ["max_tokens", "stream", "tools"]) if (field in body) problems.push(`unexpected ${field}`)
  if (request.body.includes("cache_control")) problems.push("cache_control")
  return problems
}

/** A counting server: input_tokens is the body length / 3, so a longer prompt counts more. */
const counting = (request: Received, response: Parameters<Parameters<typeof serve>[0]>[1]) => {
  const problems = shapeProblems(request)
  if (problems.length > 0) {
    return json(response, 400, {
      type: "error",
      error: { type: "invalid_request_error", message: problems.join(", ") }
    })
  }
  json(response, 200, { input_tokens: Math.ceil(request.body.length / 3) })
}

const config = (url: string) => ({
  apiKey: "sk-ant-test",
  model: "claude-sonnet-4-5",
  baseUrl: url,
  retry: { maxRetries: 0, baseDelayMs: 1, jitter: false }
})

const longer = windowOf([
  ...fixtureEvents,
  {
    _tag: "MessageAppended",
    message: msg("a-3", Message.assistant("Patched: February 29 is accepted in leap years only."), 15)
  }
])

describe("ExactTokenCounter", () => {
  it.scopedLive("asks count_tokens once for new messages and answers from the per-id cache after", () =>
    Effect.gen(function* () {
      const server = yield* serve(counting)
      const counter = ExactTokenCounter.anthropic(config(server.url))
      const first = yield* counter.countWindow(fixtureWindow)
      assert.strictEqual(server.received.length, 1)
      assert.deepStrictEqual(first, {
        total: Math.ceil((server.received[0]?.body.length ?? 0) / 3),
        exact: true,
        source: "count_tokens"
      })
      // Same messages: no request, same total.
      const again = yield* counter.countWindow(fixtureWindow)
      assert.strictEqual(server.received.length, 1)
      assert.strictEqual(again.total, first.total)
      // One new message: one request over the whole window (all new messages in one call).
      const grown = yield* counter.countWindow(longer)
      assert.strictEqual(server.received.length, 2)
      assert.strictEqual(grown.total, Math.ceil((server.received[1]?.body.length ?? 0) / 3))
      assert.isAbove(grown.total, first.total)
      // The new message's count is cached too.
      assert.strictEqual((yield* counter.countWindow(longer)).total, grown.total)
      assert.strictEqual(server.received.length, 2)
    })
  )

  it.scopedLive("falls back to the cached exact counts plus the calibrated estimate when the endpoint fails", () =>
    Effect.gen(function* () {
      const server = yield* serve((request, response, n) =>
        n === 1 ? counting(request, response) : json(response, 500, { error: { message: "down" } })
      )
      const counter = ExactTokenCounter.anthropic(config(server.url))
      const first = yield* counter.countWindow(fixtureWindow)
      const fallback = yield* counter.countWindow(longer)
      assert.strictEqual(server.received.length, 2)
      assert.deepStrictEqual(fallback, { total: first.total + 15, exact: false, source: "calibrated" })
      const offline = yield* ExactTokenCounter.anthropic(config("http://127.0.0.1:9")).countWindow(fixtureWindow)
      assert.deepStrictEqual(offline, { total: fixtureWindow.tokens.total, exact: false, source: "calibrated" })
    })
  )

  it.effect("the tokenizer counts messages with o200k (cl100k for older models), task state by the log", () =>
    Effect.gen(function* () {
      const counted = yield* ExactTokenCounter.tokenizer("o200k_base").countWindow(fixtureWindow)
      const gpt = TokenCounter.gpt("o200k_base")
      const messages = [...fixtureWindow.system, ...fixtureWindow.knowledge, ...fixtureWindow.history]
      const stored = messages.reduce((sum, message) => sum + message.tokens, 0)
      const expected =
        messages.reduce((sum, message) => sum + gpt.countMessage(message), 0) + fixtureWindow.tokens.total - stored
      assert.deepStrictEqual(counted, { total: expected, exact: true, source: "o200k_base" })
      assert.strictEqual(ExactTokenCounter.encodingFor("gpt-4o-mini"), "o200k_base")
      assert.strictEqual(ExactTokenCounter.encodingFor("gpt-4-turbo"), "cl100k_base")
      assert.isUndefined(ExactTokenCounter.encodingFor("llama3.2"))
    })
  )

  it.scopedLive("the per-id cache keeps at most maxCachedMessages counts, dropping the oldest", () =>
    Effect.gen(function* () {
      const server = yield* serve(counting)
      const counter = ExactTokenCounter.anthropic({ ...config(server.url), maxCachedMessages: 3 })
      yield* counter.countWindow(fixtureWindow)
      yield* counter.countWindow(fixtureWindow)
      // The window holds more than three messages: the evicted ones are counted again.
      assert.strictEqual(server.received.length, 2)
    })
  )

  it.effect("needsCompression uses the exact count when given", () =>
    Effect.gen(function* () {
      const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5", contextWindow: 4000, maxOutputTokens: 1000 })
      // The log's estimate is far below 80% of the 3,000-token budget; an exact count of 2,900 is not.
      assert.isFalse(builder.needsCompression(fixtureWindow))
      assert.isTrue(builder.needsCompression(fixtureWindow, {}, 2900))
      assert.isFalse(builder.needsCompression(fixtureWindow, {}, 2000))
      const counted = yield* ExactTokenCounter.calibrated.countWindow(fixtureWindow)
      assert.strictEqual(builder.needsCompression(fixtureWindow, {}, counted.total), false)
    })
  )
})
