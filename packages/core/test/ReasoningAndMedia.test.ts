import { readFileSync } from "node:fs"
import { assert, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import {
  ContextService,
  EventCodec,
  MediaTokens,
  Message,
  TokenCounter,
  Transcript,
  WindowEvent
} from "../src/index.js"
import { checkConsistent, live } from "./Scenario.js"
import { readTranscript, transcriptFiles } from "../src/transcripts.js"

const base64 = (bytes: ReadonlyArray<number> | Buffer): string => Buffer.from(bytes).toString("base64")

/** A PNG's signature and IHDR chunk (the header `image-size` reads). */
const pngHeader = (width: number, height: number): string => {
  const header = Buffer.alloc(33)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(header, 0)
  header.writeUInt32BE(13, 8)
  header.write("IHDR", 12, "latin1")
  header.writeUInt32BE(width, 16)
  header.writeUInt32BE(height, 20)
  header.set([8, 2, 0, 0, 0], 24)
  return base64(header)
}

// SOI, an APP0 (JFIF) segment, then a baseline frame header of 800 × 600.
const jpeg800x600 = base64([
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
  0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x02, 0x58, 0x03, 0x20, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11,
  0x01, 0xff, 0xd9
])
const gif320x240 = base64(
  Buffer.concat([Buffer.from("GIF89a"), Buffer.from([0x40, 0x01, 0xf0, 0x00]), Buffer.alloc(10)])
)
const webp1024x600 = base64(
  Buffer.concat([
    Buffer.from("RIFF"),
    Buffer.from([0x16, 0, 0, 0]),
    Buffer.from("WEBPVP8X"),
    Buffer.from([10, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x03, 0x00, 0x57, 0x02, 0x00]),
    Buffer.alloc(8)
  ])
)

describe("MediaTokens", () => {
  it("reads PNG, JPEG, GIF and WebP dimensions from base64 headers", () => {
    assert.deepStrictEqual(MediaTokens.dimensionsOfBase64(pngHeader(1000, 500)), { width: 1000, height: 500 })
    assert.deepStrictEqual(MediaTokens.dimensionsOfBase64(jpeg800x600), { width: 800, height: 600 })
    assert.deepStrictEqual(MediaTokens.dimensionsOfBase64(gif320x240), { width: 320, height: 240 })
    assert.deepStrictEqual(MediaTokens.dimensionsOfBase64(webp1024x600), { width: 1024, height: 600 })
    assert.isUndefined(MediaTokens.dimensionsOfBase64(base64(Buffer.from("not an image at all"))))
    assert.isUndefined(MediaTokens.dimensionsOfBase64("%%% not base64"))
  })

  it("a JPEG whose frame header follows large APP segments is still read", () => {
    const bytes = Buffer.from(jpeg800x600, "base64")
    // Two APP1 segments of 60,002 bytes each: the frame header sits past the first 128 KiB of base64.
    const app1 = Buffer.concat([Buffer.from([0xff, 0xe1, 0xea, 0x62]), Buffer.alloc(0xea62 - 2)])
    const data = Buffer.concat([bytes.subarray(0, 2), app1, app1, bytes.subarray(2)]).toString("base64")
    assert.isAbove(data.length, 128 * 1024)
    assert.deepStrictEqual(MediaTokens.dimensionsOfBase64(data), { width: 800, height: 600 })
  })

  it("Anthropic: width × height / 750, scaled to a 1568 px long edge and at most ~1600 tokens", () => {
    assert.strictEqual(MediaTokens.anthropicImageTokens({ width: 200, height: 200 }), 54)
    assert.strictEqual(MediaTokens.anthropicImageTokens({ width: 1000, height: 1000 }), 1334)
    assert.strictEqual(MediaTokens.anthropicImageTokens({ width: 1092, height: 1092 }), 1590)
    // 1568 × 1176 after scaling would be 2459 tokens: capped.
    assert.strictEqual(MediaTokens.anthropicImageTokens({ width: 4000, height: 3000 }), 1600)
    assert.strictEqual(MediaTokens.anthropicImageTokens(undefined), 1600)
  })

  it("OpenAI: low is 85; high is 85 + 170 per 512 px tile after fitting 2048 and a 768 shortest side", () => {
    assert.strictEqual(MediaTokens.openaiImageTokens({ width: 4000, height: 4000 }, "low"), 85)
    assert.strictEqual(MediaTokens.openaiImageTokens({ width: 1024, height: 1024 }, "high"), 765)
    assert.strictEqual(MediaTokens.openaiImageTokens({ width: 2048, height: 4096 }, "high"), 1105)
    assert.strictEqual(MediaTokens.openaiImageTokens({ width: 512, height: 512 }, "high"), 255)
    assert.strictEqual(MediaTokens.openaiImageTokens({ width: 100, height: 100 }, "auto"), 255)
    assert.strictEqual(MediaTokens.openaiImageTokens(undefined, "high"), 765)
  })

  it("countMessage adds each image by the counter's formula, dimensions from the part or the data", () => {
    const fromData = Message.imageBase64("image/png", pngHeader(1000, 1000))
    const given = Message.imageUrl("https://example.com/a.png", { width: 1024, height: 1024, detail: "high" })
    const message = { parts: [Message.text("abcd"), fromData, given] }
    assert.strictEqual(TokenCounter.heuristic().countMessage(message), 1 + 4 + 1334 + 1399)
    const gpt = TokenCounter.gpt()
    assert.strictEqual(gpt.countMessage(message), gpt.count("abcd") + 4 + 765 + 765)
    // A document: text/plain by its text, a PDF by its page objects, 2000 tokens a page.
    const pdf = Buffer.from(
      "%PDF-1.4\n1 0 obj <</Type /Pages /Count 2>>\n2 0 obj <</Type /Page>>\n3 0 obj <</Type/Page>>"
    )
    const doc: Message.DocumentPart = {
      type: "document",
      source: { type: "base64", mediaType: "application/pdf", data: pdf.toString("base64") }
    }
    assert.strictEqual(TokenCounter.heuristic().countMessage({ parts: [doc] }), 4 + 4000)
    const note: Message.DocumentPart = {
      type: "document",
      source: { type: "base64", mediaType: "text/plain", data: Buffer.from("x".repeat(40)).toString("base64") }
    }
    assert.strictEqual(TokenCounter.heuristic().countMessage({ parts: [note] }), 4 + 10)
  })
})

const reasoningTranscript = JSON.parse(
  readFileSync(new URL("./fixtures/reasoning-transcript.json", import.meta.url), "utf8")
)

describe("reasoning parts", () => {
  it("Message.reasoning leaves out the fields given as undefined: the part equals its JSON round trip", () => {
    const part = Message.reasoning("thinking", {
      signature: undefined,
      redactedData: undefined,
      itemId: "rs_1",
      encryptedContent: undefined
    })
    assert.deepStrictEqual(Object.keys(part), ["type", "text", "itemId"])
    const replayed = Schema.decodeUnknownSync(Message.ReasoningPart)(JSON.parse(JSON.stringify(part)))
    expect(part).toStrictEqual(replayed)
  })

  it.effect("reasoning_content imports as a reasoning part leading the assistant message", () =>
    Effect.gen(function* () {
      const inputs = yield* Transcript.fromTranscriptJson(reasoningTranscript)
      const assistants = inputs.filter((input) => input.role === "assistant")
      assert.strictEqual(assistants.length, 3)
      for (const assistant of assistants) assert.strictEqual(assistant.parts[0]?.type, "reasoning")
      assert.deepStrictEqual(
        assistants[0]?.parts.map((part) => part.type),
        ["reasoning", "tool_call"]
      )
      assert.deepStrictEqual(
        assistants[2]?.parts.map((part) => part.type),
        ["reasoning", "text"]
      )
      assert.match(Message.reasoningOf({ parts: assistants[2]?.parts ?? [] })[0]?.text ?? "", /Case mismatch/)
    })
  )

  it.effect("token totals include the reasoning, and trimming keeps a tool round whole", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const inputs = yield* Transcript.fromTranscriptJson(reasoningTranscript)
      const counter = TokenCounter.heuristic()
      const [system, ...rest] = inputs
      if (system !== undefined) yield* ctx.setSystemPrompt("r", [system])
      const out = yield* ctx.appendMessages("r", rest)
      yield* checkConsistent(out, "r")
      const expected = rest.reduce((total, input) => total + counter.countMessage(input), 0)
      assert.strictEqual(out.window.tokens.history, expected)
      const thoughts = rest.flatMap((input) => Message.reasoningOf(input))
      assert.strictEqual(thoughts.length, 3)
      const withoutReasoning = rest.reduce(
        (total, input) =>
          total + counter.countMessage({ parts: input.parts.filter((part) => part.type !== "reasoning") }),
        0
      )
      assert.isAtLeast(
        expected - withoutReasoning,
        thoughts.reduce((total, part) => total + counter.count(part.text) - 1, 0)
      )
      // Trim to a budget that cuts inside the first tool round: the call (with its reasoning) and its
      // result leave together.
      const firstRound = (out.window.history[1]?.tokens ?? 0) + (out.window.history[2]?.tokens ?? 0)
      const trimmed = yield* ctx.trimToBudget("r", out.window.tokens.total - firstRound + 1)
      yield* checkConsistent(trimmed, "r")
      const kept = trimmed.window.history.map((message) => message.id)
      const call = out.window.history[1]?.id ?? ""
      const result = out.window.history[2]?.id ?? ""
      assert.strictEqual(kept.includes(call), kept.includes(result))
    }).pipe(Effect.provide(live()))
  )

  it.effect("every shared transcript message with reasoning_content imports with a reasoning part", () =>
    Effect.gen(function* () {
      const files = transcriptFiles()
      assert.isAtLeast(files.length, 4)
      for (const file of files) {
        const json = readTranscript(file) as { messages: ReadonlyArray<{ readonly reasoning_content?: unknown }> }
        const inputs = yield* Transcript.fromTranscriptJson(json)
        const withReasoning = json.messages.filter(
          (message) => typeof message.reasoning_content === "string" && message.reasoning_content.length > 0
        ).length
        assert.strictEqual(
          inputs.filter((input) => Message.reasoningOf(input).length > 0).length,
          withReasoning,
          String(file)
        )
      }
    })
  )

  it.effect("a data-URL image_url imports as a base64 image part; a plain URL as a URL image", () =>
    Effect.gen(function* () {
      const inputs = yield* Transcript.fromOpenAIChat([
        {
          role: "user",
          content: [
            { type: "text", text: "what is this?" },
            { type: "image_url", image_url: { url: `data:image/png;base64,${pngHeader(10, 20)}`, detail: "low" } },
            { type: "image_url", image_url: { url: "https://example.com/b.jpg" } }
          ]
        }
      ])
      assert.deepStrictEqual(inputs[0]?.parts, [
        Message.text("what is this?"),
        Message.imageBase64("image/png", pngHeader(10, 20), { detail: "low" }),
        Message.imageUrl("https://example.com/b.jpg")
      ])
    })
  )

  it.effect("signatures and image data survive the stored form byte for byte", () =>
    Effect.gen(function* () {
      const signature = "EqQBCkYIBxgCKkD+/=\u00e9\u2028sig"
      const event: WindowEvent.WindowEvent = {
        _tag: "MessageAppended",
        id: "e1",
        message: {
          id: "a1",
          role: "assistant",
          kind: "chat",
          parts: [
            Message.reasoning("think", { signature }),
            Message.reasoning("", { redactedData: "EmwKAhgB" }),
            Message.imageBase64("image/png", pngHeader(3, 2), { width: 3, height: 2 }),
            Message.toolCall("c1", "ls", {})
          ],
          tokens: 9
        }
      }
      const [stored] = yield* EventCodec.encodeAll([event])
      assert.isDefined(stored)
      if (stored === undefined) return
      assert.strictEqual(stored.schemaVersion, WindowEvent.schemaVersions.MessageAppended)
      const decoded = yield* EventCodec.decode(stored)
      assert.deepStrictEqual(decoded, event)
    })
  )
})
