// Two scenarios about a whole conversation on disk: how many bytes it takes (the database and what each
// turn writes), and how long a freshly opened store takes to give its window back.
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { ContextService, Message } from "@ctxlog/core"
import { RecallIndex } from "@ctxlog/memory"
import BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { compare, noteRow, type Row, rows } from "./harness.js"
import type { Scenario } from "./scenarios.js"
import { messageEvent, messageInput, rawSqlite, sqliteLayer, tempDir } from "./stores.js"

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

/** The size of a SQLite database after a checkpoint that empties its WAL, by table/index (dbstat). */
const databaseBytes = (file: string): { readonly total: number; readonly parts: ReadonlyArray<[string, number]> } => {
  const db = new BetterSqlite3(file)
  db.pragma("wal_checkpoint(TRUNCATE)")
  const parts = db
    .prepare<[], { name: string; bytes: number }>(
      "select name, sum(pgsize) as bytes from dbstat group by name order by bytes desc"
    )
    .all()
  db.close()
  return { total: statSync(file).size, parts: parts.map((part) => [part.name, part.bytes]) }
}

const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`

/** Fill a ctxlog stream and a raw one with `size` messages as the ContextService appends them (500 a call). */
const fill = async (
  runtime: ManagedRuntime.ManagedRuntime<ContextService.ContextService, unknown>,
  raw: ReturnType<typeof rawSqlite>,
  stream: string,
  size: number
): Promise<number> => {
  const ctx = await runtime.runPromise(ContextService.ContextService)
  let json = 0
  for (let at = 0; at < size; at += 500) {
    const inputs = Array.from({ length: Math.min(500, size - at) }, (_, k) => messageInput(at + k))
    const { window } = await runtime.runPromise(ctx.appendMessages(stream, inputs))
    for (const message of window.history.slice(-inputs.length)) json += JSON.stringify(message).length
    raw.append(
      stream,
      inputs.map((_, k) => messageEvent(at + k))
    )
  }
  return json
}

export const storageScenario: Scenario = {
  name: "storage",
  describe:
    "bytes on disk: N conversations of M messages (ContextService, default snapshots, recall index caught up) vs the raw table of the same rows, and bytes written per turn (2 messages)",
  run: async (run) => {
    const conversations = run.size("STORAGE_CONVERSATIONS", 2, 5)
    const messages = run.size("STORAGE_MESSAGES", 2000, 10000)
    const turns = run.size("STORAGE_TURNS", 500, 500)
    const dir = tempDir("storage")
    const file = join(dir, "ctxlog.db")
    const runtime = ManagedRuntime.make(sqliteLayer(file))
    const raw = rawSqlite(join(dir, "raw.db"))
    let json = 0
    for (let c = 0; c < conversations; c++) json += await fill(runtime, raw, `c${c}`, messages)
    // Bytes written per turn, each subject on its own (write counts cannot be interleaved). A turn's bytes
    // are its WAL frames plus its share of what the checkpoints copy into the database file, and every so
    // often a snapshot (ctxlog: every 1,000 events by default). So each subject starts from an empty WAL,
    // runs enough turns to go through its periodic writes (500 turns = 1,000 events: one snapshot cycle),
    // and ends with a checkpoint of its WAL, counted: the mean then holds every periodic write in
    // proportion, not one checkpoint that happened to fall inside a short run (50 turns measured 1.96x
    // where the steady state is ~1.2x: one auto-checkpoint of ctxlog's WAL, none of raw's).
    const ctx = await runtime.runPromise(ContextService.ContextService)
    // The filling's recall backlog (up to two batches) is indexed first: a turn is measured in steady state.
    await runtime.runPromise(Effect.flatMap(RecallIndex.RecallIndex, (index) => index.catchUp()))
    const checkpoint = (database: string) => {
      const db = new BetterSqlite3(database)
      db.pragma("wal_checkpoint(TRUNCATE)")
      db.close()
    }
    const perTurn = async (
      database: string,
      op: (i: number) => Promise<unknown> | unknown
    ): Promise<{ readonly mean: number; readonly median: number } | undefined> => {
      checkpoint(database)
      const each: Array<number> = []
      const start = writtenBytes()
      for (let i = 0; i < turns; i++) {
        const before = writtenBytes()
        await op(i)
        const after = writtenBytes()
        if (before !== undefined && after !== undefined) each.push(after - before)
      }
      checkpoint(database)
      const end = writtenBytes()
      if (start === undefined || end === undefined) return undefined
      const sorted = each.sort((a, b) => a - b)
      return { mean: (end - start) / turns, median: sorted[Math.floor(sorted.length / 2)] ?? 0 }
    }
    const ctxlogTurn = await perTurn(file, (i) =>
      runtime.runPromise(
        ctx.appendMessages("c0", [
          Message.user(`question ${i}: ${messageText(2 * i)}`),
          Message.assistant(`answer ${i}: ${messageText(2 * i + 1)}`)
        ])
      )
    )
    const rawTurn = await perTurn(join(dir, "raw.db"), (i) =>
      raw.append("c0", [messageEvent(2 * i), messageEvent(2 * i + 1)])
    )
    // The recall index catches up before a query: ask one so it holds every message.
    await runtime.runPromise(
      Effect.flatMap(RecallIndex.RecallIndex, (index) =>
        index.search({ scope: { _tag: "Stream", stream: "c0" }, query: "agent" })
      )
    )
    await runtime.dispose()
    raw.close()
    const ctxlog = databaseBytes(file)
    const plain = databaseBytes(join(dir, "raw.db"))
    const size = `${conversations} × ${messages} messages`
    const out: Array<Row> = [
      noteRow(
        "storage",
        size,
        "ctxlog database",
        `${mib(ctxlog.total)} (${(ctxlog.total / json).toFixed(2)}x the messages' JSON, ${mib(json)}): ${ctxlog.parts
          .slice(0, 6)
          .map(([name, bytes]) => `${name} ${mib(bytes)}`)
          .join(", ")}`
      ),
      noteRow(
        "storage",
        size,
        "raw table",
        `${mib(plain.total)}; ctxlog / raw ${(ctxlog.total / plain.total).toFixed(2)}x`
      )
    ]
    if (ctxlogTurn !== undefined && rawTurn !== undefined) {
      out.push(
        noteRow(
          "bytes per turn",
          `2 messages at ${messages}`,
          "ctxlog appendMessages",
          `${kib(ctxlogTurn.mean)} written (mean of ${turns} turns and the checkpoints; the median turn ${kib(ctxlogTurn.median)})`
        ),
        noteRow(
          "bytes per turn",
          `2 messages at ${messages}`,
          "raw insert",
          `${kib(rawTurn.mean)} written (median turn ${kib(rawTurn.median)}); ctxlog / raw ${(ctxlogTurn.mean / rawTurn.mean).toFixed(2)}x`
        )
      )
    }
    return out
  }
}

const messageText = (i: number): string => {
  const part = messageInput(i).parts[0]
  return part?.type === "text" ? part.text : ""
}

/** Reloads averaged in one round of the reload scenario: ten at 100 messages, five at 1k, one at 10k. */
const perRound = (size: number): number => Math.max(1, Math.min(10, Math.floor(5000 / size)))

export const reloadScenario: Scenario = {
  name: "reload",
  describe:
    "reload a conversation of N messages from a freshly opened store (open, load the window, close) vs opening the file and SELECT + JSON.parse of its rows",
  run: async (run) => {
    const sizes = run.sizes("RELOAD_SIZES", [100, 1000], [100, 1000, 10000])
    const rounds = run.size("RELOAD_ROUNDS", 10, 15)
    const out: Array<Row> = []
    for (const size of sizes) {
      const dir = tempDir("reload")
      const file = join(dir, "ctxlog.db")
      const rawFile = join(dir, "raw.db")
      const writer = ManagedRuntime.make(sqliteLayer(file))
      const raw = rawSqlite(rawFile)
      await fill(writer, raw, "s", size)
      await writer.dispose()
      raw.close()
      const figures = await compare(
        [
          {
            name: "ctxlog open + ContextService.load",
            op: async () => {
              const runtime = ManagedRuntime.make(sqliteLayer(file))
              const window = await runtime.runPromise(
                Effect.flatMap(ContextService.ContextService, (service) => service.load("s"))
              )
              if (window.history.length !== size) throw new Error(`reloaded ${window.history.length} of ${size}`)
              await runtime.dispose()
            }
          },
          {
            name: "open + SELECT + JSON.parse",
            op: () => {
              const again = rawSqlite(rawFile)
              if (again.load("s").length !== size) throw new Error("short raw load")
              again.close()
            }
          }
        ],
        // A small reload takes a few milliseconds: one warm-up and single-reload rounds measured mostly
        // unoptimised code and one garbage collection more or less (spreads of ±60–90%). Warm both subjects
        // up and average a few reloads per round, as a process that reloads conversations runs.
        { warmup: 2 * perRound(size), rounds, perRound: perRound(size) }
      )
      out.push(...rows("reload", `${size} messages`, "reload", figures))
    }
    return out
  }
}
