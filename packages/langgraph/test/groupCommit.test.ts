/**
 * The saver's group commit (ADR 0152): the writes LangGraph issues while a step's `put` is being written
 * (a finished task's `putWrites`) commit in that put's transaction, and every call resolves only once its
 * own events are committed. Counted, never timed: transactions per turn (`SaverWork.commits`), and, as
 * each call resolves, its event read from the file by a second connection.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { WindowEvent } from "@ctxlog/core"
import { HumanMessage } from "@langchain/core/messages"
import { afterAll, describe, expect, it } from "vitest"
import { CtxlogSaver } from "../src/index.js"
import { graphOf, turnInput as inputOf } from "./support/turnGraph.js"
import { eventsOf } from "./support/graphs.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-langgraph-group-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const file = () => join(dir, `group-${++files}.db`)

/** A turn's input here: the result ~0.9 KB. */
const turnInput = (turn: number) => inputOf(turn, 40)

/** Counts the saver's `put` and `putWrites` calls (the object's own methods, LangGraph calls them). */
const counting = (saver: CtxlogSaver) => {
  const calls = { puts: 0, putWrites: 0 }
  const put = saver.put.bind(saver)
  const putWrites = saver.putWrites.bind(saver)
  saver.put = (...args) => {
    calls.puts += 1
    return put(...args)
  }
  saver.putWrites = (...args) => {
    calls.putWrites += 1
    return putWrites(...args)
  }
  return calls
}

describe("group commit", () => {
  for (const delta of [false, true]) {
    it(`a turn is one transaction per checkpoint: the task's writes ride in the step's (${delta ? "DeltaChannel" : "plain messages"})`, async () => {
      const filename = file()
      const saver = new CtxlogSaver({ sqlite: filename })
      const graph = graphOf(saver, delta)
      const config = { configurable: { thread_id: "turns" } }
      await graph.invoke({ messages: [new HumanMessage({ id: "q", content: "read the files" })] }, config)
      const calls = counting(saver)
      const before = saver.work()
      const turns = 5
      for (let turn = 0; turn < turns; turn++) await graph.invoke(turnInput(turn), config)
      const commits = saver.work().commits - before.commits
      console.log(
        `${turns} turns (${delta ? "DeltaChannel" : "plain"}): ${calls.puts} put, ${calls.putWrites} putWrites, ${commits} transactions`
      )
      // Before the group commit each call was a transaction of its own: 3 put + 2 putWrites a turn.
      expect(calls.puts).toBe(3 * turns)
      expect(calls.putWrites).toBe(2 * turns)
      expect(commits).toBe(calls.puts)
      const state = await graph.getState(config)
      expect(state.values.messages).toHaveLength(1 + 2 * turns)
      await saver.close()
      // Everything the calls resolved is in the file.
      const reopened = new CtxlogSaver({ sqlite: filename })
      expect((await graphOf(reopened, delta).getState(config)).values.messages).toHaveLength(1 + 2 * turns)
      await reopened.close()
    })
  }

  it("each call resolves only once its own events are committed (read back by another connection)", async () => {
    const filename = file()
    const saver = new CtxlogSaver({ sqlite: filename })
    const graph = graphOf(saver, true)
    const config = { configurable: { thread_id: "durable" } }
    await graph.invoke({ messages: [new HumanMessage({ id: "q", content: "go" })] }, config)
    // Another saver on the file: its own connection, so it sees committed events only.
    const reader = new CtxlogSaver({ sqlite: filename })
    const stream = CtxlogSaver.streamFor("durable")
    const committed = async (found: (event: WindowEvent.WindowEvent) => boolean): Promise<boolean> =>
      (await eventsOf(reader, stream)).some(found)
    const checked = { puts: 0, putWrites: 0 }
    const put = saver.put.bind(saver)
    const putWrites = saver.putWrites.bind(saver)
    saver.put = async (runnable, checkpoint, metadata, versions) => {
      const out = await put(runnable, checkpoint, metadata, versions)
      expect(await committed((event) => event._tag === "CheckpointSaved" && event.checkpointId === checkpoint.id)).toBe(
        true
      )
      checked.puts += 1
      return out
    }
    saver.putWrites = async (runnable, writes, taskId, taskPath) => {
      await putWrites(runnable, writes, taskId, taskPath)
      expect(await committed((event) => event._tag === "CheckpointWritesSaved" && event.taskId === taskId)).toBe(true)
      checked.putWrites += 1
    }
    const before = saver.work().commits
    for (let turn = 0; turn < 3; turn++) await graph.invoke(turnInput(turn), config)
    expect(checked).toEqual({ puts: 3 * 3, putWrites: 2 * 3 })
    // Grouped all the same: fewer transactions than calls.
    expect(saver.work().commits - before).toBeLessThan(3 * 5)
    await reader.close()
    await saver.close()
  })

  it("a group the log stores changed (a secret redacted) is folded again from the log", async () => {
    const filename = file()
    const saver = new CtxlogSaver({ sqlite: filename })
    const graph = graphOf(saver, false)
    const config = { configurable: { thread_id: "secret" } }
    const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKL0123456789"
    await graph.invoke({ messages: [new HumanMessage({ id: "q", content: `my key is ${secret}` })] }, config)
    const live = (await graph.getState(config)).values.messages
    await saver.close()
    const reopened = new CtxlogSaver({ sqlite: filename })
    const replayed = (await graphOf(reopened, false).getState(config)).values.messages
    await reopened.close()
    expect(JSON.stringify(live)).not.toContain(secret)
    expect(live).toEqual(replayed)
  })
})
