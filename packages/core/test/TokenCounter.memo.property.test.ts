/**
 * The gpt counter counts each pre-token once and remembers it (issue 24): the sum over the pieces must
 * equal `gpt-tokenizer`'s count of the whole text, for any text, with the memo cold and warm, for both
 * encodings. Texts are drawn to stress the split: whitespace runs and line breaks (the lookahead and
 * end-of-text alternatives), contractions, digits, marks, mixed scripts, lone surrogates, and the
 * special-token prefix `<|` (handed to the tokenizer whole).
 */
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import * as Cl100k from "gpt-tokenizer/encoding/cl100k_base"
import * as O200k from "gpt-tokenizer/encoding/o200k_base"
import { Message, TokenCounter, WorkCounter } from "../src/index.js"
import { work as counters } from "../src/internal/work.js"
import { propertyRuns } from "../../../vitest.property.js"

/** The projection's work counters, read as their change since the last `work.reset()`. */
const work = WorkCounter.since(counters)

const pieces = [
  " ",
  "  ",
  "\n",
  "\r\n",
  "\t",
  " \n ",
  "a",
  "Hello",
  "WORLD",
  "'s",
  "'LL",
  "x'Re",
  "1",
  "12345",
  "١٢٣",
  "é",
  "e\u0301",
  "中文",
  "日本語のテキスト",
  "Привет",
  "!",
  "...",
  "—",
  "🙂",
  "\ud800",
  "<|",
  "|>",
  "<|endoftext|>",
  '{"a": [1, 2]}'
]
const text = fc.oneof(
  fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((parts) => parts.join("")),
  fc.string({ unit: "grapheme", maxLength: 80 }),
  fc.string({ unit: "binary", maxLength: 40 })
)

/** What the tokenizer says of the whole text: a count, or that it refuses (a special token). */
const outcome = (count: (text: string) => number, input: string): number | "throws" => {
  try {
    return count(input)
  } catch {
    return "throws"
  }
}

describe("TokenCounter memo", () => {
  it("every special token of both encodings starts with <| (what sends a text to the tokenizer whole)", () => {
    for (const module of [O200k, Cl100k]) {
      const specials = Object.entries(module)
        .filter(([name, value]) => /^[A-Z][a-z]/.test(name) && typeof value === "string")
        .map(([, value]) => value as string)
      assert.isAbove(specials.length, 4)
      for (const special of specials) assert.isTrue(special.startsWith("<|"), special)
    }
  })

  it("counts every text as the tokenizer counts it whole, cold and warm", () => {
    const o200k = TokenCounter.gpt()
    const cl100k = TokenCounter.gpt("cl100k_base")
    fc.assert(
      fc.property(text, (input) => {
        for (let pass = 0; pass < 2; pass++) {
          assert.strictEqual(outcome(o200k.count, input), outcome(O200k.countTokens, input), JSON.stringify(input))
          assert.strictEqual(outcome(cl100k.count, input), outcome(Cl100k.countTokens, input), JSON.stringify(input))
        }
      }),
      { numRuns: propertyRuns(1000) }
    )
  })

  it("tokenTextOf is the counted parts joined by line breaks (the flatMap and join it replaced)", () => {
    const reference = (parts: ReadonlyArray<Message.Part>): string =>
      parts
        .flatMap((part) => {
          if (part.type === "text" || part.type === "reasoning") return [part.text]
          if (part.type === "tool_call" || part.type === "server_tool_call") {
            return [`${part.name} ${JSON.stringify(part.input)}`]
          }
          if (part.type === "tool_result") return [part.content]
          if (part.type === "server_tool_result") return [JSON.stringify(part.content)]
          return []
        })
        .join("\n")
    const part = fc.oneof(
      fc.string().map((value) => Message.text(value)),
      fc.string().map((value) => Message.reasoning(value)),
      fc
        .tuple(fc.string(), fc.string(), fc.jsonValue())
        .map(([id, name, input]) => Message.toolCall(id, name, input as Message.JsonValue)),
      fc.tuple(fc.string(), fc.string()).map(([id, content]) => Message.toolResult(id, content)),
      fc.constant(Message.imageUrl("https://example.com/a.png"))
    )
    fc.assert(
      fc.property(fc.array(part, { maxLength: 6 }), (parts) => {
        assert.strictEqual(Message.tokenTextOf({ parts }), reference(parts))
      }),
      { numRuns: propertyRuns(500) }
    )
  })

  it("a message's words are tokenized once per counter: a second message of the same words hands none to the tokenizer", () => {
    const counter = TokenCounter.gpt()
    const message = Message.user("the context window of an agent keeps the last turns and their tool results")
    work.reset()
    const first = counter.countMessage(message)
    const cold = work.chunksTokenized
    const second = counter.countMessage(message)
    console.log(`tokenized pre-tokens: first count ${cold}, second 0 expected, got ${work.chunksTokenized - cold}`)
    assert.strictEqual(second, first)
    assert.isAbove(cold, 10)
    assert.strictEqual(work.chunksTokenized - cold, 0)
  })
})
