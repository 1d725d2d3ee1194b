/**
 * LangChain's `trimMessages` scenarios, run on ctxlog messages. The scenarios (messages, the dummy token
 * counter and each call's documented output) are those of the `trimMessages` documentation in
 * `@langchain/core` 1.4.0, `dist/messages/transformers.d.ts` (the source of `src/messages/transformers.ts`);
 * the algorithm is mirrored from its `dist/messages/transformers.js`. Our own test code.
 */
import { Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import { HumanMessage } from "@langchain/core/messages"
import * as Either from "effect/Either"
import { fromLangChain, splitLines, trimMessages } from "../src/adapters/langchain.js"
import type { Options, Trimmable } from "../src/TrimMessages.js"

const long = "This is a 4 token text. The full message is 10 tokens."
const first = Message.text("This is the FIRST 4 token block.")
const second = Message.text("This is the SECOND 4 token block.")

const system: Message.MessageInput = { role: "system", parts: [Message.text(long)] }
const human1: Message.MessageInput = { role: "user", id: "first", parts: [Message.text(long)] }
const human3: Message.MessageInput = { role: "user", id: "third", parts: [Message.text(long)] }
const ai4: Message.MessageInput = { role: "assistant", id: "fourth", parts: [Message.text(long)] }
const messages: ReadonlyArray<Message.MessageInput> = [
  system,
  human1,
  { role: "assistant", id: "second", parts: [first, second] },
  human3,
  ai4
]

// The documentation's dummyTokenCounter: 3 + 4 + 3 for string content, 3 + 4 per block + 3 for blocks.
// A ctxlog message with one text part is LangChain's string content.
const dummyTokenCounter = (list: ReadonlyArray<Trimmable>): number =>
  list.reduce((sum, message) => sum + 3 + 4 * Math.max(1, message.parts.length) + 3, 0)

const trim = (options: Omit<Options<Message.MessageInput>, "tokenCounter">) =>
  Either.getOrThrow(trimMessages(messages, { ...options, tokenCounter: dummyTokenCounter }))

const ids = (list: ReadonlyArray<Message.MessageInput>) => list.map((message) => message.id ?? message.role)

describe("trimMessages: LangChain's documented scenarios", () => {
  it("first 30 tokens, not allowing partial messages", () => {
    assert.deepStrictEqual(trim({ maxTokens: 30, strategy: "first" }), [system, human1])
  })

  it("first 30 tokens, allowing partial messages: the first block of the AI message", () => {
    assert.deepStrictEqual(trim({ maxTokens: 30, strategy: "first", allowPartial: true }), [
      system,
      human1,
      { role: "assistant", id: "second", parts: [first] }
    ])
  })

  it("first 30 tokens, allowing partial messages, ending on a human message", () => {
    assert.deepStrictEqual(trim({ maxTokens: 30, strategy: "first", allowPartial: true, endOn: "human" }), [
      system,
      human1
    ])
  })

  it("last 30 tokens, including the system message, not allowing partial messages", () => {
    assert.deepStrictEqual(ids(trim({ maxTokens: 30, includeSystem: true, strategy: "last" })), [
      "system",
      "third",
      "fourth"
    ])
  })

  it("last 40 tokens, including the system message, allowing partial messages (LangChain keeps the FIRST block)", () => {
    const out = trim({ maxTokens: 40, strategy: "last", allowPartial: true, includeSystem: true })
    assert.deepStrictEqual(out, [system, { role: "assistant", id: "second", parts: [first] }, human3, ai4])
  })

  it("last 30 tokens, including the system message, allowing partial messages, ending on a human message", () => {
    assert.deepStrictEqual(
      trim({ maxTokens: 30, strategy: "last", endOn: "human", includeSystem: true, allowPartial: true }),
      [system, { role: "assistant", id: "second", parts: [first] }, human3]
    )
  })

  it("last 40 tokens, including the system message, allowing partial messages, starting on a human message", () => {
    assert.deepStrictEqual(
      ids(trim({ maxTokens: 40, strategy: "last", includeSystem: true, allowPartial: true, startOn: "human" })),
      ["system", "third", "fourth"]
    )
  })
})

describe("trimMessages: the rest of LangChain's meaning", () => {
  it("default strategy is last, and the system message goes unless includeSystem", () => {
    assert.deepStrictEqual(ids(trim({ maxTokens: 30 })), ["third", "fourth"])
  })

  it("contradicting options are a typed error, as LangChain throws", () => {
    const startOn = trimMessages(messages, {
      maxTokens: 30,
      tokenCounter: dummyTokenCounter,
      strategy: "first",
      startOn: "human"
    })
    assert.isTrue(Either.isLeft(startOn) && startOn.left.option === "startOn")
    const includeSystem = trimMessages(messages, {
      maxTokens: 30,
      tokenCounter: dummyTokenCounter,
      strategy: "first",
      includeSystem: true
    })
    assert.isTrue(Either.isLeft(includeSystem) && includeSystem.left.option === "includeSystem")
  })

  it("a partial message cut by the text splitter: lines (the default) or the caller's splitter", () => {
    const lines: ReadonlyArray<Message.MessageInput> = [{ role: "user", parts: [Message.text("a\nb\nc\nd")] }]
    const byChars = (list: ReadonlyArray<Trimmable>) => list.reduce((sum, m) => sum + Message.textOf(m).length, 0)
    const firstLines = Either.getOrThrow(
      trimMessages(lines, { maxTokens: 4, tokenCounter: byChars, strategy: "first", allowPartial: true })
    )
    assert.deepStrictEqual(firstLines, [{ role: "user", parts: [Message.text("a\nb\n")] }])
    const lastLines = Either.getOrThrow(
      trimMessages(lines, { maxTokens: 4, tokenCounter: byChars, allowPartial: true })
    )
    assert.deepStrictEqual(lastLines, [{ role: "user", parts: [Message.text("c\nd")] }])
    const words = Either.getOrThrow(
      trimMessages([{ role: "user", parts: [Message.text("one two three")] }], {
        maxTokens: 8,
        tokenCounter: byChars,
        strategy: "first",
        allowPartial: true,
        textSplitter: (text) => text.split(/(?<= )/)
      })
    )
    assert.deepStrictEqual(words, [{ role: "user", parts: [Message.text("one two ")] }])
    assert.deepStrictEqual(splitLines("x\ny"), ["x\n", "y"])
  })

  it("the input is never mutated, and a stored message cut short gets its tokens recounted", () => {
    const stored: ReadonlyArray<Message.Message> = [
      { id: "a", role: "assistant", kind: "chat", parts: [first, second], tokens: 14 }
    ]
    const before = JSON.stringify(stored)
    const out = Either.getOrThrow(
      trimMessages(stored, { maxTokens: 10, tokenCounter: dummyTokenCounter, strategy: "first", allowPartial: true })
    )
    assert.deepStrictEqual(out, [{ id: "a", role: "assistant", kind: "chat", parts: [first], tokens: 10 }])
    assert.strictEqual(JSON.stringify(stored), before)
  })

  it("LangChain messages trim the same after fromLangChain (ids kept)", () => {
    const inputs = Either.getOrThrow(fromLangChain([new HumanMessage({ content: long, id: "h1" })]))
    assert.deepStrictEqual(
      ids(Either.getOrThrow(trimMessages(inputs, { maxTokens: 10, tokenCounter: dummyTokenCounter }))),
      ["h1"]
    )
  })
})
