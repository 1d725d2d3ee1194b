/**
 * Profile the `append` scenario's ctxlog side: one event per `SqliteEventLog.append` (WAL, synchronous
 * NORMAL, recall index on), or `BATCH` events per call:
 * `N=3000 BATCH=1 node --cpu-prof --conditions=@ctxlog/source --import tsx src/profileAppend.ts`.
 * `MODE=messages` profiles the `append-messages` scenario's side instead: `ContextService.appendMessages`
 * of one message per call.
 */
import { join } from "node:path"
import { ContextService, EventLog } from "@ctxlog/core"
import { messageEvent, messageInput, rawSqlite, sqliteRuntime, tempDir } from "./stores.js"

const n = Number(process.env.N ?? 3000)
const batch = Number(process.env.BATCH ?? 1)
const events = Array.from({ length: n * batch }, (_, i) => messageEvent(i))
const dir = tempDir("profile-append")
const runtime = sqliteRuntime(join(dir, "ctxlog.db"))
const log = await runtime.runPromise(EventLog.EventLog)
const ctx = await runtime.runPromise(ContextService.ContextService)
const messages = process.env.MODE === "messages"
const ours = (i: number) =>
  messages
    ? runtime.runPromise(ctx.appendMessages("s", [messageInput(i)]))
    : runtime.runPromise(log.append("s", events.slice(i * batch, (i + 1) * batch), i * batch))
const raw = rawSqlite(join(dir, "raw.db"))
const half = Math.floor(n / 2)
// Warm both, then time the second half of each.
for (let i = 0; i < half; i++) {
  await ours(i)
  raw.append("s", events.slice(i * batch, (i + 1) * batch))
}
const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000
let t = performance.now()
let cpu = process.cpuUsage()
for (let i = half; i < n; i++) await ours(i)
const oursUs = (performance.now() - t) / (n - half) / batch
const oursCpu = cpuMs(process.cpuUsage(cpu)) / (n - half) / batch
t = performance.now()
cpu = process.cpuUsage()
for (let i = half; i < n; i++) raw.append("s", events.slice(i * batch, (i + 1) * batch))
const theirs = (performance.now() - t) / (n - half) / batch
const theirsCpu = cpuMs(process.cpuUsage(cpu)) / (n - half) / batch
console.log(
  `${messages ? "appendMessages" : `${batch}/call`}: ctxlog ${(oursUs * 1000).toFixed(1)} µs/event, raw ${(theirs * 1000).toFixed(1)} µs/event (${(theirs / oursUs).toFixed(2)}x raw's speed); CPU ${(oursCpu * 1000).toFixed(1)} vs ${(theirsCpu * 1000).toFixed(1)} µs/event (${(theirsCpu / oursCpu).toFixed(2)}x)`
)
raw.close()
await runtime.dispose()
