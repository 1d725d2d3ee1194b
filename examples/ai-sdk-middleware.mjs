// The AI SDK middleware: a generateText agent with a tool, on a mock model, whose every call goes
// through the ctxlog turn module, then a streamed follow-up (streamText). Prints what the model
// received, what the log holds, and whether every recorded render rebuilds.
// Run: node examples/ai-sdk-middleware.mjs   (after `pnpm build`; needs better-sqlite3 installed)
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createContext } from "@ctxlog/client"
import { EventLog } from "@ctxlog/core"
import { ctxlogMiddleware } from "@ctxlog/integrations/ai-sdk"
import { RenderRecord } from "@ctxlog/providers"
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { z } from "zod"

const filename = join(mkdtempSync(join(tmpdir(), "ctxlog-ai-sdk-")), "agent.db")
const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 }
})
// A mock model: first it reads a file, then it answers.
const answers = [
  {
    content: [{ type: "tool-call", toolCallId: "c1", toolName: "read_file", input: '{"path":"tsconfig.json"}' }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: usage(120, 15),
    warnings: []
  },
  {
    content: [{ type: "text", text: "Strict mode is on: src/index.ts has an implicit any." }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: usage(180, 12),
    warnings: []
  }
]
// The streamed answer of the follow-up, part by part (a ReadableStream built by hand).
const streamed = [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t1" },
  { type: "text-delta", id: "t1", delta: "Add the type " },
  { type: "text-delta", id: "t1", delta: "annotation." },
  { type: "text-end", id: "t1" },
  { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(220, 6) }
]
let call = 0
let streamedRoles = []
const model = new MockLanguageModelV3({
  provider: "mock.chat",
  modelId: "mock-1",
  doGenerate: async (options) => {
    console.log(`call ${call + 1}: the model received ${options.prompt.map((m) => m.role).join(", ")}`)
    return answers[call++]
  },
  doStream: async (options) => {
    streamedRoles = options.prompt.map((m) => m.role)
    console.log(`call ${call + 1} (streamed): the model received ${streamedRoles.join(", ")}`)
    call++
    return {
      stream: new ReadableStream({
        start(controller) {
          for (const part of streamed) controller.enqueue(part)
          controller.close()
        }
      })
    }
  }
})

const middleware = ctxlogMiddleware({ sqlite: filename, stream: "s1" })
const wrapped = wrapLanguageModel({ model, middleware })
const result = await generateText({
  model: wrapped,
  system: "You are a careful coding assistant.",
  tools: {
    read_file: tool({
      description: "Read a file",
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => `{ "compilerOptions": { "strict": true } } (${path})`
    })
  },
  stopWhen: stepCountIs(3),
  prompt: "Why does `pnpm build` fail?"
})
console.log("answer:", result.text)
const followUp = streamText({
  model: wrapped,
  system: "You are a careful coding assistant.",
  messages: [
    { role: "user", content: "Why does `pnpm build` fail?" },
    ...result.response.messages,
    { role: "user", content: "How do I fix it?" }
  ]
})
console.log("streamed answer:", await followUp.text)
await middleware.close()

const ctx = await createContext({ sqlite: filename, create: false })
const events = Chunk.toReadonlyArray(
  await ctx.runtime.runPromise(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read("s1"))))
)
console.log("log:", events.map((stored) => stored.event._tag).join(" "))
const verification = RenderRecord.verifyAll(events)
console.log(`renders: ${verification.renders}, verified: ${verification.verified}`)
await ctx.close()
// The follow-up question reached the model (ai 7's response.messages hold the last step only).
if (verification.renders !== verification.verified || streamedRoles.at(-1) !== "user") process.exit(1)
