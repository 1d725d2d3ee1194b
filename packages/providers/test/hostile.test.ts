/**
 * The clients against hostile servers on 127.0.0.1: 200 MB bodies (JSON, an error body, one SSE line
 * with no newline), a trickle of bytes that never completes an event, endless pings and endless
 * deltas. Memory stays bounded because the client hangs up early: each test checks how many bytes
 * the server wrote before the client closed the connection, never how long anything took.
 */
import { type LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { AnthropicModel, OpenAICompatibleModel } from "../src/index.js"
import { flood, hostile, hugeBytes, pause } from "./hostileServer.js"

const retry = { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1_000, jitter: false }
const mib = 1024 * 1024
/** What a client that stopped at a 1 MiB cap may have let through: the cap plus socket buffers. */
const earlyHangUp = 32 * mib

const openai = (url: string, extra: Partial<OpenAICompatibleModel.ClientConfig> = {}) =>
  OpenAICompatibleModel.make({ baseUrl: `${url}/v1`, model: "gpt-4o", provider: "openai", retry, ...extra })

const anthropic = (url: string, extra: Partial<AnthropicModel.ClientConfig> = {}) =>
  AnthropicModel.make({ apiKey: "test-key", model: "claude-sonnet-4-5", baseUrl: url, retry, ...extra })

const request: LanguageModel.ModelRequest = {
  system: "You are terse.",
  messages: [{ role: "user", parts: [Message.text("Say hello")] }]
}

const delta = (content: string) =>
  `data: ${JSON.stringify({ model: "gpt-4o", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`

const messageStart = `event: message_start\ndata: ${JSON.stringify({
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content: [],
    stop_reason: null,
    usage: { input_tokens: 10, output_tokens: 1 }
  }
})}\n\n`

const ping = `event: ping\ndata: {"type": "ping"}\n\n`

describe("provider clients against hostile servers", () => {
  it.scopedLive("a 200 MB JSON body fails at the size cap and the client hangs up early", () =>
    Effect.gen(function* () {
      const server = yield* hostile(200, "application/json", (write) =>
        write('{"choices":[{"message":{"content":"').then(() => flood(write, "a", hugeBytes))
      )
      const error = yield* Effect.flip(openai(server.url, { maxResponseBytes: mib }).generate(request))
      assert.strictEqual(error._tag, "ProviderError")
      assert.strictEqual(error.reason, "malformed_response")
      assert.include(error.detail, "size cap of 1 MiB")
      assert.strictEqual(yield* server.ended, "client hung up")
      assert.isBelow(server.written(), earlyHangUp)
    })
  )

  it.scopedLive("a 200 MB error body is read only up to its limit and still classified by status", () =>
    Effect.gen(function* () {
      const server = yield* hostile(503, "application/json", (write) =>
        write('{"error":{"type":"overloaded_error","message":"').then(() => flood(write, "x", hugeBytes))
      )
      // The default cap (64 MiB) is not what stops it: error bodies have their own 64 KiB limit.
      const error = yield* Effect.flip(anthropic(server.url).generate(request))
      assert.strictEqual(error.reason, "overloaded")
      assert.strictEqual(error.status, 503)
      // At most 500 characters of the body, then the policy's closing words.
      assert.isAtMost(error.detail.length, 600)
      assert.include(error.detail, "gave up after")
      assert.strictEqual(yield* server.ended, "client hung up")
      assert.isBelow(server.written(), earlyHangUp)
    })
  )

  it.scopedLive("one 200 MB SSE line with no newline fails at the size cap, streamed, never held", () =>
    Effect.gen(function* () {
      const server = yield* hostile(200, "text/event-stream", (write) =>
        write("data: ").then(() => flood(write, "b", hugeBytes))
      )
      const error = yield* Effect.flip(openai(server.url, { maxResponseBytes: mib }).generate(request))
      assert.strictEqual(error.reason, "malformed_response")
      assert.include(error.detail, "event stream exceeds the response size cap")
      assert.strictEqual(yield* server.ended, "client hung up")
      assert.isBelow(server.written(), earlyHangUp)
    })
  )

  it.scopedLive("endless deltas sent as fast as the socket takes them end at the size cap", () =>
    Effect.gen(function* () {
      const server = yield* hostile(200, "text/event-stream", (write) => flood(write, delta("la"), hugeBytes))
      const error = yield* Effect.flip(openai(server.url, { maxResponseBytes: mib / 4 }).generate(request))
      assert.strictEqual(error.reason, "malformed_response")
      assert.strictEqual(yield* server.ended, "client hung up")
      assert.isBelow(server.written(), earlyHangUp)
    })
  )

  it.scopedLive("an endless stream far past max_tokens 16 is stopped at the output limit, holding at most that", () =>
    Effect.gen(function* () {
      // 64 KB text deltas every 5 ms, forever, for a request that asked for at most 16 tokens.
      const big = "x".repeat(64 * 1024)
      const endless = (event: string) => async (write: (piece: string) => Promise<boolean>) => {
        while (await write(event)) await pause(5)
      }
      const anthropicDelta = `event: content_block_delta\ndata: ${JSON.stringify({
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: big }
      })}\n\n`
      const anthropicBlock = `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n`
      const cases = [
        [
          "openai",
          yield* hostile(200, "text/event-stream", endless(delta(big))),
          (url: string) => openai(url).stream({ ...request, maxOutputTokens: 16 })
        ],
        [
          "anthropic",
          yield* hostile(200, "text/event-stream", (write) =>
            write(messageStart + anthropicBlock).then(() => endless(anthropicDelta)(write))
          ),
          (url: string) => anthropic(url).stream({ ...request, maxOutputTokens: 16 })
        ]
      ] as const
      for (const [label, server, stream] of cases) {
        // Count what the client passed on (what a consumer would retain), without retaining it here.
        let received = 0
        const error = yield* Effect.flip(
          Stream.runForEach(stream(server.url), (chunk) =>
            Effect.sync(() => {
              if (chunk._tag === "TextDelta") received += chunk.text.length
            })
          )
        )
        assert.strictEqual(error.reason, "malformed_response", label)
        assert.include(error.detail, "for max_tokens 16", label)
        assert.strictEqual(yield* server.ended, "client hung up", label)
        // The 64 KiB floor of the output limit plus the one delta that crossed it; never the 64 MiB cap.
        assert.isAtMost(received, 128 * 1024, label)
        assert.isBelow(server.written(), 8 * mib, label)
      }
    })
  )

  it.scopedLive(
    "with a large max_tokens, an endless stream ends at the size cap having passed on at most the cap",
    () =>
      Effect.gen(function* () {
        const server = yield* hostile(200, "text/event-stream", (write) => flood(write, delta("la"), hugeBytes))
        let received = 0
        const error = yield* Effect.flip(
          Stream.runForEach(
            openai(server.url, { maxResponseBytes: mib }).stream({ ...request, maxOutputTokens: 1_000_000 }),
            (chunk) =>
              Effect.sync(() => {
                if (chunk._tag === "TextDelta") received += chunk.text.length
              })
          )
        )
        assert.strictEqual(error.reason, "malformed_response")
        assert.include(error.detail, "size cap of 1 MiB")
        assert.isAtMost(received, mib)
        assert.isBelow(server.written(), earlyHangUp)
      })
  )

  it.scopedLive("a trickle of bytes that never completes an event ends in the idle timeout", () =>
    Effect.gen(function* () {
      // Bytes arrive far more often than the idle timeout, whole events far less often.
      const body = messageStart.repeat(50)
      const server = yield* hostile(200, "text/event-stream", async (write) => {
        for (const byte of body) {
          if (!(await write(byte))) return
          await pause(25)
        }
      })
      const error = yield* Effect.flip(anthropic(server.url, { idleTimeoutMs: 500 }).generate(request))
      assert.strictEqual(error.reason, "timeout")
      assert.include(error.detail, "idleTimeoutMs")
      assert.strictEqual(yield* server.ended, "client hung up")
      assert.isBelow(server.written(), body.length)
    })
  )

  it.scopedLive("endless Anthropic pings end in the idle timeout", () =>
    Effect.gen(function* () {
      const server = yield* hostile(200, "text/event-stream", async (write) => {
        if (!(await write(messageStart))) return
        while (await write(ping)) await pause(20)
      })
      const error = yield* Effect.flip(anthropic(server.url, { idleTimeoutMs: 400 }).generate(request))
      assert.strictEqual(error.reason, "timeout")
      assert.include(error.detail, "idleTimeoutMs")
      assert.strictEqual(yield* server.ended, "client hung up")
    })
  )

  it.scopedLive("endless SSE comment keep-alives end in the idle timeout", () =>
    Effect.gen(function* () {
      const server = yield* hostile(200, "text/event-stream", async (write) => {
        if (!(await write(delta("Hel")))) return
        while (await write(": keep-alive\n\n")) await pause(20)
      })
      const error = yield* Effect.flip(openai(server.url, { idleTimeoutMs: 400 }).generate(request))
      assert.strictEqual(error.reason, "timeout")
      assert.strictEqual(yield* server.ended, "client hung up")
    })
  )

  it.scopedLive("endless slow deltas end at the overall deadline, with no Done and no response", () =>
    Effect.gen(function* () {
      const server = yield* hostile(200, "text/event-stream", async (write) => {
        while (await write(delta("la "))) await pause(10)
      })
      const client = openai(server.url, { idleTimeoutMs: 60_000, deadlineMs: 800 })
      const chunks: Array<LanguageModel.ModelChunk> = []
      const streamed = yield* Effect.either(
        Stream.runForEach(client.stream(request), (chunk) => Effect.sync(() => chunks.push(chunk)))
      )
      if (Either.isRight(streamed)) return assert.fail("an endless stream completed")
      assert.strictEqual(streamed.left.reason, "timeout")
      assert.include(streamed.left.detail, "deadlineMs")
      assert.isAbove(chunks.length, 0)
      assert.isFalse(chunks.some((chunk) => chunk._tag === "Done"))
      assert.strictEqual(yield* server.ended, "client hung up")
      // `generate` turns the same failure into an error, never a partial response.
      const second = yield* hostile(200, "text/event-stream", async (write) => {
        while (await write(delta("la "))) await pause(10)
      })
      const generated = yield* Effect.either(openai(second.url, { deadlineMs: 800 }).generate(request))
      assert.isTrue(Either.isLeft(generated))
      assert.strictEqual(yield* second.ended, "client hung up")
    })
  )

  it.scopedLive("a stream within its limits still completes (the limits cost nothing on the normal path)", () =>
    Effect.gen(function* () {
      const server = yield* hostile(200, "text/event-stream", async (write) => {
        for (const piece of [delta("Hel"), ping, ": note\n\n", delta("lo")]) await write(piece)
        await write(
          `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`
        )
      })
      const chunks = Chunk.toReadonlyArray(
        yield* Stream.runCollect(openai(server.url, { maxResponseBytes: 4096, idleTimeoutMs: 5_000 }).stream(request))
      )
      const done = chunks[chunks.length - 1]
      if (done?._tag !== "Done") return assert.fail("no Done chunk")
      assert.deepStrictEqual(done.response.parts, [Message.text("Hello")])
    })
  )
})
