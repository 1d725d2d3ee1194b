/**
 * Profile one `writers (PostgreSQL)` writer: `ContextService.appendMessages` of one message per call on its
 * own stream (what `writer.ts` does), `EventLog.append` of one prepared event per call, and raw pg's
 * transaction on the same rows; each one's wall time and CPU per append, in this process and in the
 * server (its backends' CPU, from /proc: with four writers and the server on two cores, the CPU of both
 * bounds the throughput). Starts a throwaway server (fsync on) unless CTXLOG_BENCH_PG_URL is set.
 *   `N=2000 node --conditions=@ctxlog/source --import tsx src/profilePgAppend.ts`
 *   `MODE=messages|append|call|raw` runs only that one (e.g. under `--cpu-prof`); `RECALL_BATCH=n` sets the
 *   store's `recallBatch` (a huge one: no recall catch-up during the run).
 */
import { readdirSync, readFileSync } from "node:fs"
import { ContextService, EventLog } from "@ctxlog/core"
import pg from "pg"
import { startServer } from "./postgres.js"
import { messageEvent, messageInput, postgresRuntime, rawPostgres } from "./stores.js"

const n = Number(process.env.N ?? 2000)
const only = process.env.MODE
const storeOptions = process.env.RECALL_BATCH === undefined ? {} : { recallBatch: Number(process.env.RECALL_BATCH) }
const server = await startServer()
if (typeof server === "string") {
  console.error(server)
  process.exit(1)
}

const ticks = 100 // USER_HZ: /proc/<pid>/stat counts CPU in 1/100 s
/** CPU ms of the server: the postmaster's live children, plus the ones it has reaped. */
const postmaster = await (async () => {
  const client = new pg.Client({ connectionString: server.adminUrl })
  await client.connect()
  const backend = Number((await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]?.pid)
  const stat = readFileSync(`/proc/${backend}/stat`, "utf8")
  await client.end()
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
})()
const fields = (pid: number | string): Array<string> | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    return undefined
  }
}
const serverCpuMs = (): number => {
  let total = 0
  const own = fields(postmaster)
  // utime, stime, cutime, cstime: fields 14-17 (indexes 11-14 after the name)
  if (own !== undefined) total += [11, 12, 13, 14].reduce((sum, i) => sum + Number(own[i]), 0)
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const f = fields(entry)
    if (f === undefined || Number(f[1]) !== postmaster) continue
    total += Number(f[11]) + Number(f[12])
  }
  return (total * 1000) / ticks
}

const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000
const measure = async (
  label: string,
  open: () => Promise<{ op: (i: number) => Promise<unknown>; close: () => Promise<void> }>
) => {
  const { op, close } = await open()
  const half = Math.floor(n / 2)
  for (let i = 0; i < half; i++) await op(i)
  const t = performance.now()
  const cpu = process.cpuUsage()
  const serverStart = serverCpuMs()
  for (let i = half; i < n; i++) await op(i)
  const wall = (performance.now() - t) / (n - half)
  const used = cpuMs(process.cpuUsage(cpu)) / (n - half)
  await close() // the backends exit: their CPU is counted in the postmaster's reaped children
  await new Promise((resolve) => setTimeout(resolve, 200))
  const serverUsed = (serverCpuMs() - serverStart) / (n - half)
  console.log(
    `${label}: ${(wall * 1000).toFixed(0)} µs/append wall, CPU ${(used * 1000).toFixed(0)} µs/append in this process, ${(serverUsed * 1000).toFixed(0)} µs in the server`
  )
}

let k = 0
const run = async () => {
  if (only === undefined || only === "messages") {
    await measure("ContextService.appendMessages (1 message)", async () => {
      const runtime = postgresRuntime(await server.database(`profile_messages_${k++}`), storeOptions)
      const ctx = await runtime.runPromise(ContextService.ContextService)
      await runtime.runPromise(ctx.load("s"))
      return {
        op: (i) => runtime.runPromise(ctx.appendMessages("s", [messageInput(i)])),
        close: () => runtime.dispose()
      }
    })
  }
  if (only === undefined || only === "append") {
    await measure("EventLog.append (1 event)", async () => {
      const runtime = postgresRuntime(await server.database(`profile_append_${k++}`), storeOptions)
      const log = await runtime.runPromise(EventLog.EventLog)
      const events = Array.from({ length: n }, (_, i) => messageEvent(i))
      return {
        op: (i) => runtime.runPromise(log.append("s", events.slice(i, i + 1), i)),
        close: () => runtime.dispose()
      }
    })
  }
  if (only === undefined || only === "call") {
    // The floor of one ctxlog append: the store's own function call (migration 0011) through a pg pool,
    // with its parameters built beforehand (no validation, encoding, hashing or effects).
    await measure("pg pool: ctxlog_append call alone", async () => {
      const url = await server.database(`profile_call_${k++}`)
      const setup = postgresRuntime(url)
      await setup.runPromise(EventLog.EventLog)
      await setup.dispose()
      const pool = new pg.Pool({ connectionString: url, max: 10 })
      const events = Array.from({ length: n }, (_, i) => messageEvent(i))
      const text = `select last_position, version, head_hash, owner, located
        from ctxlog_append($1::text, $2::bigint, $3::text, $4::text, $5::text[], $6::text[], $7::int[], $8::text[], $9::text[],
                           $10::jsonb, $11::bigint, $12::text)`
      const head = (i: number) => (i === 0 ? "" : `${"0".repeat(60)}${String(i).padStart(4, "0")}`)
      return {
        op: async (i) => {
          const event = events[i]
          if (event === undefined) return
          const data = JSON.stringify(event)
          await pool.query({
            name: "call",
            text,
            values: [
              "s",
              i,
              head(i),
              null,
              [event.id],
              [event._tag],
              [1],
              [data],
              [head(i + 1)],
              JSON.stringify({ recordedAt: Date.now() }),
              Date.now(),
              head(i + 1)
            ]
          })
        },
        close: () => pool.end()
      }
    })
  }
  if (only === undefined || only === "raw") {
    await measure("raw pg (begin, head, insert, commit)", async () => {
      const raw = await rawPostgres(await server.database(`profile_raw_${k++}`))
      const events = Array.from({ length: n }, (_, i) => messageEvent(i))
      return { op: (i) => raw.append("s", events.slice(i, i + 1)), close: () => raw.close() }
    })
  }
}
try {
  await run()
} finally {
  server.stop()
}
