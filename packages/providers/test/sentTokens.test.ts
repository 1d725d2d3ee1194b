// Issue 37 item 6, "count what is sent": a builder's stats take off the reasoning its provider does not
// take back (readable-only reasoning everywhere; signed thinking on the chat builders; reasoning items on
// Anthropic; a tool's image on Chat Completions), so `stats.total` is what the render sends, and what is
// dropped is really not in the request.
import { ContextService, MediaTokens, Message, TokenCounter, type Window } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { CtxBuilder, SentTokens } from "../src/index.js"
import { memoryContext } from "./services.js"

const readable = "I should look at the parser first; the leap-year branch looks suspicious to me. ".repeat(20)
const signed = "The signed thought about calendar.ts and the February table, step by step. ".repeat(15)
const itemised = "A reasoning summary the Responses API gave with its item id, about the fix. ".repeat(10)

const window = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  const { window } = yield* ctx.appendMessages("sent-tokens", [
    Message.user("The date parser test fails on leap years."),
    { role: "assistant", parts: [Message.reasoning(readable), Message.text("Looking at the parser now.")] },
    Message.user("Go on."),
    {
      role: "assistant",
      parts: [Message.reasoning(signed, { signature: "sig-1" }), Message.toolCall("c1", "read", { path: "parse.ts" })]
    },
    Message.tool("c1", "export const parse = (s: string) => new Date(s)"),
    Message.user("Here is the screenshot."),
    { role: "assistant", parts: [Message.toolCall("c2", "screenshot", {})] },
    {
      role: "tool",
      parts: [
        {
          type: "tool_result",
          toolCallId: "c2",
          content: "the failing page",
          isError: false,
          parts: [
            { type: "text", text: "the failing page" },
            { type: "image", source: { type: "url", url: "https://example.com/shot.png" }, width: 1024, height: 768 }
          ]
        }
      ]
    },
    { role: "assistant", parts: [Message.reasoning(itemised, { itemId: "rs_1" }), Message.text("Patched it.")] }
  ])
  return window
})

const counter = TokenCounter.gpt("o200k_base")

const built = (builder: CtxBuilder.CtxBuilder<CtxBuilder.AnyRequest>, w: Window.Window) => {
  const result = builder.build(w)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

describe("builders count what they send (issue 37 item 6)", () => {
  it.effect("each builder takes off the reasoning it drops, and only that", () =>
    Effect.gen(function* () {
      const w = yield* window.pipe(Effect.provide(memoryContext(counter, "s")))
      const tokens = (text: string) => counter.count(text)
      const cases: ReadonlyArray<readonly [CtxBuilder.ProviderConfig, ReadonlyArray<string>, ReadonlyArray<string>]> = [
        [{ provider: "anthropic", model: "claude-sonnet-4-5" }, [readable, itemised], [signed]],
        [{ provider: "openai", api: "responses", model: "gpt-5" }, [readable, signed], [itemised]],
        [{ provider: "openai", model: "gpt-4o" }, [readable, signed, itemised], []],
        [{ provider: "ollama", model: "qwen2.5:7b" }, [readable, signed, itemised], []],
        [{ provider: "default", model: "local" }, [readable, signed, itemised], []]
      ]
      for (const [config, dropped, kept] of cases) {
        const builder = CtxBuilder.forProvider(config)
        const { request, stats } = built(builder, w)
        const body = JSON.stringify(request)
        // What it drops is not in the request; what it keeps is.
        for (const text of dropped) expect(body.includes(text.slice(0, 60))).toBe(false)
        for (const text of kept) expect(body.includes(text.slice(0, 60))).toBe(true)
        // Chat tool messages take text only: the screenshot (OpenAI's formula, as this counter prices it) is dropped.
        const chat = config.provider !== "anthropic" && !("api" in config && config.api === "responses")
        const screenshot = MediaTokens.openaiImageTokens({ width: 1024, height: 768 })
        const imageSent = ['"image_url"', '"input_image"', '"type":"image"'].some((marker) => body.includes(marker))
        expect(imageSent).toBe(!chat)
        const exact = dropped.reduce((sum, text) => sum + tokens(text), 0) + (chat ? screenshot : 0)
        expect(stats.unsentTokens).toBe(builder.unsentTokens(w))
        // The proportional share is close to the exact count of the dropped text (a few tokens each).
        expect(Math.abs(stats.unsentTokens - exact)).toBeLessThanOrEqual(3 * dropped.length + 1)
        expect(stats.total).toBe(w.tokens.total - stats.unsentTokens + stats.toolTokens)
      }
    })
  )

  it.effect("thinking: current sends only the thinking of the turn whose tool calls the request answers", () =>
    Effect.gen(function* () {
      const w = yield* window.pipe(Effect.provide(memoryContext(counter, "c")))
      const drops: SentTokens.Drops = { reasoning: "signed", toolResultMedia: true }
      const all = SentTokens.unsentTokens(drops, w)
      const current = SentTokens.unsentTokens(drops, w, true)
      // The last assistant message has no tool calls: no turn is current, every signed thought is dropped.
      expect(current - all).toBe(
        SentTokens.unsentOfMessage({ ...drops, reasoning: "none" }, w.history[3] as Message.Message)
      )
      // Cut after the first tool round: the call of message 3 is the current turn, its thinking is sent.
      const open = { ...w, history: w.history.slice(0, 5) }
      expect(SentTokens.unsentTokens(drops, open, true)).toBe(SentTokens.unsentTokens(drops, open))
    })
  )
})
