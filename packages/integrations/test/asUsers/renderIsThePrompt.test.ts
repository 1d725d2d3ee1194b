/**
 * Issue 35, "the render is the prompt", for the OpenAI Agents session: a 30-call tool conversation at
 * a small context window (compaction, seams and pruning all happen), run by the SDK's runner with
 * `CtxlogSession` and its `callModelInputFilter`, the model being the SDK's own test model
 * (`ScriptedModel`, which keeps every request it got). On every call, what the model received
 * (`systemInstructions` and `input`) equals, whole, the render `ctxlog render --at <version>` rebuilds
 * for that call (`RenderRecord.rebuild`, the function the inspector's `render` command runs).
 *
 * Self-contained (published names only): the packed-tarball test runs it in a project that installed
 * our tarballs.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createContext } from "@ctxlog/client"
import { EventLog, Window, type WindowEvent } from "@ctxlog/core"
import { CtxlogSession } from "@ctxlog/integrations/openai-agents"
import { RenderRecord } from "@ctxlog/providers"
import { Agent, run, setTracingDisabled, tool, Usage } from "@openai/agents"
import { modelResponder, ScriptedModel } from "@openai/agents/testing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { expect, it } from "vitest"
import { z } from "zod"

setTracingDisabled(true)

const turns = 6
const callsPerTurn = 5

/** Every event of a stream, read back from the file. */
const eventsOf = async (sqlite: string, stream: string) => {
  const ctx = await createContext({ sqlite, create: false })
  try {
    return Chunk.toReadonlyArray(
      await ctx.runtime.runPromise(Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read(stream))))
    )
  } finally {
    await ctx.close()
  }
}

/** Each recorded render rebuilt from the log, in order: what `ctxlog render --at <version>` prints. */
const rebuiltRenders = (
  events: ReadonlyArray<{ readonly event: WindowEvent.WindowEvent; readonly version: number }>
) => {
  let window = Window.empty
  const blobs = new Map<string, string>()
  const rebuilt: Array<{ readonly version: number; readonly request: unknown }> = []
  for (const { event, version } of events) {
    if (event._tag === "PromptRendered") {
      RenderRecord.collectBlobs([event], blobs)
      const again = RenderRecord.rebuild(window, event, version, blobs)
      if (Either.isLeft(again)) throw new Error(`render at ${version} does not rebuild: ${again.left.message}`)
      rebuilt.push({ version, request: again.right.request })
    }
    window = Window.evolve(window, event)
  }
  return rebuilt
}

it("over 30 model calls (compaction, seams, pruning), the model receives exactly what the log rebuilds", async () => {
  const sqlite = join(mkdtempSync(join(tmpdir(), "ctxlog-agents-render-")), "agent.db")
  const session = new CtxlogSession({
    sqlite,
    sessionId: "render-is-the-prompt",
    policy: {
      builder: { provider: "openai", api: "responses", model: "gpt-4.1", contextWindow: 4_000, maxOutputTokens: 400 },
      // Thresholds at which compaction, seams and pruning each happen over these 30 calls now that every
      // path keeps the user's latest ask (issue 39, ADR 0114): 6 compactions, 4 seams, 4 prunes.
      compaction: { softThreshold: 0.3, hardThreshold: 0.42, proactiveThreshold: 0.38, targetRatio: 0.25 },
      seams: { level1: 0.4, level2: 0.6, level3: 0.75 }
    }
  })
  let executed = 0
  const readFile = tool({
    name: "read_file",
    description: "Read a file",
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => {
      executed++
      return `// ${path}\n${`export const value${executed} = ${executed} // a line of the file\n`.repeat(25)}`
    }
  })
  const model = new ScriptedModel(
    Array.from({ length: turns * callsPerTurn }, () =>
      modelResponder((call) => {
        const step = call.index % callsPerTurn
        const usage = new Usage({ requests: 1, inputTokens: 900, outputTokens: 40, totalTokens: 940 })
        if (step < callsPerTurn - 1) {
          return {
            usage,
            responseId: `resp_${call.index}`,
            output: [
              {
                type: "reasoning",
                id: `rs_${call.index}`,
                content: [],
                providerData: { encryptedContent: `enc-${call.index}` }
              },
              {
                type: "function_call",
                id: `fc_${call.index}`,
                callId: `call_${call.index}`,
                name: "read_file",
                arguments: JSON.stringify({ path: `src/file${call.index}.ts` }),
                status: "completed"
              }
            ]
          }
        }
        return {
          usage,
          responseId: `resp_${call.index}`,
          output: [
            {
              type: "message",
              role: "assistant",
              id: `msg_${call.index}`,
              status: "completed",
              content: [{ type: "output_text", text: `Turn summary ${call.index}: ${"the files agree. ".repeat(20)}` }]
            }
          ]
        }
      })
    )
  )
  const agent = new Agent({
    name: "reader",
    instructions: "You read files and answer briefly.",
    model,
    tools: [readFile]
  })
  for (let turn = 0; turn < turns; turn++) {
    const result = await run(agent, `Question ${turn}: what do the next files hold? ${"Context. ".repeat(120)}`, {
      session,
      callModelInputFilter: session.callModelInputFilter,
      maxTurns: callsPerTurn + 1
    })
    expect(result.finalOutput).toContain("Turn summary")
  }
  // The session stores each item once, as the runner stored it: per run the question, four rounds of
  // reasoning, call and result, and the answer.
  const perRun = [
    "message",
    ...Array.from({ length: callsPerTurn - 1 }, () => ["reasoning", "function_call", "function_call_result"]).flat(),
    "message"
  ]
  expect((await session.getItems()).map((item) => item.type)).toEqual(
    Array.from({ length: turns }, () => perRun).flat()
  )
  await session.close()

  expect(model.calls).toHaveLength(turns * callsPerTurn)
  const events = await eventsOf(sqlite, "render-is-the-prompt")
  const tags = events.map((stored) => stored.event._tag)
  const count = (tag: string) => tags.filter((found) => found === tag).length
  console.log(
    ["Compacted", "SeamProduced", "ToolOutputPruned", "HistoryTrimmed", "PromptRendered", "CompactionFailed"]
      .map((tag) => `${tag}=${count(tag)}`)
      .join(" ")
  )
  expect(count("Compacted")).toBeGreaterThan(0)
  expect(count("SeamProduced")).toBeGreaterThan(0)
  expect(count("ToolOutputPruned")).toBeGreaterThan(0)
  const rebuilt = rebuiltRenders(events)
  expect(rebuilt).toHaveLength(model.calls.length)
  for (const [index, call] of model.calls.entries()) {
    const received = { instructions: call.request.systemInstructions, input: call.request.input }
    const request = rebuilt[index]?.request as { readonly instructions?: string; readonly input: unknown }
    expect(received, `model call ${index + 1} (render at version ${rebuilt[index]?.version})`).toEqual({
      instructions: request.instructions,
      input: request.input
    })
  }
  // The window did its work: the last calls got far fewer items than the session stores.
  const last = model.calls[model.calls.length - 1]?.request.input
  console.log(
    `render is the prompt: ${model.calls.length} calls, each equal to its rebuilt render; ` +
      `${count("Compacted")} Compacted, ${count("SeamProduced")} SeamProduced, ${count("ToolOutputPruned")} ToolOutputPruned, ` +
      `${count("HistoryTrimmed")} HistoryTrimmed; the last call got ${Array.isArray(last) ? last.length : 0} items`
  )
})
