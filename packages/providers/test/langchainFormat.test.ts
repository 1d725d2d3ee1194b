/**
 * The `langchain` framework format: a Chat Completions render, message for message, as LangChain message
 * JSON (what `@ctxlog/langgraph`'s pre-model hook hands the model), made into LangChain messages by
 * `fromLangChainFormat`; another builder's render is refused by name.
 */
import { Message } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { fromLangChainFormat, type LangChainRequest } from "../src/adapters/langchain.js"
import { CtxBuilder, DefaultCtx } from "../src/index.js"
import { fixtureWindow, msg, windowOf } from "./fixture.js"

describe("the langchain format", () => {
  it("is the Chat Completions render, message for message, in LangChain's form", () => {
    const window = windowOf([
      { _tag: "SystemPromptSet", messages: [msg("s", Message.system("Be terse."), 3)] },
      { _tag: "MessageAppended", message: msg("u-1", Message.user("list it"), 5) },
      {
        _tag: "MessageAppended",
        message: msg("a-1", Message.assistant("", [Message.toolCall("c1", "ls", { path: "." })]), 5)
      },
      { _tag: "MessageAppended", message: msg("t-1", Message.tool("c1", "a b c"), 5) }
    ])
    const plain = DefaultCtx.make({ model: "m" }).build(window)
    const formatted = CtxBuilder.forProvider({ provider: "default", model: "m", format: "langchain" }).build(window)
    if (Either.isLeft(plain) || Either.isLeft(formatted)) throw new Error("render failed")
    const request = formatted.right.request as LangChainRequest
    expect(CtxBuilder.isProviderRequest(formatted.right.request)).toBe(false)
    expect(request.format).toBe("langchain")
    expect(request.messages.map((message) => message.type)).toEqual(
      plain.right.request.messages.map((message) =>
        message.role === "user" ? "human" : message.role === "assistant" ? "ai" : message.role
      )
    )
    expect(request.messages).toEqual([
      { type: "system", id: "render-0", content: "Be terse." },
      { type: "human", id: "render-1", content: "list it" },
      {
        type: "ai",
        id: "render-2",
        content: "",
        tool_calls: [{ type: "tool_call", id: "c1", name: "ls", args: { path: "." } }]
      },
      { type: "tool", id: "render-3", content: "a b c", tool_call_id: "c1" }
    ])
    // The stats are the provider builder's.
    expect(formatted.right.stats).toEqual(plain.right.stats)
    const messages = fromLangChainFormat(request.messages)
    expect(messages.map((message) => [message.getType(), message.id])).toEqual([
      ["system", "render-0"],
      ["human", "render-1"],
      ["ai", "render-2"],
      ["tool", "render-3"]
    ])
  })

  it("refuses another builder's render, naming it", () => {
    for (const config of [
      { provider: "anthropic", model: "claude-sonnet-4-5", format: "langchain" },
      { provider: "openai", api: "responses", model: "gpt-4o", format: "langchain" }
    ] as const) {
      const result = CtxBuilder.forProvider(config).build(fixtureWindow)
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) expect(result.left.detail).toContain("Chat Completions")
    }
  })
})
