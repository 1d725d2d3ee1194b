/**
 * A graph with interrupts, `updateState` forks and time travel, run once on LangGraph's `MemorySaver`
 * and once on `CtxlogSaver` (in memory, on SQLite and on PostgreSQL): the state values, `next`, the
 * history and the tasks with their interrupts are compared whole at every step.
 *
 * Issue 35 (6): after an `updateState` fork both branches reuse channel version numbers; a saver that
 * looks a channel value up by channel and version alone reads the other branch's value (a checkpoint of
 * the original branch gains an `agent` in `next`; resuming the fork's interrupt runs an extra step).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import type { RunnableConfig } from "@langchain/core/runnables"
import {
  Command,
  END,
  interrupt,
  MemorySaver,
  MessagesAnnotation,
  START,
  type StateSnapshot,
  StateGraph
} from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { afterAll, describe, expect, it } from "vitest"
import { CtxlogSaver } from "../src/index.js"
import { freshDatabase } from "./support/postgres.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-langgraph-forks-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/**
 * A ReAct-shaped graph: `agent` asks for a tool while the last message is not a tool result, `tools`
 * asks a human (`interrupt`) before it runs the call, `agent` answers once it has a result.
 */
const approvalGraph = (checkpointer: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("agent", (state) => {
      const last = state.messages[state.messages.length - 1]
      const turn = state.messages.length
      if (last instanceof ToolMessage) {
        return { messages: [new AIMessage({ id: `answer-${turn}`, content: `done: ${String(last.content)}` })] }
      }
      return {
        messages: [
          new AIMessage({
            id: `ask-${turn}`,
            content: "",
            tool_calls: [{ id: `call-${turn}`, name: "delete", args: { path: `f${turn}` }, type: "tool_call" }]
          })
        ]
      }
    })
    .addNode("tools", (state) => {
      const last = state.messages[state.messages.length - 1]
      const call = last instanceof AIMessage ? last.tool_calls?.[0] : undefined
      const approval: unknown = interrupt({ question: "approve?", call: call?.name, args: call?.args })
      return {
        messages: [
          new ToolMessage({
            id: `result-${state.messages.length}`,
            tool_call_id: call?.id ?? "none",
            content: `${JSON.stringify(approval)} for ${JSON.stringify(call?.args ?? {})}`
          })
        ]
      }
    })
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => {
      const last = state.messages[state.messages.length - 1]
      return last instanceof AIMessage && (last.tool_calls?.length ?? 0) > 0 ? "tools" : END
    })
    .addEdge("tools", "agent")
    .compile({ checkpointer })

type Graph = ReturnType<typeof approvalGraph>

/** The values of the interrupts a run stopped at (`__interrupt__` of its result). */
const interruptsOf = (result: object): ReadonlyArray<unknown> | undefined => {
  const found: unknown = Reflect.get(result, "__interrupt__")
  return Array.isArray(found) ? found.map((each: { readonly value?: unknown }) => each.value) : undefined
}

const messagesOf = (messages: ReadonlyArray<BaseMessage>) =>
  messages.map((message) => ({
    type: message.getType(),
    id: message.id,
    content: message.content,
    toolCalls: message instanceof AIMessage ? message.tool_calls : undefined
  }))

/** A snapshot without what differs between two runs by construction (checkpoint ids, timestamps). */
const shapeOf = (snapshot: StateSnapshot, ids: Map<string, number>) => {
  const idOf = (config: RunnableConfig | undefined) => {
    const id = config?.configurable?.checkpoint_id
    if (typeof id !== "string") return undefined
    if (!ids.has(id)) ids.set(id, ids.size)
    return ids.get(id)
  }
  return {
    checkpoint: idOf(snapshot.config),
    parent: idOf(snapshot.parentConfig),
    values: { messages: messagesOf(snapshot.values.messages ?? []) },
    next: snapshot.next,
    step: snapshot.metadata?.step,
    source: snapshot.metadata?.source,
    writes: (snapshot.metadata as Record<string, unknown> | undefined)?.writes,
    tasks: snapshot.tasks.map((task) => ({
      name: task.name,
      path: task.path,
      error: task.error,
      interrupts: task.interrupts.map((each) => each.value),
      result: task.result
    }))
  }
}

/** Ids are numbered in the order the first run meets them, per saver. */
const historyOf = async (graph: Graph, config: RunnableConfig, ids: Map<string, number>) => {
  const out = []
  for await (const snapshot of graph.getStateHistory(config)) out.push(shapeOf(snapshot, ids))
  return out
}

/** The script: every observation it makes, in order. */
const script = async (checkpointer: BaseCheckpointSaver) => {
  const graph = approvalGraph(checkpointer)
  const ids = new Map<string, number>()
  const thread = { configurable: { thread_id: "t" } }
  const seen: Array<unknown> = []
  const observe = async (label: string, config: RunnableConfig = thread) =>
    seen.push({ label, state: shapeOf(await graph.getState(config), ids) })

  // 1. A run that stops at the approval.
  const first = await graph.invoke({ messages: [new HumanMessage({ id: "h-0", content: "delete f1" })] }, thread)
  seen.push({ label: "first invoke", interrupts: interruptsOf(first) })
  await observe("paused")
  const paused = await graph.getState(thread)

  // 2. Fork: replace the tool call (as the agent), on the paused checkpoint.
  const forkConfig = await graph.updateState(
    paused.config,
    {
      messages: [
        new AIMessage({
          id: "ask-1",
          content: "",
          tool_calls: [{ id: "call-1", name: "delete", args: { path: "other" }, type: "tool_call" }]
        })
      ]
    },
    "agent"
  )
  await observe("fork", forkConfig)
  // The original branch's paused checkpoint is unchanged by the fork.
  await observe("original after fork", paused.config)

  // 3. Resume the fork's interrupt: one tool step and one agent step (the answer), nothing more.
  const resumed = await graph.invoke(new Command({ resume: "approved" }), forkConfig)
  seen.push({ label: "resumed fork", messages: messagesOf(resumed.messages) })
  await observe("after resume")
  seen.push({ label: "history after resume", history: await historyOf(graph, thread, ids) })

  // 4. Resume the original branch's interrupt too (time travel to the paused checkpoint).
  const original = await graph.invoke(new Command({ resume: "denied" }), paused.config)
  seen.push({ label: "resumed original", messages: messagesOf(original.messages) })

  // 5. Time travel by checkpoint_id: replay from the checkpoint before the agent's first step.
  const history = []
  for await (const snapshot of graph.getStateHistory(thread)) history.push(snapshot)
  const beforeAgent = history.find((snapshot) => snapshot.next.includes("agent") && snapshot.metadata?.step === 0)
  if (beforeAgent === undefined) throw new Error("no checkpoint before the agent's first step")
  const replay = await graph.invoke(null, beforeAgent.config)
  seen.push({ label: "replay", interrupts: interruptsOf(replay) })
  await observe("after replay")

  // 6. Every checkpoint, read by its id; and the whole history.
  for (const snapshot of history) await observe("by id", snapshot.config)
  seen.push({ label: "final history", history: await historyOf(graph, thread, ids) })
  return seen
}

const savers: ReadonlyArray<readonly [string, () => Promise<{ saver: CtxlogSaver; done: () => Promise<void> }>]> = [
  ["memory", async () => ({ saver: new CtxlogSaver({ memory: true }), done: async () => undefined })],
  [
    "sqlite",
    async () => ({
      saver: new CtxlogSaver({ sqlite: join(dir, `forks-${Date.now()}.db`) }),
      done: async () => undefined
    })
  ],
  [
    "postgres",
    async () => {
      const database = await freshDatabase()
      return { saver: new CtxlogSaver({ postgres: database.url }), done: database.drop }
    }
  ]
]

describe("interrupts, updateState forks and time travel: CtxlogSaver behaves as MemorySaver", () => {
  for (const [name, make] of savers) {
    it(`on ${name}`, async () => {
      const expected = await script(new MemorySaver())
      const { saver, done } = await make()
      try {
        const actual = await script(saver)
        // The script itself did what it says (so equal results are not two empty lists).
        expect(JSON.stringify(expected)).toContain("approved")
        expect(JSON.stringify(expected)).toContain("denied")
        expect(actual).toEqual(expected)
      } finally {
        await saver.close()
        await done()
      }
    })
  }
})
