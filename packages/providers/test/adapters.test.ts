/**
 * Round trips of the message adapters over the four real transcripts: messages → window → adapter
 * type → messages → window, and the second window renders the same OpenAI and Anthropic requests as
 * the first. Plus the edges each format handles on its own (error results, unsupported content).
 */
import { ContextService, Ids, Message, Transcript, type Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import { AIMessage, HumanMessage } from "@langchain/core/messages"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { fromModelMessages, toModelMessages } from "../src/adapters/aiSdk.js"
import { fromAnthropic, toAnthropic } from "../src/adapters/anthropic.js"
import { fromLangChain, toLangChain } from "../src/adapters/langchain.js"
import { fromOpenAI, toOpenAI } from "../src/adapters/openai.js"
import { AnthropicCtx, type AdapterError, OpenAICtx } from "../src/index.js"
import { readTranscript, transcriptFiles } from "@ctxlog/testing"

const live = ContextService.layerMemory({ ids: Ids.layerSequential("t") })

const files = transcriptFiles()

type RoundTrip = (
  messages: ReadonlyArray<Message.Message>
) => Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError.AdapterError>

const adapters: ReadonlyArray<readonly [string, RoundTrip]> = [
  ["AI SDK", (messages) => Either.flatMap(toModelMessages(messages), (out) => fromModelMessages(out))],
  ["LangChain", (messages) => Either.flatMap(toLangChain(messages), fromLangChain)],
  ["OpenAI", (messages) => Either.flatMap(toOpenAI(messages), fromOpenAI)],
  [
    "Anthropic",
    (messages) => Either.flatMap(toAnthropic(messages), ({ system, messages: rest }) => fromAnthropic(rest, system))
  ]
]

const openai = OpenAICtx.make({ model: "gpt-4o" })
const anthropic = AnthropicCtx.make({ model: "claude-sonnet-4-5" })
const renders = (window: Window.Window) => ({
  openai: Either.map(openai.build(window), (built) => built.request),
  anthropic: Either.map(anthropic.build(window), (built) => built.request)
})

describe("message adapters: round trips over real transcripts", () => {
  it.effect(
    "messages → window → adapter type → window renders the same OpenAI and Anthropic requests",
    () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        let calls = 0
        for (const file of files) {
          const inputs = yield* Transcript.fromTranscriptJson(readTranscript(file))
          const { window } = yield* ctx.appendMessages(file, inputs)
          const messages = [...window.system, ...window.history]
          calls += messages.reduce((sum, message) => sum + Message.toolCallsOf(message).length, 0)
          const expected = renders(window)
          assert.isTrue(Either.isRight(expected.openai) && Either.isRight(expected.anthropic), `${file} renders`)
          for (const [name, roundTrip] of adapters) {
            const back = roundTrip(messages)
            if (Either.isLeft(back)) return assert.fail(`${file} via ${name}: ${back.left.message}`)
            const again = yield* ctx.appendMessages(`${file}/${name}`, back.right)
            assert.deepStrictEqual(renders(again.window), expected, `${file} via ${name}`)
          }
        }
        // The transcripts are agent runs: the round trips carried tool calls.
        assert.isAbove(calls, 10)
      }).pipe(Effect.provide(live)),
    { timeout: 120_000 }
  )
})

describe("message adapters: edges", () => {
  const round = [
    Message.user("run it"),
    Message.assistant("", [Message.toolCall("c1", "bash", { cmd: "make" }), Message.toolCall("c2", "cat", ["a", 1])]),
    Message.tool("c1", "make: *** [all] Error 2", true),
    Message.tool("c2", "ok")
  ]

  it("error results keep their flag in every format", () => {
    for (const [name, roundTrip] of adapters) {
      const back = Either.getOrThrow(
        roundTrip(round.map((input, index) => ({ ...input, id: `m${index}`, kind: "chat", tokens: 1 })))
      )
      const results = back.flatMap((message) => Message.toolResultsOf(message))
      assert.deepStrictEqual(
        results.map((result) => [result.toolCallId, result.isError, result.content]),
        [
          ["c1", true, "make: *** [all] Error 2"],
          ["c2", false, "ok"]
        ],
        name
      )
    }
  })

  it("formats put results where their APIs want them", () => {
    const anthropicMessages = Either.getOrThrow(toAnthropic(round)).messages
    // Both results of the round travel in one user message after the calls.
    assert.deepStrictEqual(
      anthropicMessages.map((message) => message.role),
      ["user", "assistant", "user"]
    )
    assert.deepStrictEqual(Either.getOrThrow(toOpenAI(round))[2], {
      role: "tool",
      tool_call_id: "c1",
      content: "[tool error] make: *** [all] Error 2"
    })
    const [, , result] = Either.getOrThrow(toModelMessages(round))
    assert.deepStrictEqual(result, {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "c1",
          toolName: "bash",
          output: { type: "error-text", value: "make: *** [all] Error 2" }
        }
      ]
    })
    // LangChain args are objects: a non-object input travels wrapped.
    const ai = Either.getOrThrow(toLangChain(round))[1]
    assert.isTrue(ai !== undefined && AIMessage.isInstance(ai) && ai.tool_calls?.[1]?.args.input !== undefined)
  })

  it("content a window cannot hold is an AdapterError naming the format and message", () => {
    // Binary media without a media type cannot be stored (the part is named).
    const image = fromModelMessages([{ role: "user", content: [{ type: "image", image: new Uint8Array([1, 2]) }] }])
    assert.isTrue(Either.isLeft(image) && image.left.message.startsWith("AI SDK message 0 content[0]"))
    const openaiAudio = fromOpenAI([
      { role: "system", content: "be brief" },
      { role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] }
    ])
    assert.isTrue(Either.isLeft(openaiAudio) && openaiAudio.left.message.includes("OpenAI message 1 content[0]"))
    const badArgs = fromOpenAI([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "x", type: "function", function: { name: "f", arguments: "{oops" } }]
      }
    ])
    assert.isTrue(Either.isLeft(badArgs) && badArgs.left._tag === "AdapterError")
    const anthropicSearch = fromAnthropic([
      {
        role: "user",
        content: [{ type: "search_result", source: "https://example.com", title: "t", content: [] }]
      }
    ])
    assert.isTrue(Either.isLeft(anthropicSearch) && anthropicSearch.left.path === "content[0]")
    // Images and thinking have parts of their own now.
    const anthropicImage = fromAnthropic([
      { role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }] },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hm", signature: "sig==" },
          { type: "text", text: "a cat" }
        ]
      }
    ])
    assert.deepStrictEqual(
      Either.getOrThrow(anthropicImage).map((input) => input.parts),
      [
        [Message.imageUrl("https://example.com/a.png")],
        [Message.reasoning("hm", { signature: "sig==" }), Message.text("a cat")]
      ]
    )
    const chat = fromLangChain([
      new HumanMessage("hi"),
      new AIMessage({ content: "", tool_calls: [{ name: "f", args: {} }] })
    ])
    assert.isTrue(Either.isLeft(chat) && chat.left.message.includes("has no id"))
  })
})

describe("message adapters: hostile tool inputs", () => {
  const circular: { [key: string]: unknown } = { a: 1 }
  circular.self = circular
  let deep: unknown = "bottom"
  for (let level = 0; level < 10_000; level += 1) deep = [deep]
  const hostile: ReadonlyArray<readonly [string, unknown, string]> = [
    ["a BigInt", { n: 1n }, "input.n: a BigInt is not a JSON value"],
    ["a circular object", circular, "input.self: circular reference"],
    ["a 10,000-deep array", deep, "nested deeper than 128 levels"]
  ]
  // Untyped callers (plain JS) reach the adapters with values their types rule out: hence the casts.
  const entries: ReadonlyArray<
    readonly [string, (input: unknown) => Either.Either<unknown, AdapterError.AdapterError>]
  > = [
    [
      "AI SDK tool call",
      (input) =>
        fromModelMessages([
          { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "run", input }] }
        ])
    ],
    [
      "AI SDK json tool output",
      (input) =>
        fromModelMessages([
          {
            role: "tool",
            content: [
              {
                type: "tool-result",
                toolCallId: "c1",
                toolName: "run",
                output: { type: "json", value: input } as unknown as { type: "json"; value: null }
              }
            ]
          }
        ])
    ],
    [
      "Anthropic tool_use",
      (input) => fromAnthropic([{ role: "assistant", content: [{ type: "tool_use", id: "c1", name: "run", input }] }])
    ],
    [
      "LangChain tool call",
      (input) =>
        fromLangChain([
          new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "run", args: input as { n: number } }] })
        ])
    ]
  ]
  for (const [entry, convert] of entries) {
    for (const [label, input, detail] of hostile) {
      it(`${entry}: ${label} is an AdapterError naming where, not a throw`, () => {
        const result = convert(input)
        assert.isTrue(Either.isLeft(result), `${label} was accepted`)
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "AdapterError")
          assert.include(result.left.detail, detail)
        }
      })
    }
  }
})
