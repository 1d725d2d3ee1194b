import { type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import { MemorySaver } from "@langchain/langgraph"
import { createReactAgent } from "@langchain/langgraph/prebuilt"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { ctxlogPreModelHook } from "../src/PreModelHook.js"
import { callTool, readBack, ScriptedChatModel, say, tempDb } from "./scriptedModel.js"

const readFile = tool(async ({ path }: { path: string }) => `contents of ${path}`, {
  name: "read_file",
  description: "Read a file",
  schema: z.object({ path: z.string() })
})

const types = (messages: ReadonlyArray<{ readonly type: string }>) => messages.map((message) => message.type)
const chars = (messages: ReadonlyArray<BaseMessage>) =>
  messages.reduce((sum, message) => sum + JSON.stringify(message.content).length, 0)
const thread = (id: string) => ({ configurable: { thread_id: id } })

describe("ctxlogPreModelHook", () => {
  it("runs every model call of a ReAct agent through the turn module; every render rebuilds", async () => {
    const filename = tempDb()
    const hook = ctxlogPreModelHook({ sqlite: filename, tools: [readFile], system: "You are terse." })
    const llm = new ScriptedChatModel(
      (call) =>
        [callTool("c1", "read_file", { path: "a.ts" }), say("a.ts exports one function."), say("Yes.")][call] ??
        say("(script ended)")
    )
    const agent = createReactAgent({ llm, tools: [readFile], preModelHook: hook, checkpointer: new MemorySaver() })
    const first = await agent.invoke({ messages: [new HumanMessage("What is in a.ts?")] }, thread("t1"))
    expect(first.messages.at(-1)?.content).toBe("a.ts exports one function.")
    const second = await agent.invoke({ messages: [new HumanMessage("Is that all?")] }, thread("t1"))
    expect(second.messages.at(-1)?.content).toBe("Yes.")
    await hook.close()

    // The model saw the rendered window: the system prompt (the hook's), then the thread.
    expect(llm.prompts.map(types)).toEqual([
      ["system", "human"],
      ["system", "human", "ai", "tool"],
      ["system", "human", "ai", "tool", "ai", "human"]
    ])
    expect(hook.streamOf(thread("t1"))).toBe("t1/model")
    const log = await readBack(filename, "t1/model")
    expect(log.window.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user"
    ])
    expect(log.count("PromptRendered")).toBe(3)
    expect(log.count("TurnCompleted")).toBe(1)
    expect(log.count("UsageReported")).toBe(2)
    // The tool schemas are part of each recorded render.
    const rendered = log.events.flatMap((stored) => (stored.event._tag === "PromptRendered" ? [stored.event] : []))
    expect(rendered.every((event) => event.render?.toolsSha256 !== undefined)).toBe(true)
    expect(log.verification).toEqual({ renders: 3, verified: 3, failures: [], overWindow: [] })
    console.log("verifyAll:", JSON.stringify(log.verification))
  })

  it("keeps a long thread under the model's window: compaction and the fit run, every render fits and rebuilds", async () => {
    const filename = tempDb()
    const contextWindow = 6000
    const hook = ctxlogPreModelHook({
      sqlite: filename,
      tools: [readFile],
      policy: {
        builder: { provider: "default", model: "scripted", contextWindow, maxOutputTokens: 500 },
        compaction: {}
      }
    })
    const rounds = 30
    const bigFile = tool(async ({ path }: { path: string }) => `${path}: ${"lorem ipsum dolor sit amet ".repeat(90)}`, {
      name: "read_file",
      description: "Read a file",
      schema: z.object({ path: z.string() })
    })
    // Each user turn: one tool call (a ~600-token result), then an answer.
    const llm = new ScriptedChatModel((call) =>
      call % 2 === 0 ? callTool(`c${call}`, "read_file", { path: `f${call}.ts` }) : say(`done ${call}`)
    )
    const agent = createReactAgent({ llm, tools: [bigFile], preModelHook: hook, checkpointer: new MemorySaver() })
    let state: { messages: ReadonlyArray<BaseMessage> } = { messages: [] }
    for (let round = 0; round < rounds; round++) {
      state = await agent.invoke({ messages: [new HumanMessage(`Read file ${round}`)] }, thread("long"))
    }
    await hook.close()

    expect(state.messages.length).toBe(rounds * 4)
    expect(llm.prompts.length).toBe(rounds * 2)
    const log = await readBack(filename, "long/model")
    const rendered = log.events.flatMap((stored) => (stored.event._tag === "PromptRendered" ? [stored.event] : []))
    expect(rendered.length).toBe(rounds * 2)
    // Every render plus its output reserve fits the window, as recorded and as rebuilt.
    for (const event of rendered) expect(event.tokens.total + 500).toBeLessThanOrEqual(contextWindow)
    expect(log.verification).toEqual({ renders: rounds * 2, verified: rounds * 2, failures: [], overWindow: [] })
    // Without the turn the last prompt would be the whole thread; the model saw far less of it, and the
    // newest tool result (cut to the builder's tool-output limit, as every result is).
    const last = llm.prompts.at(-1) ?? []
    expect(chars(last)).toBeLessThan(chars(state.messages) / 2)
    expect(types(last).at(-1)).toBe("tool")
    const newest = state.messages.at(-2)
    expect(newest !== undefined && ToolMessage.isInstance(newest)).toBe(true)
    expect(last.at(-1)).toMatchObject({
      tool_call_id: newest !== undefined && ToolMessage.isInstance(newest) ? newest.tool_call_id : ""
    })
    const removed = log.count("Compacted") + log.count("HistoryTrimmed") + log.count("ToolOutputPruned")
    expect(removed).toBeGreaterThan(0)
    console.log(
      `long thread: ${state.messages.length} messages (${chars(state.messages)} chars) in the thread, ${last.length} (${chars(last)} chars) in the last prompt;`,
      `largest render ${Math.max(...rendered.map((event) => event.tokens.total))} tokens of ${contextWindow - 500};`,
      `Compacted ${log.count("Compacted")}, HistoryTrimmed ${log.count("HistoryTrimmed")}, ToolOutputPruned ${log.count("ToolOutputPruned")};`,
      `verifyAll ${JSON.stringify(log.verification)}`
    )
  })

  it("resumes a thread after a restart: a new hook and checkpointer on the same files add only what is new", async () => {
    const filename = tempDb()
    const checkpoints = filename.replace(/agent\.db$/, "checkpoints.db")
    const script = [callTool("c1", "read_file", { path: "a.ts" }), say("One function."), say("Still one.")]
    let calls = 0
    const llm = () => new ScriptedChatModel(() => script[calls++] ?? say("(script ended)"))

    const firstHook = ctxlogPreModelHook({ sqlite: filename, tools: [readFile] })
    const firstSaver = SqliteSaver.fromConnString(checkpoints)
    const first = createReactAgent({ llm: llm(), tools: [readFile], preModelHook: firstHook, checkpointer: firstSaver })
    await first.invoke(
      { messages: [new SystemMessage("Be brief."), new HumanMessage("What is in a.ts?")] },
      thread("r")
    )
    await firstHook.close()
    firstSaver.db.close()

    const secondHook = ctxlogPreModelHook({ sqlite: filename, tools: [readFile] })
    const secondSaver = SqliteSaver.fromConnString(checkpoints)
    const model = llm()
    const second = createReactAgent({
      llm: model,
      tools: [readFile],
      preModelHook: secondHook,
      checkpointer: secondSaver
    })
    const resumed = await second.invoke({ messages: [new HumanMessage("And now?")] }, thread("r"))
    await secondHook.close()
    secondSaver.db.close()

    expect(resumed.messages.at(-1)?.content).toBe("Still one.")
    expect(types(model.prompts[0] ?? [])).toEqual(["system", "human", "ai", "tool", "ai", "human"])
    const log = await readBack(filename, "r/model")
    // The thread's system message became the stream's system prompt; nothing went in twice.
    expect(log.window.system.map((message) => message.role)).toEqual(["system"])
    expect(log.window.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user"
    ])
    expect(log.verification).toMatchObject({ renders: 3, verified: 3, failures: [] })
  })

  it("with the post-model hook a final answer goes in at once, and a restart does not put it in twice", async () => {
    const filename = tempDb()
    const checkpoints = filename.replace(/agent\.db$/, "checkpoints.db")
    const script = [callTool("c1", "read_file", { path: "a.ts" }), say("One function."), say("Still one.")]
    let calls = 0
    const session = async (question: string) => {
      const hook = ctxlogPreModelHook({ sqlite: filename, tools: [readFile] })
      const saver = SqliteSaver.fromConnString(checkpoints)
      const llm = new ScriptedChatModel(() => script[calls++] ?? say("(script ended)"))
      const agent = createReactAgent({
        llm,
        tools: [readFile],
        preModelHook: hook,
        postModelHook: hook.postModelHook,
        checkpointer: saver
      })
      const state = await agent.invoke({ messages: [new HumanMessage(question)] }, thread("p"))
      await hook.close()
      saver.db.close()
      return state
    }
    await session("What is in a.ts?")
    const first = await readBack(filename, "p/model")
    expect(first.window.history.map((message) => message.role)).toEqual(["user", "assistant", "tool", "assistant"])
    expect(first.count("TurnCompleted")).toBe(1)
    expect(first.count("UsageReported")).toBe(2)

    const resumed = await session("And now?")
    expect(resumed.messages.at(-1)?.content).toBe("Still one.")
    const log = await readBack(filename, "p/model")
    expect(log.window.history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant"
    ])
    expect(log.count("TurnCompleted")).toBe(2)
    expect(log.verification).toEqual({ renders: 3, verified: 3, failures: [], overWindow: [] })
  })

  it("refuses a message the LangChain adapter cannot carry, naming it, and writes nothing", async () => {
    const filename = tempDb()
    const hook = ctxlogPreModelHook({ sqlite: filename })
    await hook({ messages: [new HumanMessage("hi")] }, thread("bad"))
    const before = (await readBack(filename, "bad/model")).events.length
    const odd = new HumanMessage({ content: [{ type: "audio_clip", data: "…" }] })
    await expect(hook({ messages: [new HumanMessage("hi"), odd] }, thread("bad"))).rejects.toMatchObject({
      _tag: "AdapterError",
      message: expect.stringContaining("state.messages[1]")
    })
    await expect(hook({ messages: [new HumanMessage("hi")] }, {})).rejects.toMatchObject({ _tag: "InvalidInput" })
    await hook.close()
    expect((await readBack(filename, "bad/model")).events.length).toBe(before)
  })

  it("takes a tool result whose answer the log holds as part of that round after a restart", async () => {
    const filename = tempDb()
    const hook = ctxlogPreModelHook({ sqlite: filename, tools: [readFile] })
    const messages = [
      new HumanMessage({ content: "Read a.ts", id: "h1" }),
      callTool("c1", "read_file", { path: "a.ts" }),
      new ToolMessage({ content: "contents of a.ts", tool_call_id: "c1", id: "t1" })
    ]
    await hook({ messages }, thread("x"))
    await hook.close()
    const again = ctxlogPreModelHook({ sqlite: filename, tools: [readFile] })
    const out = await again({ messages }, thread("x"))
    await again.close()
    expect(types(out.llmInputMessages)).toEqual(["human", "ai", "tool"])
    const log = await readBack(filename, "x/model")
    expect(log.window.history.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
    expect(log.count("PromptRendered")).toBe(2)
  })
})
