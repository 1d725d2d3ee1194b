// Issue 26: one LangGraph agent turn on a checkpointer. A `StateGraph(MessagesAnnotation)` thread holds
// N messages; a turn appends a tool call and its result (`graph.invoke`, the messages reducer) and reads
// the conversation back (the state `invoke` returns). Compared: `CtxlogSaver` (@ctxlog/langgraph, one
// SQLite file) against LangGraph's own `SqliteSaver` (@langchain/langgraph-checkpoint-sqlite), with
// `MemorySaver` as the floor (no storage at all). Time per turn interleaved as every scenario does; bytes
// passed to write(2) per turn (`wchar` of /proc/self/io) measured for each saver on its own.
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { CtxlogSaver } from "@ctxlog/langgraph"
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages"
import { MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import BetterSqlite3 from "better-sqlite3"
import { compare, type Row, rows, type Subject } from "./harness.js"
import type { Scenario } from "./scenarios.js"
import type { Verdict } from "./targets.js"
import { prose, tempDir } from "./stores.js"

/** Bytes this process has passed to write(2) so far (`wchar` of /proc/self/io); undefined off Linux. */
const writtenBytes = (): number | undefined => {
  try {
    const line = readFileSync("/proc/self/io", "utf8")
      .split("\n")
      .find((l) => l.startsWith("wchar:"))
    return line === undefined ? undefined : Number(line.split(":")[1])
  } catch {
    return undefined
  }
}

/** The graph of the issue: MessagesAnnotation and one node that changes nothing (the turn is the input). */
const graphOn = (checkpointer: BaseCheckpointSaver) =>
  new StateGraph(MessagesAnnotation)
    .addNode("agent", () => ({}))
    .addEdge(START, "agent")
    .compile({ checkpointer })

type Graph = ReturnType<typeof graphOn>

/**
 * Message `i` of a thread: user, assistant tool call, tool result, assistant, in turn: ~300 chars of text
 * each, a tool result ~2,000 (as large as the ones a turn appends).
 */
export const messageAt = (i: number): BaseMessage => {
  const text = prose(300, i)
  switch (i % 4) {
    case 0:
      return new HumanMessage({ content: text, id: `m${i}` })
    case 1:
      return new AIMessage({
        content: "",
        id: `m${i}`,
        tool_calls: [{ type: "tool_call", id: `c${i}`, name: "read_file", args: { path: `src/f${i}.ts` } }]
      })
    case 2:
      return new ToolMessage({ content: prose(2000, i), tool_call_id: `c${i - 1}`, id: `m${i}` })
    default:
      return new AIMessage({ content: text, id: `m${i}` })
  }
}

/** Turn `t` of a thread: an assistant tool call and its result (~2 KB of output). */
export const turnMessages = (t: number): Array<BaseMessage> => [
  new AIMessage({
    content: "",
    id: `t${t}a`,
    tool_calls: [{ type: "tool_call", id: `tc${t}`, name: "read_file", args: { path: `src/t${t}.ts` } }]
  }),
  new ToolMessage({ content: prose(2000, t), tool_call_id: `tc${t}`, id: `t${t}r` })
]

interface Thread {
  readonly name: string
  readonly graph: Graph
  readonly config: { readonly configurable: { readonly thread_id: string } }
  /** How many messages the thread holds now. */
  size: number
  readonly close: () => Promise<void> | void
}

const fill = async (thread: Thread, size: number): Promise<void> => {
  for (let at = 0; at < size; at += 500) {
    const batch = Array.from({ length: Math.min(500, size - at) }, (_, k) => messageAt(at + k))
    await thread.graph.invoke({ messages: batch }, thread.config)
  }
  thread.size = size
}

/** One turn: append a tool call and its result, read the conversation back. */
const turn = async (thread: Thread, t: number): Promise<void> => {
  const state = await thread.graph.invoke({ messages: turnMessages(t) }, thread.config)
  thread.size += 2
  if (state.messages.length !== thread.size) {
    throw new Error(`${thread.name}: read back ${state.messages.length} messages, expected ${thread.size}`)
  }
}

/** Empty a SQLite file's WAL into the file (from a connection of its own). */
const checkpointWal = (file: string): void => {
  const db = new BetterSqlite3(file)
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
}

const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`

export const langgraphScenario: Scenario = {
  name: "langgraph",
  describe:
    "one LangGraph turn (StateGraph(MessagesAnnotation): append a tool call and its result, read the thread back) at N messages: CtxlogSaver vs LangGraph's SqliteSaver (and MemorySaver, no storage); time and bytes written per turn",
  run: async (run) => {
    const sizes = run.sizes("LANGGRAPH_SIZES", [1000], [1000, 10000])
    const rounds = run.size("LANGGRAPH_ROUNDS", 5, 10)
    const perRound = run.size("LANGGRAPH_PER_ROUND", 2, 3)
    const byteTurns = run.size("LANGGRAPH_BYTE_TURNS", 5, 10)
    const out: Array<Row> = []
    for (const size of sizes) {
      const dir = tempDir("langgraph")
      const threads: Array<Thread> = []
      const open = (name: string, saver: BaseCheckpointSaver, close: () => Promise<void> | void): Thread => ({
        name,
        graph: graphOn(saver),
        config: { configurable: { thread_id: "bench" } },
        size: 0,
        close
      })
      const files = new Map([
        ["ctxlog CtxlogSaver", join(dir, "ctxlog.db")],
        ["ctxlog CtxlogSaver, durability normal", join(dir, "ctxlog-normal.db")],
        ["LangGraph SqliteSaver", join(dir, "langgraph.db")]
      ])
      const ctxlog = new CtxlogSaver({ sqlite: join(dir, "ctxlog.db") })
      threads.push(open("ctxlog CtxlogSaver", ctxlog, () => ctxlog.close()))
      // The same at synchronous=NORMAL: how much of a turn is the fsync of each commit (LangGraph's
      // SqliteSaver runs at SQLite's default, FULL, as CtxlogSaver does by default).
      const normal = new CtxlogSaver({ sqlite: join(dir, "ctxlog-normal.db"), durability: "normal" })
      threads.push(open("ctxlog CtxlogSaver, durability normal", normal, () => normal.close()))
      const sqlite = SqliteSaver.fromConnString(join(dir, "langgraph.db"))
      threads.push(
        open("LangGraph SqliteSaver", sqlite, () => {
          sqlite.db.close()
        })
      )
      threads.push(open("LangGraph MemorySaver (no storage)", new MemorySaver(), () => {}))
      for (const thread of threads) await fill(thread, size)

      // Bytes written per turn, each saver on its own (write counts cannot be interleaved). Each SQLite
      // file's WAL is checkpointed first, so no saver pays for the other's (or the fill's) pages; the
      // checkpoint that later copies a turn's WAL pages into the file costs both savers alike.
      const written = new Map<string, number>()
      let next = 0
      const work = ctxlog.work()
      for (const thread of threads) {
        const file = files.get(thread.name)
        if (file !== undefined) checkpointWal(file)
        const before = writtenBytes()
        for (let k = 0; k < byteTurns; k++) await turn(thread, next + k)
        const after = writtenBytes()
        if (before !== undefined && after !== undefined) written.set(thread.name, (after - before) / byteTurns)
      }
      const done = ctxlog.work()
      const perTurn = (n: number) => (n / byteTurns).toFixed(0)
      const ctxlogWork = `; per turn ${perTurn(done.events - work.events)} events, ${perTurn(done.serialized - work.serialized)} values serialized (${kib((done.bytes - work.bytes) / byteTurns)}), ${perTurn(done.eventsRead - work.eventsRead)} events read`
      next += byteTurns

      const subjects: Array<Subject> = threads.map((thread) => ({
        name: thread.name,
        op: (i) => turn(thread, next + i)
      }))
      const figures = await compare(subjects, { warmup: 1, rounds, perRound })
      const ctxlogBytes = written.get("ctxlog CtxlogSaver")
      const notes = Object.fromEntries(
        threads.map((thread) => {
          const bytes = written.get(thread.name)
          const ratio =
            bytes !== undefined && ctxlogBytes !== undefined && ctxlogBytes > 0 && !thread.name.startsWith("ctxlog")
              ? `; ${(bytes / ctxlogBytes).toFixed(1)}x ctxlog's bytes`
              : ""
          const extra = thread.name === "ctxlog CtxlogSaver" ? ctxlogWork : ""
          return [thread.name, bytes === undefined ? "" : `${kib(bytes)} written per turn${ratio}${extra}`]
        })
      )
      out.push(...rows("langgraph turn", `${size} messages`, "turn", figures, notes))
      for (const thread of threads) await thread.close()
      // The 10k files of LangGraph's SqliteSaver take hundreds of MB.
      rmSync(dir, { recursive: true, force: true })
    }
    return out
  }
}

const fmt = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`)
const rowOf = (all: ReadonlyArray<Row>, size: number, subject: string) =>
  all.find((row) => row.scenario === "langgraph turn" && row.size === `${size} messages` && row.subject === subject)
const kibOf = (row: Row | undefined): number | undefined => {
  const match = row?.note.match(/([0-9.]+) KiB written per turn/)
  return match?.[1] === undefined ? undefined : Number(match[1])
}
const notRun = (target: string, goal: string): Verdict => ({
  target,
  goal,
  measured: "no figure in this run (scenario `langgraph` not run at this size)",
  met: "not run"
})

/** The targets of issue 26: CtxlogSaver against LangGraph's SqliteSaver. */
export const langgraphVerdicts = (all: ReadonlyArray<Row>): ReadonlyArray<Verdict> => {
  const ctxlog1k = rowOf(all, 1000, "ctxlog CtxlogSaver")
  const sqlite1k = rowOf(all, 1000, "LangGraph SqliteSaver")
  const ctxlog10k = rowOf(all, 10000, "ctxlog CtxlogSaver")
  const bytesTarget = "LangGraph turn at 1k messages: bytes written"
  const bytesGoal = "≥ 20x fewer than SqliteSaver"
  const a = kibOf(ctxlog1k)
  const b = kibOf(sqlite1k)
  const bytes: Verdict =
    a === undefined || b === undefined || a <= 0
      ? notRun(bytesTarget, bytesGoal)
      : {
          target: bytesTarget,
          goal: bytesGoal,
          measured: `${a.toFixed(1)} KiB vs ${b.toFixed(1)} KiB: ${(b / a).toFixed(1)}x fewer`,
          met: b / a >= 20 ? "yes" : "no"
        }
  const timeTarget = "LangGraph turn at 1k messages: time"
  const timeGoal = "≥ 10x less than SqliteSaver"
  const time: Verdict =
    ctxlog1k?.medianUs == null || sqlite1k?.medianUs == null || ctxlog1k.medianUs <= 0
      ? notRun(timeTarget, timeGoal)
      : {
          target: timeTarget,
          goal: timeGoal,
          measured: `${fmt(ctxlog1k.medianUs)} vs ${fmt(sqlite1k.medianUs)}: ${(sqlite1k.medianUs / ctxlog1k.medianUs).toFixed(1)}x less`,
          met: sqlite1k.medianUs / ctxlog1k.medianUs >= 10 ? "yes" : "no"
        }
  const growthTarget = "LangGraph turn, CtxlogSaver from 1k to 10k messages"
  const growthGoal = "time grows ≤ 2x"
  const growth: Verdict =
    ctxlog1k?.medianUs == null || ctxlog10k?.medianUs == null || ctxlog1k.medianUs <= 0
      ? notRun(growthTarget, growthGoal)
      : {
          target: growthTarget,
          goal: growthGoal,
          measured: `${fmt(ctxlog1k.medianUs)} → ${fmt(ctxlog10k.medianUs)}: ${(ctxlog10k.medianUs / ctxlog1k.medianUs).toFixed(2)}x`,
          met: ctxlog10k.medianUs / ctxlog1k.medianUs <= 2 ? "yes" : "no"
        }
  return [bytes, time, growth]
}
