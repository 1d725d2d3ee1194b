import { CompressionPlan, Message, Window } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { AnthropicCtx, CtxBuilder, DefaultCtx, OllamaCtx, OpenAICtx, Truncation } from "../src/index.js"
import { fixtureEvents, fixtureWindow, msg, readFileTool, windowOf } from "./fixture.js"

const options = { turnReminder: "<reminder>Keep edits minimal.</reminder>", tools: [readFileTool] }

const builders = [
  ["anthropic", CtxBuilder.forProvider({ provider: "anthropic", model: "claude-sonnet-4-5" })],
  ["openai", CtxBuilder.forProvider({ provider: "openai", model: "gpt-4o" })],
  ["openai-reasoning", CtxBuilder.forProvider({ provider: "openai", model: "o3-mini" })],
  ["openai-responses", CtxBuilder.forProvider({ provider: "openai", api: "responses", model: "gpt-5" })],
  ["ollama", CtxBuilder.forProvider({ provider: "ollama", model: "qwen2.5:7b", contextWindow: 2048 })],
  ["default", CtxBuilder.forProvider({ provider: "default", model: "local-model" })]
] as const

const built = <R>(builder: CtxBuilder.CtxBuilder<R>, window = fixtureWindow) => {
  const result = builder.build(window, options)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

describe("snapshots of the same fixture window", () => {
  for (const [label, builder] of builders) {
    it(`${label} request`, async () => {
      const { request, stats } = built(builder)
      await expect(`${JSON.stringify({ request, stats }, null, 2)}\n`).toMatchFileSnapshot(
        `./__snapshots__/${label}.request.json`
      )
    })
  }
})

describe("AnthropicCtx", () => {
  const anthropic = AnthropicCtx.make({ model: "claude-sonnet-4-5" })

  it("puts identity then stable then injected knowledge in system, task state first, reminder last", () => {
    const { request } = built(anthropic)
    expect(request.system?.map((block) => block.text.slice(0, 20))).toEqual([
      "You are a careful co",
      "The project uses pnp",
      '<context kind="recal'
    ])
    const first = request.messages[0]
    expect(first?.role).toBe("user")
    expect(JSON.stringify(first?.content)).toContain("<task_state>")
    expect(JSON.stringify(first?.content)).toContain("Build cache is cold")
    const last = request.messages[request.messages.length - 1]
    expect(last?.content[0]).toEqual({ type: "text", text: "<reminder>Keep edits minimal.</reminder>" })
  })

  it("keeps the prefix byte-stable when the reminder changes", () => {
    const a = built(anthropic).request
    const b = anthropic.build(fixtureWindow, { ...options, turnReminder: "another reminder" })
    if (Either.isLeft(b)) throw new Error(b.left.message)
    expect(JSON.stringify(b.right.request.system)).toBe(JSON.stringify(a.system))
    expect(JSON.stringify(b.right.request.messages.slice(0, -1))).toBe(JSON.stringify(a.messages.slice(0, -1)))
  })

  it("answers both parallel calls in the one user message right after them", () => {
    const { request } = built(anthropic)
    const index = request.messages.findIndex((message) => message.content.some((block) => block.type === "tool_use"))
    expect(request.messages[index + 1]?.content.map((block) => block.type)).toEqual(["tool_result", "tool_result"])
    expect(request.messages[index + 1]?.content[1]).toMatchObject({ tool_use_id: "call_read_src", is_error: true })
  })

  it("skips breakpoints below the minimum cacheable length", () => {
    const haiku = AnthropicCtx.make({ model: "claude-3-5-haiku" })
    // Identity is 1200 tokens: enough for Sonnet (1024), not for Haiku 3.5 (2048).
    expect(built(anthropic).stats.cacheBreakpoints).toBe(4)
    expect(AnthropicCtx.minCacheableTokensFor("claude-3-5-haiku")).toBe(2048)
    expect(built(haiku).request.system?.[0]?.cache_control).toBeUndefined()
    expect(built(haiku).stats.cacheBreakpoints).toBe(0)
    // Every slot qualifies at 1 token: five candidates, the tools breakpoint is the one dropped.
    const all = built(AnthropicCtx.make({ model: "claude-3-5-haiku", minCacheableTokens: 1 }))
    expect(all.stats.cacheBreakpoints).toBe(4)
    expect(all.request.tools?.[0]?.cache_control).toBeUndefined()
    expect(all.request.system?.map((block) => block.cache_control?.type)).toEqual([
      "ephemeral",
      "ephemeral",
      "ephemeral"
    ])
  })

  it("rejects a window whose tool call has no result yet, naming the call", () => {
    const pending = windowOf([
      ...fixtureEvents,
      {
        _tag: "MessageAppended",
        message: msg("a-3", Message.assistant("", [Message.toolCall("call_patch", "edit", { path: "src/date.ts" })]), 9)
      }
    ])
    const result = anthropic.build(pending, options)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left._tag).toBe("InvalidRequest")
      expect(result.left.toolCallId).toBe("call_patch")
      expect(result.left.messageId).toBe("a-3")
    }
  })

  it("rejects an orphaned tool result left by removing its call", () => {
    const orphaned = Window.evolve(fixtureWindow, {
      _tag: "MessagesRemoved",
      id: "rm-1",
      messageIds: ["a-1"],
      reason: "test"
    })
    for (const [, builder] of builders) {
      const result = builder.build(orphaned, options)
      expect(Either.isLeft(result) && result.left.toolCallId).toBe("call_read_test")
    }
  })
})

describe("OpenAICtx", () => {
  it("uses developer for reasoning models and system otherwise", () => {
    expect(OpenAICtx.isReasoningModel("o3-mini")).toBe(true)
    expect(OpenAICtx.isReasoningModel("gpt-5.1")).toBe(true)
    expect(OpenAICtx.isReasoningModel("gpt-4o")).toBe(false)
    const reasoning = built(OpenAICtx.make({ model: "o1" }))
    expect(reasoning.request.messages[0]?.role).toBe("developer")
    const plain = built(OpenAICtx.make({ model: "gpt-4o" }))
    expect(plain.request.messages[0]?.role).toBe("system")
  })

  it("moves a tool result right after its call even when a user message came between", () => {
    const window = windowOf([
      {
        _tag: "MessageAppended",
        message: msg("a-1", Message.assistant("", [Message.toolCall("c1", "ls", { path: "." })]), 5)
      },
      { _tag: "MessageAppended", message: msg("u-1", Message.user("also check tests"), 5) },
      { _tag: "MessageAppended", message: msg("t-1", Message.tool("c1", "a b c"), 5) }
    ])
    const { request } = built(OpenAICtx.make({ model: "gpt-4o" }), window)
    expect(request.messages.map((message) => message.role)).toEqual(["assistant", "tool", "user"])
  })
})

describe("OllamaCtx", () => {
  it("floors the budget at 4K and trims tool schemas", () => {
    const ollama = OllamaCtx.make({ model: "llama3.2", contextWindow: 1000 })
    expect(ollama.ctxWindow).toBe(4096)
    const { request } = built(ollama)
    const tool = request.tools?.[0]?.function
    expect(tool?.description).toBe("Read a file from the workspace.")
    expect(JSON.stringify(tool?.parameters)).not.toContain("title")
    expect(request.messages.filter((message) => message.role === "system")).toHaveLength(1)
  })

  it("truncateToolOutput follows the window: a share of the budget in tokens (issue 11 item 3)", () => {
    const long = Message.toolResult("c1", "x".repeat(50_000))
    // At Ollama's 4K floor: (4096 − 1024 output reserve) × 0.1 = 307 tokens ≈ 1,228 characters.
    const floor = OllamaCtx.make({ model: "llama3.2", contextWindow: 2048 }).truncateToolOutput(long, "bash").content
    expect(floor).toContain(`[... ${50_000 - 1228} chars elided ...]`)
    const ollama = OllamaCtx.make({ model: "llama3.2", contextWindow: 16_384 }).truncateToolOutput(long, "bash").content
    const anthropic = AnthropicCtx.make({ model: "claude-sonnet-4-5" }).truncateToolOutput(long, "bash").content
    expect(floor.length).toBeLessThan(ollama.length)
    expect(ollama.length).toBeLessThan(anthropic.length)
    // 200K window: (200,000 − 4,096) × 0.1 tokens is more than the whole output.
    expect(anthropic).toBe(long.content)
    // Configured character limits still win.
    const fixed = OllamaCtx.make({ model: "llama3.2", toolOutputLimits: { defaultChars: 100 } })
    expect(fixed.truncateToolOutput(long, "bash").content).toContain(`[... ${50_000 - 100} chars elided ...]`)
  })
})

describe("Truncation", () => {
  it("keeps head and tail with a marker and honours per-tool limits", () => {
    const text = `${"a".repeat(100)}${"b".repeat(100)}`
    expect(Truncation.headTail(text, 50)).toBe(`${"a".repeat(30)}\n[... 150 chars elided ...]\n${"b".repeat(20)}`)
    expect(Truncation.headTail("short", 50)).toBe("short")
    const limits = { defaultChars: 10, perTool: { grep: 100 } }
    expect(Truncation.limitFor(limits, "grep")).toBe(100)
    expect(Truncation.limitFor(limits, "bash")).toBe(10)
  })
})

describe("budget and compression", () => {
  it("the budget is the context window minus output reserve, tool schemas and reminder (issue 11 item 1)", () => {
    const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5", contextWindow: 16_384 })
    expect(builder.budget()).toEqual({ contextWindow: 16_384, outputReserve: 4096, toolTokens: 0, reminderTokens: 0 })
    // A default reserve never takes more than a quarter of a small window (an explicit one is taken as given).
    const small = AnthropicCtx.make({ model: "claude-sonnet-4-5", contextWindow: 4096 })
    expect(small.budget().outputReserve).toBe(1024)
    expect(built(small).request.max_tokens).toBe(1024)
    const tools = [{ name: "bash", description: "Run a command.", inputSchema: { type: "object" } }]
    const budget = builder.budget({ tools, turnReminder: "Keep edits minimal.", maxOutputTokens: 1000 })
    expect(budget.outputReserve).toBe(1000)
    expect(budget.toolTokens).toBeGreaterThan(0)
    expect(budget.reminderTokens).toBeGreaterThan(0)
    // The render's stats carry the same numbers.
    const { stats } = built(builder)
    expect(stats.budget).toBe(16_384 - 4096 - stats.toolTokens - stats.reminderTokens)
    expect(stats.outputReserve).toBe(4096)
    expect(stats.contextWindow).toBe(16_384)
    // Each provider has its own default reserve; Ollama's is small, like its windows.
    expect(OllamaCtx.make({ model: "llama3.2" }).budget().outputReserve).toBe(OllamaCtx.defaultOutputReserve)
    expect(OllamaCtx.defaultOutputReserve).toBeLessThan(AnthropicCtx.defaultOutputReserve)
  })

  it("needsCompression uses the calibrated estimate against the budget after the output reserve", () => {
    const builder = DefaultCtx.make({ model: "m", contextWindow: 2000, maxOutputTokens: 200 })
    // 1692 tokens ≥ 0.8 × (2000 − 200).
    expect(fixtureWindow.tokens.total).toBe(1692)
    expect(builder.needsCompression(fixtureWindow)).toBe(true)
    const roomy = DefaultCtx.make({ model: "m", contextWindow: 4000, maxOutputTokens: 200 })
    expect(roomy.needsCompression(fixtureWindow)).toBe(false)
    // The same window with a 2,000-token answer reserved no longer fits comfortably.
    expect(roomy.needsCompression(fixtureWindow, { maxOutputTokens: 2000 })).toBe(true)
    // The provider reported twice what we estimated: the same window now needs compression.
    const calibrated = Window.evolve(fixtureWindow, {
      _tag: "UsageReported",
      id: "u",
      provider: "p",
      model: "m",
      estimatedInputTokens: 1000,
      inputTokens: 2000,
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0
    })
    expect(roomy.needsCompression(calibrated)).toBe(true)
  })

  it("compressionPlan is the compaction package's planner: whole tool rounds, an oversized tail drains (issue 11 item 7)", () => {
    const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5" })
    const plan = builder.compressionPlan(fixtureWindow, 30)
    expect(plan.removeIds).toEqual(["u-1", "a-1", "t-1", "t-2"])
    expect(plan.content).toContain("tool_call call_read_test read_file")
    expect(plan).toMatchObject(CompressionPlan.compressionPlan(fixtureWindow, 30))
    // A ceiling below the newest round: nothing is kept for its own sake (the old builder kept it all)
    // but the user's latest ask, which stays verbatim (issue 39, ADR 0114).
    const tight = builder.compressionPlan(fixtureWindow, 0)
    const ask = Window.latestUserAsk(fixtureWindow)
    expect(ask).toBe("u-2")
    expect(tight.removeIds).toEqual(fixtureWindow.history.filter((m) => m.id !== ask).map((m) => m.id))
    expect(tight.keptTokens).toBe(fixtureWindow.history.find((m) => m.id === ask)?.tokens)
    const roomy = builder.compressionPlan(fixtureWindow, 10_000)
    expect(roomy.removeIds).toEqual([])
  })

  it("compressionPlan drains a 5,000-token newest round under a 1,000-token ceiling, keeping tool rounds whole", () => {
    const window = windowOf([
      { _tag: "MessageAppended", message: msg("u-1", Message.user("fix it"), 10) },
      {
        _tag: "MessageAppended",
        message: msg("a-1", Message.assistant("thinking ".repeat(50), [Message.toolCall("c1", "bash", {})]), 3000)
      },
      { _tag: "MessageAppended", message: msg("t-1", Message.tool("c1", "output"), 2000) },
      { _tag: "MessageAppended", message: msg("a-2", Message.assistant("done"), 5) }
    ])
    const plan = AnthropicCtx.make({ model: "claude-sonnet-4-5" }).compressionPlan(window, 1000)
    expect(plan.keptTokens).toBeLessThanOrEqual(1000)
    // The round drains; the user's ask that started it stays verbatim (issue 39, ADR 0114).
    expect(plan.removeIds).toEqual(["a-1", "t-1"])
  })
})

describe("Anthropic text rules", () => {
  it("drops whitespace-only text and trims a final assistant prefill", () => {
    const window = windowOf([
      { _tag: "MessageAppended", message: msg("u-1", Message.user("hi"), 2) },
      { _tag: "MessageAppended", message: msg("a-1", Message.assistant("  \n"), 2) },
      { _tag: "MessageAppended", message: msg("u-2", Message.user("again"), 2) },
      { _tag: "MessageAppended", message: msg("a-2", Message.assistant("Sure, "), 2) }
    ])
    const { request } = built(AnthropicCtx.make({ model: "claude-sonnet-4-5" }), window)
    expect(request.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "hi" },
          { type: "text", text: "<reminder>Keep edits minimal.</reminder>" },
          { type: "text", text: "again" }
        ]
      },
      { role: "assistant", content: [{ type: "text", text: "Sure," }] }
    ])
  })
})
