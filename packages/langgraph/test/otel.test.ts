// Issue 41: the LangGraph pre-model hook emits the same GenAI spans as the agent. One turn of
// LangGraph's prebuilt ReAct agent (`createReactAgent`, its real graph) with a tool call, the hook as
// `preModelHook` and its `postModelHook`, after a long thread that the policy compacts. The model is a
// LangChain chat model answering from a script (as the other tests here) with what LangChain's provider
// packages put on an `AIMessage`: `response_metadata` (id, model name, finish reason) and
// `usage_metadata` with cache read and creation. A tracer provider with the OpenTelemetry SDK's
// in-memory exporter is the switch; the spans are checked with the agent's helper (`GenAiSpans`).
// The second test runs the same turn with LangChain's real `ChatAnthropic` (`@langchain/anthropic`) over
// HTTP, against a local server on 127.0.0.1 answering with Anthropic's own response shapes.
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { GenAiSpans } from "@ctxlog/testing"
import { ChatAnthropic } from "@langchain/anthropic"
import type { BaseChatModel } from "@langchain/core/language_models/chat_models"
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import { MemorySaver } from "@langchain/langgraph"
import { createReactAgent } from "@langchain/langgraph/prebuilt"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { afterAll, assert, beforeAll, it } from "vitest"
import { z } from "zod"
import { ctxlogPreModelHook } from "../src/PreModelHook.js"
import { readBack, ScriptedChatModel, tempDb } from "./scriptedModel.js"

const readFile = tool(async ({ path }: { path: string }) => `contents of ${path}`, {
  name: "read_file",
  description: "Read a file",
  schema: z.object({ path: z.string() })
})

/** An answer as a LangChain provider package returns it (ids, model, finish reason, cache usage). */
const answer = (n: number, fields: { content: string; tool_calls?: AIMessage["tool_calls"] }, finish: string) =>
  new AIMessage({
    ...fields,
    id: `chatcmpl-${n}`,
    response_metadata: { id: `chatcmpl-${n}`, model_name: "gpt-4.1-2025-04-14", finish_reason: finish },
    usage_metadata: {
      input_tokens: 900 * n,
      output_tokens: 25,
      total_tokens: 900 * n + 25,
      input_token_details: { cache_read: 512, cache_creation: 64 }
    }
  } as ConstructorParameters<typeof AIMessage>[0] & object)

/** A long earlier thread: the first render compacts it. */
const earlier: Array<BaseMessage> = Array.from({ length: 30 }, (_, i) =>
  i % 2 === 0
    ? new HumanMessage(`Question ${i}: ${"tell me about the parser and its leap years ".repeat(12)}`)
    : new AIMessage(`Answer ${i}: ${"the parser reads dates field by field ".repeat(12)}`)
)

const absent = (streaming: string) => ({
  "gen_ai.request.stream": streaming,
  "gen_ai.request.max_tokens": "the hook does not see the chat model's settings",
  "server.address": "the endpoint is private to the LangChain chat model",
  "server.port": "as server.address"
})

/**
 * One turn of `createReactAgent` with `llm`, the hook traced into an in-memory exporter, after the long
 * thread; then the two model calls' renders and chat spans, each checked against its render.
 */
const tracedTurn = async (options: {
  readonly llm: BaseChatModel
  readonly provider: "openai" | "anthropic"
  readonly model: string
  readonly thread: string
  readonly question: string
  readonly streaming: string
}) => {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const sqlite = tempDb()
  const hook = ctxlogPreModelHook({
    sqlite,
    tracerProvider,
    provider: options.provider,
    tools: [readFile],
    system: "You are terse.",
    policy: {
      builder: { provider: "default", model: options.model, contextWindow: 4_000, maxOutputTokens: 400 },
      compaction: { softThreshold: 0.5, hardThreshold: 0.6, proactiveThreshold: 0.55, targetRatio: 0.3 }
    }
  })
  const agent = createReactAgent({
    llm: options.llm,
    tools: [readFile],
    preModelHook: hook,
    postModelHook: hook.postModelHook,
    checkpointer: new MemorySaver()
  })
  const config = { configurable: { thread_id: options.thread } }
  const state = await agent.invoke({ messages: [...earlier, new HumanMessage(options.question)] }, config)
  await hook.close()
  const stream = hook.streamOf(config)
  const events = (await readBack(sqlite, stream)).events.map((stored) => stored.event)
  const spans = exporter.getFinishedSpans()
  const { renders, chats } = GenAiSpans.modelCalls(events, spans, 2)
  const checked = chats.map((chat, i) => ({
    chat,
    ...GenAiSpans.assertChatSpan(chat, {
      provider: options.provider,
      model: options.model,
      stream,
      events,
      renderId: renders[i]?.id,
      absent: absent(options.streaming)
    })
  }))
  return { state, stream, events, spans, checked }
}

it("a chat span per model call (usage, response id, provenance) and a span per compaction", async () => {
  const llm = new ScriptedChatModel((call) =>
    call === 0
      ? answer(
          1,
          { content: "", tool_calls: [{ type: "tool_call", id: "c1", name: "read_file", args: { path: "a.ts" } }] },
          "tool_calls"
        )
      : answer(2, { content: "a.ts exports one function." }, "stop")
  )
  const { state, stream, events, spans, checked } = await tracedTurn({
    llm,
    provider: "openai",
    model: "gpt-4.1",
    thread: "otel",
    question: "What is in a.ts?",
    streaming: "the scripted model does not stream (the attribute is set when a call streams)"
  })
  assert.strictEqual(state.messages.at(-1)?.content, "a.ts exports one function.")
  checked.forEach(({ chat, kinds, reasons }, i) => {
    const a = chat.attributes
    assert.strictEqual(a["gen_ai.response.id"], `chatcmpl-${i + 1}`)
    assert.strictEqual(a["gen_ai.response.model"], "gpt-4.1-2025-04-14")
    assert.deepStrictEqual(a["gen_ai.response.finish_reasons"], [i === 0 ? "tool_call" : "stop"])
    GenAiSpans.assertUsage(chat, { input: 900 * (i + 1), output: 25, cacheRead: 512, cacheWrite: 64 })
    assert.includeMembers([...kinds], ["system", "history"])
    assert.isTrue(kinds.includes("summary") || kinds.includes("seam"), kinds.join(","))
    if (i === 1) assert.include([...reasons], "unseen_tool_result")
  })
  GenAiSpans.assertCompactionSpans(spans, stream, events)
})

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "providers", `${name}.json`), "utf8"))

let server: Server | undefined
let baseURL = ""
/** What the local server answers, in order, and the request bodies it received. */
let script: Array<unknown> = []
const requests: Array<{ readonly messages: ReadonlyArray<unknown> }> = []

beforeAll(async () => {
  server = createServer((request, response) => {
    const body: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => body.push(chunk))
    request.on("end", () => {
      requests.push(JSON.parse(Buffer.concat(body).toString("utf8")) as { readonly messages: ReadonlyArray<unknown> })
      const next = script.shift()
      response.writeHead(next === undefined ? 500 : 200, { "content-type": "application/json" })
      response.end(JSON.stringify(next ?? { type: "error", error: { type: "api_error", message: "no more answers" } }))
    })
  })
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())))
})

it("with LangChain's real ChatAnthropic over HTTP: the spans carry what the provider answered", async () => {
  script = ["anthropic-tool-call", "anthropic-answer"].map(fixture)
  requests.length = 0
  const llm = new ChatAnthropic({
    model: "claude-sonnet-4-5",
    apiKey: "test",
    anthropicApiUrl: baseURL,
    maxTokens: 400
  })
  const { state, stream, events, spans, checked } = await tracedTurn({
    llm,
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    thread: "otel-anthropic",
    question: "Why does the build fail?",
    streaming: "invoke does not stream (the attribute is set when a call streams)"
  })
  assert.include(JSON.stringify(state.messages.at(-1)?.content), "The build fails in src/build.ts")
  // The second request carried the tool call's result back (the hook's render went over the wire).
  assert.strictEqual(requests.length, 2)
  assert.include(JSON.stringify(requests[1]?.messages), "contents of src/build.ts")
  checked.forEach(({ chat, kinds, reasons }, i) => {
    const a = chat.attributes
    const answered = fixture(i === 0 ? "anthropic-tool-call" : "anthropic-answer") as {
      readonly id: string
      readonly model: string
    }
    assert.strictEqual(a["gen_ai.response.id"], answered.id)
    assert.strictEqual(a["gen_ai.response.model"], answered.model)
    assert.deepStrictEqual(a["gen_ai.response.finish_reasons"], [i === 0 ? "tool_call" : "stop"])
    // The fixtures' cache usage: the first call writes 2,048 tokens, the second reads them.
    GenAiSpans.assertUsage(chat, {
      input: i === 0 ? 599 + 2048 : 312 + 2048,
      output: i === 0 ? 59 : 60,
      cacheRead: i === 0 ? 0 : 2048,
      cacheWrite: i === 0 ? 2048 : 0
    })
    assert.includeMembers([...kinds], ["system", "history"])
    // The first call's render holds the summary of the long thread; before the second the fit trimmed
    // history (the signed thinking block and the tool result take the room), the summary first.
    if (i === 0) assert.isTrue(kinds.includes("summary") || kinds.includes("seam"), kinds.join(","))
    if (i === 1) assert.include([...reasons], "unseen_tool_result")
  })
  GenAiSpans.assertCompactionSpans(spans, stream, events)
})
