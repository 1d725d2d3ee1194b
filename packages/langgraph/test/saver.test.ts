/**
 * CtxlogSaver under real LangGraph graphs, on SQLite files: values round-trip exactly through LangGraph's
 * serializer, only changed channels are written, a messages list is written as what changed, the work
 * of a `put` follows what changed (1k vs 10k messages), and bad input gets a typed error and writes nothing.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventLog } from "@ctxlog/core"
import { AIMessage, HumanMessage, RemoveMessage } from "@langchain/core/messages"
import {
  END,
  MemorySaver,
  MessagesAnnotation,
  MessagesDeltaValue,
  START,
  StateGraph,
  StateSchema
} from "@langchain/langgraph"
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import { CtxlogSaver } from "../src/index.js"
import { agentGraph, checkpointsOf, eventsOf, history, wideGraph } from "./support/graphs.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-langgraph-saver-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const file = () => join(dir, `saver-${++files}.db`)

const serde = new JsonPlusSerializer()
const bytes = async (value: unknown) => Buffer.from((await serde.dumpsTyped(value))[1]).toString("utf8")

describe("round trip through LangGraph's serializer", () => {
  it("a reopened saver gives back the thread's messages byte for byte, as MemorySaver does", async () => {
    const filename = file()
    const saver = new CtxlogSaver({ sqlite: filename })
    const memory = new MemorySaver()
    const config = { configurable: { thread_id: "chat-1" } }
    for (const checkpointer of [saver, memory]) {
      const graph = agentGraph(checkpointer)
      await graph.invoke({ messages: [new HumanMessage({ id: "h-0", content: "look it up" })] }, config)
      await graph.invoke({ messages: [new HumanMessage({ id: "h-1", content: "again" })] }, config)
    }
    await saver.close()

    const reopened = new CtxlogSaver({ sqlite: filename })
    const stored = await agentGraph(reopened).getState(config)
    const expected = await agentGraph(memory).getState(config)
    expect(stored.values.messages).toHaveLength(6)
    expect(stored.values.messages).toEqual(expected.values.messages)
    for (const [index, message] of stored.values.messages.entries()) {
      expect(await bytes(message)).toBe(await bytes(expected.values.messages[index]))
    }
    expect(stored.next).toEqual(expected.next)
    expect(stored.metadata?.step).toBe(expected.metadata?.step)
    await reopened.close()
  })
})

describe("a serializer that writes bytes that are not text", () => {
  it("stores them as base64 and gives the same value back", async () => {
    const json = new JsonPlusSerializer()
    // A serializer of its own: the JSON bytes behind a 0xff marker (not UTF-8), as a binary format would be.
    const binary = {
      dumpsTyped: async (value: unknown): Promise<[string, Uint8Array]> => {
        const [type, data] = await json.dumpsTyped(value)
        return [`bin-${type}`, new Uint8Array([0xff, ...data])]
      },
      loadsTyped: (type: string, data: Uint8Array | string) =>
        json.loadsTyped(type.replace(/^bin-/, ""), typeof data === "string" ? data : data.subarray(1))
    }
    const filename = file()
    const saver = new CtxlogSaver({ sqlite: filename, serde: binary })
    const config = { configurable: { thread_id: "binary" } }
    await agentGraph(saver).invoke({ messages: [new HumanMessage({ id: "q-0", content: "bytes" })] }, config)
    const saved = await checkpointsOf(saver, CtxlogSaver.streamFor("binary"))
    expect(saved.every((event) => event.checkpoint.encoding === "base64" && event.checkpoint.type === "bin-json")).toBe(
      true
    )
    await saver.close()
    // A new saver decodes everything from the log (no list kept in memory).
    const reopened = new CtxlogSaver({ sqlite: filename, serde: binary })
    const messages = (await agentGraph(reopened).getState(config)).values.messages
    expect(messages.map((message: { id?: string }) => message.id)).toEqual(["q-0", "ai-1", "tool-2"])
    expect(messages[1]).toBeInstanceOf(AIMessage)
    await reopened.close()
  })
})

describe("reading a history", () => {
  it("decodes each stored message once per process, however many checkpoints' lists hold it", async () => {
    const json = new JsonPlusSerializer()
    let messageLoads = 0
    const counting = {
      dumpsTyped: (value: unknown) => json.dumpsTyped(value),
      loadsTyped: async (type: string, data: Uint8Array | string) => {
        const value: unknown = await json.loadsTyped(type, data)
        if (value instanceof AIMessage || value instanceof HumanMessage) messageLoads += 1
        return value
      }
    }
    const filename = file()
    const writer = new CtxlogSaver({ sqlite: filename, serde: counting })
    const config = { configurable: { thread_id: "history" } }
    for (let turn = 0; turn < 4; turn += 1) {
      await agentGraph(writer).invoke({ messages: [new HumanMessage({ id: `q-${turn}`, content: "go" })] }, config)
    }
    await writer.close()
    const reader = new CtxlogSaver({ sqlite: filename, serde: counting })
    messageLoads = 0
    const snapshots = []
    for await (const snapshot of agentGraph(reader).getStateHistory(config)) snapshots.push(snapshot)
    // 16 checkpoints whose lists hold up to 12 messages (over 90 message slots in all); each of the 7 human
    // and AI messages stored as a list item is decoded once (the first list, `[q-0]`, is stored whole and
    // decoded as a list; tool messages are not counted here).
    expect(snapshots).toHaveLength(16)
    expect(snapshots.reduce((total, snapshot) => total + snapshot.values.messages.length, 0)).toBeGreaterThan(90)
    expect(messageLoads).toBe(7)
    await reader.close()
  })
})

describe("what a put writes", () => {
  it("writes a channel only when its version changes", async () => {
    const saver = new CtxlogSaver({ sqlite: file() })
    const graph = wideGraph(saver)
    const config = { configurable: { thread_id: "wide" } }
    await graph.invoke({ messages: [new HumanMessage({ id: "u-0", content: "go" })], settings: { model: "m" } }, config)
    await graph.invoke({ messages: [new HumanMessage({ id: "u-1", content: "again" })] }, config)
    const saved = await checkpointsOf(saver, CtxlogSaver.streamFor("wide"))
    const written = (channel: string) =>
      saved.filter((event) => event.values.some((value) => value.channel === channel)).length
    // Two invocations of input + two nodes each, after the empty first checkpoint of each.
    expect(saved).toHaveLength(8)
    expect(written("settings")).toBe(1)
    expect(written("steps")).toBe(4)
    expect(written("messages")).toBe(6)
    // LangGraph's view of the state is whole all the same.
    const state = await graph.getState(config)
    expect(state.values.settings).toEqual({ model: "m" })
    expect(state.values.steps).toBe(4)
    expect(state.values.messages).toHaveLength(6)
    await saver.close()
  })

  it("writes a messages list as the messages added (and mirrors them into the window), not the list", async () => {
    const saver = new CtxlogSaver({ sqlite: file() })
    const graph = agentGraph(saver)
    const config = { configurable: { thread_id: "deltas" } }
    for (let turn = 0; turn < 3; turn += 1) {
      await graph.invoke({ messages: [new HumanMessage({ id: `q-${turn}`, content: `question ${turn}` })] }, config)
    }
    const events = await eventsOf(saver, CtxlogSaver.streamFor("deltas"))
    const messageValues = events.flatMap((event) =>
      event._tag === "CheckpointSaved" ? event.values.filter((value) => value.channel === "messages") : []
    )
    // One per step that changed the list: input, agent, tools, three turns.
    expect(messageValues).toHaveLength(9)
    // The first list is written whole (no parent list); every later one as the one message it added.
    const [first, ...rest] = messageValues
    expect(first !== undefined && "value" in first).toBe(true)
    for (const value of rest) {
      expect("appended" in value && value.appended.length === 1 && value.removed.length === 0).toBe(true)
    }
    const appended = events.filter((event) => event._tag === "MessageAppended")
    expect(appended.map((event) => event._tag === "MessageAppended" && event.message.id)).toEqual([
      "q-0",
      "ai-1",
      "tool-2",
      "q-1",
      "ai-4",
      "tool-5",
      "q-2",
      "ai-7",
      "tool-8"
    ])
    const ai = appended[1]
    expect(ai?._tag === "MessageAppended" && ai.message.parts.map((part) => part.type)).toEqual(["text", "tool_call"])
    await saver.close()
  })

  const deltaGraph = (saver: CtxlogSaver) =>
    new StateGraph(new StateSchema({ messages: MessagesDeltaValue }))
      .addNode("agent", (state) => ({
        messages: [
          new AIMessage({ id: `ai-${state.messages.length}`, content: "ok" }),
          ...(state.messages.length > 2 ? [new RemoveMessage({ id: "q-0" })] : [])
        ]
      }))
      .addEdge(START, "agent")
      .addEdge("agent", END)
      .compile({ checkpointer: saver })

  it("a DeltaChannel messages list (MessagesDeltaValue) is stored as its writes, mirrored into the window by default", async () => {
    const saver = new CtxlogSaver({ sqlite: file() })
    const graph = deltaGraph(saver)
    const config = { configurable: { thread_id: "delta-channel" } }
    await graph.invoke({ messages: [new HumanMessage({ id: "q-0", content: "hi" })] }, config)
    await graph.invoke({ messages: [new HumanMessage({ id: "q-1", content: "again" })] }, config)
    const ids = (await graph.getState(config)).values.messages.map((message: { id?: string }) => message.id)
    expect(ids).toEqual(["ai-1", "q-1", "ai-3"])
    const events = await eventsOf(saver, CtxlogSaver.streamFor("delta-channel"))
    // The list is never written whole: LangGraph keeps it out of the checkpoint, its writes carry it.
    expect(
      events.some((event) => event._tag === "CheckpointSaved" && event.values.some((v) => v.channel === "messages"))
    ).toBe(false)
    const window = events.flatMap((event) =>
      event._tag === "MessageAppended"
        ? [`+${event.message.id}`]
        : event._tag === "MessagesRemoved"
          ? event.messageIds.map((id) => `-${id}`)
          : []
    )
    expect(window).toEqual(["+q-0", "+ai-1", "+q-1", "-q-0", "+ai-3"])
    await saver.close()
  })

  it("mirrorDeltaChannel: false stores a DeltaChannel thread's messages once, as its writes: no window events, the same state", async () => {
    const saver = new CtxlogSaver({ sqlite: file(), mirrorDeltaChannel: false })
    const graph = deltaGraph(saver)
    const config = { configurable: { thread_id: "delta-unmirrored" } }
    await graph.invoke({ messages: [new HumanMessage({ id: "q-0", content: "hi" })] }, config)
    await graph.invoke({ messages: [new HumanMessage({ id: "q-1", content: "again" })] }, config)
    expect((await graph.getState(config)).values.messages.map((message: { id?: string }) => message.id)).toEqual([
      "ai-1",
      "q-1",
      "ai-3"
    ])
    const events = await eventsOf(saver, CtxlogSaver.streamFor("delta-unmirrored"))
    expect(events.filter((event) => event._tag === "MessageAppended" || event._tag === "MessagesRemoved")).toEqual([])
    expect(events.some((event) => event._tag === "CheckpointSaved" && event.windowOf !== undefined)).toBe(false)
    // Each message is in the log once: in the pending writes of the task that returned it (q-0 twice: the
    // message, and the RemoveMessage naming it).
    const written = events.flatMap((event) =>
      event._tag === "CheckpointWritesSaved"
        ? event.writes.filter((write) => write.channel === "messages").map((write) => write.value.data)
        : []
    )
    for (const [id, times] of [
      ["q-0", 2],
      ["ai-1", 1],
      ["q-1", 1],
      ["ai-3", 1]
    ] as const) {
      expect(written.filter((data) => data.includes(`"id":"${id}"`))).toHaveLength(times)
    }
    await saver.close()
  })

  it("the work of a turn follows what changed: the same at 1k and 10k messages", async () => {
    const turnAt = async (size: number) => {
      const saver = new CtxlogSaver({ sqlite: file(), durability: "normal" })
      const graph = agentGraph(saver)
      const config = { configurable: { thread_id: `size-${size}` } }
      await graph.updateState(config, { messages: history(size) }, "tools")
      const before = saver.work()
      await graph.invoke({ messages: [new HumanMessage({ id: `q-${size}`, content: "one more" })] }, config)
      const after = saver.work()
      const state = await graph.getState(config)
      expect(state.values.messages).toHaveLength(size + 3)
      await saver.close()
      return {
        serialized: after.serialized - before.serialized,
        events: after.events - before.events,
        bytes: after.bytes - before.bytes,
        eventsRead: after.eventsRead - before.eventsRead,
        compared: after.compared - before.compared
      }
    }
    const small = await turnAt(1_000)
    const large = await turnAt(10_000)
    console.log(`one turn (3 puts, 3 messages): 1k ${JSON.stringify(small)}; 10k ${JSON.stringify(large)}`)
    // Serialized values, events and bytes written: what the turn added, whatever the thread's length.
    expect(large.serialized).toBe(small.serialized)
    expect(large.events).toBe(small.events)
    expect(large.bytes).toBeLessThan(small.bytes * 1.1)
    expect(large.eventsRead).toBe(0)
    // Finding what changed compares list items by identity (no serialization): one pass per put.
    expect(large.compared).toBeLessThanOrEqual(3 * (10_000 + 3) * 2)
  })
})

describe("subgraphs", () => {
  it("a subgraph's namespace is a stream of its own; deleteThread forgets every namespace of the thread", async () => {
    const saver = new CtxlogSaver({ sqlite: file() })
    const inner = new StateGraph(MessagesAnnotation)
      .addNode("inner", (state) => ({
        messages: [new AIMessage({ id: `inner-${state.messages.length}`, content: "from the subgraph" })]
      }))
      .addEdge(START, "inner")
      .addEdge("inner", END)
      .compile({ checkpointer: true })
    const outer = new StateGraph(MessagesAnnotation)
      .addNode("child", inner)
      .addEdge(START, "child")
      .addEdge("child", END)
      .compile({ checkpointer: saver })
    const config = { configurable: { thread_id: "nested" } }
    await outer.invoke({ messages: [new HumanMessage({ id: "q-0", content: "go" })] }, config)
    const streams = await saver.runtime.runPromise(
      Effect.flatMap(EventLog.EventLog, (log) => log.streams()).pipe(Effect.map((infos) => infos.map((i) => i.stream)))
    )
    // `checkpointer: true`: the subgraph keeps its state across calls under the namespace `child`.
    expect([...streams].sort()).toEqual(["langgraph:nested", "langgraph:nested/child"])
    const innerTuple = await saver.getTuple({ configurable: { thread_id: "nested", checkpoint_ns: "child" } })
    expect(innerTuple?.checkpoint.channel_values.messages).toHaveLength(2)
    expect((await outer.getState(config)).values.messages.map((m: { id?: string }) => m.id)).toEqual(["q-0", "inner-1"])
    await saver.deleteThread("nested")
    const left = []
    for await (const tuple of saver.list({ configurable: { thread_id: "nested" } })) left.push(tuple)
    expect(left).toEqual([])
    expect(await saver.getTuple(config)).toBeUndefined()
    expect(await saver.getTuple({ configurable: { thread_id: "nested", checkpoint_ns: "child" } })).toBeUndefined()
    await saver.close()
  })
})

describe("several savers on one database", () => {
  it("each catches up with the other's events; concurrent writes on one thread all land", async () => {
    const filename = file()
    const first = new CtxlogSaver({ sqlite: filename })
    const second = new CtxlogSaver({ sqlite: filename })
    const config = { configurable: { thread_id: "shared" } }
    await agentGraph(first).invoke({ messages: [new HumanMessage({ id: "q-0", content: "one" })] }, config)
    // The second saver never saw this thread: it reads it from the log, then continues it.
    await agentGraph(second).invoke({ messages: [new HumanMessage({ id: "q-1", content: "two" })] }, config)
    const tuple = await first.getTuple(config)
    const latest = tuple?.config ?? config
    expect((await agentGraph(first).getState(config)).values.messages).toHaveLength(6)
    await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        (index % 2 === 0 ? first : second).putWrites(latest, [["extra", index]], `task-${index}`)
      )
    )
    console.log(`appends retried after a conflict: ${first.work().retried + second.work().retried}`)
    const reread = new CtxlogSaver({ sqlite: filename })
    const pending = (await reread.getTuple(latest))?.pendingWrites ?? []
    expect(pending.map(([, , value]) => value).sort((a, b) => Number(a) - Number(b))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9
    ])
    for (const saver of [first, second, reread]) await saver.close()
  })
})

describe("bad input", () => {
  const checkpoint = {
    v: 4,
    id: "1f0a0000-0000-6000-8000-000000000001",
    ts: new Date(0).toISOString(),
    channel_values: {},
    channel_versions: {},
    versions_seen: {}
  }
  const metadata = { source: "input" as const, step: -1, parents: {} }

  it("a config without a thread id, or with a malformed one, is a typed error and writes nothing", async () => {
    const saver = new CtxlogSaver({ sqlite: file() })
    await expect(saver.put({}, checkpoint, metadata, {})).rejects.toMatchObject({
      _tag: "InvalidCheckpointConfig",
      cause: { field: "config.configurable.thread_id" }
    })
    await expect(saver.put({ configurable: { thread_id: 7 } }, checkpoint, metadata, {})).rejects.toMatchObject({
      _tag: "InvalidCheckpointConfig",
      message: "put: config.configurable.thread_id must be a string, got number"
    })
    await expect(
      saver.putWrites({ configurable: { thread_id: "t" } }, [["messages", []]], "task")
    ).rejects.toMatchObject({ _tag: "InvalidCheckpointConfig", cause: { field: "config.configurable.checkpoint_id" } })
    await expect(
      saver.put({ configurable: { thread_id: "t" } }, { ...checkpoint, id: "" }, metadata, {})
    ).rejects.toMatchObject({ _tag: "InvalidCheckpointConfig", cause: { field: "checkpoint.id" } })
    await expect(saver.getTuple({ configurable: { thread_id: "t", checkpoint_ns: 3 } })).rejects.toMatchObject({
      _tag: "InvalidCheckpointConfig",
      cause: { field: "config.configurable.checkpoint_ns" }
    })
    const all = []
    for await (const tuple of saver.list({})) all.push(tuple)
    expect(all).toEqual([])
    expect(saver.work().events).toBe(0)
    await saver.close()
  })

  it("an unknown checkpoint id is no checkpoint (LangGraph's behaviour), a missing thread id too", async () => {
    const saver = new CtxlogSaver({ sqlite: file() })
    await saver.put({ configurable: { thread_id: "t" } }, checkpoint, metadata, {})
    expect(await saver.getTuple({ configurable: { thread_id: "t", checkpoint_id: "no-such-id" } })).toBeUndefined()
    expect(await saver.getTuple({ configurable: { checkpoint_ns: "" } })).toBeUndefined()
    expect((await saver.getTuple({ configurable: { thread_id: "t" } }))?.checkpoint.id).toBe(checkpoint.id)
    await saver.close()
  })

  it("options naming no backend or two are a typed error; a closed saver rejects", async () => {
    expect(() => new CtxlogSaver({ sqlite: "a.db", postgres: "postgres://x" } as never)).toThrow(
      expect.objectContaining({ _tag: "InvalidCheckpointConfig" })
    )
    const saver = new CtxlogSaver({ memory: true })
    await saver.close()
    await expect(saver.getTuple({ configurable: { thread_id: "t" } })).rejects.toMatchObject({ _tag: "SaverClosed" })
  })
})
