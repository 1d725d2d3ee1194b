// Issue 41: the AI SDK integrations emit the same GenAI spans as the agent. `generateText` with a tool
// over two steps, through `ctxlogMiddleware` and through `ctxlogPrepareStep`, on ai 6 and ai 7, with the
// real `@ai-sdk/anthropic` provider pointed at a local server on 127.0.0.1 answering with Anthropic's
// own response shapes (test/fixtures/providers, see its README), after a long conversation that the
// policy compacts. A tracer provider with the OpenTelemetry SDK's in-memory exporter is the only
// switch; the spans are checked with the same helper as the agent's (`@ctxlog/testing` GenAiSpans).
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { createAnthropic as createAnthropic3 } from "@ai-sdk/anthropic"
import { createAnthropic as createAnthropic4 } from "@ai-sdk/anthropic-v4"
import type { TurnPolicy } from "@ctxlog/client"
import { GenAiSpans } from "@ctxlog/testing"
import { trace } from "@opentelemetry/api"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as ai6 from "ai"
import * as ai7 from "ai-v7"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { z } from "zod"
import { ctxlogMiddleware, ctxlogPrepareStep } from "../src/aiSdk.js"
import { readBack, tempDb } from "./support.js"

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "providers", `${name}.json`), "utf8"))

/** A `.chunks.txt` fixture: the events of a streamed answer, one JSON object per line. */
const chunks = (name: string): ReadonlyArray<unknown> =>
  readFileSync(join(import.meta.dirname, "fixtures", "providers", `${name}.chunks.txt`), "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as unknown)

let server: Server
let baseURL = ""
let script: Array<unknown> = []

beforeAll(async () => {
  server = createServer((request, response) => {
    const body: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => body.push(chunk))
    request.on("end", () => {
      const next = script.shift()
      const streamed = (JSON.parse(Buffer.concat(body).toString("utf8")) as { stream?: boolean }).stream === true
      if (next === undefined || !streamed) {
        response.writeHead(next === undefined ? 500 : 200, { "content-type": "application/json" })
        response.end(JSON.stringify(next ?? { error: { message: "the script has no more answers" } }))
        return
      }
      // Anthropic's server-sent events: each line of the `.chunks.txt` fixture as its own event.
      response.writeHead(200, { "content-type": "text/event-stream" })
      for (const event of chunks(next as string)) {
        response.write(`event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`)
      }
      response.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

/** A conversation long enough that the first prepare passes the hard threshold and compacts. */
const history = Array.from({ length: 30 }, (_, i) =>
  i % 2 === 0
    ? { role: "user" as const, content: `Question ${i}: ${"tell me about the parser and its leap years ".repeat(12)}` }
    : { role: "assistant" as const, content: `Answer ${i}: ${"the parser reads dates field by field ".repeat(12)}` }
)
const question = { role: "user" as const, content: "Why does the build fail?" }

const policy: TurnPolicy = {
  builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 4_000, maxOutputTokens: 500 },
  compaction: { softThreshold: 0.5, hardThreshold: 0.6, proactiveThreshold: 0.55, targetRatio: 0.3 }
}

const readFileInput = z.object({ path: z.string() })
const contents = "import { config } from './config'\nexport const build = () => config\n"

type Via = "middleware" | "prepareStep"

/** How a run calls the model: `generateText`, or `streamText` read to its end. */
type Call = "generateText" | "streamText"

/**
 * One run of two steps (a `read_file` call, then the answer) on a line of `ai`, through `generateText` or
 * through `streamText` (the local server then streams Anthropic's server-sent events).
 */
const runs: Record<
  "ai 6" | "ai 7",
  (via: Via, call: Call, options: Parameters<typeof ctxlogMiddleware>[0]) => Promise<string>
> = {
  "ai 6": async (via, call, options) => {
    const model = createAnthropic3({ baseURL, apiKey: "test" })("claude-sonnet-4-5")
    const tools = {
      read_file: ai6.tool({ description: "Read a file", inputSchema: readFileInput, execute: async () => contents })
    }
    const messages: Array<ai6.ModelMessage> = [...history, question]
    const run = async (settings: Parameters<typeof ai6.generateText>[0]): Promise<string> =>
      call === "generateText" ? (await ai6.generateText(settings)).text : await ai6.streamText(settings).text
    if (via === "middleware") {
      const middleware = ctxlogMiddleware(options)
      const wrapped = ai6.wrapLanguageModel({ model, middleware })
      const text = await run({ model: wrapped, tools, stopWhen: ai6.stepCountIs(3), messages, maxOutputTokens: 500 })
      await middleware.close()
      return text
    }
    const steps = ctxlogPrepareStep(options)
    const text = await run({
      model,
      tools,
      stopWhen: ai6.stepCountIs(3),
      messages,
      prepareStep: steps.prepareStep,
      onStepFinish: steps.onStepFinish
    })
    await steps.close()
    return text
  },
  "ai 7": async (via, call, options) => {
    const model = createAnthropic4({ baseURL, apiKey: "test" })("claude-sonnet-4-5")
    const tools = {
      read_file: ai7.tool({ description: "Read a file", inputSchema: readFileInput, execute: async () => contents })
    }
    const messages: Array<ai7.ModelMessage> = [...history, question]
    const run = async (settings: Parameters<typeof ai7.generateText>[0]): Promise<string> =>
      call === "generateText" ? (await ai7.generateText(settings)).text : await ai7.streamText(settings).text
    if (via === "middleware") {
      const middleware = ctxlogMiddleware(options)
      const wrapped = ai7.wrapLanguageModel({ model, middleware })
      const text = await run({ model: wrapped, tools, stopWhen: ai7.stepCountIs(3), messages, maxOutputTokens: 500 })
      await middleware.close()
      return text
    }
    const steps = ctxlogPrepareStep(options)
    const text = await run({
      model,
      tools,
      stopWhen: ai7.stepCountIs(3),
      messages,
      // `ai` here is ai 6, so the hooks' message types are ai 6's; the values are the same.
      prepareStep: async (step) =>
        (await steps.prepareStep({
          ...step,
          messages: step.messages as unknown as Array<ai6.ModelMessage>
        })) as unknown as { messages: Array<ai7.ModelMessage> },
      onStepFinish: steps.onStepFinish
    })
    await steps.close()
    return text
  }
}

describe.sequential("GenAI spans of the AI SDK integrations (issue 41)", () => {
  for (const line of ["ai 6", "ai 7"] as const) {
    for (const [via, call] of [
      ["middleware", "generateText"],
      ["prepareStep", "generateText"],
      ["middleware", "streamText"],
      ["prepareStep", "streamText"]
    ] as const) {
      const streaming = call === "streamText"
      it(`${line}, ${via}, ${call}: a chat span per model call with usage and provenance, a span per compaction`, async () => {
        const answers = ["anthropic-tool-call", "anthropic-answer"]
        // A streamed call is answered with the `.chunks.txt` events of the same answer.
        script = streaming ? answers : answers.map(fixture)
        const exporter = new InMemorySpanExporter()
        const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
        const db = tempDb()
        const stream = `otel-${line.replace(" ", "")}-${via}-${call}`
        const text = await runs[line](via, call, { sqlite: db, stream, policy, tracerProvider })
        assert.include(text, "The build fails in src/build.ts")
        const log = await readBack(db, stream)
        const events = log.events.map((stored) => stored.event)
        const spans = exporter.getFinishedSpans()
        const { renders, chats } = GenAiSpans.modelCalls(events, spans, 2)
        chats.forEach((chat, i) => {
          const { kinds, reasons } = GenAiSpans.assertChatSpan(chat, {
            provider: "anthropic",
            model: "claude-sonnet-4-5",
            stream,
            events,
            renderId: renders[i]?.id,
            absent: {
              ...(!streaming
                ? { "gen_ai.request.stream": "generateText does not stream (the attribute is set when a call streams)" }
                : via === "prepareStep"
                  ? { "gen_ai.request.stream": "the step hooks do not see whether the call streams" }
                  : {}),
              "server.address":
                "the endpoint is private to the AI SDK provider; the middleware sees the model's id only",
              "server.port": "as server.address",
              ...(via === "prepareStep"
                ? { "gen_ai.request.max_tokens": "the step hooks do not see the call's settings" }
                : {})
            }
          })
          const a = chat.attributes
          if (via === "middleware") assert.strictEqual(a["gen_ai.request.max_tokens"], 500)
          // The middleware sees whether the call streams; the step hooks do not, and set nothing.
          if (via === "middleware" && streaming) assert.strictEqual(a["gen_ai.request.stream"], true)
          assert.strictEqual(
            a["gen_ai.response.id"],
            i === 0 ? "msg_011CfWBu94HWxZXjXK6ZhEXM" : "msg_01PHHrjzLH4teUMhgkGgqYYc"
          )
          const answered = fixture(i === 0 ? "anthropic-tool-call" : "anthropic-answer") as { readonly model: string }
          assert.strictEqual(a["gen_ai.response.model"], answered.model)
          assert.deepStrictEqual(a["gen_ai.response.finish_reasons"], [i === 0 ? "tool_call" : "stop"])
          // The fixtures' cache usage: the first call writes 2,048 tokens, the second reads them.
          GenAiSpans.assertUsage(chat, {
            input: i === 0 ? 599 + 2048 : 312 + 2048,
            output: i === 0 ? 59 : 60,
            cacheRead: i === 0 ? 0 : 2048,
            cacheWrite: i === 0 ? 2048 : 0
          })
          assert.include([...kinds], "history")
          assert.isTrue(kinds.includes("summary") || kinds.includes("seam"), kinds.join(","))
          if (i === 1) assert.include([...reasons], "unseen_tool_result")
        })
        GenAiSpans.assertCompactionSpans(spans, stream, events)
      })
    }
  }

  it("off by default: without the option, ctxlog does not trace through the global tracer provider", async () => {
    script = ["anthropic-tool-call", "anthropic-answer"].map(fixture)
    const exporter = new InMemorySpanExporter()
    const global = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    assert.isTrue(trace.setGlobalTracerProvider(global))
    try {
      const text = await runs["ai 6"]("middleware", "generateText", { sqlite: tempDb(), stream: "untraced", policy })
      assert.include(text, "The build fails in src/build.ts")
      assert.deepStrictEqual(
        exporter.getFinishedSpans().map((span) => span.name),
        []
      )
    } finally {
      trace.disable()
    }
  })
})
