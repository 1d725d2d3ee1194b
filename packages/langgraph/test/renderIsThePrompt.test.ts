/**
 * The render is the prompt (issue 35): over a 30-call tool conversation of a ReAct agent under
 * `ctxlogPreModelHook`, with a small context window so that tool outputs are pruned, history is
 * compacted and seams are produced, what the model received on every call (the LangChain messages its
 * `_generate` got) equals, whole, what `ctxlog render --at <version>` rebuilds for that call (the
 * inspector's own `Inspect.renderAt` for every call, and the CLI itself for the first and last).
 *
 * The model here is a LangChain chat model: what a provider package (ChatOpenAI, ...) then sends over
 * HTTP is that package's conversion, not compared here.
 */
import { type BaseMessage, HumanMessage } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import { MemorySaver } from "@langchain/langgraph"
import { createReactAgent } from "@langchain/langgraph/prebuilt"
import { fromLangChainFormat, type LangChainRequest } from "@ctxlog/providers/langchain"
import { Inspect, Source } from "@ctxlog/inspector"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { ctxlogPreModelHook } from "../src/PreModelHook.js"
import { callTool, readBack, ScriptedChatModel, say, tempDb } from "./scriptedModel.js"
import { ctxlog } from "./support/cli.js"

const readFile = tool(async ({ path }: { path: string }) => `${path}: ${"lorem ipsum dolor sit amet ".repeat(60)}`, {
  name: "read_file",
  description: "Read a file",
  schema: z.object({ path: z.string() })
})

/** A LangChain message, whole, as its class and fields (what a chat model reads of it). */
const whole = (messages: ReadonlyArray<BaseMessage>) => messages.map((message) => message.toDict())

const requestOf = (body: string | null): LangChainRequest => {
  const parsed: unknown = JSON.parse(body ?? "null")
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    Reflect.get(parsed, "format") !== "langchain" ||
    !Array.isArray(Reflect.get(parsed, "messages"))
  ) {
    throw new Error(`not a langchain render: ${String(body).slice(0, 200)}`)
  }
  return parsed as LangChainRequest
}

describe("the render is the prompt: ctxlogPreModelHook", () => {
  it("over 30 model calls with pruning, compaction and seams, every call's prompt is what ctxlog render --at rebuilds", async () => {
    const filename = tempDb()
    const hook = ctxlogPreModelHook({
      sqlite: filename,
      tools: [readFile],
      system: "You read files and answer briefly.",
      policy: {
        builder: { provider: "default", model: "scripted", contextWindow: 4000, maxOutputTokens: 300 },
        compaction: {
          softThreshold: 0.3,
          hardThreshold: 0.5,
          targetRatio: 0.25,
          calibrate: false,
          proactiveFromUsage: false,
          prune: { keepRecent: 1, minChars: 200 }
        },
        seams: { level1: 0.45, level2: 0.7, level3: 0.9 }
      }
    })
    // 15 user turns, each one tool call then an answer: 30 model calls.
    const turns = 15
    const llm = new ScriptedChatModel((call) =>
      call % 2 === 0
        ? callTool(`c${call}`, "read_file", { path: `file-${call / 2}.ts` })
        : say(`file-${(call - 1) / 2}.ts holds ${"a long explanation ".repeat(30)}`)
    )
    const agent = createReactAgent({
      llm,
      tools: [readFile],
      preModelHook: hook,
      postModelHook: hook.postModelHook,
      checkpointer: new MemorySaver()
    })
    const config = { configurable: { thread_id: "prompt" } }
    for (let index = 0; index < turns; index++) {
      await agent.invoke(
        { messages: [new HumanMessage(`What is in file-${index}.ts? ${"context ".repeat(40)}`)] },
        config
      )
    }
    await hook.close()
    expect(llm.prompts).toHaveLength(30)

    const stream = "prompt/model"
    const log = await readBack(filename, stream)
    const renders = log.events
      .filter((stored) => stored.event._tag === "PromptRendered")
      .map((stored) => stored.version)
    expect(renders).toHaveLength(30)
    expect(log.count("ToolOutputPruned")).toBeGreaterThan(0)
    expect(log.count("Compacted")).toBeGreaterThan(0)
    expect(log.count("SeamProduced")).toBeGreaterThan(0)
    expect(log.verification).toMatchObject({ renders: 30, verified: 30, failures: [] })

    // Every call: the rebuild of its render, through the inspector's renderAt, equals what the model got.
    const checks = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const source = yield* Source.sqlite(filename)
          return yield* Effect.forEach(renders, (at) => Inspect.renderAt(source, stream, { at }))
        })
      )
    )
    for (const [call, check] of checks.entries()) {
      expect(check.verified).toBe(true)
      expect(whole(fromLangChainFormat(requestOf(check.body).messages))).toEqual(whole(llm.prompts[call] ?? []))
    }
    // And the CLI itself, as a user runs it, for the first and the last call.
    for (const call of [0, 29]) {
      const printed = await ctxlog(["render", stream, "--db", filename, "--at", String(renders[call]), "--json"])
      const body: unknown = typeof printed === "object" && printed !== null ? Reflect.get(printed, "body") : undefined
      expect(whole(fromLangChainFormat(requestOf(typeof body === "string" ? body : null).messages))).toEqual(
        whole(llm.prompts[call] ?? [])
      )
    }
    // What the compaction did shows in what the model got: a summary in the prompt, fewer messages.
    const last = llm.prompts[29] ?? []
    expect(last.some((message) => String(message.content).includes("<context"))).toBe(true)
    console.log(
      `render is the prompt: 30 calls, ${log.count("ToolOutputPruned")} ToolOutputPruned, ${log.count("Compacted")} Compacted, ${log.count("SeamProduced")} SeamProduced, last prompt ${last.length} messages`
    )
  })
})
