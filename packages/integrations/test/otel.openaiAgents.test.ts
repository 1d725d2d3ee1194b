// Issue 41: the OpenAI Agents session emits the same GenAI spans as the agent. One run of the SDK's
// runner with a tool call, `CtxlogSession` and its `callModelInputFilter`, the model being the SDK's
// real `OpenAIResponsesModel` (through `OpenAIProvider`) wrapped by `session.traceModel`, pointed at a
// local server on 127.0.0.1 answering with the Responses API's shapes (as test/asUsers/responsesServer
// does), after a long history that the policy compacts; run once with `getResponse` and once streamed
// (`run(…, { stream: true })`: the Responses API's server-sent events, `getStreamedResponse`). A tracer provider with the OpenTelemetry SDK's
// in-memory exporter is the switch; the spans are checked with the agent's helper (`GenAiSpans`).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { GenAiSpans } from "@ctxlog/testing"
import { Agent, OpenAIProvider, run, setTracingDisabled, tool } from "@openai/agents"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { afterAll, assert, beforeAll, it } from "vitest"
import { z } from "zod"
import { CtxlogSession } from "../src/openaiAgents.js"
import { readBack, tempDb } from "./support.js"

setTracingDisabled(true)

let counter = 0

/** The Responses API's answer: a tool call first, then (its result came back) a message. */
const answer = (input: ReadonlyArray<{ readonly type?: string }>) => {
  const n = ++counter
  const lastIsResult = input[input.length - 1]?.type === "function_call_output"
  const output = lastIsResult
    ? [
        {
          type: "message",
          id: `msg_${n}`,
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: `Done (${n}).`, annotations: [] }]
        }
      ]
    : [
        {
          type: "function_call",
          id: `fc_${n}`,
          call_id: `call_${n}`,
          name: "lookup",
          arguments: JSON.stringify({ key: `k${n}` }),
          status: "completed"
        }
      ]
  return {
    id: `resp_${n}`,
    object: "response",
    created_at: 1_760_000_000 + n,
    status: "completed",
    model: "gpt-4.1-2025-04-14",
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: {
      input_tokens: 420 * n,
      input_tokens_details: { cached_tokens: 256 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 420 * n + 30
    }
  }
}

const handle = (request: IncomingMessage, response: ServerResponse) => {
  const chunks: Array<Buffer> = []
  request.on("data", (chunk: Buffer) => chunks.push(chunk))
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      readonly input?: ReadonlyArray<object>
      readonly stream?: boolean
    }
    const done = answer(Array.isArray(body.input) ? body.input : [])
    if (body.stream !== true) {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify(done))
      return
    }
    // The Responses API's server-sent events: created, each output item added and done, completed.
    const events: Array<Record<string, unknown>> = [
      { type: "response.created", response: { ...done, status: "in_progress", output: [], usage: null } },
      ...done.output.flatMap((item, output_index) => [
        { type: "response.output_item.added", output_index, item: { ...item, status: "in_progress" } },
        { type: "response.output_item.done", output_index, item }
      ]),
      { type: "response.completed", response: done }
    ]
    response.writeHead(200, { "content-type": "text/event-stream" })
    for (const [sequence_number, event] of events.entries()) {
      response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number })}\n\n`)
    }
    response.end()
  })
}

const server = createServer(handle)
let baseURL = ""
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

for (const streaming of [false, true]) {
  it(`${streaming ? "run streamed" : "run"}: a chat span per model call (usage, response id, provenance) and a span per compaction`, async () => {
    counter = 0
    const exporter = new InMemorySpanExporter()
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    const sqlite = tempDb()
    const sessionId = streaming ? "otel-agents-streamed" : "otel-agents"
    const session = new CtxlogSession({
      sqlite,
      sessionId,
      tracerProvider,
      policy: {
        builder: { provider: "openai", api: "responses", model: "gpt-4.1", contextWindow: 4_000, maxOutputTokens: 400 },
        compaction: { softThreshold: 0.5, hardThreshold: 0.6, proactiveThreshold: 0.55, targetRatio: 0.3 }
      }
    })
    // An earlier conversation, long enough that the first render compacts it.
    await session.addItems(
      Array.from({ length: 30 }, (_, i) =>
        i % 2 === 0
          ? {
              role: "user" as const,
              content: `Question ${i}: ${"tell me about the parser and its leap years ".repeat(12)}`
            }
          : {
              role: "assistant" as const,
              status: "completed" as const,
              content: [
                {
                  type: "output_text" as const,
                  text: `Answer ${i}: ${"the parser reads dates field by field ".repeat(12)}`
                }
              ]
            }
      )
    )
    const model = await new OpenAIProvider({ apiKey: "sk-test", baseURL, useResponses: true }).getModel("gpt-4.1")
    const lookup = tool({
      name: "lookup",
      description: "Look a key up",
      parameters: z.object({ key: z.string() }),
      execute: async ({ key }) => `value of ${key}`
    })
    const agent = new Agent({
      name: "looker",
      instructions: "Look things up.",
      model: session.traceModel(model, { endpoint: baseURL }),
      modelSettings: { maxTokens: 400 },
      tools: [lookup]
    })
    const options = { session, callModelInputFilter: session.callModelInputFilter }
    if (streaming) {
      const result = await run(agent, "What is k1?", { ...options, stream: true })
      await result.completed
      assert.match(String(result.finalOutput), /^Done/)
    } else {
      const result = await run(agent, "What is k1?", options)
      assert.match(String(result.finalOutput), /^Done/)
    }
    await session.close()

    const log = await readBack(sqlite, sessionId)
    const events = log.events.map((stored) => stored.event)
    const spans = exporter.getFinishedSpans()
    const { renders, chats } = GenAiSpans.modelCalls(events, spans, 2)
    chats.forEach((chat, i) => {
      const { kinds, reasons } = GenAiSpans.assertChatSpan(chat, {
        provider: "openai",
        model: "gpt-4.1",
        stream: sessionId,
        events,
        renderId: renders[i]?.id,
        absent: streaming
          ? {}
          : { "gen_ai.request.stream": "the runner called getResponse (the attribute is set when a call streams)" }
      })
      if (streaming) assert.strictEqual(chat.attributes["gen_ai.request.stream"], true)
      const a = chat.attributes
      assert.strictEqual(a["gen_ai.request.max_tokens"], 400)
      assert.strictEqual(a["server.address"], "127.0.0.1")
      assert.strictEqual(a["gen_ai.response.model"], "gpt-4.1-2025-04-14")
      assert.strictEqual(a["gen_ai.response.id"], `resp_${i + 1}`)
      assert.deepStrictEqual(a["gen_ai.response.finish_reasons"], [i === 0 ? "tool_call" : "stop"])
      GenAiSpans.assertUsage(chat, { input: 420 * (i + 1), output: 30, cacheRead: 256, cacheWrite: 0 })
      assert.includeMembers([...kinds], ["system", "history"])
      assert.isTrue(kinds.includes("summary") || kinds.includes("seam"), kinds.join(","))
      if (i === 1) assert.include([...reasons], "unseen_tool_result")
    })
    GenAiSpans.assertCompactionSpans(spans, sessionId, events)
  })
}
