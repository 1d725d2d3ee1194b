// The AI SDK `prepareStep` helper: a generateText agent with a tool, on a mock model, whose every step
// goes through the ctxlog turn module (`prepareStep` renders the window, `onStepFinish` records the
// step). Prints what the model received, what the log holds, and whether every recorded render rebuilds.
// Run: node examples/ai-sdk-prepare-step.mjs   (after `pnpm build`; needs better-sqlite3 installed)
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createContext } from "@ctxlog/client"
import { EventLog } from "@ctxlog/core"
import { ctxlogPrepareStep } from "@ctxlog/integrations/ai-sdk"
import { RenderRecord } from "@ctxlog/providers"
import { generateText, stepCountIs, tool } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { z } from "zod"

const filename = join(mkdtempSync(join(tmpdir(), "ctxlog-prepare-step-")), "agent.db")
const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 }
})
// A mock model: first it reads a file, then it answers.
const answers = [
  {
    content: [{ type: "tool-call", toolCallId: "c1", toolName: "read_file", input: '{"path":"package.json"}' }],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: usage(110, 14),
    warnings: []
  },
  {
    content: [{ type: "text", text: "The build script runs tsc before the bundler." }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: usage(160, 11),
    warnings: []
  }
]
let call = 0
const model = new MockLanguageModelV3({
  provider: "mock.chat",
  modelId: "mock-1",
  doGenerate: async (options) => {
    console.log(`step ${call + 1}: the model received ${options.prompt.map((m) => m.role).join(", ")}`)
    return answers[call++]
  }
})

const steps = ctxlogPrepareStep({ sqlite: filename, stream: "s1" })
const result = await generateText({
  model,
  system: "You are a careful build engineer.",
  tools: {
    read_file: tool({
      description: "Read a file",
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => `{ "scripts": { "build": "tsc && vite build" } } (${path})`
    })
  },
  stopWhen: stepCountIs(3),
  prompt: "What does the build script do?",
  prepareStep: steps.prepareStep,
  onStepFinish: steps.onStepFinish
})
console.log("answer:", result.text)
await steps.close()

const ctx = await createContext({ sqlite: filename, create: false })
const events = Chunk.toReadonlyArray(
  await ctx.runtime.runPromise(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read("s1"))))
)
const window = await ctx.load("s1")
console.log("log:", events.map((stored) => stored.event._tag).join(" "))
console.log("history:", window.history.map((message) => message.role).join(", "))
const verification = RenderRecord.verifyAll(events)
console.log(`renders: ${verification.renders}, verified: ${verification.verified}`)
await ctx.close()
if (verification.renders !== verification.verified || window.history.length !== 4) process.exit(1)
