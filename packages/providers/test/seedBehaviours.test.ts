// Issue 20, seed behaviours that lived in the providers: behaviour 5 (a NaN or infinite context window).
import { Message, Window } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import { AnthropicCtx, DefaultCtx, OllamaCtx, OpenAICtx } from "../src/index.js"

const builders = [
  ["Anthropic", (contextWindow: number) => AnthropicCtx.make({ model: "claude", contextWindow })],
  ["OpenAI Chat", (contextWindow: number) => OpenAICtx.make({ model: "gpt", contextWindow })],
  ["OpenAI Responses", (contextWindow: number) => OpenAICtx.makeResponses({ model: "gpt", contextWindow })],
  ["Default", (contextWindow: number) => DefaultCtx.make({ model: "m", contextWindow })],
  ["Ollama", (contextWindow: number) => OllamaCtx.make({ model: "llama", contextWindow })]
] as const

const small = Window.replay([
  {
    _tag: "MessageAppended",
    id: "e1",
    message: { id: "u1", role: "user", kind: "chat", parts: [Message.text("hello")], tokens: 5 }
  }
])

describe("behaviour 5: a NaN or infinite context window is clamped in every builder's make", () => {
  for (const [name, make] of builders) {
    it(`${name}: NaN and ±Infinity take the builder's default window, so a small window needs no compression`, () => {
      const fallback = make(Number.NaN)
      const unset = (() => {
        switch (name) {
          case "Anthropic":
            return AnthropicCtx.make({ model: "claude" })
          case "OpenAI Chat":
            return OpenAICtx.make({ model: "gpt" })
          case "OpenAI Responses":
            return OpenAICtx.makeResponses({ model: "gpt" })
          case "Default":
            return DefaultCtx.make({ model: "m" })
          case "Ollama":
            return OllamaCtx.make({ model: "llama" })
        }
      })()
      for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        const builder = make(value)
        expect(builder.ctxWindow).toBe(unset.ctxWindow)
        expect(Number.isFinite(builder.budget().contextWindow)).toBe(true)
        expect(builder.budget()).toEqual(unset.budget())
        expect(builder.needsCompression(small)).toBe(false)
      }
      expect(fallback.ctxWindow).toBeGreaterThan(0)
    })
  }
})
