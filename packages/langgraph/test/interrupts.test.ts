/**
 * LangGraph `interrupt()` and `Command({ resume })` through `CtxlogSaver` and `ctxlogPreModelHook`
 * (issue 35): a tool call waiting on a human is stored and shown (the saver's window holds it as
 * pending, the checkpoint's task holds the interrupt), a resume runs the tool once, and a thread that
 * goes on without resuming keeps the call, answered as not run: never a render error.
 */
import { ToolPairs } from "@ctxlog/core"
import { HumanMessage, ToolMessage } from "@langchain/core/messages"
import { tool } from "@langchain/core/tools"
import { Command, interrupt } from "@langchain/langgraph"
import { createReactAgent } from "@langchain/langgraph/prebuilt"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { CtxlogSaver } from "../src/index.js"
import { ctxlogPreModelHook } from "../src/PreModelHook.js"
import { callTool, readBack, ScriptedChatModel, say, tempDb } from "./scriptedModel.js"

let ran: Array<string> = []
const remove = tool(
  async ({ path }: { path: string }) => {
    const approval: unknown = interrupt({ approve: path })
    ran.push(path)
    return `removed ${path} (${JSON.stringify(approval)})`
  },
  { name: "remove", description: "Remove a file once a human approves", schema: z.object({ path: z.string() }) }
)

const thread = { configurable: { thread_id: "approvals" } }

const setup = (filename: string) => {
  const hook = ctxlogPreModelHook({ sqlite: filename, tools: [remove], system: "You are careful." })
  const saver = new CtxlogSaver({ sqlite: filename })
  const llm = new ScriptedChatModel(
    (call) =>
      [
        callTool("c1", "remove", { path: "a.txt" }),
        say("a.txt is gone."),
        callTool("c2", "remove", { path: "b.txt" }),
        say("Fine, b.txt stays.")
      ][call] ?? say("(script ended)")
  )
  const agent = createReactAgent({
    llm,
    tools: [remove],
    preModelHook: hook,
    postModelHook: hook.postModelHook,
    checkpointer: saver
  })
  return { hook, saver, llm, agent }
}

describe("interrupt() and Command({ resume }) through the saver and the pre-model hook", () => {
  it("a paused call is stored and shown; resuming runs the tool once; going on without resuming is no render error", async () => {
    ran = []
    const filename = tempDb()
    const { hook, saver, llm, agent } = setup(filename)

    // 1. The model asks for the tool; the tool waits for a human.
    const paused = await agent.invoke({ messages: [new HumanMessage({ id: "h1", content: "remove a.txt" })] }, thread)
    expect(Reflect.get(paused, "__interrupt__")).toMatchObject([{ value: { approve: "a.txt" } }])
    const state = await agent.getState(thread)
    expect(state.next).toEqual(["tools"])
    expect(state.tasks.flatMap((task) => task.interrupts.map((each) => each.value))).toEqual([{ approve: "a.txt" }])
    // The saver's window shows the call, pending.
    const atPause = await readBack(filename, CtxlogSaver.streamFor("approvals"))
    expect(atPause.window.history.map((message) => message.role)).toEqual(["user", "assistant"])
    expect(ToolPairs.pendingCalls(atPause.window.history)).toEqual(["c1"])

    // 2. Resume: the tool runs once, the model answers.
    const resumed = await agent.invoke(new Command({ resume: "yes" }), thread)
    expect(resumed.messages.at(-1)?.content).toBe("a.txt is gone.")
    expect(ran).toEqual(["a.txt"])

    // 3. Paused again; the user goes on without resuming. The call stays, answered as not run.
    await agent.invoke({ messages: [new HumanMessage({ id: "h2", content: "remove b.txt" })] }, thread)
    const after = await agent.invoke({ messages: [new HumanMessage({ id: "h3", content: "no, keep it" })] }, thread)
    expect(after.messages.at(-1)?.content).toBe("Fine, b.txt stays.")
    expect(ran).toEqual(["a.txt"])
    await hook.close()
    await saver.close()

    // What the model got on its last call: the call c2 and, since it never ran, its result saying so.
    const last = llm.prompts.at(-1) ?? []
    const c2 = last.find((message) => ToolMessage.isInstance(message) && message.tool_call_id === "c2")
    expect(String(c2?.content)).toContain("not run")
    const log = await readBack(filename, "approvals/model")
    expect(ToolPairs.pendingCalls(log.window.history)).toEqual([])
    const calls = log.window.history.flatMap((message) =>
      message.parts.flatMap((part) => (part.type === "tool_call" ? [part.id] : []))
    )
    expect(calls).toEqual(["c1", "c2"])
    expect(log.count("PromptRendered")).toBe(4)
    expect(log.verification).toEqual({ renders: 4, verified: 4, failures: [], overWindow: [] })
    // The saver's window holds the thread as LangGraph does: c2 still without a result there.
    const mirrored = await readBack(filename, CtxlogSaver.streamFor("approvals"))
    expect(ToolPairs.pendingCalls(mirrored.window.history)).toEqual(["c2"])
  })
})
