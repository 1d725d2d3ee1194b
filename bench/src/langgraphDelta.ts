// Issue 42: the peers as they are. LangGraph.js 1.7 ships `DeltaChannel` (`MessagesDeltaValue`): a
// checkpoint stores the step's writes, not the whole list, and a full `DeltaSnapshot` every 100 updates.
// One agent turn at N messages (append a tool call and its result, read the conversation back) on:
// ctxlog's own `ContextService.appendMessages` (+ the window it returns), `CtxlogSaver` with a plain
// messages channel, `CtxlogSaver` with `MessagesDeltaValue`, LangGraph's `SqliteSaver` with
// `MessagesDeltaValue`. All SQLite files at the savers' default durability (FULL, WAL). Per subject: time
// per turn (interleaved rounds), bytes passed to write(2) per turn (each on its own, over enough turns to
// include one `DeltaSnapshot`), the database's size after a checkpoint of its WAL, and a cold resume (a
// new saver / store on the file, read the thread's state).
import { readFileSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { ContextService, Message } from "@ctxlog/core"
import { CtxlogSaver } from "@ctxlog/langgraph"
import { Ctxlog } from "@ctxlog/memory"
import type { BaseMessage } from "@langchain/core/messages"
import { MessagesAnnotation, MessagesDeltaValue, START, StateGraph, StateSchema } from "@langchain/langgraph"
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint"
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite"
import BetterSqlite3 from "better-sqlite3"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { compare, type Figures, type Row, rows, summarize } from "./harness.js"
import { messageAt, turnMessages } from "./langgraph.js"
import type { Scenario } from "./scenarios.js"
import type { Verdict } from "./targets.js"
import { prose, tempDir } from "./stores.js"

export const writtenBytes = (): number => {
  const line = readFileSync("/proc/self/io", "utf8")
    .split("\n")
    .find((l) => l.startsWith("wchar:"))
  return line === undefined ? 0 : Number(line.split(":")[1])
}

const config = { configurable: { thread_id: "bench" } }

/** What a turn uses of a compiled graph (the plain and the DeltaChannel graphs differ in their types only). */
interface MessagesGraph {
  readonly invoke: (
    input: { messages: Array<BaseMessage> },
    options: typeof config
  ) => Promise<{ messages: ReadonlyArray<unknown> }>
  readonly getState: (options: typeof config) => Promise<{ values: unknown }>
}

const plainGraph = (checkpointer: BaseCheckpointSaver): MessagesGraph =>
  new StateGraph(MessagesAnnotation)
    .addNode("agent", () => ({}))
    .addEdge(START, "agent")
    .compile({ checkpointer })

const deltaGraph = (checkpointer: BaseCheckpointSaver): MessagesGraph =>
  new StateGraph(new StateSchema({ messages: MessagesDeltaValue }))
    .addNode("agent", () => ({}))
    .addEdge(START, "agent")
    .compile({ checkpointer })

/** The same messages as `messageAt` / `turnMessages` (the LangGraph scenario's), as ctxlog message inputs. */
export const inputAt = (i: number): Message.MessageInput => {
  switch (i % 4) {
    case 0:
      return Message.user(prose(300, i))
    case 1:
      return { role: "assistant", parts: [Message.toolCall(`c${i}`, "read_file", { path: `src/f${i}.ts` })] }
    case 2:
      return { role: "tool", parts: [Message.toolResult(`c${i - 1}`, prose(2000, i))] }
    default:
      return Message.assistant(prose(300, i))
  }
}

export const turnInputs = (t: number): Array<Message.MessageInput> => [
  { role: "assistant", parts: [Message.toolCall(`tc${t}`, "read_file", { path: `src/t${t}.ts` })] },
  { role: "tool", parts: [Message.toolResult(`tc${t}`, prose(2000, t))] }
]

/** One subject: a thread on one SQLite file. */
export interface Thread {
  readonly name: string
  readonly file: string
  size: number
  /** Append `messages`, read the conversation back; answers how many messages it read. */
  readonly turn: (t: number) => Promise<number>
  readonly fill: (from: number, count: number) => Promise<void>
  readonly close: () => Promise<void>
  /** Open the file afresh, read the thread's messages, close; answers how many. */
  readonly resume: () => Promise<number>
}

const graphThread = (
  name: string,
  file: string,
  make: () => BaseCheckpointSaver & { close?: () => Promise<void> },
  graphOf: typeof plainGraph
): Thread => {
  const saver = make()
  const graph = graphOf(saver)
  const closeOf = async (s: BaseCheckpointSaver) => {
    if (s instanceof CtxlogSaver) await s.close()
    else if (s instanceof SqliteSaver) s.db.close()
  }
  return {
    name,
    file,
    size: 0,
    turn: async (t) => (await graph.invoke({ messages: turnMessages(t) }, config)).messages.length,
    fill: async (from, count) => {
      await graph.invoke({ messages: Array.from({ length: count }, (_, k) => messageAt(from + k)) }, config)
    },
    close: () => closeOf(saver),
    resume: async () => {
      const fresh = make()
      const state = await graphOf(fresh).getState(config)
      await closeOf(fresh)
      return (state.values as { messages: ReadonlyArray<unknown> }).messages.length
    }
  }
}

export const ctxlogThread = (file: string): Thread => {
  const layer = () => Ctxlog.sqlite({ filename: file, durability: "full" })
  const runtime = ManagedRuntime.make(layer())
  let ctx: ContextService.ContextService["Type"] | undefined
  const service = async () => {
    ctx ??= await runtime.runPromise(ContextService.ContextService)
    return ctx
  }
  return {
    name: "ctxlog ContextService.appendMessages",
    file,
    size: 0,
    turn: async (t) => {
      const c = await service()
      const { window } = await runtime.runPromise(c.appendMessages("bench", turnInputs(t)))
      return window.history.length
    },
    fill: async (from, count) => {
      const c = await service()
      await runtime.runPromise(
        c.appendMessages(
          "bench",
          Array.from({ length: count }, (_, k) => inputAt(from + k))
        )
      )
    },
    close: () => runtime.dispose(),
    resume: async () => {
      const fresh = ManagedRuntime.make(layer())
      const c = await fresh.runPromise(ContextService.ContextService)
      const window = await fresh.runPromise(c.load("bench"))
      await fresh.dispose()
      return window.history.length
    }
  }
}

export const databaseSize = (file: string): number => {
  const db = new BetterSqlite3(file)
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
  return statSync(file).size
}

export const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`
export const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`
export const ms = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(0)} µs`)

/** A size's rows of a per-turn comparison: `<name> turn` (each subject's notes joined) and `<name> cold resume`. */
export const turnAndResumeRows = (
  name: string,
  size: number,
  turns: ReadonlyArray<Figures>,
  resumes: ReadonlyArray<Figures>,
  notes: Readonly<Record<string, ReadonlyArray<string>>>
): ReadonlyArray<Row> => [
  ...rows(
    `${name} turn`,
    `${size} messages`,
    "turn",
    turns,
    Object.fromEntries(Object.entries(notes).map(([subject, list]) => [subject, list.join("; ")]))
  ),
  ...rows(`${name} cold resume`, `${size} messages`, "resume", resumes)
]

export const langgraphDeltaScenario: Scenario = {
  name: "langgraph-delta",
  describe:
    "issue 42: one turn (append a tool call and its result, read the thread back) at N messages: ctxlog appendMessages, CtxlogSaver (plain and DeltaChannel), LangGraph SqliteSaver with DeltaChannel; time, bytes written per turn, database size, cold resume",
  run: async (run) => {
    const sizes = run.sizes("DELTA_SIZES", [100, 1000], [100, 1000, 10000])
    const rounds = run.size("DELTA_ROUNDS", 5, 11)
    const perRound = run.size("DELTA_PER_ROUND", 1, 2)
    // LangGraph's DeltaChannel writes a whole DeltaSnapshot every 100 updates of the channel (one a turn
    // here): the bytes are counted over 100 turns so the snapshot weighs in proportion.
    const byteTurns = run.size("DELTA_BYTE_TURNS", 20, 100)
    const resumeRounds = run.size("DELTA_RESUME_ROUNDS", 3, 7)
    const out: Array<Row> = []
    for (const size of sizes) {
      const dir = tempDir("langgraph-delta")
      const threads: Array<Thread> = [
        ctxlogThread(join(dir, "ctxlog.db")),
        graphThread(
          "ctxlog CtxlogSaver, plain messages",
          join(dir, "ctxlog-plain.db"),
          () => new CtxlogSaver({ sqlite: join(dir, "ctxlog-plain.db") }),
          plainGraph
        ),
        graphThread(
          "ctxlog CtxlogSaver, DeltaChannel",
          join(dir, "ctxlog-delta.db"),
          () => new CtxlogSaver({ sqlite: join(dir, "ctxlog-delta.db") }),
          deltaGraph
        ),
        graphThread(
          "LangGraph SqliteSaver, DeltaChannel",
          join(dir, "langgraph-delta.db"),
          () => SqliteSaver.fromConnString(join(dir, "langgraph-delta.db")),
          deltaGraph
        )
      ]
      for (const thread of threads) {
        for (let at = 0; at < size; at += 500) await thread.fill(at, Math.min(500, size - at))
        thread.size = size
      }
      const notes: Record<string, Array<string>> = Object.fromEntries(threads.map((t) => [t.name, []]))
      let next = 0
      const checked = async (thread: Thread, t: number) => {
        const read = await thread.turn(t)
        thread.size += 2
        if (read !== thread.size) throw new Error(`${thread.name}: read ${read} messages, expected ${thread.size}`)
      }
      // Bytes: each on its own, from an emptied WAL; per-turn figures kept to show the snapshot turns.
      for (const thread of threads) {
        databaseSize(thread.file)
        const perTurn: Array<number> = []
        const before = writtenBytes()
        for (let k = 0; k < byteTurns; k++) {
          const at = writtenBytes()
          await checked(thread, next + k)
          perTurn.push(writtenBytes() - at)
        }
        const mean = (writtenBytes() - before) / byteTurns
        const median = summarize(perTurn).median
        notes[thread.name]?.push(
          `${kib(mean)} written per turn (mean of ${byteTurns}; median turn ${kib(median)}, largest ${kib(Math.max(...perTurn))})`
        )
      }
      next += byteTurns
      const figures = await compare(
        threads.map((thread) => ({ name: thread.name, op: (i: number) => checked(thread, next + i) })),
        { warmup: 1, rounds, perRound }
      )
      next += (1 + rounds * perRound) * 1
      for (const thread of threads) await thread.close()
      for (const thread of threads) notes[thread.name]?.push(`database ${mib(databaseSize(thread.file))}`)
      // Cold resume: a new store on the file, the thread's messages read, closed; interleaved.
      const resumes = await compare(
        threads.map((thread) => ({
          name: thread.name,
          op: async () => {
            const read = await thread.resume()
            if (read !== thread.size) throw new Error(`${thread.name}: resumed ${read}, expected ${thread.size}`)
          }
        })),
        { warmup: 1, rounds: resumeRounds, perRound: 1 }
      )
      for (const figure of resumes) {
        const spread = figure.medianUs > 0 ? Math.round(((figure.p90Us - figure.p10Us) / figure.medianUs) * 100) : 0
        notes[figure.name]?.push(`cold resume ${ms(figure.medianUs)} (±${spread}%)`)
      }
      out.push(...turnAndResumeRows("langgraph-delta", size, figures, resumes, notes))
      rmSync(dir, { recursive: true, force: true })
    }
    return out
  }
}

const deltaRow = (all: ReadonlyArray<Row>, size: number, subject: string) =>
  all.find(
    (row) => row.scenario === "langgraph-delta turn" && row.size === `${size} messages` && row.subject === subject
  )
const deltaKib = (row: Row | undefined): number | undefined => {
  const match = row?.note.match(/([0-9.]+) KiB written per turn/)
  return match?.[1] === undefined ? undefined : Number(match[1])
}

/** Issue 42's acceptance lines on the `langgraph-delta` rows, at 1k and 10k messages. */
export const langgraphDeltaVerdicts = (all: ReadonlyArray<Row>): ReadonlyArray<Verdict> => {
  const out: Array<Verdict> = []
  const lines = [
    ["ctxlog ContextService.appendMessages", "time", 50, "≥ 50x less time than LangGraph with DeltaChannel"],
    ["ctxlog ContextService.appendMessages", "bytes", 1, "≤ the bytes of LangGraph with DeltaChannel"],
    ["ctxlog CtxlogSaver, DeltaChannel", "time", 10, "≥ 10x faster than LangGraph's saver with DeltaChannel"],
    ["ctxlog CtxlogSaver, DeltaChannel", "bytes", 1, "≤ the bytes of LangGraph's saver with DeltaChannel"],
    ["ctxlog CtxlogSaver, plain messages", "bytes", 1.2, "≤ 1.2x the bytes of LangGraph's DeltaChannel saver"]
  ] as const
  for (const size of [1000, 10000]) {
    const peer = deltaRow(all, size, "LangGraph SqliteSaver, DeltaChannel")
    for (const [subject, figure, bound, goal] of lines) {
      const target = `LangGraph peers at ${size / 1000}k messages: ${subject.replace("ctxlog ", "")}, ${figure}`
      const ours = deltaRow(all, size, subject)
      if (figure === "time") {
        const a = ours?.medianUs
        const b = peer?.medianUs
        out.push(
          a == null || b == null || a <= 0
            ? {
                target,
                goal,
                measured: "no figure in this run (scenario `langgraph-delta` not run at this size)",
                met: "not run"
              }
            : {
                target,
                goal,
                measured: `${ms(a)} vs ${ms(b)}: ${(b / a).toFixed(1)}x less`,
                met: b / a >= bound ? "yes" : "no"
              }
        )
      } else {
        const a = deltaKib(ours)
        const b = deltaKib(peer)
        out.push(
          a === undefined || b === undefined || b <= 0
            ? {
                target,
                goal,
                measured: "no figure in this run (scenario `langgraph-delta` not run at this size)",
                met: "not run"
              }
            : {
                target,
                goal,
                measured: `${a.toFixed(1)} vs ${b.toFixed(1)} KiB: ${(a / b).toFixed(2)}x`,
                met: a / b <= bound ? "yes" : "no"
              }
        )
      }
    }
  }
  return out
}
