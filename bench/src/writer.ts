// One writer process of the `writers` scenario: opens its store, makes `warmup` appends (the JIT compiles
// the append path: a process that starts cold spends most of a short run compiling, and four processes
// each make a quarter of one's appends, so the cold start weighed four times as much per append), prints
// "ready", waits for "go" on stdin (all writers start at once), appends one message per call to its own
// stream for the given time, and prints how many appends it made.
//   writer.ts <ctxlog-sqlite|raw-sqlite|ctxlog-pg|raw-pg> <file or url> <stream> <duration ms> [warmup]
import { ContextService } from "@ctxlog/core"
import { messageEvent, messageInput, postgresRuntime, rawPostgres, rawSqlite, sqliteRuntime } from "./stores.js"

const [mode, target, stream, durationArg, warmupArg] = process.argv.slice(2)
if (mode === undefined || target === undefined || stream === undefined || durationArg === undefined) {
  console.error("usage: writer.ts <mode> <file or url> <stream> <duration ms>")
  process.exit(2)
}
const duration = Number(durationArg)
const warmup = Number(warmupArg ?? 0)

/** Says "ready" and resolves on "go" from stdin: all writers start at once, after their start-up. */
const go = (): Promise<void> =>
  new Promise((resolve) => {
    console.log("ready")
    let input = ""
    process.stdin.on("data", (chunk: Buffer) => {
      input += chunk.toString()
      if (input.includes("go")) resolve()
    })
  })

const loop = async (append: (i: number) => Promise<void> | void): Promise<number> => {
  for (let i = 0; i < warmup; i++) await append(i)
  await go()
  const end = Date.now() + duration
  let count = 0
  while (Date.now() < end) {
    await append(warmup + count)
    count++
  }
  return count
}

// The same durability for both SQLite writers: synchronous=FULL, the library's default.
let count = 0
switch (mode) {
  case "ctxlog-sqlite":
  case "ctxlog-pg": {
    const runtime =
      mode === "ctxlog-sqlite"
        ? sqliteRuntime(target, { durability: "full", busyTimeoutMs: 60_000 })
        : postgresRuntime(target)
    const ctx = await runtime.runPromise(ContextService.ContextService)
    await runtime.runPromise(ctx.load(stream))
    count = await loop(async (i) => {
      await runtime.runPromise(ctx.appendMessages(stream, [messageInput(i)]))
    })
    await runtime.dispose()
    break
  }
  case "raw-sqlite": {
    const raw = rawSqlite(target, "FULL")
    raw.db.pragma("busy_timeout = 60000")
    count = await loop((i) => raw.append(stream, [messageEvent(i)]))
    raw.close()
    break
  }
  case "raw-pg": {
    const raw = await rawPostgres(target)
    count = await loop((i) => raw.append(stream, [messageEvent(i)]))
    await raw.close()
    break
  }
  default:
    console.error(`unknown mode ${mode}`)
    process.exit(2)
}
console.log(count)
