/**
 * Issue 35: the `ai-sdk` framework format. A render under a builder config with `format: "ai-sdk"` is the
 * AI SDK prompt, and it follows the provider builder's decisions: a summary in history is a wrapped
 * system message for the OpenAI and default builders and a wrapped user message for the Anthropic and
 * Ollama builders (before, the integrations handed the model a bare user message while the record held
 * the builder's wrapped system message); parts keep their provider options; the results of one round
 * are one tool message; approvals are left out as the AI SDK leaves them out of a model call; the
 * caller's cache hints and the turn reminder are placed; the request is plain JSON.
 */
import { Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { type ProviderConfig, forProvider, isProviderRequest } from "../src/CtxBuilder.js"
import { msg, windowOf } from "./fixture.js"

const window = windowOf([
  { _tag: "SystemPromptSet", messages: [msg("sys", Message.system("You are terse."), 5)] },
  {
    _tag: "MessagesInjected",
    kind: "recall",
    messages: [msg("rc", Message.system("The user likes small commits."), 8, "recall")],
    replacesInHistory: false
  },
  {
    _tag: "MessageAppended",
    message: msg(
      "sum",
      { role: "user", kind: "summary", parts: [Message.text("Earlier: a.ts was read.")] },
      8,
      "summary"
    )
  },
  { _tag: "MessageAppended", message: msg("u1", Message.user("Read b.ts and c.ts"), 6) },
  {
    _tag: "MessageAppended",
    message: msg(
      "a1",
      {
        role: "assistant",
        parts: [
          Message.reasoning("Two reads.", { itemId: "rs_1", encryptedContent: "gAAAA" }),
          { ...Message.toolCall("c1", "read_file", { path: "b.ts" }), providerOptions: { openai: { itemId: "fc_1" } } },
          Message.toolCall("c2", "read_file", { path: "c.ts" }),
          Message.toolApprovalRequest("ap1", "c2")
        ]
      },
      20
    )
  },
  { _tag: "MessageAppended", message: msg("t1", Message.tool("c1", "b"), 2) },
  { _tag: "MessageAppended", message: msg("t2", Message.tool("c2", "c"), 2) }
])

const render = (config: ProviderConfig, options = {}) => {
  const built = forProvider(config).build(window, options)
  if (Either.isLeft(built)) throw new Error(built.left.message)
  return built.right.request as { readonly format: string; readonly prompt: ReadonlyArray<Record<string, unknown>> }
}

const summaryText = '<context kind="summary">\nEarlier: a.ts was read.\n</context>'

describe("the ai-sdk framework format (issue 35)", () => {
  it("follows the OpenAI builder: context in history is a wrapped system message", () => {
    const request = render({ provider: "openai", model: "gpt-4.1", format: "ai-sdk" })
    assert.isFalse(isProviderRequest(request as never))
    assert.strictEqual(request.format, "ai-sdk")
    assert.deepStrictEqual(JSON.parse(JSON.stringify(request)), request)
    assert.deepStrictEqual(
      request.prompt.map((message) => message.role),
      ["system", "system", "system", "user", "assistant", "tool"]
    )
    assert.strictEqual(request.prompt[1]?.content, '<context kind="recall">\nThe user likes small commits.\n</context>')
    assert.deepStrictEqual(request.prompt[2], { role: "system", content: summaryText })
    // Every part with its provider data; the approval request left out; both results in one tool message.
    assert.deepStrictEqual(request.prompt[4], {
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "Two reads.",
          providerOptions: { openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAAA" } }
        },
        {
          type: "tool-call",
          toolCallId: "c1",
          toolName: "read_file",
          input: { path: "b.ts" },
          providerOptions: { openai: { itemId: "fc_1" } }
        },
        { type: "tool-call", toolCallId: "c2", toolName: "read_file", input: { path: "c.ts" } }
      ]
    })
    assert.deepStrictEqual(
      ((request.prompt[5]?.content ?? []) as ReadonlyArray<{ toolCallId: string }>).map((part) => part.toolCallId),
      ["c1", "c2"]
    )
  })

  it("follows the Anthropic builder: context in history is a wrapped user message", () => {
    const request = render({ provider: "anthropic", model: "claude-sonnet-4-5", format: "ai-sdk" })
    assert.deepStrictEqual(request.prompt[2], { role: "user", content: [{ type: "text", text: summaryText }] })
  })

  it("places the caller's cache hints and the turn reminder", () => {
    const request = render(
      { provider: "default", model: "m", format: "ai-sdk" },
      { cacheHints: [{ messageId: "sys" }, { messageId: "t2", ttl: "1h" }], turnReminder: "Be brief." }
    )
    assert.deepStrictEqual(request.prompt[0]?.providerOptions, {
      anthropic: { cacheControl: { type: "ephemeral" } }
    })
    assert.deepStrictEqual(request.prompt.at(-1)?.providerOptions, {
      anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } }
    })
    // The reminder leads the last user message.
    assert.deepStrictEqual(request.prompt[3], {
      role: "user",
      content: [
        { type: "text", text: "Be brief." },
        { type: "text", text: "Read b.ts and c.ts" }
      ]
    })
  })
})
