// The scenarios of `pnpm bench`: each runs ctxlog and its reference on identical data in one process run.
import { spawn, spawnSync } from "node:child_process"
import { createHash, randomUUID } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { DeferredSummaries, TaskGoalRefresh, TemplateCompactor, TieredCompaction } from "@ctxlog/compaction"
import {
  Budget,
  Compactor,
  ContextService,
  Decide,
  EventLog,
  Ids,
  Message,
  TokenCounter,
  Transcript,
  Window,
  type WindowEvent,
  WindowRepository
} from "@ctxlog/core"
import { transcriptsDir } from "@ctxlog/core/transcripts"
import { ContextAssembly, FullTextRecall, SqliteEventLog } from "@ctxlog/memory"
import { CtxBuilder, RenderRecord } from "@ctxlog/providers"
import { SeamConfig, SeamHost } from "@ctxlog/seam"
import { Policy, Turn } from "@ctxlog/turn"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import { compare, noteRow, type Row, roundsAtMost, rows, type Subject } from "./harness.js"
import { type Server, startServer } from "./postgres.js"
import { langgraphScenario } from "./langgraph.js"
import { langgraphDeltaScenario } from "./langgraphDelta.js"
import { mastraScenario } from "./mastra.js"
import { reloadScenario, storageScenario } from "./storage.js"
import {
  messageEvent,
  messageInput,
  postgresRuntime,
  prose,
  rawPostgres,
  rawSqlite,
  sqliteRuntime,
  tempDir
} from "./stores.js"

/** What every scenario gets: the run's size and the PostgreSQL server (started on first use). */
export interface Run {
  readonly quick: boolean
  /** A size from `BENCH_<NAME>` (a number, or a comma-separated list), else the quick or full default. */
  readonly size: (name: string, quick: number, full: number) => number
  readonly sizes: (name: string, quick: ReadonlyArray<number>, full: ReadonlyArray<number>) => ReadonlyArray<number>
  readonly postgres: () => Promise<Server | string>
  /** Seconds a single size of a scenario may take before larger sizes are skipped (BENCH_BUDGET_S). */
  readonly budgetS: number
}

/** A named scenario. */
export interface Scenario {
  readonly name: string
  readonly describe: string
  readonly run: (run: Run) => Promise<ReadonlyArray<Row>>
}

const here = dirname(fileURLToPath(import.meta.url))

const runtimeClose = async (runtime: { readonly dispose: () => Promise<void> }) => runtime.dispose()

// ---------------------------------------------------------------------------------------------------
// Emmett's SQLite event store, holding one connection (its `appendToStream` over `sqliteConnection`).

interface Emmett {
  readonly append: (stream: string, events: ReadonlyArray<WindowEvent.WindowEvent>, expected: bigint) => Promise<void>
  readonly close: () => void
}

/** Whether the sqlite3 native binding loads, checked once in a child process (a failed load can crash this one). */
let sqlite3Loads: boolean | undefined
const sqlite3Available = (): boolean => {
  // sqlite3 is Emmett's dependency, not the bench's: resolve it from where emmett-sqlite sits.
  const locate =
    "require.resolve('sqlite3', { paths: [require('path').dirname(require.resolve('@event-driven-io/emmett-sqlite'))] })"
  sqlite3Loads ??= spawnSync(process.execPath, ["-e", `require(${locate})`], { cwd: here }).status === 0
  return sqlite3Loads
}

const emmett = async (fileName: string): Promise<Emmett | string> => {
  if (!sqlite3Available()) {
    return "Emmett's SQLite store could not run: the sqlite3 native binding is not built (pnpm bench builds it on first use; see BENCHMARKS.md)"
  }
  try {
    const store = await import("@event-driven-io/emmett-sqlite")
    const connection = store.sqliteConnection({ fileName })
    await connection.command("PRAGMA journal_mode = WAL")
    await connection.command("PRAGMA synchronous = NORMAL")
    await store.createEventStoreSchema(connection)
    return {
      append: async (stream, events, expected) => {
        const result = await store.appendToStream(
          connection,
          stream,
          "context",
          events.map((event) => ({ type: event._tag, data: { ...event } })),
          { expectedStreamVersion: expected }
        )
        if (!result.success) throw new Error(`emmett append to ${stream} at ${expected} failed`)
      },
      close: () => connection.close()
    }
  } catch (cause) {
    return `Emmett's SQLite store could not run: ${cause instanceof Error ? cause.message.split("\n")[0] : String(cause)}`
  }
}

// ---------------------------------------------------------------------------------------------------

const appendScenario = (batch: number): Scenario => ({
  name: batch === 1 ? "append" : "append-batch",
  describe:
    batch === 1
      ? "one event per append, SQLite WAL + synchronous=NORMAL, recall index on: ctxlog vs raw better-sqlite3 vs Emmett"
      : `${batch} events per append, same setup`,
  run: async (run) => {
    const perRound = batch === 1 ? run.size("APPEND_OPS", 40, 200) : run.size("BATCH_OPS", 4, 20)
    const rounds = run.size("ROUNDS", 5, 10)
    const warmup = batch === 1 ? 20 : 2
    const total = (warmup + roundsAtMost(rounds) * perRound) * batch
    const events = Array.from({ length: total }, (_, i) => messageEvent(i))
    const slice = (i: number) => events.slice(i * batch, (i + 1) * batch)
    const dir = tempDir("append")
    const runtime = sqliteRuntime(join(dir, "ctxlog.db"))
    const log = await runtime.runPromise(EventLog.EventLog)
    const raw = rawSqlite(join(dir, "raw.db"))
    const rawIndexed = rawSqlite(join(dir, "raw-fts.db"), "NORMAL", { fullText: true })
    const em = await emmett(join(dir, "emmett.db"))
    const subjects: Array<Subject> = [
      { name: "ctxlog SqliteEventLog.append", op: (i) => runtime.runPromise(log.append("s", slice(i), i * batch)) },
      { name: "raw better-sqlite3", op: (i) => raw.append("s", slice(i)) },
      // Not a target: what the raw insert costs once it also keeps a full-text index, as ctxlog's recall does.
      { name: "full-text raw: better-sqlite3 + FTS5", op: (i) => rawIndexed.append("s", slice(i)) }
    ]
    if (typeof em !== "string") {
      subjects.push({ name: "Emmett emmett-sqlite", op: (i) => em.append("s", slice(i), BigInt(i * batch)) })
    }
    const figures = await compare(subjects, { warmup, rounds, perRound })
    const perEvent = (all: typeof figures) =>
      all.map((f) => ({
        ...f,
        medianUs: f.medianUs / batch,
        p10Us: f.p10Us / batch,
        p90Us: f.p90Us / batch
      }))
    const label = batch === 1 ? "append (single)" : "append (batched)"
    const out = [...rows(label, `${batch}/call`, "event", perEvent(figures))]
    // Issue 42: the same append with the recall index off (the event log alone, `SqliteEventLog.layer`)
    // against raw better-sqlite3, its own comparison so the ratio is ctxlog-without-recall over raw.
    const bare = ManagedRuntime.make(
      SqliteEventLog.layer({ filename: join(dir, "ctxlog-bare.db"), durability: "normal" })
    )
    const bareLog = await bare.runPromise(EventLog.EventLog)
    const rawBare = rawSqlite(join(dir, "raw-bare.db"))
    const bareFigures = await compare(
      [
        {
          name: "ctxlog SqliteEventLog.append, recall off",
          op: (i) => bare.runPromise(bareLog.append("s", slice(i), i * batch))
        },
        { name: "raw better-sqlite3", op: (i) => rawBare.append("s", slice(i)) }
      ],
      { warmup, rounds, perRound }
    )
    out.push(...rows(`${label}, recall off`, `${batch}/call`, "event", perEvent(bareFigures)))
    rawBare.close()
    await bare.dispose()
    if (typeof em === "string") out.push(noteRow(out[0]?.scenario ?? "", `${batch}/call`, "Emmett emmett-sqlite", em))
    raw.close()
    rawIndexed.close()
    if (typeof em !== "string") em.close()
    await runtimeClose(runtime)
    return out
  }
})

const appendMessagesScenario: Scenario = {
  name: "append-messages",
  describe: "ContextService.appendMessages of one message per call, the window growing 0→N, vs raw insert of one row",
  run: async (run) => {
    // Warmed up and sized as the single append it is compared with (the `append` scenario).
    const perRound = run.size("MESSAGES_OPS", 40, 200)
    const rounds = run.size("ROUNDS", 5, 10)
    const warmup = 20
    const total = warmup + roundsAtMost(rounds) * perRound
    const inputs = Array.from({ length: total }, (_, i) => messageInput(i))
    const events = Array.from({ length: total }, (_, i) => messageEvent(i))
    const dir = tempDir("messages")
    const runtime = sqliteRuntime(join(dir, "ctxlog.db"))
    const ctx = await runtime.runPromise(ContextService.ContextService)
    const raw = rawSqlite(join(dir, "raw.db"))
    const figures = await compare(
      [
        {
          name: "ctxlog ContextService.appendMessages",
          op: (i) => runtime.runPromise(ctx.appendMessages("s", [inputs[i] ?? Message.user("x")]))
        },
        { name: "raw better-sqlite3 (1 row)", op: (i) => raw.append("s", events.slice(i, i + 1)) }
      ],
      { warmup, rounds, perRound }
    )
    raw.close()
    await runtimeClose(runtime)
    return rows("appendMessages (1 msg)", `window 0→${total}`, "message", figures)
  }
}

const postgresScenario: Scenario = {
  name: "pg-append",
  describe: "PostgreSQL: PostgresEventLog.append (single and 100/call) vs raw pg on the same rows",
  run: async (run) => {
    const server = await run.postgres()
    if (typeof server === "string") return [noteRow("pg append", "", "skipped", server)]
    const out: Array<Row> = []
    for (const batch of [1, 100]) {
      const perRound = batch === 1 ? run.size("PG_OPS", 10, 50) : run.size("PG_BATCH_OPS", 2, 5)
      const rounds = run.size("ROUNDS", 5, 10)
      const warmup = batch === 1 ? 5 : 1
      const events = Array.from({ length: (warmup + roundsAtMost(rounds) * perRound) * batch }, (_, i) =>
        messageEvent(i)
      )
      const slice = (i: number) => events.slice(i * batch, (i + 1) * batch)
      const runtime = postgresRuntime(await server.database(`bench_ctxlog_${batch}`))
      const log = await runtime.runPromise(EventLog.EventLog)
      const raw = await rawPostgres(await server.database(`bench_raw_${batch}`))
      const figures = await compare(
        [
          {
            name: "ctxlog PostgresEventLog.append",
            op: (i) => runtime.runPromise(log.append("s", slice(i), i * batch))
          },
          { name: "raw pg", op: (i) => raw.append("s", slice(i)) }
        ],
        { warmup, rounds, perRound }
      )
      const perEvent = figures.map((f) => ({
        ...f,
        medianUs: f.medianUs / batch,
        p10Us: f.p10Us / batch,
        p90Us: f.p90Us / batch
      }))
      out.push(...rows(batch === 1 ? "pg append (single)" : "pg append (batched)", `${batch}/call`, "event", perEvent))
      await raw.close()
      await runtimeClose(runtime)
    }
    return out
  }
}

// ---------------------------------------------------------------------------------------------------
// 4 processes on 4 streams sharing one store. Each child appends for a fixed time and prints its count.

const writers = async (
  mode: string,
  target: string,
  count: number,
  durationMs: number,
  warmup: number
): Promise<number> => {
  // Each child opens its store, makes `warmup` appends, prints "ready" and waits; once all are ready they
  // get "go" on stdin at once, append for durationMs and print their count. Start-up time (slow under
  // load) and the JIT's warm-up are not measured.
  const children = Array.from({ length: count }, (_, k) => {
    const child = spawn(
      process.execPath,
      [
        "--conditions=@ctxlog/source",
        "--import",
        "tsx",
        join(here, "writer.ts"),
        mode,
        target,
        `w${k}`,
        String(durationMs),
        String(warmup)
      ],
      { stdio: ["pipe", "pipe", "inherit"] }
    )
    let out = ""
    let markReady: () => void = () => {}
    const ready = new Promise<void>((resolve) => {
      markReady = resolve
    })
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes("ready\n")) markReady()
    })
    const done = new Promise<number>((resolve, reject) => {
      child.on("error", reject)
      child.on("exit", (code) => {
        markReady()
        const n = Number(out.trim().split("\n").pop())
        if (code === 0 && Number.isFinite(n)) resolve(n)
        else reject(new Error(`writer ${mode} w${k} exited ${code}: ${out}`))
      })
    })
    return { child, ready, done }
  })
  await Promise.all(children.map((c) => c.ready))
  for (const c of children) c.child.stdin?.end("go\n")
  const counts = await Promise.all(children.map((c) => c.done))
  return counts.reduce((a, b) => a + b, 0) / (durationMs / 1000)
}

const writersScenario: Scenario = {
  name: "writers",
  describe:
    "total appends/s of 1 and 4 processes on their own streams sharing one SQLite file (synchronous=FULL, the library default) and one PostgreSQL database, ContextService.appendMessages vs raw",
  run: async (run) => {
    const durationMs = run.size("WRITERS_MS", 4000, 10000)
    // Appends each writer makes before the timed run (not counted): the steady state is measured, not the
    // JIT compiling a fresh process's append path (a quarter of the appends each for four writers).
    const warmup = run.size("WRITERS_WARMUP", 500, 1000)
    const out: Array<Row> = []
    const note = (scenario: string, size: string, subject: string, perSecond: number, extra = "") =>
      noteRow(scenario, size, subject, `${Math.round(perSecond)} appends/s${extra}`)
    const backends: Array<{
      label: string
      ctxlog: string
      raw: string
      target: () => Promise<[string, string] | string>
    }> = [
      {
        label: "SQLite",
        ctxlog: "ctxlog-sqlite",
        raw: "raw-sqlite",
        target: async () => {
          const dir = tempDir("writers")
          return [join(dir, "ctxlog.db"), join(dir, "raw.db")]
        }
      },
      {
        label: "PostgreSQL",
        ctxlog: "ctxlog-pg",
        raw: "raw-pg",
        target: async () => {
          const server = await run.postgres()
          if (typeof server === "string") return server
          return [await server.database("bench_writers_ctxlog"), await server.database("bench_writers_raw")]
        }
      }
    ]
    for (const backend of backends) {
      const scenario = `writers (${backend.label})`
      const targets = await backend.target()
      if (typeof targets === "string") {
        out.push(noteRow(scenario, "", "skipped", targets))
        continue
      }
      const [ctxlogTarget, rawTarget] = targets
      // One writer first (it also creates the schema), then four.
      const ctxlog1 = await writers(backend.ctxlog, ctxlogTarget, 1, durationMs, warmup)
      const raw1 = await writers(backend.raw, rawTarget, 1, durationMs, warmup)
      const ctxlog4 = await writers(backend.ctxlog, ctxlogTarget, 4, durationMs, warmup)
      const raw4 = await writers(backend.raw, rawTarget, 4, durationMs, warmup)
      out.push(note(scenario, "1 process", "ctxlog ContextService", ctxlog1))
      out.push(note(scenario, "1 process", "raw", raw1, `; ctxlog / raw throughput ${(ctxlog1 / raw1).toFixed(2)}x`))
      out.push(
        note(
          scenario,
          "4 processes",
          "ctxlog ContextService",
          ctxlog4,
          `; ${(ctxlog4 / ctxlog1).toFixed(2)}x one writer`
        )
      )
      out.push(note(scenario, "4 processes", "raw", raw4, `; ctxlog / raw throughput ${(ctxlog4 / raw4).toFixed(2)}x`))
    }
    return out
  }
}

// ---------------------------------------------------------------------------------------------------

/** Projects the time of the next size from the last two (log-log slope, at least linear), or linearly from one. */
const projectS = (done: ReadonlyArray<{ size: number; seconds: number }>, next: number): number => {
  const last = done[done.length - 1]
  if (last === undefined) return 0
  const before = done[done.length - 2]
  const slope =
    before === undefined || before.seconds <= 0 || last.seconds <= 0
      ? 1
      : Math.max(1, Math.log(last.seconds / before.seconds) / Math.log(last.size / before.size))
  return last.seconds * (next / last.size) ** slope
}

const loadScenario: Scenario = {
  name: "load",
  describe:
    "load a stream of N events (from disk, a fresh repository) with and without snapshots vs SELECT + JSON.parse",
  run: async (run) => {
    const sizes = run.sizes("LOAD_SIZES", [1000, 5000], [1000, 10000, 100000])
    const rounds = run.size("LOAD_ROUNDS", 3, 5)
    const out: Array<Row> = []
    // Three logs: no snapshot (replay from the first event), a snapshot at the head of a window that holds
    // every message, and a snapshot at the head of a window an agent keeps bounded (each 1,000 messages
    // trim the 1,000 before: the log grows, the window does not) — the last is what a long session is.
    const variants = [
      { scenario: "load (no snapshot)", snapshots: false, bounded: false },
      { scenario: "load (snapshots every 100)", snapshots: true, bounded: false },
      { scenario: "load (snapshots, window trimmed to 1k)", snapshots: true, bounded: true }
    ] as const
    for (const { scenario, snapshots, bounded } of variants) {
      const done: Array<{ size: number; seconds: number }> = []
      for (const size of sizes) {
        const projected = projectS(done, size) * (rounds + 2)
        if (projected > run.budgetS) {
          out.push(
            noteRow(
              scenario,
              `${size} events`,
              "skipped",
              `projected ${Math.round(projected)} s (from the smaller sizes) > budget ${run.budgetS} s (BENCH_BUDGET_S)`
            )
          )
          continue
        }
        const dir = tempDir("load")
        const file = join(dir, "ctxlog.db")
        const options = snapshots ? { snapshotEvery: 100 } : { snapshotEvery: 0 }
        const writer = sqliteRuntime(file, options)
        const log = await writer.runPromise(EventLog.EventLog)
        const raw = rawSqlite(join(dir, "raw.db"))
        const chunk = 1000
        let version = 0
        let previous: ReadonlyArray<string> = []
        let expected = 0
        for (let at = 0; at < size; at += chunk) {
          const messages = Array.from({ length: Math.min(chunk, size - at) }, (_, k) => messageEvent(at + k))
          const trim: Array<WindowEvent.WindowEvent> =
            bounded && previous.length > 0
              ? [{ _tag: "HistoryTrimmed", id: randomUUID(), budget: 0, removedIds: previous }]
              : []
          const events = [...trim, ...messages]
          await writer.runPromise(log.append("s", events, version))
          raw.append("s", events)
          version += events.length
          previous = messages.flatMap((event) => (event._tag === "MessageAppended" ? [event.message.id] : []))
          expected = bounded ? messages.length : expected + messages.length
        }
        // As a ContextService does after its appends, tell the repository: with snapshots on, its policy
        // saves the window at the head. Then every load reads from disk.
        await writer.runPromise(
          Effect.flatMap(WindowRepository.WindowRepository, (repository) =>
            Effect.flatMap(repository.load("s"), (window) => repository.committed("s", window))
          )
        )
        await runtimeClose(writer)
        // A reader on its own connection: WindowRepository.load reads snapshot + tail from the file each time.
        const reader = sqliteRuntime(file, options)
        const repository = await reader.runPromise(WindowRepository.WindowRepository)
        const started = performance.now()
        const figures = await compare(
          [
            {
              name: "ctxlog WindowRepository.load",
              op: async () => {
                const window = await reader.runPromise(repository.load("s"))
                if (window.history.length !== expected) {
                  throw new Error(`loaded ${window.history.length} of ${expected} messages`)
                }
              }
            },
            {
              name: "SELECT + JSON.parse",
              op: () => {
                if (raw.load("s").length !== version) throw new Error("short raw load")
              }
            }
          ],
          { warmup: 1, rounds, perRound: 1 }
        )
        done.push({ size, seconds: (figures[0]?.medianUs ?? 0) / 1e6 })
        out.push(
          ...rows(scenario, `${size} events`, "load", figures, {
            "SELECT + JSON.parse": `measured in ${Math.round((performance.now() - started) / 1000)} s`
          })
        )
        await runtimeClose(reader)
        raw.close()
      }
    }
    return out
  }
}

// ---------------------------------------------------------------------------------------------------

/** Window loads (store reads: `read`, `version`, and the repository's loads) and appends, as a counting layer counts them. */
interface StoreCounts {
  reads: number
  appends: number
}

/** ctxlog's services on one SQLite file, with the event log and the window repository counted (test doubles of our own services, as Layers). */
const countedSqliteLayer = (filename: string, counts: StoreCounts) => {
  const store = SqliteEventLog.layer({ filename, durability: "normal" })
  const countedLog = Layer.effect(
    EventLog.EventLog,
    Effect.map(EventLog.EventLog, (log) => ({
      ...log,
      append: (...args: Parameters<typeof log.append>) =>
        Effect.suspend(() => {
          counts.appends++
          return log.append(...args)
        }),
      read: (...args: Parameters<typeof log.read>) =>
        Stream.suspend(() => {
          counts.reads++
          return log.read(...args)
        }),
      version: (...args: Parameters<typeof log.version>) =>
        Effect.suspend(() => {
          counts.reads++
          return log.version(...args)
        })
    }))
  )
  const countedRepository = Layer.effect(
    WindowRepository.WindowRepository,
    Effect.map(WindowRepository.WindowRepository, (repository) => ({
      ...repository,
      load: (stream: string) =>
        Effect.suspend(() => {
          counts.reads++
          return repository.load(stream)
        }),
      loadHeld: (stream: string) =>
        Effect.suspend(() => {
          counts.reads++
          return repository.loadHeld(stream)
        })
    }))
  )
  return ContextService.layer().pipe(
    Layer.provideMerge(FullTextRecall.layer()),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7)),
    Layer.provideMerge(Layer.merge(countedLog, countedRepository)),
    Layer.provideMerge(store)
  )
}

// The agent's policy shape (recall, tiers, seams, deferred summaries, subgoals) over a window far
// above the history: every stage runs its checks and finds nothing to do, so the size holds.
const turnWindow = 50_000_000
export const turnPolicy: Policy.Policy = {
  builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: turnWindow, maxOutputTokens: 4096 },
  render: {
    tools: [{ name: "read_file", description: "Read a file", inputSchema: { type: "object" } }],
    turnReminder: "Stay in the workspace.",
    maxOutputTokens: 4096
  },
  compaction: {
    softThreshold: 0.7,
    hardThreshold: 0.85,
    proactiveThreshold: 0.66,
    targetRatio: 0.45,
    calibrate: false
  },
  seams: { level1: 0.74, level2: 0.79, level3: 0.83, verbatimWindow: 6 },
  recall: { recallShare: 0.04, crossSessionShare: 0.04, owner: "bench" },
  deferred: { cutoffShare: 0.3, minTokens: 400 },
  subgoals: "heuristic"
}

export const usage = { inputTokens: 1000, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 }
const toolOutput = (i: number) => prose(2000, i)

/** One user turn through the turn module: prepare, then render / complete for a tool call and for the answer. */
const moduleTurn = (i: number, mark: (step: string) => void = () => {}) =>
  Effect.gen(function* () {
    yield* Turn.prepare("s", { messages: [Message.user(`question ${i}: ${messageText(i)}`)] }, turnPolicy)
    mark("prepare")
    const first = yield* Turn.render("s", turnPolicy, { iteration: 0 })
    mark("render")
    yield* Turn.complete(
      "s",
      {
        answer: [Message.text("Reading it."), Message.toolCall(`call_${i}`, "read_file", { path: "a.txt" })],
        results: [Message.toolResult(`call_${i}`, toolOutput(i))],
        usage,
        estimatedInputTokens: first.built.stats.total,
        endTurn: false
      },
      turnPolicy
    )
    mark("complete")
    const second = yield* Turn.render("s", turnPolicy, { iteration: 1 })
    mark("render")
    yield* Turn.complete(
      "s",
      {
        answer: [Message.text(`answer ${i}: ${messageText(i + 1)}`)],
        usage,
        estimatedInputTokens: second.built.stats.total,
        endTurn: true
      },
      turnPolicy
    )
    mark("complete")
  })

/**
 * The same user turn as the agent loop ran it before the turn module (`git show 4c52786:apps/agent/src/Agent.ts`):
 * the same context operations in the same order, each its own load and append.
 */
const oldLoopTurn = (i: number) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const budget = Budget.available(Turn.budget(turnPolicy))
    const tiered = Policy.tieredOf(turnPolicy, Turn.budget(turnPolicy))
    if (tiered === undefined) return yield* Effect.die("no tiers")
    const builder = CtxBuilder.forProvider(turnPolicy.builder)
    const options = Policy.buildOptions(turnPolicy)
    const target = { provider: "anthropic", model: "claude-sonnet-4-5" }
    const host = yield* SeamHost.make(
      yield* SeamConfig.make({
        thresholds: {
          level1: Math.floor(budget * 0.74),
          level2: Math.floor(budget * 0.79),
          level3: Math.floor(budget * 0.83)
        },
        verbatimWindow: 6
      })
    )
    const text = `question ${i}: ${messageText(i)}`
    yield* ctx.load("s")
    yield* ContextAssembly.prepareContext("s", text, {
      budgets: { recall: Math.floor(budget * 0.04), graphFacts: 0 },
      owner: "bench",
      dedupe: true
    })
    yield* ctx.injectCrossSessionContext("s", text, Math.floor(budget * 0.04), "bench")
    yield* ctx.appendMessages("s", [Message.user(text)])
    yield* TieredCompaction.maybeCompact("s", tiered)
    for (let iteration = 0; iteration < 2; iteration++) {
      if (iteration > 0) {
        const soft = yield* TieredCompaction.maybeSoftCompactMidIteration("s", tiered)
        if (TieredCompaction.pressure(soft.window, tiered) === "Hard")
          yield* ctx.trimToBudget("s", Math.floor(budget * 0.7))
      }
      let window = (yield* host.run("s", {})).window
      if (window.tokens.total > budget) window = (yield* ctx.trimToBudget("s", budget)).window
      const built = builder.build(window, options)
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      yield* RenderRecord.recordRender("s", built.right, target)
      yield* RenderRecord.recordUsage("s", usage, built.right.stats.total, target)
      const parts =
        iteration === 0
          ? [Message.text("Reading it."), Message.toolCall(`old_${i}`, "read_file", { path: "a.txt" })]
          : [Message.text(`answer ${i}: ${messageText(i + 1)}`)]
      yield* ctx.appendMessages("s", [{ role: "assistant", parts }])
      // refreshSubgoals: a load, and setSubgoals when the plan changed.
      const loaded = yield* ctx.load("s")
      const next = yield* TaskGoalRefresh.heuristicExtractor.subgoals(
        loaded.history.slice(-6),
        loaded.taskState.subgoals
      )
      if (next.join("\n") !== loaded.taskState.subgoals.join("\n")) yield* ctx.setSubgoals("s", next)
      if (iteration > 0) break
      yield* ctx.appendMessages("s", [{ role: "tool", parts: [Message.toolResult(`old_${i}`, toolOutput(i))] }])
      yield* DeferredSummaries.maybeSummarizeToolPair("s", { cutoffTokens: Math.max(400, Math.floor(budget * 0.3)) })
    }
    yield* ctx.load("s")
    yield* TieredCompaction.maybeProactiveCompress("s", tiered, { inputTokens: usage.inputTokens })
    yield* ctx.completeTurn("s")
  })

const turnScenario: Scenario = {
  name: "turn",
  describe:
    "one agent user turn through @ctxlog/turn (prepare; render + complete for a tool call; render + complete for the answer: two model calls) at N history messages, against the loop the agent ran before the module and a plain array + SQLite loop; with window loads and appends per model call",
  run: async (run) => {
    const sizes = run.sizes("TURN_SIZES", [100, 2000], [100, 2000, 10000])
    // A turn takes a few milliseconds and its rounds spread ±60–150% (garbage collection, the event loop):
    // five rounds could not tell 1.2x from 1.6x. Forty cost well under a second at 2k.
    const rounds = run.size("TURN_ROUNDS", 30, 40)
    const out: Array<Row> = []
    const done: Array<{ size: number; seconds: number }> = []
    for (const size of sizes) {
      const projected = projectS(done, size) * (rounds + 8)
      if (projected > run.budgetS) {
        out.push(
          noteRow(
            "one turn",
            `${size} messages`,
            "skipped",
            `projected ${Math.round(projected)} s > budget ${run.budgetS} s`
          )
        )
        continue
      }
      const dir = tempDir("turn")
      const counts: StoreCounts = { reads: 0, appends: 0 }
      const runtime = ManagedRuntime.make(
        Layer.succeed(Compactor.Compactor, TemplateCompactor.make()).pipe(
          Layer.provideMerge(countedSqliteLayer(join(dir, "ctxlog.db"), counts))
        )
      )
      const ctx = await runtime.runPromise(ContextService.ContextService)
      const raw = rawSqlite(join(dir, "raw.db"))
      const history: Array<{ role: string; content: string }> = []
      for (let at = 0; at < size; at += 500) {
        const inputs = Array.from({ length: Math.min(500, size - at) }, (_, k) => messageInput(at + k))
        await runtime.runPromise(ctx.appendMessages("s", inputs))
        const events = Array.from({ length: inputs.length }, (_, k) => messageEvent(at + k))
        raw.append("s", events)
        for (const event of events) {
          if (event._tag === "MessageAppended") {
            const part = event.message.parts[0]
            history.push({ role: event.message.role, content: part?.type === "text" ? part.text : "" })
          }
        }
      }
      // Loads and appends of one user turn (two model calls), each way, counted once before the timings.
      const countTurn = async (turn: () => Promise<unknown>) => {
        counts.reads = 0
        counts.appends = 0
        await turn()
        return { reads: counts.reads / 2, appends: counts.appends / 2 }
      }
      // A turn in steady state is counted: the process's first step on a stream also reads back the policy
      // the stream last recorded (a version and up to eight reads of 32 events, once per process and
      // stream: `Turn.policyLookback`), which the warm-up turn pays.
      await runtime.runPromise(moduleTurn(999_999))
      // Per step: loads/appends since the previous step (prepare, then render and complete per model call).
      const steps: Array<string> = []
      const perCallModule = await countTurn(() =>
        runtime.runPromise(
          moduleTurn(1_000_000, (step) => {
            const last = steps.reduce(
              (sum, entry) => {
                const [, r, a] = /(\d+)\/(\d+)$/.exec(entry) ?? []
                return { reads: sum.reads + Number(r), appends: sum.appends + Number(a) }
              },
              { reads: 0, appends: 0 }
            )
            steps.push(`${step} ${counts.reads - last.reads}/${counts.appends - last.appends}`)
          })
        )
      )
      const perCallOld = await countTurn(() => runtime.runPromise(oldLoopTurn(1_000_001)))
      const figures = await compare(
        [
          { name: "ctxlog turn module", op: (i) => runtime.runPromise(moduleTurn(i)) },
          { name: "agent loop before the module", op: (i) => runtime.runPromise(oldLoopTurn(i)) },
          {
            name: "plain array + SQLite",
            op: (i) => {
              const text = `question ${i}: ${messageText(i)}`
              const turn = [
                { role: "user", content: text },
                { role: "assistant", content: `Reading it. read_file call_${i}` },
                { role: "tool", content: toolOutput(i) },
                { role: "assistant", content: `answer ${i}: ${messageText(i + 1)}` }
              ]
              for (const [k, message] of turn.entries()) {
                raw.append("s", [messageEvent(4 * i + size + k)])
                history.push(message)
                if (k === 0 || k === 2) {
                  const request = {
                    model: "claude-sonnet-4-5",
                    max_tokens: 4096,
                    messages: history.map((m) => ({ ...m }))
                  }
                  createHash("sha256").update(JSON.stringify(request)).digest("hex")
                }
              }
            }
          }
        ],
        { warmup: 5, rounds, perRound: 1 }
      )
      done.push({ size, seconds: (figures[0]?.medianUs ?? 0) / 1e6 })
      out.push(
        ...rows("one turn", `${size} messages`, "turn (2 model calls)", figures, {
          "ctxlog turn module": `per model call: ${perCallModule.reads} loads, ${perCallModule.appends} appends (loads/appends per step: ${steps.join(", ")})`,
          "agent loop before the module": `per model call: ${perCallOld.reads} loads, ${perCallOld.appends} appends`
        })
      )
      raw.close()
      await runtimeClose(runtime)
    }
    return out
  }
}

const messageText = (i: number): string => {
  const part = messageInput(i).parts[0]
  return part?.type === "text" ? part.text : ""
}

// ---------------------------------------------------------------------------------------------------

const loadTranscripts = (): ReadonlyArray<{ name: string; inputs: ReadonlyArray<Message.MessageInput> }> => {
  const dir = transcriptsDir()
  return readdirSync(dir)
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => ({
      name,
      inputs: Effect.runSync(Transcript.fromTranscriptJson(JSON.parse(readFileSync(join(dir, name), "utf8"))))
    }))
}

const trimScenario: Scenario = {
  name: "trim",
  describe: "trim a real transcript's history to half its tokens: Decide.trimPlan vs @langchain/core trimMessages",
  run: async (run) => {
    const { trimMessages, HumanMessage, AIMessage, ToolMessage, SystemMessage } = await import(
      "@langchain/core/messages"
    )
    const counter = TokenCounter.gpt()
    const transcripts = loadTranscripts()
    const largest = [...transcripts].sort((a, b) => b.inputs.length - a.inputs.length)[0]
    if (largest === undefined) return [noteRow("trim", "", "skipped", `no transcripts in ${transcriptsDir()}`)]
    const history: Array<Message.Message> = largest.inputs.map((input, index) => ({
      id: `m${index}`,
      role: input.role,
      kind: "chat",
      parts: input.parts,
      tokens: counter.countMessage(input)
    }))
    const window = Window.replay(
      history.map((message, index) => ({ _tag: "MessageAppended", id: `e${index}`, message }))
    )
    const budget = Math.floor(window.tokens.total / 2)
    const tokensOf = new WeakMap<object, number>()
    const lc = history.map((message) => {
      const text = message.parts
        .map((part) =>
          part.type === "text"
            ? part.text
            : part.type === "tool_result"
              ? JSON.stringify(part.content)
              : JSON.stringify(part)
        )
        .join("\n")
      const m =
        message.role === "user"
          ? new HumanMessage(text)
          : message.role === "assistant"
            ? new AIMessage(text)
            : message.role === "tool"
              ? new ToolMessage({ content: text, tool_call_id: message.id })
              : new SystemMessage(text)
      tokensOf.set(m, message.tokens)
      return m
    })
    // The same per-message token counts for both: trimming is timed, not tokenizing.
    const tokenCounter = (messages: ReadonlyArray<object>) =>
      messages.reduce((sum, m) => sum + (tokensOf.get(m) ?? 0), 0)
    const rounds = run.size("ROUNDS", 5, 10)
    const figures = await compare(
      [
        { name: "ctxlog Decide.trimPlan", op: () => Decide.trimPlan(window, budget) },
        {
          name: "@langchain/core trimMessages",
          op: () => trimMessages(lc, { maxTokens: budget, strategy: "last", tokenCounter, allowPartial: false })
        }
      ],
      { warmup: 10, rounds, perRound: run.size("TRIM_OPS", 50, 200) }
    )
    return rows("trim", `${history.length} messages (${largest.name})`, "trim", figures)
  }
}

const commonPrefix = (a: string, b: string): number => {
  let index = 0
  const n = Math.min(a.length, b.length)
  while (index < n && a.charCodeAt(index) === b.charCodeAt(index)) index++
  return index
}

const prefixScenario: Scenario = {
  name: "prefix",
  describe:
    "prompt-cache prefix reuse on fixtures/transcripts: share of each rendered request's bytes that is a byte-identical prefix of the previous render (ctxlog with maybeCompact at a 16k budget vs a sliding window dropping the oldest messages to the same budget)",
  run: async () => {
    const out: Array<Row> = []
    const budget = 16_000
    const builder = CtxBuilder.forProvider({ provider: "anthropic", model: "claude-sonnet-4-5" })
    const counter = TokenCounter.gpt()
    for (const transcript of loadTranscripts()) {
      const runtime = ManagedRuntime.make(
        Layer.mergeAll(Layer.succeed(Compactor.Compactor, TemplateCompactor.make()), TokenCounter.layerGpt()).pipe(
          Layer.provideMerge(ContextService.layerMemory())
        )
      )
      const ctx = await runtime.runPromise(ContextService.ContextService)
      let previous = ""
      let reused = 0
      let total = 0
      let naivePrevious = ""
      let naiveReused = 0
      let naiveTotal = 0
      const naive: Array<{ role: string; content: string; tokens: number }> = []
      // A request is rendered each time the model is asked: before each assistant message is appended.
      for (const [index, input] of transcript.inputs.entries()) {
        if (input.role !== "assistant" || index === 0) {
          await runtime.runPromise(ctx.appendMessages("t", [input]))
          naive.push({ role: input.role, content: JSON.stringify(input.parts), tokens: counter.countMessage(input) })
          continue
        }
        const result = await runtime.runPromise(TieredCompaction.maybeCompact("t", { budget }))
        const built = builder.build(result.window)
        if (Either.isRight(built)) {
          const bytes = JSON.stringify(built.right.request)
          if (previous !== "") {
            reused += commonPrefix(previous, bytes)
            total += bytes.length
          }
          previous = bytes
        }
        let tokens = naive.reduce((sum, m) => sum + m.tokens, 0)
        while (tokens > budget && naive.length > 1) tokens -= naive.shift()?.tokens ?? 0
        const naiveBytes = JSON.stringify(naive.map((m) => ({ role: m.role, content: m.content })))
        if (naivePrevious !== "") {
          naiveReused += commonPrefix(naivePrevious, naiveBytes)
          naiveTotal += naiveBytes.length
        }
        naivePrevious = naiveBytes
        await runtime.runPromise(ctx.appendMessages("t", [input]))
        naive.push({ role: input.role, content: JSON.stringify(input.parts), tokens: counter.countMessage(input) })
      }
      await runtimeClose(runtime)
      const share = (a: number, b: number) => (b === 0 ? "n/a" : `${((a / b) * 100).toFixed(1)}% of bytes reused`)
      out.push(
        noteRow("prefix reuse", transcript.name, "ctxlog (maybeCompact, Anthropic render)", share(reused, total))
      )
      out.push(noteRow("prefix reuse", transcript.name, "sliding window (drop oldest)", share(naiveReused, naiveTotal)))
    }
    return out
  }
}

const rssScenario: Scenario = {
  name: "rss",
  describe:
    "memory: heap held by a loaded N-message window vs the same rows as a plain array (SELECT + JSON.parse), and this run's peak RSS",
  run: async (run) => {
    const size = run.size("RSS_MESSAGES", 2000, 10000)
    const out: Array<Row> = []
    // With --expose-gc (the bench script passes it) the heap is collected before and after each measure.
    const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
    const held = async <A>(label: string, build: () => Promise<A>): Promise<A> => {
      gc()
      const before = process.memoryUsage()
      const value = await build()
      gc()
      const after = process.memoryUsage()
      const mib = (n: number) => (n / 1048576).toFixed(1)
      out.push(
        noteRow(
          "memory",
          `${size} messages`,
          label,
          `heap +${mib(after.heapUsed - before.heapUsed)} MiB, RSS +${mib(after.rss - before.rss)} MiB`
        )
      )
      return value
    }
    const dir = tempDir("rss")
    const writer = sqliteRuntime(join(dir, "ctxlog.db"))
    const log = await writer.runPromise(EventLog.EventLog)
    const repository = await writer.runPromise(WindowRepository.WindowRepository)
    const raw = rawSqlite(join(dir, "raw.db"))
    for (let at = 0; at < size; at += 1000) {
      const events = Array.from({ length: Math.min(1000, size - at) }, (_, k) => messageEvent(at + k))
      await writer.runPromise(log.append("s", events, at))
      raw.append("s", events)
    }
    const window = await held("ctxlog window (WindowRepository.load)", () => writer.runPromise(repository.load("s")))
    const array = await held("plain array (SELECT + JSON.parse)", async () => raw.load("s"))
    out.push(
      noteRow(
        "memory",
        "whole run",
        "bench process",
        `peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MiB`
      )
    )
    // Kept alive until here, so the measures above see them held.
    if (window.history.length !== size || array.length !== size) throw new Error("short load in the rss scenario")
    raw.close()
    await runtimeClose(writer)
    return out
  }
}

// ---------------------------------------------------------------------------------------------------

const inspectorDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "apps", "inspector")

const inspectorScenario: Scenario = {
  name: "inspector",
  describe:
    "the inspector's `window --at` near the end of a long stream: from the head snapshot vs a full replay from version 1 (apps/inspector/bench/windowAt.ts, in a child process)",
  run: async (run) => {
    const events = run.size("INSPECTOR_EVENTS", 20_000, 100_000)
    const child = spawnSync(process.execPath, ["--conditions=@ctxlog/source", "--import", "tsx", "bench/windowAt.ts"], {
      cwd: inspectorDir,
      env: { ...process.env, BENCH_EVENTS: String(events) },
      encoding: "utf8"
    })
    const rows: Array<Row> = []
    for (const line of child.stdout.split("\n")) {
      const timed = /^(window --at \d+ \((.+)\))\s+([\d.]+) ms$/.exec(line.trim())
      if (timed !== null)
        rows.push(noteRow("inspector window --at", `${events} events`, timed[2] ?? "", `${timed[3]} ms`))
      else if (line.startsWith("folded from"))
        rows.push(noteRow("inspector window --at", `${events} events`, "check", line))
    }
    if (child.status !== 0 || rows.length === 0) {
      rows.push(
        noteRow("inspector window --at", `${events} events`, "failed", child.stderr.trim().split("\n").at(-1) ?? "")
      )
    }
    return rows
  }
}

/** Issue 38: a policy sweep's replay rate and its scaling with worker threads (apps/inspector/bench/sweep.ts). */
const sweepScenario: Scenario = {
  name: "sweep",
  describe:
    "`ctxlog whatif --all` with 2 policies over BENCH_SWEEP_STREAMS streams (the fixtures' transcripts, repeated): replayed model calls/s per worker, 1 worker vs 2 (apps/inspector/bench/sweep.ts, in a child process)",
  run: async (run) => {
    const streams = run.size("SWEEP_STREAMS", 20, 200)
    const size = `${streams} streams x 2 policies`
    const child = spawnSync(process.execPath, ["--conditions=@ctxlog/source", "--import", "tsx", "bench/sweep.ts"], {
      cwd: inspectorDir,
      env: { ...process.env, BENCH_STREAMS: String(streams) },
      encoding: "utf8"
    })
    const rows: Array<Row> = []
    for (const line of child.stdout.split("\n")) {
      const timed = /^sweep .*, (\d+) workers: (.+)$/.exec(line.trim())
      if (timed !== null) rows.push(noteRow("sweep", size, `${timed[1]} worker(s)`, timed[2] ?? ""))
      else if (line.startsWith("scaling:")) rows.push(noteRow("sweep", size, "scaling", line.slice(9)))
    }
    if (child.status !== 0 || rows.length === 0) {
      rows.push(noteRow("sweep", size, "failed", child.stderr.trim().split("\n").at(-1) ?? ""))
    }
    return rows
  }
}

/** Every scenario, in run order. */
export const scenarios: ReadonlyArray<Scenario> = [
  appendScenario(1),
  appendScenario(100),
  appendMessagesScenario,
  postgresScenario,
  writersScenario,
  loadScenario,
  turnScenario,
  trimScenario,
  prefixScenario,
  rssScenario,
  inspectorScenario,
  sweepScenario,
  storageScenario,
  reloadScenario,
  langgraphScenario,
  langgraphDeltaScenario,
  mastraScenario
]

export { startServer }
