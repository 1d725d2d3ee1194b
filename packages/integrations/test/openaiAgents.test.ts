import { createContext } from "@ctxlog/client"
import { Message } from "@ctxlog/core"
import {
  Agent,
  type AgentInputItem,
  isOpenAIResponsesCompactionAwareSession,
  type Model,
  type ModelRequest,
  type ModelResponse,
  run,
  setTracingDisabled,
  tool,
  Usage
} from "@openai/agents"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { CtxlogSession } from "../src/openaiAgents.js"
import { readBack, tempDb } from "./support.js"

setTracingDisabled(true)

/** A hand-written Agents SDK model: answers from a script and keeps every input it received. */
class ScriptedModel implements Model {
  readonly inputs: Array<ModelRequest["input"]> = []
  private call = 0
  constructor(private readonly answers: ReadonlyArray<string>) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(request.input)
    const text = this.answers[this.call++] ?? "(no more answers)"
    return {
      usage: new Usage({ requests: 1, inputTokens: 50, outputTokens: 5, totalTokens: 55 }),
      output: [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          id: `msg_${this.call}`,
          content: [{ type: "output_text", text }]
        }
      ]
    }
  }
  // biome-ignore lint/correctness/useYield: this model never streams; a streamed run is refused.
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("ScriptedModel does not stream")
  }
}

const userItem = (text: string): AgentInputItem => ({ role: "user", content: text })

describe("CtxlogSession", () => {
  it("is the session of an agent run: items land in the log, the next run gets them back", async () => {
    const filename = tempDb()
    const session = new CtxlogSession({ sqlite: filename, sessionId: "s1" })
    const model = new ScriptedModel(["The build fails on a missing import.", "Add the import to src/index.ts."])
    const agent = new Agent({ name: "helper", instructions: "You are terse.", model })
    const options = { session, callModelInputFilter: session.callModelInputFilter }
    const first = await run(agent, "Why does the build fail?", options)
    expect(first.finalOutput).toBe("The build fails on a missing import.")
    const second = await run(agent, "How do I fix it?", options)
    expect(second.finalOutput).toBe("Add the import to src/index.ts.")
    // The second call's input is the rendered window: the first turn, then the new question.
    const input = model.inputs[1]
    expect(Array.isArray(input) ? input.map((item) => ("role" in item ? item.role : item.type)) : input).toEqual([
      "user",
      "assistant",
      "user"
    ])
    expect(await session.getSessionId()).toBe("s1")
    await session.close()
    const log = await readBack(filename, "s1")
    expect(log.window.history.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"])
    expect(log.count("TurnCompleted")).toBe(2)
    expect(log.verification.renders).toBeGreaterThan(0)
    expect(log.verification.verified).toBe(log.verification.renders)
    expect(log.verification.failures).toEqual([])
    console.log("agent run:", log.tags.join(" "))
    console.log("verifyAll:", JSON.stringify(log.verification))
  })

  it("records a run whose model calls a tool: the runner's call and result items go in as one completion", async () => {
    const filename = tempDb()
    const session = new CtxlogSession({ sqlite: filename, sessionId: "t1" })
    const inputs: Array<ModelRequest["input"]> = []
    const outputs: Array<ModelResponse["output"]> = [
      [
        {
          type: "function_call",
          callId: "call_1",
          name: "read_file",
          arguments: JSON.stringify({ path: "a.ts" }),
          status: "completed",
          id: "fc_1"
        }
      ],
      [
        {
          type: "message",
          role: "assistant",
          status: "completed",
          id: "msg_2",
          content: [{ type: "output_text", text: "a.ts exports a." }]
        }
      ]
    ]
    const model: Model = {
      async getResponse(request) {
        inputs.push(request.input)
        return {
          usage: new Usage({ requests: 1, inputTokens: 40, outputTokens: 4, totalTokens: 44 }),
          output: outputs[inputs.length - 1] ?? []
        }
      },
      // biome-ignore lint/correctness/useYield: this model never streams.
      async *getStreamedResponse() {
        throw new Error("no streaming")
      }
    }
    const readFile = tool({
      name: "read_file",
      description: "Read a file",
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => `export const a = 1 // ${path}`
    })
    const agent = new Agent({ name: "reader", instructions: "Read files.", model, tools: [readFile] })
    const result = await run(agent, "What does a.ts export?", {
      session,
      callModelInputFilter: session.callModelInputFilter
    })
    expect(result.finalOutput).toBe("a.ts exports a.")
    const items = await session.getItems()
    expect(items.map((item) => item.type ?? "message")).toEqual([
      "message",
      "function_call",
      "function_call_result",
      "message"
    ])
    await session.close()
    const log = await readBack(filename, "t1")
    expect(log.window.history.map((message) => message.parts.map((part) => part.type))).toEqual([
      ["text"],
      ["tool_call"],
      ["tool_result"],
      ["text"]
    ])
    expect(log.count("TurnCompleted")).toBe(1)
    // Two model calls, two renders (the second with the call and its result).
    expect(log.verification).toMatchObject({ renders: 2, verified: 2, failures: [] })
    console.log("tool run:", log.tags.join(" "))
  })

  it("adds, returns, pops and clears items; tool rounds go in as one completion", async () => {
    const filename = tempDb()
    const session = new CtxlogSession({ sqlite: filename, sessionId: "s2" })
    await session.addItems([
      userItem("Read a.ts"),
      { type: "function_call", callId: "c1", name: "read_file", arguments: '{"path":"a.ts"}', status: "completed" },
      {
        type: "function_call_result",
        callId: "c1",
        name: "read_file",
        status: "completed",
        output: { type: "text", text: "export const a = 1" }
      },
      { role: "assistant", status: "completed", content: [{ type: "output_text", text: "It exports a." }] }
    ])
    const items = await session.getItems()
    expect(items.map((item) => item.type ?? "message")).toEqual([
      "message",
      "function_call",
      "function_call_result",
      "message"
    ])
    expect(await session.getItems(1)).toEqual(items.slice(-1))
    const popped = await session.popItem()
    expect(popped).toMatchObject({ role: "assistant" })
    expect((await session.getItems()).length).toBe(3)
    await session.clearSession()
    expect(await session.getItems()).toEqual([])
    await session.close()
    const log = await readBack(filename, "s2")
    expect(log.count("MessagesRemoved")).toBe(1)
    expect(log.count("HistoryCleared")).toBe(1)
    // Reading the history renders nothing.
    expect(log.verification.renders).toBe(0)
    console.log("session ops:", log.tags.join(" "))
  })

  it("compacts the window by the policy while the stored items stay as added", async () => {
    const filename = tempDb()
    const session = new CtxlogSession({
      sqlite: filename,
      sessionId: "s3",
      policy: {
        builder: { provider: "openai", api: "responses", model: "gpt-4.1", contextWindow: 4_000, maxOutputTokens: 500 },
        compaction: { softThreshold: 0.5, hardThreshold: 0.6, proactiveThreshold: 0.55, targetRatio: 0.3 }
      }
    })
    const turns = 12
    for (let index = 0; index < turns; index++) {
      await session.addItems([
        userItem(`Question ${index}: ${"context ".repeat(200)}`),
        {
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: `Answer ${index}: ${"detail ".repeat(200)}` }]
        }
      ])
    }
    const items = await session.getItems()
    await session.close()
    const log = await readBack(filename, "s3")
    expect(log.count("Compacted")).toBeGreaterThan(0)
    // The store is the items as added; the window (what the model is sent) is compacted.
    expect(items.length).toBe(2 * turns)
    expect(log.window.history.length).toBeLessThan(2 * turns)
    console.log(
      `session compaction: ${log.count("Compacted")} Compacted; window ${log.window.history.length} messages for ${2 * turns} items`
    )
  })

  it("refuses an item ctxlog cannot hold with a typed error naming it, and writes nothing", async () => {
    const filename = tempDb()
    const session = new CtxlogSession({ sqlite: filename, sessionId: "s4" })
    await session.addItems([userItem("first")])
    await expect(
      session.addItems([
        userItem("second"),
        { role: "user", content: "third", providerData: { at: new Date(0) } } as AgentInputItem
      ])
    ).rejects.toMatchObject({ _tag: "AdapterError", message: expect.stringContaining("item.providerData.at") })
    await session.close()
    const log = await readBack(filename, "s4")
    expect(log.window.history.map((message) => Message.textOf(message))).toEqual(["first"])
  })

  it("keeps the assistant message ids of the items it is given: they come back from getItems (round trip)", async () => {
    const filename = tempDb()
    const session = new CtxlogSession({ sqlite: filename, sessionId: "ids" })
    const model = new ScriptedModel(["The build passes."])
    const agent = new Agent({ name: "helper", instructions: "You are terse.", model })
    await run(agent, "Does the build pass?", { session })
    // An answer whose first item is its reasoning: the message item's id is the message's id all the same.
    await session.addItems([
      userItem("And the tests?"),
      { type: "reasoning", id: "rs_7", content: [{ type: "input_text", text: "Check the runner." }] },
      {
        type: "message",
        role: "assistant",
        status: "completed",
        id: "msg_7",
        content: [{ type: "output_text", text: "They pass too." }]
      }
    ])
    const items = await session.getItems()
    await session.close()
    const ids = items.flatMap((item) =>
      item.type === "message" && item.role === "assistant" ? [item.id] : item.type === "reasoning" ? [item.id] : []
    )
    expect(ids).toEqual(["msg_1", "rs_7", "msg_7"])
    const log = await readBack(filename, "ids")
    // ctxlog's messages have ids of their own: an item id is the item's, kept with it.
    expect(log.window.history.map((message) => message.id)).not.toContain("msg_1")
    expect(log.verification).toMatchObject({ failures: [] })
    console.log("assistant ids kept:", JSON.stringify(ids))
  })

  it("implements the SDK's compaction hook (runCompaction) with the policy's compaction", async () => {
    const filename = tempDb()
    const policy = {
      builder: { provider: "openai" as const, api: "responses" as const, model: "gpt-4.1", contextWindow: 4_000 },
      compaction: { softThreshold: 0.5, hardThreshold: 0.6, proactiveThreshold: 0.55, targetRatio: 0.3 }
    }
    const session = new CtxlogSession({ sqlite: filename, sessionId: "hook", policy })
    // The runner calls runCompaction after each stored turn of a session that has it.
    expect(isOpenAIResponsesCompactionAwareSession(session)).toBe(true)
    const model = new ScriptedModel(["Short answer."])
    await run(new Agent({ name: "helper", instructions: "You are terse.", model }), "A short question?", { session })
    // Below the hard threshold the hook does nothing (the runner has called it already).
    expect(await session.runCompaction()).toBeNull()
    expect((await readBack(filename, "hook")).count("Compacted")).toBe(0)
    // Another writer fills the stream past the hard threshold: the hook compacts, by the policy.
    const other = await createContext({ sqlite: filename, create: false })
    for (let index = 0; index < 6; index++) {
      await other.append("hook", [
        Message.user(`Question ${index}: ${"context ".repeat(200)}`),
        Message.assistant(`Answer ${index}: ${"detail ".repeat(200)}`)
      ])
    }
    await other.close()
    const before = (await readBack(filename, "hook")).window.history.length
    expect(await session.runCompaction({ responseId: "resp_1" })).toBeNull()
    const compacted = await readBack(filename, "hook")
    expect(compacted.count("Compacted")).toBe(1)
    const after = compacted.window.history.length
    expect(after).toBeLessThan(before)
    // Forced: it compacts again although the window is below the threshold now.
    await session.runCompaction({ force: true })
    await session.close()
    const log = await readBack(filename, "hook")
    expect(log.count("Compacted")).toBe(2)
    expect(log.verification).toMatchObject({ failures: [] })
    expect(log.verification.verified).toBe(log.verification.renders)
    console.log(`runCompaction: ${before} history messages -> ${after}; ${log.count("Compacted")} Compacted`)
  })
})
