// Issue 42: `CtxlogSaver.getDeltaChannelHistory` serves a DeltaChannel's history from the folded log
// instead of LangGraph's default walk (`getTuple` per ancestor). It must give the default walk's answer,
// rebuild the state MemorySaver rebuilds, and decode each stored value once per process.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AIMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages"
import {
  type BaseCheckpointSaver,
  DeltaValue,
  END,
  MemorySaver,
  MessagesDeltaValue,
  messagesDeltaReducer,
  START,
  StateGraph,
  StateSchema
} from "@langchain/langgraph"
import { BaseCheckpointSaver as Base } from "@langchain/langgraph-checkpoint"
import { afterAll, describe, expect, it } from "vitest"
import { CtxlogSaver } from "../src/index.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-langgraph-delta-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const file = () => join(dir, `delta-${++files}.db`)

/** A DeltaChannel graph whose node answers, and removes the first question once the list is long. */
const deltaGraph = (checkpointer: BaseCheckpointSaver, snapshotEvery?: number) => {
  const messages =
    snapshotEvery === undefined
      ? MessagesDeltaValue
      : new DeltaValue(MessagesDeltaValue.valueSchema, {
          inputSchema: MessagesDeltaValue.inputSchema,
          reducer: messagesDeltaReducer,
          snapshotFrequency: snapshotEvery
        })
  return new StateGraph(new StateSchema({ messages }))
    .addNode("agent", (state) => ({
      messages: [
        new AIMessage({ id: `ai-${state.messages.length}`, content: `answer ${state.messages.length}` }),
        ...(state.messages.length === 7 ? [new RemoveMessage({ id: "q-0" })] : [])
      ]
    }))
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer })
}

const ids = (messages: ReadonlyArray<{ id?: string }>) => messages.map((message) => message.id)

describe("CtxlogSaver.getDeltaChannelHistory", () => {
  it("gives LangGraph's default walk's answer at every checkpoint (DeltaSnapshot seeds every 3 updates), and MemorySaver's state", async () => {
    const saver = new CtxlogSaver({ sqlite: file() })
    const memory = new MemorySaver()
    const config = { configurable: { thread_id: "delta" } }
    for (const checkpointer of [saver, memory]) {
      const graph = deltaGraph(checkpointer, 3)
      for (let turn = 0; turn < 6; turn++) {
        await graph.invoke({ messages: [new HumanMessage({ id: `q-${turn}`, content: `question ${turn}` })] }, config)
      }
    }
    const stored = await deltaGraph(saver, 3).getState(config)
    const expected = await deltaGraph(memory, 3).getState(config)
    expect(ids(stored.values.messages)).toEqual(ids(expected.values.messages))
    expect(stored.values.messages).toEqual(expected.values.messages)
    expect(ids(stored.values.messages)).not.toContain("q-0")

    let compared = 0
    let seeded = 0
    for await (const tuple of saver.list(config)) {
      const at = { channels: ["messages"], config: tuple.config }
      const served = await saver.getDeltaChannelHistory(at)
      const walked = await Base.prototype.getDeltaChannelHistory.call(saver, at)
      expect(served).toEqual(walked)
      compared += 1
      if (served.messages?.seed !== undefined) seeded += 1
    }
    expect(compared).toBeGreaterThan(10)
    // Some walks stop at a DeltaSnapshot: the seeds are compared too.
    expect(seeded).toBeGreaterThan(0)
    await saver.close()
  })

  it("a reopened saver rebuilds the same state; a second read decodes nothing again", async () => {
    const filename = file()
    const config = { configurable: { thread_id: "reopened" } }
    const first = new CtxlogSaver({ sqlite: filename })
    for (let turn = 0; turn < 4; turn++) {
      await deltaGraph(first).invoke(
        { messages: [new HumanMessage({ id: `q-${turn}`, content: `q ${turn}` })] },
        config
      )
    }
    const before = await deltaGraph(first).getState(config)
    await first.close()

    const reopened = new CtxlogSaver({ sqlite: filename })
    const graph = deltaGraph(reopened)
    const after = await graph.getState(config)
    expect(after.values.messages).toEqual(before.values.messages)
    const history = () => reopened.getDeltaChannelHistory({ config: after.config, channels: ["messages"] })
    await history()
    const decoded = reopened.work().decoded
    const again = await history()
    // The chain is folded in memory and each stored write decoded once: the second walk reads nothing.
    expect(reopened.work().decoded).toBe(decoded)
    expect(again.messages?.writes.length).toBeGreaterThan(0)
    // What it hands out is a copy: changing it does not change the next answer.
    const served = again.messages?.writes[0]?.[2]
    if (Array.isArray(served)) served.length = 0
    expect(await history()).toEqual(
      await Base.prototype.getDeltaChannelHistory.call(reopened, {
        config: after.config,
        channels: ["messages"]
      })
    )
    await reopened.close()
  })

  it("names what was wrong in a malformed config and answers empty histories for no thread", async () => {
    const saver = new CtxlogSaver({ memory: true })
    await expect(
      saver.getDeltaChannelHistory({ config: { configurable: { thread_id: 7 } }, channels: ["messages"] })
    ).rejects.toThrow(/thread_id/)
    expect(await saver.getDeltaChannelHistory({ config: {}, channels: ["messages"] })).toEqual({
      messages: { writes: [] }
    })
    expect(await saver.getDeltaChannelHistory({ config: {}, channels: [] })).toEqual({})
    await saver.close()
  })
})
