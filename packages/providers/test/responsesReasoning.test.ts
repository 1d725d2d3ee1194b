/**
 * OpenAI Responses reasoning items against a local Responses API on 127.0.0.1: a reasoning model's
 * reply (a `reasoning` item with `encrypted_content`, then a `function_call`) is parsed into a
 * reasoning part, appended to a window with the tool result, rendered, and the next request carries
 * the reasoning item back byte for byte, immediately before its function call. Streamed (summary
 * deltas, an incomplete `encrypted_content` in `output_item.added`) and as one JSON response.
 */
import { ContextService, Ids, Message, TokenCounter } from "@ctxlog/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { ServerResponse } from "node:http"
import { OpenAICtx, OpenAIResponsesModel, RenderRecord } from "../src/index.js"
import { readFileTool } from "./fixture.js"
import { json, parse, type Received, serve, sse } from "./server.js"

const retry = { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 10, jitter: false }

// Encrypted content as the API sends it: long base64 with `+`, `/` and `=`, which must come back unchanged.
const encrypted =
  "gAAAAABpF3Xq+9/Zk2Vf0cmFuc2NyaXB0L3JlYXNvbmluZy90ZXN0LWJ5dGVz+/8AAA==LXRoYXQtbXVzdC1yb3VuZC10cmlw/zZ9Qw=="
const reasoningId = "rs_045fb12aa0dfc2ea0069170733badc8197969fd65da2ca2501"
const summary = "**Reading the parser**\n\nI should read src/date.ts first."

const event = (type: string, rest: object) => ({ event: type, data: JSON.stringify({ type, ...rest }) })

const reasoningItem = { type: "reasoning", id: reasoningId, summary: [{ type: "summary_text", text: summary }] }
const callItem = { type: "function_call", id: "fc_1", call_id: "call_1", name: "read_file", arguments: "" }
const created = { id: "resp_1", object: "response", model: "gpt-5-2025-08-07", status: "in_progress", output: [] }
const usage = { input_tokens: 120, output_tokens: 300, output_tokens_details: { reasoning_tokens: 256 } }

/** A streamed reasoning reply: summary in two deltas, the whole item only at `output_item.done`. */
const reasoningStream = [
  event("response.created", { sequence_number: 0, response: created }),
  event("response.output_item.added", {
    output_index: 0,
    // OpenAI: the encrypted_content of output_item.added may be incomplete; the done item is the one to keep.
    item: { type: "reasoning", id: reasoningId, summary: [], encrypted_content: encrypted.slice(0, 12) }
  }),
  event("response.reasoning_summary_part.added", {
    item_id: reasoningId,
    output_index: 0,
    summary_index: 0,
    part: { type: "summary_text", text: "" }
  }),
  event("response.reasoning_summary_text.delta", {
    item_id: reasoningId,
    output_index: 0,
    summary_index: 0,
    delta: summary.slice(0, 25)
  }),
  event("response.reasoning_summary_text.delta", {
    item_id: reasoningId,
    output_index: 0,
    summary_index: 0,
    delta: summary.slice(25)
  }),
  event("response.reasoning_summary_text.done", {
    item_id: reasoningId,
    output_index: 0,
    summary_index: 0,
    text: summary
  }),
  event("response.reasoning_summary_part.done", {
    item_id: reasoningId,
    output_index: 0,
    summary_index: 0,
    part: { type: "summary_text", text: summary }
  }),
  event("response.output_item.done", {
    output_index: 0,
    item: { ...reasoningItem, encrypted_content: encrypted, status: "completed" }
  }),
  event("response.output_item.added", { output_index: 1, item: callItem }),
  event("response.function_call_arguments.delta", {
    item_id: "fc_1",
    output_index: 1,
    delta: '{"path":"src/date.ts"}'
  }),
  event("response.output_item.done", {
    output_index: 1,
    item: { ...callItem, arguments: '{"path":"src/date.ts"}', status: "completed" }
  }),
  event("response.completed", { response: { ...created, status: "completed", usage } })
]

/** The same reply as one JSON response object. */
const reasoningJson = {
  ...created,
  status: "completed",
  output: [
    { ...reasoningItem, encrypted_content: encrypted },
    { ...callItem, arguments: '{"path":"src/date.ts"}', status: "completed" }
  ],
  usage
}

const endTurn = [
  event("response.created", { response: { ...created, id: "resp_2" } }),
  event("response.output_text.delta", { item_id: "msg_2", output_index: 0, content_index: 0, delta: "Fixed." }),
  event("response.completed", { response: { ...created, id: "resp_2", status: "completed", usage } })
]

const live = ContextService.layerMemory({ tokenCounter: TokenCounter.layerHeuristic(), ids: Ids.layerSequential("id") })

const expectedParts = [
  Message.reasoning(summary, { itemId: reasoningId, encryptedContent: encrypted }),
  Message.toolCall("call_1", "read_file", { path: "src/date.ts" })
]

/** The input items of a request body. */
const inputOf = (request: Received | undefined): ReadonlyArray<unknown> => {
  const input: unknown = Reflect.get(parse(request?.body ?? "") ?? {}, "input")
  return Array.isArray(input) ? input : []
}

/** The first request asks for encrypted reasoning; the second sends it back right before its call. */
const assertRoundTrip = (first: Received | undefined, second: Received | undefined) => {
  const asked = parse(first?.body ?? "")
  assert.strictEqual(Reflect.get(asked ?? {}, "store"), false)
  assert.deepStrictEqual(Reflect.get(asked ?? {}, "include"), ["reasoning.encrypted_content"])
  // Byte for byte: the reasoning item, then its function call, verbatim in the bytes sent.
  assert.include(
    second?.body ?? "",
    `{"type":"reasoning","id":"${reasoningId}","summary":[{"type":"summary_text","text":${JSON.stringify(summary)}}],` +
      `"encrypted_content":"${encrypted}"},{"type":"function_call","call_id":"call_1"`
  )
  const input = inputOf(second)
  const at = input.findIndex((item) => Reflect.get(Object(item), "type") === "reasoning")
  assert.deepStrictEqual(input[at], {
    type: "reasoning",
    id: reasoningId,
    summary: [{ type: "summary_text", text: summary }],
    encrypted_content: encrypted
  })
  assert.deepStrictEqual(input[at + 1], {
    type: "function_call",
    call_id: "call_1",
    name: "read_file",
    arguments: '{"path":"src/date.ts"}'
  })
  assert.deepStrictEqual(input[at + 2], {
    type: "function_call_output",
    call_id: "call_1",
    output: "export const parse = ..."
  })
}

const roundTrip = (reply: (response: ServerResponse) => void) =>
  Effect.gen(function* () {
    const server = yield* serve((_request, response, n) => (n === 1 ? reply(response) : sse(response, endTurn)))
    const client = OpenAIResponsesModel.make({ baseUrl: `${server.url}/v1`, apiKey: "sk-test", model: "gpt-5", retry })
    const ctx = yield* ContextService.ContextService
    yield* ctx.setSystemPrompt("s", "You fix bugs.")
    const asked = yield* ctx.appendMessages("s", [Message.user("Fix the date parser.")])
    const builder = OpenAICtx.makeResponses({ model: "gpt-5" })
    const options = { tools: [readFileTool], serverContext: { store: false } }
    const first = Either.getOrThrow(builder.build(asked.window, options))
    const response = yield* client.generateRequest(first.request)
    assert.deepStrictEqual(response.parts, expectedParts)
    assert.strictEqual(response.stopReason, "tool_use")
    yield* ctx.appendMessages("s", [{ role: "assistant", parts: response.parts }])
    const answered = yield* ctx.appendMessages("s", [Message.tool("call_1", "export const parse = ...")])
    const second = Either.getOrThrow(builder.build(answered.window, options))
    const done = yield* client.generateRequest(second.request)
    assert.deepStrictEqual(done.parts, [Message.text("Fixed.")])
    assert.strictEqual(server.received.length, 2)
    assert.strictEqual(server.received[0]?.body, RenderRecord.serialize(first.request))
    assert.strictEqual(server.received[1]?.body, RenderRecord.serialize(second.request))
    assertRoundTrip(server.received[0], server.received[1])
    return second.request
  }).pipe(Effect.provide(live))

describe("OpenAI Responses reasoning items against a local Responses API", () => {
  it.scopedLive("a streamed reasoning item goes back byte for byte before its function call", () =>
    Effect.gen(function* () {
      const request = yield* roundTrip((response) => sse(response, reasoningStream))
      yield* Effect.promise(() =>
        expect(`${JSON.stringify(request, null, 2)}\n`).toMatchFileSnapshot(
          "./__snapshots__/openai-responses.reasoning-roundtrip.request.json"
        )
      )
    })
  )

  it.scopedLive("a JSON response's reasoning item goes back byte for byte before its function call", () =>
    roundTrip((response) => json(response, 200, reasoningJson))
  )

  it.scopedLive("the port client asks for encrypted reasoning when configured with store: false", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) => json(response, 200, reasoningJson))
      const config = { baseUrl: `${server.url}/v1`, apiKey: "sk-test", model: "gpt-5", retry }
      const request = { messages: [Message.user("Fix the date parser.")], tools: [readFileTool] }
      const stateless = yield* OpenAIResponsesModel.make({ ...config, store: false }).generate(request)
      assert.deepStrictEqual(stateless.parts, expectedParts)
      yield* OpenAIResponsesModel.make(config).generate(request)
      const [asked, plain] = server.received.map((received) => parse(received.body) ?? {})
      assert.strictEqual(Reflect.get(asked ?? {}, "store"), false)
      assert.deepStrictEqual(Reflect.get(asked ?? {}, "include"), ["reasoning.encrypted_content"])
      // Stored use (the API default) needs no encrypted content: the server resolves the item id.
      assert.isFalse(Reflect.has(plain ?? {}, "include"))
      assert.isFalse(Reflect.has(plain ?? {}, "store"))
    })
  )

  it.scopedLive("summary parts join with a blank line; an item without encrypted content keeps its id only", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        sse(response, [
          event("response.created", { response: created }),
          event("response.output_item.added", {
            output_index: 0,
            item: { type: "reasoning", id: "rs_2", summary: [] }
          }),
          event("response.reasoning_summary_text.delta", {
            item_id: "rs_2",
            output_index: 0,
            summary_index: 0,
            delta: "One."
          }),
          event("response.reasoning_summary_text.delta", {
            item_id: "rs_2",
            output_index: 0,
            summary_index: 1,
            delta: "Two."
          }),
          event("response.output_item.added", {
            output_index: 1,
            item: { type: "message", id: "msg_1", role: "assistant", content: [] }
          }),
          event("response.output_text.delta", { item_id: "msg_1", output_index: 1, content_index: 0, delta: "Done." }),
          event("response.completed", { response: { ...created, status: "completed", usage } })
        ])
      )
      const client = OpenAIResponsesModel.make({
        baseUrl: `${server.url}/v1`,
        apiKey: "sk-test",
        model: "gpt-5",
        retry
      })
      const response = yield* client.generate({ messages: [Message.user("Count.")] })
      // No output_item.done arrived for the reasoning item: the deltas' text stands, with its id.
      assert.deepStrictEqual(response.parts, [
        Message.reasoning("One.\n\nTwo.", { itemId: "rs_2" }),
        Message.text("Done.")
      ])
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("j", [Message.user("Count.")])
      const window = (yield* ctx.appendMessages("j", [
        { role: "assistant", parts: response.parts },
        Message.user("Again.")
      ])).window
      const input = Either.getOrThrow(OpenAICtx.makeResponses({ model: "gpt-5" }).build(window)).request.input
      const at = input.findIndex((item) => item.type === "reasoning")
      assert.deepStrictEqual(input[at], {
        type: "reasoning",
        id: "rs_2",
        summary: [{ type: "summary_text", text: "One.\n\nTwo." }]
      })
      assert.deepStrictEqual(input[at + 1], { type: "message", role: "assistant", content: "Done." })
    }).pipe(Effect.provide(live))
  )
})
