// The OpenAI Agents SDK session: three runs of an agent on a hand-written model, with a ctxlog stream
// as the session and its `callModelInputFilter` in the run options, so every model call gets the window
// the turn module rendered. Prints what the model received on each call, what the log holds, and
// whether every recorded render rebuilds.
// Run: node examples/openai-agents-session.mjs   (after `pnpm build`; needs better-sqlite3 installed)
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createContext } from "@ctxlog/client"
import { EventLog } from "@ctxlog/core"
import { CtxlogSession } from "@ctxlog/integrations/openai-agents"
import { RenderRecord } from "@ctxlog/providers"
import { Agent, run, setTracingDisabled, Usage } from "@openai/agents"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

setTracingDisabled(true)
const filename = join(mkdtempSync(join(tmpdir(), "ctxlog-agents-")), "agent.db")

// A model of the Agents SDK's interface, answering from a script.
const answers = [
  "The build fails on a missing import.",
  "Add `import { a } from './a.js'` to src/index.ts.",
  "It was a missing import in src/index.ts, now added."
]
let call = 0
const model = {
  async getResponse(request) {
    const input = Array.isArray(request.input) ? request.input : [{ role: "user", content: request.input }]
    console.log(`call ${call + 1}: the model received ${input.map((item) => item.role ?? item.type).join(", ")}`)
    return {
      usage: new Usage({ requests: 1, inputTokens: 60, outputTokens: 8, totalTokens: 68 }),
      output: [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: answers[call++] }]
        }
      ]
    }
  },
  // biome-ignore lint/correctness/useYield: this model never streams; a streamed run is refused.
  async *getStreamedResponse() {
    throw new Error("this model does not stream")
  }
}

const session = new CtxlogSession({ sqlite: filename, sessionId: "s1" })
const agent = new Agent({ name: "helper", instructions: "You are terse.", model })
// The one line that makes the window the prompt: the session's filter in the run options.
const options = { session, callModelInputFilter: session.callModelInputFilter }
console.log("answer 1:", (await run(agent, "Why does the build fail?", options)).finalOutput)
console.log("answer 2:", (await run(agent, "How do I fix it?", options)).finalOutput)
// The Agents SDK's compaction hook (the runner calls it after every turn; it compacts at the policy's
// hard threshold): forced here, so the short session shows a compaction in its log.
// It answers null: there is no Responses-side compaction to report; the Compacted event is in the log.
await session.runCompaction({ force: true })
console.log("answer 3:", (await run(agent, "Summarize what we did.", options)).finalOutput)
await session.close()

const ctx = await createContext({ sqlite: filename, create: false })
const events = Chunk.toReadonlyArray(
  await ctx.runtime.runPromise(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read("s1"))))
)
console.log("log:", events.map((stored) => stored.event._tag).join(" "))
const verification = RenderRecord.verifyAll(events)
console.log(`renders: ${verification.renders}, verified: ${verification.verified}`)
await ctx.close()
const compactions = events.filter((stored) => stored.event._tag === "Compacted").length
console.log(`compactions: ${compactions}`)
if (verification.renders !== verification.verified || compactions === 0) process.exit(1)
