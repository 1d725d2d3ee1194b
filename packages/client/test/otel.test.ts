// Issue 41: `createContext({ tracerProvider })` — the library takes a tracer provider (off without it).
// `ctx.modelCall` makes the GenAI chat span of a model call made with a turn's render (the span every
// integration makes): request attributes at the start, the answer's at the end, the render's
// provenance; a failed call ends its span with `error.type`. Spans captured with the OpenTelemetry
// SDK's in-memory exporter.
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { assert, describe, it } from "vitest"
import { createContext, Message } from "../src/index.js"

const policy = {
  builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 8192, maxOutputTokens: 512 },
  compaction: {}
} as const

describe("tracerProvider and modelCall", () => {
  it("a chat span per model call, with the render's provenance and the answer; a failure sets error.type", async () => {
    const exporter = new InMemorySpanExporter()
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    const ctx = await createContext({ memory: true, tracerProvider })
    const turn = ctx.turn("traced", policy)
    await turn.prepare([Message.user("Why does the build fail?")])
    const rendered = await turn.render()
    const span = ctx.modelCall("traced", rendered, {
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      endpoint: "https://api.anthropic.com/v1",
      stream: true
    })
    await span.end({
      id: "msg_1",
      model: "claude-sonnet-4-5-20250929",
      finishReason: "end_turn",
      usage: { inputTokens: 900, outputTokens: 12, cacheReadTokens: 512, cacheWriteTokens: 64 }
    })
    const failed = ctx.modelCall("traced", await turn.render({ iteration: 1 }), {
      provider: "anthropic",
      model: "claude-sonnet-4-5"
    })
    await failed.fail({ _tag: "ProviderError", reason: "rate_limited" })
    await ctx.close()

    const chats = exporter.getFinishedSpans().filter((item) => item.name === "chat claude-sonnet-4-5")
    assert.strictEqual(chats.length, 2)
    const [ok, bad] = chats
    const a = ok?.attributes ?? {}
    assert.strictEqual(ok?.kind, 2)
    assert.strictEqual(a["gen_ai.operation.name"], "chat")
    assert.strictEqual(a["gen_ai.provider.name"], "anthropic")
    assert.strictEqual(a["gen_ai.conversation.id"], "traced")
    assert.strictEqual(a["gen_ai.request.stream"], true)
    assert.strictEqual(a["gen_ai.request.max_tokens"], 512)
    assert.strictEqual(a["server.address"], "api.anthropic.com")
    assert.strictEqual(a["server.port"], 443)
    assert.strictEqual(a["gen_ai.response.id"], "msg_1")
    assert.strictEqual(a["gen_ai.response.model"], "claude-sonnet-4-5-20250929")
    assert.deepStrictEqual(a["gen_ai.response.finish_reasons"], ["stop"])
    assert.strictEqual(a["gen_ai.usage.cache_read.input_tokens"], 512)
    assert.strictEqual(a["gen_ai.usage.cache_creation.input_tokens"], 64)
    assert.match(String(a["ctxlog.render.sha256"]), /^[0-9a-f]{64}$/)
    assert.deepStrictEqual(a["ctxlog.context.element.kinds"], ["history"])
    assert.strictEqual(bad?.attributes["error.type"], "rate_limited")
    assert.notProperty(bad?.attributes ?? {}, "gen_ai.response.id")
  })

  it("without a tracer provider modelCall records nothing and costs no fiber", async () => {
    const ctx = await createContext({ memory: true })
    const turn = ctx.turn("untraced", policy)
    await turn.prepare([Message.user("Hello")])
    const span = ctx.modelCall("untraced", await turn.render(), { provider: "anthropic", model: "m" })
    await span.end({ finishReason: "stop" })
    await ctx.close()
    // The no-op span is shared: nothing was started for this call.
    const other = await createContext({ memory: true })
    assert.strictEqual(other.modelCall("x", undefined, { provider: "p", model: "m" }), span)
    await other.close()
  })
})
