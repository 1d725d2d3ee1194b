/**
 * Issue 35, the OpenAI Agents session: each defect the issue names, as a test (each failed on the
 * branch's starting point, 3ef6dc9). The model is the SDK's own test model (`ScriptedModel` of
 * `@openai/agents/testing`), which keeps every request it got.
 */
import {
  Agent,
  type AgentInputItem,
  isSessionHistoryRewriteAwareSession,
  isSessionHistoryTransactionAwareSession,
  run,
  setTracingDisabled,
  tool
} from "@openai/agents"
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing"
import { describe, expect, it } from "vitest"
import { z } from "zod"
import { CtxlogSession } from "../src/openaiAgents.js"
import { readBack, tempDb } from "./support.js"

setTracingDisabled(true)

const idsOf = (input: unknown): ReadonlyArray<string | undefined> =>
  Array.isArray(input) ? input.map((item: { readonly id?: string }) => item.id) : []

describe("CtxlogSession keeps what it is given (issue 35)", () => {
  it("sends no id the caller did not give: a user item comes back without one, the model's keep theirs", async () => {
    const session = new CtxlogSession({ sqlite: tempDb(), sessionId: "ids" })
    const model = new ScriptedModel([
      [assistantMessage("First answer.", { id: "msg_a1" })],
      [assistantMessage("Second answer.", { id: "msg_a2" })]
    ])
    const agent = new Agent({ name: "helper", instructions: "Be terse.", model })
    await run(agent, "First question?", { session })
    await run(agent, "Second question?", { session })
    // The second call's input: the stored history, then the new question. Only the answer has an id.
    expect(idsOf(model.calls[1]?.request.input)).toEqual([undefined, "msg_a1", undefined])
    expect((await session.getItems()).map((item) => ("id" in item ? item.id : undefined))).toEqual([
      undefined,
      "msg_a1",
      undefined,
      "msg_a2"
    ])
    await session.close()
  })

  it("reads a history whose tool call waits for approval, and one holding only a reasoning item", async () => {
    const session = new CtxlogSession({ sqlite: tempDb(), sessionId: "pending" })
    const pending: Array<AgentInputItem> = [
      { role: "user", content: "Delete the branch." },
      {
        type: "function_call",
        callId: "call_1",
        name: "delete_branch",
        arguments: '{"name":"old"}',
        status: "completed"
      }
    ]
    await session.addItems(pending)
    expect(await session.getItems()).toEqual(pending)
    const reasoning = new CtxlogSession({ sqlite: tempDb(), sessionId: "reasoning" })
    const thought: AgentInputItem = {
      type: "reasoning",
      id: "rs_1",
      content: [],
      providerData: { encryptedContent: "gAAAAB…" }
    }
    await reasoning.addItems([thought])
    expect(await reasoning.getItems()).toEqual([thought])
    await session.close()
    await reasoning.close()
  })

  it("returns every item exactly as added: no merging, ids, phase, providerData, output shapes, unknown kinds", async () => {
    const filename = tempDb()
    const session = new CtxlogSession({ sqlite: filename, sessionId: "exact" })
    const items: Array<AgentInputItem> = [
      { role: "user", content: [{ type: "input_text", text: "Plan, then read a.ts." }] },
      { type: "reasoning", id: "rs_1", content: [], providerData: { encryptedContent: "enc-1" } },
      {
        type: "message",
        role: "assistant",
        id: "msg_1",
        phase: "commentary",
        status: "completed",
        content: [{ type: "output_text", text: "I will read it." }]
      },
      {
        type: "function_call",
        id: "fc_1",
        callId: "call_1",
        name: "read_file",
        arguments: '{"path":"a.ts"}',
        status: "completed",
        providerData: { namespace: "files" }
      },
      {
        type: "function_call_result",
        callId: "call_1",
        name: "read_file",
        status: "completed",
        output: { type: "text", text: "export const a = 1" }
      },
      {
        type: "message",
        role: "assistant",
        id: "msg_2",
        phase: "final_answer",
        status: "completed",
        content: [{ type: "output_text", text: "a.ts exports a." }],
        providerData: { cached: true }
      },
      { type: "compaction", encrypted_content: "cmp-1", id: "cmp_1" },
      { type: "future_kind", payload: { nested: [1, 2] } } as unknown as AgentInputItem
    ]
    await session.addItems(items)
    expect(await session.getItems()).toEqual(items)
    expect(await session.getItems(3)).toEqual(items.slice(-3))
    // One item out: the last, alone.
    expect(await session.popItem()).toEqual(items[7])
    expect(await session.getItems()).toEqual(items.slice(0, 7))
    await session.close()
    // Another process reads the same items back from the file.
    const again = new CtxlogSession({ sqlite: filename, sessionId: "exact" })
    expect(await again.getItems()).toEqual(items.slice(0, 7))
    await again.close()
    const log = await readBack(filename, "exact")
    expect(log.window.history.length).toBe(7)
  })

  it("implements the SDK's history-transaction and history-mutation hooks", async () => {
    const session = new CtxlogSession({ sqlite: tempDb(), sessionId: "hooks" })
    expect(isSessionHistoryTransactionAwareSession(session)).toBe(true)
    expect(isSessionHistoryRewriteAwareSession(session)).toBe(true)
    await session.close()
  })

  it("runs the approval flow: needsApproval → interruptions → approve → resume with the session", async () => {
    const filename = tempDb()
    const session = new CtxlogSession({ sqlite: filename, sessionId: "approve" })
    let executed = 0
    const deleteBranch = tool({
      name: "delete_branch",
      description: "Delete a git branch",
      parameters: z.object({ name: z.string() }),
      needsApproval: async () => true,
      execute: async ({ name }) => {
        executed++
        return `deleted ${name}`
      }
    })
    const model = new ScriptedModel([
      [functionCall("delete_branch", { name: "old" }, { callId: "call_1", id: "fc_1" })],
      [assistantMessage("Deleted the old branch.", { id: "msg_1" })]
    ])
    const agent = new Agent({ name: "git", instructions: "Manage branches.", model, tools: [deleteBranch] })
    const first = await run(agent, "Delete the old branch.", {
      session,
      callModelInputFilter: session.callModelInputFilter
    })
    expect(first.interruptions).toHaveLength(1)
    // The pending call is stored and readable (no render needed to read it).
    const waiting = await session.getItems()
    expect(waiting.map((item) => item.type)).toEqual(["message", "function_call"])
    const paused = await readBack(filename, "approve")
    expect(paused.window.history.map((message) => message.parts[0]?.type)).toEqual(["text", "tool_call"])
    const interruption = first.interruptions[0]
    if (interruption === undefined) throw new Error("no interruption")
    first.state.approve(interruption)
    const resumed = await run(agent, first.state, { session, callModelInputFilter: session.callModelInputFilter })
    expect(resumed.finalOutput).toBe("Deleted the old branch.")
    expect(executed).toBe(1)
    expect((await session.getItems()).map((item) => item.type)).toEqual([
      "message",
      "function_call",
      "function_call_result",
      "message"
    ])
    // The resumed call's prompt had the result right after its call.
    const input = model.calls[1]?.request.input
    expect(Array.isArray(input) ? input.map((item) => item.type) : input).toEqual([
      "message",
      "function_call",
      "function_call_result"
    ])
    await session.close()
    const log = await readBack(filename, "approve")
    expect(log.verification).toMatchObject({ renders: 2, verified: 2, failures: [] })
  })
})
