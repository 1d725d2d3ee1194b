/**
 * Reasoning and image parts against local HTTP servers on 127.0.0.1: thinking blocks parsed from
 * Anthropic responses (streamed and not), appended to a window, rendered and sent back with their
 * signature byte for byte; images rendered per provider; the validator naming a misplaced thinking
 * block; snapshots of every builder's render of a window holding both.
 */
import { ContextService, Ids, Message, TokenCounter } from "@ctxlog/core"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import {
  AnthropicCtx,
  AnthropicModel,
  CtxBuilder,
  OpenAICompatibleModel,
  OpenAICtx,
  RenderRecord,
  RequestValidator
} from "../src/index.js"
import { msg, readFileTool, windowOf } from "./fixture.js"
import { json, parse, type Received, serve, sse } from "./server.js"

const retry = { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 10, jitter: false }

// A signature as the API sends it: long base64 with `+`, `/` and `=`, which must come back unchanged.
const signature =
  "EqQBCkgIARABGAIiQL2v3+/nQzJ0cmFuc2NyaXB0L3NpZ25hdHVyZS90ZXN0LWJ5dGVzLXRoYXQtbXVzdC1yb3VuZC10cmlw+/8AAA==/zZ9"
const redacted = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+/RED=="
const thinkingText = "The user wants the parser. I should read src/date.ts first."

/** A streamed reply: thinking (two deltas, then its signature), redacted thinking, then a tool_use. */
const thinkingStream = [
  {
    event: "message_start",
    data: JSON.stringify({
      type: "message_start",
      message: { model: "claude-sonnet-4-5", usage: { input_tokens: 40, output_tokens: 1 } }
    })
  },
  {
    event: "content_block_start",
    data: JSON.stringify({
      type: "content_block_start",
      index: 0,
      content_block: { type: "thinking", thinking: "", signature: "" }
    })
  },
  {
    event: "content_block_delta",
    data: JSON.stringify({
      type: "content_block_delta",
      index: 0,
      delta: { type: "thinking_delta", thinking: thinkingText.slice(0, 20) }
    })
  },
  {
    event: "content_block_delta",
    data: JSON.stringify({
      type: "content_block_delta",
      index: 0,
      delta: { type: "thinking_delta", thinking: thinkingText.slice(20) }
    })
  },
  {
    event: "content_block_delta",
    data: JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature } })
  },
  { event: "content_block_stop", data: '{"type":"content_block_stop","index":0}' },
  {
    event: "content_block_start",
    data: JSON.stringify({
      type: "content_block_start",
      index: 1,
      content_block: { type: "redacted_thinking", data: redacted }
    })
  },
  { event: "content_block_stop", data: '{"type":"content_block_stop","index":1}' },
  {
    event: "content_block_start",
    data: JSON.stringify({
      type: "content_block_start",
      index: 2,
      content_block: { type: "tool_use", id: "toolu_01", name: "read_file", input: {} }
    })
  },
  {
    event: "content_block_delta",
    data: JSON.stringify({
      type: "content_block_delta",
      index: 2,
      delta: { type: "input_json_delta", partial_json: '{"path":"src/date.ts"}' }
    })
  },
  { event: "content_block_stop", data: '{"type":"content_block_stop","index":2}' },
  {
    event: "message_delta",
    data: '{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":90}}'
  },
  { event: "message_stop", data: '{"type":"message_stop"}' }
]

/** The same reply as one JSON message (a non-streaming server). */
const thinkingJson = {
  id: "msg_01",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [
    { type: "thinking", thinking: thinkingText, signature },
    { type: "redacted_thinking", data: redacted },
    { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "src/date.ts" } }
  ],
  stop_reason: "tool_use",
  usage: { input_tokens: 40, output_tokens: 90 }
}

const endTurn = [
  { event: "message_start", data: JSON.stringify({ type: "message_start", message: { usage: { input_tokens: 9 } } }) },
  {
    event: "content_block_start",
    data: '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Fixed."}}'
  },
  { event: "message_delta", data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{}}' },
  { event: "message_stop", data: '{"type":"message_stop"}' }
]

const live = ContextService.layerMemory({ tokenCounter: TokenCounter.layerHeuristic(), ids: Ids.layerSequential("id") })

const expectedParts = [
  Message.reasoning(thinkingText, { signature }),
  Message.reasoning("", { redactedData: redacted }),
  Message.toolCall("toolu_01", "read_file", { path: "src/date.ts" })
]

/** What the second request's assistant turn must hold, exactly as the API sent it. */
const assertRoundTrip = (second: Received | undefined) => {
  const body = second?.body ?? ""
  // Byte for byte: the signature and the redacted data appear verbatim in the bytes sent.
  assert.include(body, `{"type":"thinking","thinking":${JSON.stringify(thinkingText)},"signature":"${signature}"}`)
  assert.include(body, `{"type":"redacted_thinking","data":"${redacted}"}`)
  const messages: unknown = Reflect.get(parse(body) ?? {}, "messages")
  assert.isTrue(Array.isArray(messages))
  if (!Array.isArray(messages)) return
  const assistant = messages.find((message) => message?.role === "assistant")
  assert.deepStrictEqual(assistant?.content, [
    { type: "thinking", thinking: thinkingText, signature },
    { type: "redacted_thinking", data: redacted },
    { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "src/date.ts" } }
  ])
  const last = messages[messages.length - 1]
  assert.strictEqual(last?.content?.[0]?.type, "tool_result")
}

const roundTrip = (reply: (response: Parameters<Parameters<typeof serve>[0]>[1]) => void) =>
  Effect.gen(function* () {
    const server = yield* serve((_request, response, n) => (n === 1 ? reply(response) : sse(response, endTurn)))
    const client = AnthropicModel.make({ apiKey: "test-key", model: "claude-sonnet-4-5", baseUrl: server.url, retry })
    const ctx = yield* ContextService.ContextService
    yield* ctx.setSystemPrompt("s", "You fix bugs.")
    const asked = yield* ctx.appendMessages("s", [Message.user("Fix the date parser.")])
    const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5" })
    const first = Either.getOrThrow(builder.build(asked.window, { tools: [readFileTool] }))
    const response = yield* client.generateRequest(first.request)
    assert.deepStrictEqual(response.parts, expectedParts)
    yield* ctx.appendMessages("s", [{ role: "assistant", parts: response.parts }])
    const answered = yield* ctx.appendMessages("s", [Message.tool("toolu_01", "export const parse = ...")])
    // The reasoning is counted: the assistant message costs more than its tool call alone.
    const stored = answered.window.history.find((message) => message.role === "assistant")
    assert.isAbove(
      stored?.tokens ?? 0,
      TokenCounter.heuristic().countMessage({ parts: [expectedParts[2] ?? Message.text("")] })
    )
    const second = Either.getOrThrow(builder.build(answered.window, { tools: [readFileTool] }))
    const done = yield* client.generateRequest(second.request)
    assert.deepStrictEqual(done.parts, [Message.text("Fixed.")])
    assert.strictEqual(server.received.length, 2)
    assert.strictEqual(server.received[1]?.body, RenderRecord.serialize(second.request))
    assertRoundTrip(server.received[1])
  }).pipe(Effect.provide(live))

describe("Anthropic thinking against a local Messages API", () => {
  it.scopedLive("streamed thinking (thinking_delta, signature_delta, redacted) goes back byte for byte", () =>
    roundTrip((response) => sse(response, thinkingStream))
  )

  it.scopedLive("a non-streamed JSON message's thinking goes back byte for byte", () =>
    roundTrip((response) => json(response, 200, thinkingJson))
  )
})

// A PNG header of 1000 × 500 (what `image-size` reads for the token cost).
const png = (() => {
  const header = Buffer.alloc(33)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header, 0)
  header.writeUInt32BE(13, 8)
  header.write("IHDR", 12, "latin1")
  header.writeUInt32BE(1000, 16)
  header.writeUInt32BE(500, 20)
  header.set([8, 2, 0, 0, 0], 24)
  return header.toString("base64")
})()

const imageMessage = Message.user("What is wrong in this screenshot?")
const withImages: Message.MessageInput = {
  role: "user",
  parts: [
    ...imageMessage.parts,
    Message.imageBase64("image/png", png),
    Message.imageUrl("https://example.com/diagram.jpg", { detail: "low" })
  ]
}

describe("images against local servers", () => {
  it.scopedLive("Anthropic: image blocks in the user turn, base64 and URL sources", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) => sse(response, endTurn))
      const ctx = yield* ContextService.ContextService
      const out = yield* ctx.appendMessages("img", [withImages])
      // Anthropic's formula for the PNG (1000 × 500 / 750 = 667) plus the largest cost for the URL.
      const text = TokenCounter.heuristic().countMessage(imageMessage)
      assert.strictEqual(out.window.tokens.history, text + 667 + 1600)
      const built = Either.getOrThrow(AnthropicCtx.make({ model: "claude-sonnet-4-5" }).build(out.window))
      const client = AnthropicModel.make({ apiKey: "test-key", model: "claude-sonnet-4-5", baseUrl: server.url, retry })
      yield* client.generateRequest(built.request)
      const messages: unknown = Reflect.get(parse(server.received[0]?.body ?? "") ?? {}, "messages")
      assert.deepStrictEqual(Array.isArray(messages) ? messages[0]?.content : undefined, [
        { type: "text", text: "What is wrong in this screenshot?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: png } },
        { type: "image", source: { type: "url", url: "https://example.com/diagram.jpg" } }
      ])
    }).pipe(Effect.provide(live))
  )

  it.scopedLive("OpenAI-compatible: image_url parts (data URL and URL with detail)", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        sse(response, [
          { data: JSON.stringify({ choices: [{ delta: { content: "A stack trace." }, finish_reason: "stop" }] }) },
          { data: "[DONE]" }
        ])
      )
      const window = windowOf([{ _tag: "MessageAppended", message: msg("u-1", withImages, 900) }])
      const built = Either.getOrThrow(OpenAICtx.make({ model: "gpt-4o" }).build(window))
      const client = OpenAICompatibleModel.make({ baseUrl: server.url, model: "gpt-4o", retry })
      const response = yield* client.generateRequest(built.request)
      assert.deepStrictEqual(response.parts, [Message.text("A stack trace.")])
      const messages: unknown = Reflect.get(parse(server.received[0]?.body ?? "") ?? {}, "messages")
      assert.deepStrictEqual(Array.isArray(messages) ? messages[0]?.content : undefined, [
        { type: "text", text: "What is wrong in this screenshot?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
        { type: "image_url", image_url: { url: "https://example.com/diagram.jpg", detail: "low" } }
      ])
    })
  )

  it.scopedLive("reasoning_content streamed by an OpenAI-compatible server lands in the response", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) =>
        sse(response, [
          { data: JSON.stringify({ choices: [{ delta: { role: "assistant", reasoning_content: "Leap years: " } }] }) },
          { data: JSON.stringify({ choices: [{ delta: { reasoning_content: "2024-02-29 is valid." } }] }) },
          { data: JSON.stringify({ choices: [{ delta: { content: "Patch it." }, finish_reason: "stop" }] }) },
          { data: "[DONE]" }
        ])
      )
      const client = OpenAICompatibleModel.make({ baseUrl: server.url, model: "deepseek-reasoner", retry })
      const response = yield* client.generate({ messages: [Message.user("Why?")] })
      assert.deepStrictEqual(response.parts, [
        Message.reasoning("Leap years: 2024-02-29 is valid."),
        Message.text("Patch it.")
      ])
      // Sent back to a chat-completions server, the reasoning is dropped (such servers reject it).
      const again = Either.getOrThrow(
        client.toRequest({ messages: [{ role: "assistant", parts: response.parts }, Message.user("ok")] })
      )
      assert.notInclude(JSON.stringify(again), "Leap years")
    })
  )
})

/** A window with signed thinking in an older turn and in the turn being answered, plus an image. */
const reasoningWindow = windowOf([
  { _tag: "SystemPromptSet", messages: [msg("sys", Message.system("You fix bugs."), 5)] },
  { _tag: "MessageAppended", message: msg("u-1", withImages, 900) },
  {
    _tag: "MessageAppended",
    message: msg(
      "a-1",
      {
        role: "assistant",
        parts: [
          Message.reasoning("Look at the parser.", {
            signature: "sig-old",
            itemId: "rs_01",
            encryptedContent: "enc-01"
          }),
          Message.toolCall("call_1", "read_file", { path: "src/date.ts" })
        ]
      },
      60
    )
  },
  { _tag: "MessageAppended", message: msg("t-1", Message.tool("call_1", "export const parse = ..."), 20) },
  {
    _tag: "MessageAppended",
    message: msg(
      "a-2",
      { role: "assistant", parts: [Message.reasoning("It ignores leap years."), Message.text("Found it.")] },
      20
    )
  },
  { _tag: "MessageAppended", message: msg("u-2", Message.user("Patch it."), 5) },
  {
    _tag: "MessageAppended",
    message: msg(
      "a-3",
      {
        role: "assistant",
        parts: [
          Message.reasoning("Edit line 3.", { signature: "sig-current", itemId: "rs_02" }),
          Message.reasoning("", { redactedData: "redacted-current" }),
          Message.toolCall("call_2", "read_file", { path: "src/date.test.ts" })
        ]
      },
      60
    )
  },
  { _tag: "MessageAppended", message: msg("t-2", Message.tool("call_2", "test('leap')"), 20) }
])

const snapshotBuilders = [
  ["anthropic", CtxBuilder.forProvider({ provider: "anthropic", model: "claude-sonnet-4-5" })],
  ["openai", CtxBuilder.forProvider({ provider: "openai", model: "gpt-4o" })],
  ["openai-responses", CtxBuilder.forProvider({ provider: "openai", api: "responses", model: "gpt-5" })],
  ["ollama", CtxBuilder.forProvider({ provider: "ollama", model: "qwen2.5vl:7b" })],
  ["default", CtxBuilder.forProvider({ provider: "default", model: "local-model" })]
] as const

describe("renders of a window with reasoning and images", () => {
  for (const [label, builder] of snapshotBuilders) {
    it(`${label} request`, async () => {
      const built = builder.build(reasoningWindow, { tools: [readFileTool] })
      if (Either.isLeft(built)) throw new Error(built.left.message)
      await expect(`${JSON.stringify(built.right.request, null, 2)}\n`).toMatchFileSnapshot(
        `./__snapshots__/${label}.reasoning-images.request.json`
      )
    })
  }

  it("Anthropic keeps signed thinking in every turn by default, only the answered turn with `current`", () => {
    const all = Either.getOrThrow(AnthropicCtx.make({ model: "claude-sonnet-4-5" }).build(reasoningWindow)).request
    const current = Either.getOrThrow(
      AnthropicCtx.make({ model: "claude-sonnet-4-5", thinking: "current" }).build(reasoningWindow)
    ).request
    const thinkingOf = (request: AnthropicCtx.AnthropicRequest) =>
      request.messages.map((message) =>
        message.content.flatMap((block) =>
          block.type === "thinking" ? [block.signature] : block.type === "redacted_thinking" ? [block.data] : []
        )
      )
    // user, a-1, t-1 + ..., a-2 (readable-only reasoning: never sent), ..., a-3, t-2
    assert.deepStrictEqual(
      thinkingOf(all).filter((blocks) => blocks.length > 0),
      [["sig-old"], ["sig-current", "redacted-current"]]
    )
    assert.deepStrictEqual(
      thinkingOf(current).filter((blocks) => blocks.length > 0),
      [["sig-current", "redacted-current"]]
    )
    // Nothing else changes between the two.
    assert.strictEqual(JSON.stringify(all.system), JSON.stringify(current.system))
  })

  it("chat renders carry no reasoning; the Responses render sends reasoning items that have an id", () => {
    for (const builder of [snapshotBuilders[1][1], snapshotBuilders[3][1], snapshotBuilders[4][1]]) {
      const text = JSON.stringify(Either.getOrThrow(builder.build(reasoningWindow)).request)
      assert.notInclude(text, "Look at the parser")
      assert.notInclude(text, "sig-old")
    }
    const responses = Either.getOrThrow(OpenAICtx.makeResponses({ model: "gpt-5" }).build(reasoningWindow)).request
    const reasoning = responses.input.filter((item) => item.type === "reasoning")
    assert.deepStrictEqual(reasoning, [
      {
        type: "reasoning",
        id: "rs_01",
        summary: [{ type: "summary_text", text: "Look at the parser." }],
        encrypted_content: "enc-01"
      },
      { type: "reasoning", id: "rs_02", summary: [{ type: "summary_text", text: "Edit line 3." }] }
    ])
    const index = responses.input.findIndex((item) => item.type === "reasoning" && item.id === "rs_01")
    assert.strictEqual(responses.input[index + 1]?.type, "function_call")
  })
})

describe("documents", () => {
  const pdf = Buffer.from("%PDF-1.4 <</Type /Page>>").toString("base64")
  const note = Buffer.from("line one\nline two").toString("base64")
  const window = windowOf([
    {
      _tag: "MessageAppended",
      message: msg(
        "u-1",
        {
          role: "user",
          parts: [
            Message.text("Summarize these."),
            { type: "document", source: { type: "base64", mediaType: "application/pdf", data: pdf }, title: "spec" },
            { type: "document", source: { type: "base64", mediaType: "text/plain", data: note } },
            { type: "document", source: { type: "url", url: "https://example.com/terms.pdf" } }
          ]
        },
        4000
      )
    }
  ])

  it("Anthropic: document blocks with base64, text and URL sources", () => {
    const request = Either.getOrThrow(AnthropicCtx.make({ model: "claude-sonnet-4-5" }).build(window)).request
    assert.deepStrictEqual(request.messages[0]?.content.slice(1), [
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf }, title: "spec" },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "line one\nline two" } },
      { type: "document", source: { type: "url", url: "https://example.com/terms.pdf" } }
    ])
  })

  it("OpenAI: base64 documents as file parts with a file name, a URL document named in text", () => {
    const chat = Either.getOrThrow(OpenAICtx.make({ model: "gpt-4o" }).build(window)).request
    const user = chat.messages.find((message) => message.role === "user")
    assert.deepStrictEqual(user?.content, [
      { type: "text", text: "Summarize these." },
      { type: "file", file: { filename: "spec", file_data: `data:application/pdf;base64,${pdf}` } },
      { type: "file", file: { filename: "document.txt", file_data: `data:text/plain;base64,${note}` } },
      { type: "text", text: "[document: https://example.com/terms.pdf]" }
    ])
    const responses = Either.getOrThrow(OpenAICtx.makeResponses({ model: "gpt-5" }).build(window)).request
    const item = responses.input.find((each) => each.type === "message" && each.role === "user")
    assert.deepStrictEqual(item?.type === "message" ? item.content : undefined, [
      { type: "input_text", text: "Summarize these." },
      { type: "input_file", filename: "spec", file_data: `data:application/pdf;base64,${pdf}` },
      { type: "input_file", filename: "document.txt", file_data: `data:text/plain;base64,${note}` },
      { type: "input_file", file_url: "https://example.com/terms.pdf" }
    ])
  })
})

describe("enabling extended thinking", () => {
  it("thinkingBudget puts thinking in the request, drops temperature, and the validator checks the budget", () => {
    const request = Either.getOrThrow(
      AnthropicCtx.make({ model: "claude-sonnet-4-5", thinkingBudget: 2048 }).build(reasoningWindow, {
        maxOutputTokens: 8000,
        temperature: 0.2
      })
    ).request
    assert.deepStrictEqual(request.thinking, { type: "enabled", budget_tokens: 2048 })
    assert.isUndefined(request.temperature)
    const tooBig = AnthropicCtx.make({ model: "claude-sonnet-4-5", thinkingBudget: 9000 }).build(reasoningWindow, {
      maxOutputTokens: 8000
    })
    assert.isTrue(Either.isLeft(tooBig))
    if (Either.isLeft(tooBig)) assert.include(tooBig.left.message, "budget_tokens 9000")
  })
})

describe("the validator and thinking blocks", () => {
  const base: AnthropicCtx.AnthropicRequest = {
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    stream: true,
    messages: [
      { role: "user", content: [{ type: "text", text: "hi" }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hm", signature: "sig" },
          { type: "text", text: "hello" }
        ]
      }
    ]
  }

  it("accepts thinking leading an assistant message", () => {
    assert.isTrue(Either.isRight(RequestValidator.anthropic(base)))
  })

  it("rejects thinking after text and names messages[1].content[1]", () => {
    const wrong: AnthropicCtx.AnthropicRequest = {
      ...base,
      messages: [
        base.messages[0] ?? { role: "user", content: [] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "hello" },
            { type: "thinking", thinking: "hm", signature: "sig" }
          ]
        }
      ]
    }
    const result = RequestValidator.anthropic(wrong)
    assert.isTrue(Either.isLeft(result))
    if (Either.isRight(result)) return
    assert.strictEqual(result.left.messageIndex, 1)
    assert.strictEqual(result.left.blockIndex, 1)
    assert.include(result.left.message, "messages[1].content[1]")
    assert.include(result.left.message, "thinking must lead its message")
  })

  it("rejects thinking in a user message, and thinking without its signature, naming each", () => {
    const inUser = RequestValidator.anthropic({
      ...base,
      messages: [
        {
          role: "user",
          content: [
            { type: "redacted_thinking", data: "x" },
            { type: "text", text: "hi" }
          ]
        }
      ]
    })
    assert.isTrue(Either.isLeft(inUser))
    if (Either.isLeft(inUser)) {
      assert.include(inUser.left.message, "redacted_thinking block outside an assistant message")
      assert.include(inUser.left.message, "messages[0].content[0]")
    }
    const unsigned = RequestValidator.anthropic({
      ...base,
      messages: [
        base.messages[0] ?? { role: "user", content: [] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hm", signature: "" },
            { type: "text", text: "x" }
          ]
        }
      ]
    })
    assert.isTrue(Either.isLeft(unsigned))
    if (Either.isLeft(unsigned)) assert.include(unsigned.left.message, "thinking block without its signature")
  })

  it("rejects a Responses reasoning item not followed by its output", () => {
    const result = RequestValidator.responses({
      model: "gpt-5",
      stream: true,
      input: [
        { type: "message", role: "user", content: "hi" },
        { type: "reasoning", id: "rs_1", summary: [] },
        { type: "message", role: "user", content: "again" }
      ]
    })
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.strictEqual(result.left.messageIndex, 1)
      assert.include(result.left.message, "reasoning item is not followed")
    }
  })
})
