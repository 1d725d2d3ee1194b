// Issue 35, "the render is the prompt": over a 30-call tool conversation at a small context window —
// with tool-output pruning, a compaction and a seam — what the model received on every call (the
// `prompt` its doGenerate was given) equals, whole, what `ctxlog render --at <version>` rebuilds for
// that call. Once through `ctxlogMiddleware` (OpenAI builder: a summary is a wrapped system message)
// and once through `ctxlogPrepareStep` (Anthropic builder: a summary is a wrapped user message). The
// answers carry provider metadata (`openai.itemId`, reasoning with encrypted content) as
// `@ai-sdk/openai` gives it, so what the AI SDK hands back next step is part of every comparison.
// Each render is rebuilt with `RenderRecord.rebuild` (what `ctxlog render` runs); three of them also
// through the CLI itself.
import { execFile } from "node:child_process"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult
} from "@ai-sdk/provider"
import type { TurnPolicy } from "@ctxlog/client"
import { Window } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { bundledEntrySync } from "../../../scripts/ts-bundle.mjs"
import { ctxlogMiddleware, ctxlogPrepareStep } from "../src/aiSdk.js"
import { type ReadBack, readBack, tempDb, usage } from "./support.js"

const require = createRequire(import.meta.url)
const inspectorDir = dirname(require.resolve("@ctxlog/inspector/package.json"))
/** The inspector's `src/bin.ts`, bundled once by scripts/ts-bundle.mjs (ADR 0108). */
const bin = bundledEntrySync(join(inspectorDir, "src", "bin.ts"))

/** `ctxlog render --at <version> <stream> --db <file> --json`, as a user runs it: the rebuilt body. */
const cliRender = (db: string, stream: string, version: number): Promise<unknown> =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [bin, "render", "--db", db, "--at", String(version), stream, "--json"],
      { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`ctxlog render failed: ${stderr}`))
        else resolve(JSON.parse(JSON.parse(stdout).body))
      }
    )
  })

const turns = 10
const callsPerTurn = 3

/**
 * A model that reads two files per user turn and then answers: 30 calls over 10 turns. Its answers
 * carry the metadata `@ai-sdk/openai`'s Responses model gives (item ids, encrypted reasoning).
 */
const agentModel = () => {
  const prompts: Array<LanguageModelV3CallOptions["prompt"]> = []
  const model = new MockLanguageModelV3({
    provider: "mock.responses",
    modelId: "mock-1",
    doGenerate: async (options) => {
      prompts.push(options.prompt)
      const n = prompts.length
      const last = options.prompt.at(-1)
      const rounds = options.prompt.slice(options.prompt.map((message) => message.role).lastIndexOf("user"))
      const toolRounds = rounds.filter((message) => message.role === "tool").length
      const reasoning: LanguageModelV3Content = {
        type: "reasoning",
        text: `Step ${n}.`,
        providerMetadata: { openai: { itemId: `rs_${n}`, reasoningEncryptedContent: `gAAAA${n}` } }
      }
      if (last?.role === "user" || toolRounds < 2) {
        return result(
          [
            reasoning,
            {
              type: "tool-call",
              toolCallId: `call_${n}`,
              toolName: "read_file",
              input: JSON.stringify({ path: `src/file${n}.ts` }),
              providerMetadata: { openai: { itemId: `fc_${n}` } }
            }
          ],
          n
        )
      }
      return result(
        [
          reasoning,
          {
            type: "text",
            text: `Answer ${n}: ${"finding ".repeat(40)}`,
            providerMetadata: { openai: { itemId: `msg_${n}` } }
          }
        ],
        n
      )
    }
  })
  return { model, prompts }
}

// The provider reports a growing prompt: past call 18 near the window, so the proactive tier compacts.
const result = (content: Array<LanguageModelV3Content>, call: number): LanguageModelV3GenerateResult => ({
  content,
  finishReason: content.some((part) => part.type === "tool-call")
    ? { unified: "tool-calls", raw: "tool_calls" }
    : { unified: "stop", raw: "stop" },
  usage: usage(call > 18 ? 7_800 : 2_000, 80),
  warnings: []
})

const tools = {
  read_file: tool({
    description: "Read a file",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }) => `// ${path}\n${"export const value = 1\n".repeat(80)}`
  })
}

const policyFor = (provider: "openai" | "anthropic", model: string): TurnPolicy => ({
  builder: { provider, model, contextWindow: 9_000, maxOutputTokens: 500 },
  compaction: { softThreshold: 0.25, hardThreshold: 0.55, prune: { keepRecent: 1, minChars: 100 } },
  seams: { level1: 0.3, level2: 0.6, level3: 0.9 }
})

/** Every render rebuilt from the log, with its version. */
const rebuiltRenders = (log: ReadBack) => {
  const blobs = RenderRecord.collectBlobs(log.events.map((stored) => stored.event))
  return log.events.flatMap((stored, index) => {
    if (stored.event._tag !== "PromptRendered") return []
    const before = Window.replay(log.events.slice(0, index).map((entry) => entry.event))
    const rebuilt = RenderRecord.rebuild(before, stored.event, stored.version, blobs)
    if (Either.isLeft(rebuilt)) throw new Error(rebuilt.left.message)
    return [{ version: stored.version, request: rebuilt.right.request as { readonly prompt: unknown } }]
  })
}

const json = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

/** The shared checks: 30 calls, pruning, a compaction and a seam, and every received prompt rebuilt. */
const checkEveryCall = async (
  db: string,
  stream: string,
  prompts: ReadonlyArray<LanguageModelV3CallOptions["prompt"]>,
  summaryRole: string
) => {
  const log = await readBack(db, stream)
  expect(prompts.length).toBe(turns * callsPerTurn)
  expect(log.count("ToolOutputPruned")).toBeGreaterThan(0)
  expect(log.count("Compacted")).toBeGreaterThan(0)
  expect(log.count("SeamProduced")).toBeGreaterThan(0)
  expect(log.verification).toMatchObject({ renders: prompts.length, verified: prompts.length, failures: [] })
  const renders = rebuiltRenders(log)
  expect(renders.length).toBe(prompts.length)
  renders.forEach((render, call) => {
    expect({ call, prompt: render.request.prompt }).toEqual({ call, prompt: json(prompts[call]) })
  })
  // After the compaction the model got the summary the way the provider builder shows it.
  const summarized = prompts.findIndex((prompt) => JSON.stringify(prompt).includes('<context kind=\\"summary\\">'))
  expect(summarized).toBeGreaterThan(0)
  const summary = prompts[summarized]?.find((message) => JSON.stringify(message).includes("context kind"))
  expect(summary?.role).toBe(summaryRole)
  // Provider metadata went back on the next call: the first answer's item ids are in the second prompt.
  expect(JSON.stringify(prompts[1])).toContain('"itemId":"fc_1"')
  expect(JSON.stringify(prompts[1])).toContain('"reasoningEncryptedContent":"gAAAA1"')
  // `ctxlog render --at` (the CLI) prints the same prompts: the first, the first summarized, the last call.
  for (const call of [0, summarized, prompts.length - 1]) {
    const version = renders[call]?.version ?? -1
    expect(await cliRender(db, stream, version)).toEqual({ format: "ai-sdk", prompt: json(prompts[call]) })
  }
  console.log(
    `${stream}: ${prompts.length} calls, ${log.count("ToolOutputPruned")} ToolOutputPruned, ${log.count("Compacted")} Compacted, ` +
      `${log.count("SeamProduced")} SeamProduced; first summary at call ${summarized + 1}; ${renders.length} renders equal to the prompts`
  )
}

describe("the render is the prompt, on every call of a 30-call tool conversation (issue 35)", () => {
  it("ctxlogMiddleware (OpenAI builder)", async () => {
    const db = tempDb()
    const middleware = ctxlogMiddleware({ sqlite: db, stream: "mw", policy: policyFor("openai", "gpt-4.1") })
    const { model, prompts } = agentModel()
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages: Array<ModelMessage> = [{ role: "system", content: "You are a code reviewer." }]
    for (let turn = 0; turn < turns; turn++) {
      messages.push({ role: "user", content: `Review part ${turn}: ${"context ".repeat(250)}` })
      const out = await generateText({ model: wrapped, tools, stopWhen: stepCountIs(callsPerTurn), messages })
      messages.push(...out.response.messages)
    }
    await middleware.close()
    await checkEveryCall(db, "mw", prompts, "system")
  }, 120_000)

  it("ctxlogPrepareStep (Anthropic builder)", async () => {
    const db = tempDb()
    const steps = ctxlogPrepareStep({ sqlite: db, stream: "ps", policy: policyFor("anthropic", "claude-sonnet-4-5") })
    const { model, prompts } = agentModel()
    const messages: Array<ModelMessage> = []
    for (let turn = 0; turn < turns; turn++) {
      messages.push({ role: "user", content: `Review part ${turn}: ${"context ".repeat(250)}` })
      const out = await generateText({
        model,
        tools,
        stopWhen: stepCountIs(callsPerTurn),
        messages,
        prepareStep: steps.prepareStep,
        onStepFinish: steps.onStepFinish
      })
      messages.push(...out.response.messages)
    }
    await steps.close()
    await checkEveryCall(db, "ps", prompts, "user")
  }, 120_000)
})
