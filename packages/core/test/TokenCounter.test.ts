import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Lru, Message, TokenCounter } from "../src/index.js"

describe("TokenCounter", () => {
  it("o200k_base and cl100k_base are different tokenizers", () => {
    const o200k = TokenCounter.gpt()
    const cl100k = TokenCounter.gpt("cl100k_base")
    assert.strictEqual(o200k.name, "o200k_base")
    assert.strictEqual(cl100k.name, "cl100k_base")
    assert.strictEqual(o200k.count("hello world"), 2)
    assert.strictEqual(cl100k.count("hello world"), 2)
    const text = "Привет, мир! これは日本語のテキストです。 नमस्ते दुनिया"
    assert.notStrictEqual(o200k.count(text), cl100k.count(text))
    assert.isBelow(o200k.count(text), cl100k.count(text))
  })

  it("the heuristic counts ceil(chars / charsPerToken)", () => {
    const four = TokenCounter.heuristic()
    assert.strictEqual(four.name, "heuristic(4)")
    assert.deepStrictEqual(["", "a", "abcd", "abcde", "x".repeat(401)].map(four.count), [0, 1, 1, 2, 101])
    assert.strictEqual(TokenCounter.heuristic(2).count("abcde"), 3)
  })

  it("estimate is the one chars/4 estimate, and the heuristic counter counts with it", () => {
    assert.strictEqual(TokenCounter.estimateCharsPerToken, 4)
    const texts = ["", "a", "abcd", "abcde", "x".repeat(401)]
    assert.deepStrictEqual(
      texts.map((text) => TokenCounter.estimate(text)),
      [0, 1, 1, 2, 101]
    )
    assert.deepStrictEqual(
      texts.map(TokenCounter.heuristic().count),
      texts.map((text) => TokenCounter.estimate(text))
    )
    assert.strictEqual(TokenCounter.estimate("abcde", 2), 3)
  })

  it("countMessage counts text, tool names, inputs and outputs, plus the per-message overhead", () => {
    const counter = TokenCounter.heuristic()
    assert.strictEqual(TokenCounter.messageOverhead, 4)
    assert.strictEqual(counter.countMessage(Message.user("abcdefgh")), 2 + 4)
    assert.strictEqual(counter.countMessage({ parts: [] }), 4)
    // `ls {"path":"."}` is 15 characters.
    assert.strictEqual(
      counter.countMessage(Message.assistant("", [Message.toolCall("c1", "ls", { path: "." })])),
      4 + 4
    )
    assert.strictEqual(counter.countMessage(Message.tool("c1", "x".repeat(40))), 10 + 4)
    const gpt = TokenCounter.gpt()
    assert.strictEqual(gpt.countMessage(Message.user("hello world")), gpt.count("hello world") + 4)
  })

  it.effect("the layers provide the counters", () =>
    Effect.gen(function* () {
      const cl100k = yield* Effect.provide(TokenCounter.TokenCounter, TokenCounter.layerGpt("cl100k_base"))
      assert.strictEqual(cl100k.name, "cl100k_base")
      const heuristic = yield* Effect.provide(TokenCounter.TokenCounter, TokenCounter.layerHeuristic(3))
      assert.strictEqual(heuristic.count("abcdefg"), 3)
    })
  )
})

describe("TokenCounter.rememberTexts", () => {
  it("answers what the counter answers, counting each text once while the memo holds it", () => {
    const counted: Array<string> = []
    const base = TokenCounter.gpt("o200k_base")
    const memo = Lru.make<string, number>(2)
    const count = TokenCounter.rememberTexts((text) => {
      counted.push(text)
      return base.count(text)
    }, memo)
    const texts = ["read src/cart.js", "the tests pass", "read src/cart.js", "a third text", "the tests pass"]
    assert.deepStrictEqual(
      texts.map(count),
      texts.map((text) => base.count(text))
    )
    // The second "read src/cart.js" is remembered; "the tests pass" left the 2-entry memo when the third
    // text came in (the least recently used goes first), so it is counted again.
    assert.deepStrictEqual(counted, ["read src/cart.js", "the tests pass", "a third text", "the tests pass"])
    assert.strictEqual(memo.size, 2)
  })
})
