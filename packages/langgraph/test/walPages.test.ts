/**
 * The pages a turn writes on SQLite (issue 42: the saver's bytes; ADR 0152, 0164), counted in the WAL,
 * never timed: the bench's graph (`bench/src/langgraphDelta.ts`: the input, then one node; a turn appends
 * a tool call and its ~2 KB result), after a history of turns so the b-trees are in their steady state.
 * Each commit's pages are named by the b-tree they belong to; LangGraph's own `SqliteSaver` with
 * `DeltaChannel` runs the same turns as the reference. Bounds sit a little above what was measured
 * (ADR 0164), so a change that writes more pages a turn fails here, not only in `pnpm bench`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HumanMessage } from "@langchain/core/messages"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import { afterAll, describe, expect, it } from "vitest"
import { CtxlogSaver } from "../src/index.js"
import { graphOf, turnInput as inputOf } from "./support/turnGraph.js"
import { truncateWal, walCommits } from "./support/walPages.js"

const dir = mkdtempSync(join(tmpdir(), "ctxlog-langgraph-wal-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const config = { configurable: { thread_id: "t" } }
const history = 40
const turns = 10

/** A turn's input here: the result ~2 KB. */
const turnInput = (turn: number) => inputOf(turn, 100)

interface Measured {
  readonly commits: number
  readonly pages: number
  /** Pages a turn per b-tree. */
  readonly trees: Record<string, number>
  /** Events appended a turn (CtxlogSaver only). */
  readonly events: number | undefined
}

const measure = async (
  name: string,
  delta: boolean,
  make: (file: string) => BaseCheckpointSaver
): Promise<Measured> => {
  const file = join(dir, `${name}.db`)
  const saver = make(file)
  const graph = graphOf(saver, delta)
  await graph.invoke({ messages: [new HumanMessage({ id: "q", content: "read the files" })] }, config)
  for (let turn = 0; turn < history; turn++) await graph.invoke(turnInput(turn), config)
  truncateWal(file)
  const before = saver instanceof CtxlogSaver ? saver.work().events : 0
  for (let turn = history; turn < history + turns; turn++) await graph.invoke(turnInput(turn), config)
  const events = saver instanceof CtxlogSaver ? (saver.work().events - before) / turns : undefined
  const commits = walCommits(file)
  expect((await graph.getState(config)).values.messages).toHaveLength(1 + 2 * (history + turns))
  if (saver instanceof CtxlogSaver) await saver.close()
  else if (saver instanceof SqliteSaver) saver.db.close()
  const trees: Record<string, number> = {}
  for (const page of commits.flat()) trees[page] = (trees[page] ?? 0) + 1 / turns
  const measured = { commits: commits.length / turns, pages: commits.flat().length / turns, trees, events }
  console.log(`${name}: ${JSON.stringify(measured)}`)
  return measured
}

describe("the pages a turn writes (SQLite WAL, counted)", () => {
  it("DeltaChannel with mirrorDeltaChannel: false: five events and three commits a turn, no window copy, within 1.2x LangGraph's saver's pages; plain messages within their bound", async () => {
    const langgraph = await measure("sqlitesaver-delta", true, (file) => SqliteSaver.fromConnString(file))
    const delta = await measure(
      "ctxlog-delta-unmirrored",
      true,
      (file) => new CtxlogSaver({ sqlite: file, mirrorDeltaChannel: false })
    )
    const mirrored = await measure("ctxlog-delta", true, (file) => new CtxlogSaver({ sqlite: file }))
    const plain = await measure("ctxlog-plain", false, (file) => new CtxlogSaver({ sqlite: file }))
    // Only the log's own b-trees: no recall index, snapshot or other table is written by a saver's turn.
    const logTrees = ["page1", "streams", "events", "sqlite_autoindex_events_1", "sqlite_autoindex_events_2"]
    for (const each of [delta, mirrored, plain]) {
      expect(Object.keys(each.trees).filter((tree) => !logTrees.includes(tree))).toEqual([])
      // One transaction per `put`: the tasks' `putWrites` ride in the step's (ADR 0152).
      expect(each.commits).toBe(3)
    }
    // Three checkpoints and two tasks' writes; the mirror adds the turn's two messages again.
    expect(delta.events).toBe(5)
    expect(mirrored.events).toBe(7)
    expect(plain.events).toBe(7)
    // Measured (ADR 0164): LangGraph 15.8, DeltaChannel 18.5 (21.7 mirrored), plain 22.7 pages a turn.
    expect(mirrored.pages - delta.pages).toBeGreaterThanOrEqual(2.5)
    expect(delta.pages).toBeLessThanOrEqual(1.2 * langgraph.pages)
    expect(delta.pages).toBeLessThanOrEqual(19)
    expect(plain.pages).toBeLessThanOrEqual(23.5)
    // 204 turns on four files at full durability: minutes on a loaded machine (the counts do not move).
  }, 600_000)
})
