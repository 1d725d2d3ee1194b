// Moved from @ctxlog/providers (issue 27): one turn across providers and compaction, traced end to end,
// belongs with the turn, so providers need not depend on compaction even for tests.
import { TemplateCompactor, TieredCompaction } from "@ctxlog/compaction"
import { ContextService, Message, TokenCounter, Tracing } from "@ctxlog/core"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import { assert, describe, it } from "@effect/vitest"
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor
} from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { AnthropicCtx, AnthropicModel, RenderRecord } from "@ctxlog/providers"
import * as Otel from "@ctxlog/providers/otel"
// The providers' contract-test server (a real HTTP server on 127.0.0.1), not duplicated here.
import { serve, sse } from "../../providers/test/server.js"

const usageEvents = [
  {
    event: "message_start",
    data: JSON.stringify({
      type: "message_start",
      message: {
        id: "msg_1",
        model: "claude-sonnet-4-5-20250929",
        usage: { input_tokens: 40, cache_creation_input_tokens: 300, cache_read_input_tokens: 1200, output_tokens: 1 }
      }
    })
  },
  {
    event: "content_block_start",
    data: JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
  },
  {
    event: "content_block_delta",
    data: JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Patched." } })
  },
  {
    event: "message_delta",
    data: JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } })
  },
  { event: "message_stop", data: JSON.stringify({ type: "message_stop" }) }
]

const stream = "traced-conversation"

/** One agent turn: user message in, render recorded, model called, answer and usage recorded, compaction. */
const turn = (url: string) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    yield* ctx.setSystemPrompt(stream, "You are a careful coding agent.")
    yield* ctx.appendMessages(stream, [Message.user("The date parser fails on leap years; fix it.")])
    const window = yield* ctx.load(stream)
    const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5" })
    const built = builder.build(window)
    if (Either.isLeft(built)) return yield* Effect.die(built.left)
    yield* RenderRecord.recordRender(stream, built.right, { provider: "anthropic", model: builder.model })
    const client = AnthropicModel.make({ apiKey: "sk-ant-test", model: builder.model, baseUrl: url })
    const response = yield* client.generateRequest(built.right.request)
    yield* ctx.appendMessages(stream, [{ role: "assistant", parts: response.parts }])
    yield* RenderRecord.recordUsage(stream, response.usage, built.right.stats.total, response)
    yield* ctx.appendMessages(stream, [Message.user("Thanks. Now summarize what changed.")])
    yield* TieredCompaction.compactContext(stream, undefined, { keepTokens: 0 })
  }).pipe(Effect.withSpan("agent.turn"))

const ctxLayer = Layer.mergeAll(ContextService.layerMemory(), TemplateCompactor.layer(), TokenCounter.layerGpt())

/** The exported spans as an indented tree, children in start order. */
const treeOf = (spans: ReadonlyArray<ReadableSpan>): string => {
  const children = new Map<string | undefined, Array<ReadableSpan>>()
  const ids = new Set(spans.map((span) => span.spanContext().spanId))
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId
    const key = parent !== undefined && ids.has(parent) ? parent : undefined
    children.set(key, [...(children.get(key) ?? []), span])
  }
  const lines: Array<string> = []
  const walk = (parent: string | undefined, depth: number) => {
    const list = [...(children.get(parent) ?? [])].sort(
      (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]
    )
    for (const span of list) {
      lines.push(`${"  ".repeat(depth)}${span.name}`)
      walk(span.spanContext().spanId, depth + 1)
    }
  }
  walk(undefined, 0)
  return lines.join("\n")
}

describe("Tracing", () => {
  it.scopedLive("one agent turn is one span tree: window operations and the model call, with their attributes", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) => sse(response, usageEvents))
      const exporter = new InMemorySpanExporter()
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
      yield* turn(server.url).pipe(
        Effect.provide(Layer.merge(ctxLayer, Otel.layer({ tracerProvider: provider, serviceName: "ctxlog-test" })))
      )
      const spans = exporter.getFinishedSpans()
      const tree = treeOf(spans)
      console.log(tree)
      const root = spans.find((span) => span.name === "agent.turn")
      if (root === undefined) return assert.fail("no agent.turn span")
      const direct = spans.filter((span) => span.parentSpanContext?.spanId === root.spanContext().spanId)
      assert.deepStrictEqual(
        direct.map((span) => span.name).filter((name) => name.startsWith("ctxlog.")),
        [
          "ctxlog.context.setSystemPrompt",
          "ctxlog.context.appendMessages",
          "ctxlog.context.load",
          "ctxlog.context.run",
          "ctxlog.context.appendMessages",
          "ctxlog.context.run",
          "ctxlog.context.appendMessages"
        ]
      )
      // Every span of the turn belongs to one trace.
      assert.isTrue(spans.every((span) => span.spanContext().traceId === root.spanContext().traceId))

      const load = direct.find((span) => span.name === "ctxlog.context.load")
      assert.strictEqual(load?.attributes["ctxlog.stream"], stream)
      assert.strictEqual(load?.attributes["ctxlog.version"], 2)
      for (const partition of ["system", "knowledge", "task_state", "signals", "history", "total"]) {
        assert.isNumber(load?.attributes[`ctxlog.tokens.${partition}`], partition)
      }
      assert.isAbove(Number(load?.attributes["ctxlog.tokens.history"]), 0)

      // The model call is a GenAI inference span (`chat {model}`), a direct child of the turn.
      assert.deepStrictEqual(
        direct.filter((span) => span.name.startsWith("chat ")).map((span) => span.name),
        ["chat claude-sonnet-4-5"]
      )
      const model = direct.find((span) => span.name === "chat claude-sonnet-4-5")
      assert.deepInclude(model?.attributes, {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "anthropic",
        "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.response.id": "msg_1",
        "gen_ai.response.model": "claude-sonnet-4-5-20250929",
        "gen_ai.usage.input_tokens": 1540,
        "gen_ai.usage.output_tokens": 9,
        "gen_ai.usage.cache_read.input_tokens": 1200,
        "gen_ai.usage.cache_creation.input_tokens": 300
      })
      assert.deepStrictEqual(model?.attributes["gen_ai.response.finish_reasons"], ["stop"])

      const usage = direct.filter((span) => span.name === "ctxlog.context.run")[1]
      assert.deepInclude(usage?.attributes, {
        "ctxlog.stream": stream,
        "ctxlog.events": 1,
        "gen_ai.usage.cache_read.input_tokens": 1200,
        "gen_ai.usage.cache_creation.input_tokens": 300
      })

      // The compaction writes through ContextService.run: its span carries the tier.
      const compaction = spans.find(
        (span) => span.name === "ctxlog.context.run" && span.attributes["ctxlog.compaction.tier"] !== undefined
      )
      assert.strictEqual(compaction?.attributes["ctxlog.compaction.tier"], "manual")
      assert.include(tree, "TieredCompaction.compactContext\n    ctxlog.context.load")
      // ... and the compaction is a span of its own under it, with its receipt.
      const compact = spans.find((span) => span.name === `compact ${stream}`)
      assert.strictEqual(compact?.parentSpanContext?.spanId, compaction?.spanContext().spanId)
      assert.deepInclude(compact?.attributes, {
        "gen_ai.operation.name": "compact",
        "gen_ai.conversation.compacted": true,
        "gen_ai.conversation.id": stream,
        "ctxlog.compaction.tier": "manual"
      })
    })
  )

  it.scopedLive("off by default: with an OpenTelemetry tracer but without Tracing.layer, ctxlog adds no spans", () =>
    Effect.gen(function* () {
      const server = yield* serve((_request, response) => sse(response, usageEvents))
      const exporter = new InMemorySpanExporter()
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
      const tracerOnly = Layer.discard(
        OtelTracer.layer.pipe(
          Layer.provide(Layer.succeed(OtelTracer.OtelTracerProvider, provider)),
          Layer.provide(Otel.resourceLayer({}))
        )
      )
      yield* turn(server.url).pipe(Effect.provide(Layer.merge(ctxLayer, tracerOnly)))
      const names = exporter.getFinishedSpans().map((span) => span.name)
      assert.include(names, "agent.turn")
      assert.deepStrictEqual(
        names.filter((name) => name.startsWith("ctxlog.")),
        []
      )
      assert.isFalse(yield* Tracing.TracingEnabled)
    })
  )
})
