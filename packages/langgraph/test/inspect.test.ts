/**
 * A LangGraph thread saved by CtxlogSaver is a ctxlog window: the inspector's CLI (`ctxlog streams`,
 * `window --at`, `blame`, `diff`, `events`) and its viewer (`ctxlog serve`, as child processes on the
 * SQLite file) show the thread's messages, and time travel (resuming from a past checkpoint found with
 * `getStateHistory`) works and shows as a fork.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HumanMessage } from "@langchain/core/messages"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CtxlogSaver } from "../src/index.js"
import { ctxlog, nodeArgs } from "./support/cli.js"
import { agentGraph, checkpointsOf, eventsOf } from "./support/graphs.js"

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {}
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])
const historyIds = (window: unknown): ReadonlyArray<unknown> =>
  list(record(record(window).window).history).map((row) => record(row).id)

const dir = mkdtempSync(join(tmpdir(), "ctxlog-langgraph-inspect-"))
const db = join(dir, "agent.db")
const stream = CtxlogSaver.streamFor("travel")
const config = { configurable: { thread_id: "travel" } }
const original = ["q-0", "ai-1", "tool-2", "q-1", "ai-4", "tool-5"]
const forked = ["q-0", "ai-1", "tool-2", "q-fork", "ai-4", "tool-5"]
let beforeFork = 0

beforeAll(async () => {
  const saver = new CtxlogSaver({ sqlite: db })
  const graph = agentGraph(saver)
  await graph.invoke({ messages: [new HumanMessage({ id: "q-0", content: "first question" })] }, config)
  await graph.invoke({ messages: [new HumanMessage({ id: "q-1", content: "second question" })] }, config)
  // Time travel: back to the end of the first turn, and ask something else from there.
  const history = []
  for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot)
  const past = history.find((snapshot) => snapshot.values.messages.length === 3 && snapshot.next.length === 0)
  expect(past).toBeDefined()
  await graph.invoke({ messages: [new HumanMessage({ id: "q-fork", content: "another question" })] }, past?.config)
  expect((await graph.getState(config)).values.messages.map((message: { id?: string }) => message.id)).toEqual(forked)
  const all = await eventsOf(saver, stream)
  beforeFork = all.findIndex((event) => event._tag === "MessagesRemoved" && event.reason.includes("fork"))
  await saver.close()
}, 120_000)
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("time travel", () => {
  it("a checkpoint saved on a past one records the fork; both branches stay listed", async () => {
    const saver = new CtxlogSaver({ sqlite: db })
    const saved = await checkpointsOf(saver, stream)
    const forks = saved.filter((event) => event.forkOf !== undefined)
    expect(forks).toHaveLength(1)
    const [fork] = forks
    // The fork continues the end of the first turn, while the thread was at the end of the second.
    expect(fork?.forkOf).toBe(saved[saved.length - 5]?.checkpointId)
    const graph = agentGraph(saver)
    const branches = []
    for await (const snapshot of graph.getStateHistory(config)) branches.push(snapshot)
    expect(branches).toHaveLength(saved.length)
    expect(branches.filter((snapshot) => snapshot.values.messages.length === 6)).toHaveLength(2)
    await saver.close()
  })
})

describe("the inspector on a saver-written database", () => {
  it("streams lists the thread", async () => {
    const streams = list(await ctxlog(["streams", "--db", db, "--json"])).map(record)
    expect(streams.map((row) => row.stream)).toEqual([stream])
  })

  it("window shows the thread's messages now, and window --at before the fork the other branch", async () => {
    expect(historyIds(await ctxlog(["window", "--db", db, stream, "--json"]))).toEqual(forked)
    expect(beforeFork).toBeGreaterThan(0)
    // Stream versions are 1-based: the event before the fork's removal is at version `beforeFork`.
    expect(historyIds(await ctxlog(["window", "--db", db, "--at", String(beforeFork), stream, "--json"]))).toEqual(
      original
    )
  })

  it("blame names the event that put each message there and the fork that removed the others", async () => {
    const blame = record(await ctxlog(["blame", "--db", db, stream, "--json"]))
    const messages = list(blame.messages).map(record)
    expect(messages.map((row) => row.id)).toEqual(forked)
    for (const row of messages) expect(record(row.addedBy).type).toBe("MessageAppended")
    const removed = list(blame.removed).map(record)
    const secondQuestion = removed.find((row) => row.id === "q-1")
    expect(record(secondQuestion?.removedBy).type).toBe("MessagesRemoved")
  })

  it("diff across the fork: the second question left, the new one came", async () => {
    const head = Number(record(await ctxlog(["blame", "--db", db, stream, "--json"])).version)
    const diff = record(await ctxlog(["diff", "--db", db, stream, String(beforeFork), String(head), "--json"]))
    expect(list(diff.added).map((row) => record(row).id)).toContain("q-fork")
    expect(list(diff.removed).map((row) => record(row).id)).toContain("q-1")
  })

  it("events describes the checkpoints, the fork among them", async () => {
    const lines = list(await ctxlog(["events", "--db", db, stream, "--type", "CheckpointSaved", "--json"])).map(record)
    expect(lines.length).toBeGreaterThan(0)
    const forks = lines.filter((line) => String(line.summary).includes("fork: time travel"))
    expect(forks).toHaveLength(1)
  })

  it("the viewer serves the thread's window and its events", async () => {
    const server: ChildProcess = spawn(process.execPath, [...nodeArgs, "serve", "--db", db, "--port", "0"], {
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        server.stdout?.on("data", (chunk: Buffer) => {
          out += chunk.toString("utf8")
          const found = /ctxlog viewer on (http:\/\/\S+?)\/?\s/.exec(out)
          if (found?.[1] !== undefined) resolve(found[1])
        })
        server.once("exit", (code) => reject(new Error(`ctxlog serve exited ${code}`)))
      })
      const api = async (path: string): Promise<unknown> => {
        const response = await fetch(`${url}/api/streams/${encodeURIComponent(stream)}/${path}`)
        expect(response.status).toBe(200)
        return response.json()
      }
      expect(historyIds(await api("window"))).toEqual(forked)
      expect(historyIds(await api(`window?at=${beforeFork}`))).toEqual(original)
      const lines = list(await api("events")).map(record)
      expect(lines.some((line) => String(line.summary).includes("fork: time travel"))).toBe(true)
    } finally {
      server.kill("SIGTERM")
    }
  })
})
