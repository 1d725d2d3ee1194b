// Issue 41: one agent turn with tools and a compaction, traced with the OpenTelemetry SDK — under its
// in-memory exporter (every required and recommended GenAI attribute of the chat span, the compaction
// span, the provenance attributes; opt-in content), and once exported over OTLP/HTTP by the one switch
// (`Otel.layerFromEnv`) to a real receiver on 127.0.0.1 that decodes the OTLP/HTTP JSON payload.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService, EventHash, EventLog, GenAi, Message } from "@ctxlog/core"
import * as Otel from "@ctxlog/providers/otel"
import { GenAiSpans } from "@ctxlog/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as Agent from "../src/Agent.js"
import * as Provider from "../src/Provider.js"
import * as Stack from "../src/Stack.js"
import * as Tools from "../src/Tools.js"
import * as Ui from "../src/Ui.js"
import { anthropic, keys, serveApi, writeSse } from "./support/server.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-agent-otel-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ev = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`

/** message_start with this call's id and usage (cache read and write included in the input total). */
const start = (n: number) =>
  ev("message_start", {
    message: {
      id: `msg_${n}`,
      type: "message",
      role: "assistant",
      content: [],
      model: "claude-test-20260101",
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 100 * n, cache_creation_input_tokens: 30, cache_read_input_tokens: 700, output_tokens: 1 }
    }
  })

/** Call 1 reads NOTES.md, call 2 answers. */
const answer = (response: Parameters<Parameters<typeof serveApi>[1]>[0], n: number) =>
  n % 2 === 1
    ? writeSse(response, [
        start(n),
        ...anthropic.toolUse(0, `toolu_${n}`, "read_file", JSON.stringify({ path: "NOTES.md" })),
        ...anthropic.stop("tool_use")
      ])
    : writeSse(response, [start(n), ...anthropic.text(0, "The answer is 42."), ...anthropic.stop("end_turn")])

/** Older conversation, enough to put the window under hard pressure so the turn compacts. */
const history: ReadonlyArray<Message.MessageInput> = Array.from({ length: 40 }, (_, i) =>
  i % 2 === 0
    ? Message.user(`Question ${i}: ${"tell me about the parser and its leap-year handling ".repeat(12)}`)
    : Message.assistant(`Answer ${i}: ${"the parser reads dates field by field and checks each range ".repeat(12)}`)
)

/** The agent on a SQLite file and an Anthropic-speaking server; one turn after the seeded history. */
const agentTurn = (url: string, name: string) =>
  Effect.gen(function* () {
    const workspace = mkdtempSync(join(dir, "ws-"))
    writeFileSync(join(workspace, "NOTES.md"), "# notes\nThe answer is 42.\n")
    const provider = yield* Provider.make({
      provider: "anthropic",
      model: "claude-test",
      baseUrl: url,
      contextWindow: 8_000,
      maxOutputTokens: 512,
      env: { ANTHROPIC_API_KEY: keys.anthropic }
    })
    const tools = Tools.make({ workspace, readOutput: Agent.noReader })
    const stream = `otel-${name}`
    const config: Agent.Config = { stream, provider, tools, ui: Ui.make({ quiet: true }) }
    const budget = Agent.budgetFor(config)
    return yield* Effect.gen(function* () {
      yield* Agent.open(config, { knowledge: ["The project is a date parser."] })
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages(stream, history)
      const report = yield* Agent.turn(config, "What does NOTES.md say?")
      const log = yield* EventLog.EventLog
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream))).map((e) => e.event)
      return { report, events, stream }
    }).pipe(Effect.provide(Stack.layer({ _tag: "sqlite", filename: join(dir, `${name}.db`) }, budget)))
  })

type Attrs = Readonly<Record<string, unknown>>

/** The checks both exports must pass, over a span list reduced to name, kind and attributes. */
const checkSpans = (
  spans: ReadonlyArray<{ readonly name: string; readonly kind: number; readonly attributes: Attrs }>,
  run: { readonly stream: string; readonly events: ReadonlyArray<{ readonly _tag: string; readonly id: string }> }
) => {
  const chats = spans.filter((span) => span.name === "chat claude-test")
  assert.strictEqual(chats.length, 2, spans.map((span) => span.name).join(", "))
  const renders = run.events.filter((event) => event._tag === "PromptRendered")
  assert.strictEqual(renders.length, 2)
  chats.forEach((chat, i) => {
    // Every required and recommended attribute and the provenance, checked as for every integration.
    const { kinds, reasons } = GenAiSpans.assertChatSpan(chat, {
      provider: "anthropic",
      model: "claude-test",
      stream: run.stream,
      events: run.events,
      renderId: renders[i]?.id
    })
    const a = chat.attributes
    assert.strictEqual(a["gen_ai.request.stream"], true)
    assert.strictEqual(a["gen_ai.request.max_tokens"], 512)
    assert.strictEqual(a["server.address"], "127.0.0.1")
    assert.strictEqual(a["gen_ai.response.id"], `msg_${i + 1}`)
    assert.strictEqual(a["gen_ai.response.model"], "claude-test-20260101")
    assert.deepStrictEqual(a["gen_ai.response.finish_reasons"], [i === 0 ? "tool_call" : "stop"])
    // Anthropic reports input without the cache: ctxlog's input total includes both, as the conventions ask.
    GenAiSpans.assertUsage(chat, { input: 100 * (i + 1) + 30 + 700, output: 20, cacheRead: 700, cacheWrite: 30 })
    assert.includeMembers([...kinds], ["system", "knowledge", "history"])
    // The compaction's result is in the window: a summary, or the seam it was folded into.
    assert.isTrue(kinds.includes("summary") || kinds.includes("seam"), kinds.join(","))
    if (i === 1) assert.include([...reasons], "unseen_tool_result")
  })
  GenAiSpans.assertCompactionSpans(spans, run.stream, run.events)
}

describe("OpenTelemetry GenAI spans of an agent turn", () => {
  it.scopedLive("in-memory exporter: chat spans, the compaction span and provenance; content only when opted in", () =>
    Effect.gen(function* () {
      const server = yield* serveApi("anthropic", answer)
      const exporter = new InMemorySpanExporter()
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
      const run = yield* agentTurn(server.url, "memory").pipe(
        Effect.provide(Otel.layer({ tracerProvider: provider, serviceName: "ctxlog-agent-test" }))
      )
      assert.strictEqual(run.report.modelCalls, 2)
      assert.deepStrictEqual(
        server.received.map((request) => request.refused),
        [undefined, undefined]
      )
      const spans = exporter.getFinishedSpans()
      checkSpans(spans, run)
      // The render hash on the span is the hash of the bytes the server received.
      const chats = spans.filter((span) => span.name === "chat claude-test")
      const hashes = chats.map((span) => span.attributes["ctxlog.render.sha256"])
      assert.deepStrictEqual(
        hashes,
        server.received.map((request) => EventHash.sha256(request.body))
      )

      // Opt-in content: the input and output messages as the conventions' JSON schemas say.
      exporter.reset()
      const server2 = yield* serveApi("anthropic", answer)
      yield* agentTurn(server2.url, "content").pipe(
        Effect.provideService(GenAi.CaptureContent, true),
        Effect.provide(Otel.layer({ tracerProvider: provider }))
      )
      const withContent = exporter.getFinishedSpans().filter((span) => span.name === "chat claude-test")
      assert.strictEqual(withContent.length, 2)
      const input = JSON.parse(String(withContent[1]?.attributes["gen_ai.input.messages"]))
      const output = JSON.parse(String(withContent[0]?.attributes["gen_ai.output.messages"]))
      const system = JSON.parse(String(withContent[0]?.attributes["gen_ai.system_instructions"]))
      assert.deepInclude(system[0], { type: "text" })
      const parts = input.flatMap((message: { parts: ReadonlyArray<{ type: string }> }) => message.parts)
      assert.includeMembers(
        parts.map((part: { type: string }) => part.type),
        ["text", "compaction", "tool_call", "tool_call_response"]
      )
      assert.deepStrictEqual(output, [
        {
          role: "assistant",
          parts: [{ type: "tool_call", id: "toolu_1", name: "read_file", arguments: { path: "NOTES.md" } }],
          finish_reason: "tool_call"
        }
      ])
    })
  )

  it.scopedLive("one switch: OTEL_EXPORTER_OTLP_ENDPOINT exports the same spans over OTLP/HTTP to a receiver", () =>
    Effect.gen(function* () {
      assert.isFalse(Otel.exportRequested({}))
      assert.isFalse(Otel.exportRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_SDK_DISABLED: "true" }))
      const receiver = yield* otlpReceiver
      const server = yield* serveApi("anthropic", answer)
      const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "agent-under-test" }
      assert.isTrue(Otel.exportRequested(env))
      // The layer's release flushes the batch processor: the spans are at the receiver when it returns.
      const run = yield* Effect.scoped(
        Effect.flatMap(Layer.build(Otel.layerFromEnv({ env })), (context) =>
          agentTurn(server.url, "otlp").pipe(Effect.provide(context))
        )
      )
      assert.isAbove(receiver.requests.length, 0)
      for (const request of receiver.requests) {
        assert.strictEqual(request.url, "/v1/traces")
        assert.strictEqual(request.contentType, "application/json")
      }
      const decoded = receiver.requests.flatMap((request) => decodeOtlp(request.body))
      assert.isTrue(decoded.every((span) => span.service === "agent-under-test"))
      checkSpans(decoded, run)
    })
  )
})

/** OTLP/HTTP JSON: an AnyValue to a plain value. */
const anyValue = (value: Readonly<Record<string, unknown>>): unknown => {
  if ("stringValue" in value) return value.stringValue
  if ("boolValue" in value) return value.boolValue
  if ("intValue" in value) return Number(value.intValue)
  if ("doubleValue" in value) return Number(value.doubleValue)
  if ("arrayValue" in value) {
    const values = (value.arrayValue as { values?: ReadonlyArray<Record<string, unknown>> }).values ?? []
    return values.map(anyValue)
  }
  return undefined
}

interface KeyValue {
  readonly key: string
  readonly value: Readonly<Record<string, unknown>>
}
const attributesOf = (list: ReadonlyArray<KeyValue> | undefined): Attrs =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, anyValue(kv.value)]))

/** The spans of one ExportTraceServiceRequest (OTLP/HTTP JSON encoding). */
const decodeOtlp = (body: string) => {
  const request = JSON.parse(body) as {
    resourceSpans: ReadonlyArray<{
      resource?: { attributes?: ReadonlyArray<KeyValue> }
      scopeSpans: ReadonlyArray<{
        spans: ReadonlyArray<{ name: string; kind: number; attributes?: ReadonlyArray<KeyValue> }>
      }>
    }>
  }
  return request.resourceSpans.flatMap((resource) => {
    const service = attributesOf(resource.resource?.attributes)["service.name"]
    return resource.scopeSpans.flatMap((scope) =>
      // OTLP numbers span kinds from 1 (INTERNAL); the SDK's SpanKind from 0.
      scope.spans.map((span) => ({
        name: span.name,
        kind: span.kind - 1,
        attributes: attributesOf(span.attributes),
        service
      }))
    )
  })
}

/** A real OTLP/HTTP receiver on 127.0.0.1: records every POST and answers 200 with an empty response. */
const otlpReceiver = Effect.acquireRelease(
  Effect.async<{
    readonly url: string
    readonly requests: Array<{ url: string; contentType: string; body: string }>
    readonly close: () => Promise<void>
  }>((resume) => {
    const requests: Array<{ url: string; contentType: string; body: string }> = []
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        requests.push({
          url: request.url ?? "",
          contentType: String(request.headers["content-type"] ?? ""),
          body: Buffer.concat(chunks).toString("utf8")
        })
        response.writeHead(200, { "content-type": "application/json" })
        response.end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(
        Effect.succeed({
          url: `http://127.0.0.1:${port}`,
          requests,
          close: () =>
            new Promise<void>((done) => {
              server.closeAllConnections()
              server.close(() => done())
            })
        })
      )
    })
  }),
  (receiver) => Effect.promise(receiver.close)
)
