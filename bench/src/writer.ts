// One writer process of the `writers` scenario: waits for the common start instant, appends one message
// per call to its own stream for the given time, and prints how many appends it made.
//   writer.ts <ctxlog-sqlite|raw-sqlite|ctxlog-pg|raw-pg> <file or url> <stream> <startAt ms> <duration ms>
import { ContextService } from "@ctxlog/core"
import { messageEvent, messageInput, postgresRuntime, rawPostgres, rawSqlite, sqliteRuntime } from "./stores.js"

const [mode, target, stream, startAtArg, durationArg] = process.argv.slice(2)
if (
  mode === undefined ||
  target === undefined ||
  stream === undefined ||
  startAtArg === undefined ||
  durationArg === undefined
) {
  console.error("usage: writer.ts <mode> <file or url> <stream> <startAt ms> <duration ms>")
  process.exit(2)
}
const startAt = Number(startAtArg)
const duration = Number(durationArg)

const until = async (instant: number) => {
  const wait = instant - Date.now()
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
}

const loop = async (append: (i: number) => Promise<void> | void): Promise<number> => {
  await until(startAt)
  const end = startAt + duration
  let count = 0
  while (Date.now() < end) {
    await append(count)
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
