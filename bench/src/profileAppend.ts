/**
 * Profile the `append` scenario's ctxlog side: one event per `SqliteEventLog.append` (WAL, synchronous
 * NORMAL, recall index on), or `BATCH` events per call, against raw better-sqlite3:
 * `N=3000 BATCH=1 node --cpu-prof --import tsx src/profileAppend.ts` (after building the packages: a
 * profile of the built `dist` keeps line numbers, one of `--conditions=@ctxlog/source` loses them).
 * `MODE=messages` profiles the `append-messages` scenario's side instead: `ContextService.appendMessages`
 * of one message per call, and also times one `SqliteEventLog.append` of one event per call in the same
 * process, for the target's ratio (appendMessages against one append). `WINDOW=105` moves to a new stream
 * every 105 messages (the window of the `--quick` bench); `--cpu-prof-interval 100` samples finely enough.
 * `ALLOC=200` then measures the bytes allocated per call over 200 more calls of each kind: run with
 * `--expose-gc --min-semi-space-size=64 --max-semi-space-size=64` so that no collection runs while it
 * counts (the heap's growth is then what the calls allocated; it says so when one ran).
 */
import { join } from "node:path"
import { ContextService, EventLog } from "@ctxlog/core"
import { messageEvent, messageInput, rawSqlite, sqliteRuntime, tempDir } from "./stores.js"

const n = Number(process.env.N ?? 3000)
const batch = Number(process.env.BATCH ?? 1)
// ALLOC's calls append after the timed ones.
const events = Array.from({ length: (n + Number(process.env.ALLOC ?? 0)) * batch }, (_, i) => messageEvent(i))
const dir = tempDir("profile-append")
const runtime = sqliteRuntime(join(dir, "ctxlog.db"))
const log = await runtime.runPromise(EventLog.EventLog)
const ctx = await runtime.runPromise(ContextService.ContextService)
const messages = process.env.MODE === "messages"
// MODE=messages: WINDOW=105 starts a new stream every 105 messages, so the window grows only as far as
// in the `--quick` bench (0→105); unset, one stream grows to 2N messages (snapshots every 1,000 events).
const window = Number(process.env.WINDOW ?? 0)
const streamOf = (i: number) => (window > 0 ? `s${Math.floor(i / window)}` : "s")
const ours = (i: number) =>
  messages
    ? runtime.runPromise(ctx.appendMessages(streamOf(i), [messageInput(i)]))
    : runtime.runPromise(log.append("s", events.slice(i * batch, (i + 1) * batch), i * batch))
const raw = rawSqlite(join(dir, "raw.db"))
// MODE=messages: one append of one prepared event per call too, on its own stream of the same store.
const single = (i: number) => runtime.runPromise(log.append("single", events.slice(i, i + 1), i))
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
if (messages) {
  // Alternating with appendMessages, call by call, so that both run equally warm.
  let messagesUs = 0
  let messagesCpu = 0
  let oneUs = 0
  let oneCpu = 0
  const timed = async (op: () => Promise<unknown>): Promise<readonly [number, number]> => {
    const start = performance.now()
    const startCpu = process.cpuUsage()
    await op()
    return [performance.now() - start, cpuMs(process.cpuUsage(startCpu))]
  }
  // Per-call wall times too: on a loaded machine the means follow the tail (a WAL checkpoint, a GC pause,
  // another process), the medians what a call costs.
  const messagesCalls: Array<number> = []
  const oneCalls: Array<number> = []
  for (let i = 0; i < n; i++) {
    const [wall, used] = await timed(() => ours(n + i))
    const [oneWall, oneUsed] = await timed(() => single(i))
    if (i < half) continue
    messagesUs += wall
    messagesCpu += used
    oneUs += oneWall
    oneCpu += oneUsed
    messagesCalls.push(wall)
    oneCalls.push(oneWall)
  }
  const median = (calls: Array<number>) => calls.sort((a, b) => a - b)[Math.floor(calls.length / 2)] ?? Number.NaN
  console.log(
    `alternating: appendMessages ${((messagesUs / (n - half)) * 1000).toFixed(1)} µs (CPU ${((messagesCpu / (n - half)) * 1000).toFixed(1)}), one append ${((oneUs / (n - half)) * 1000).toFixed(1)} µs (CPU ${((oneCpu / (n - half)) * 1000).toFixed(1)}): ${(messagesUs / oneUs).toFixed(2)}x one append (CPU ${(messagesCpu / oneCpu).toFixed(2)}x); medians ${(median(messagesCalls) * 1000).toFixed(1)} vs ${(median(oneCalls) * 1000).toFixed(1)} µs: ${(median(messagesCalls) / median(oneCalls)).toFixed(2)}x`
  )
}
console.log(
  `${messages ? "appendMessages" : `${batch}/call`}: ctxlog ${(oursUs * 1000).toFixed(1)} µs/event, raw ${(theirs * 1000).toFixed(1)} µs/event (${(theirs / oursUs).toFixed(2)}x raw's speed); CPU ${(oursCpu * 1000).toFixed(1)} vs ${(theirsCpu * 1000).toFixed(1)} µs/event (${(theirsCpu / oursCpu).toFixed(2)}x)`
)
const allocCalls = Number(process.env.ALLOC ?? 0)
if (allocCalls > 0) {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("ALLOC needs --expose-gc")
  const { PerformanceObserver } = await import("node:perf_hooks")
  let collections = 0
  const observer = new PerformanceObserver((list) => {
    collections += list.getEntries().length
  })
  observer.observe({ entryTypes: ["gc"] })
  // Bytes allocated per call of `op`, over `allocCalls` calls after a full collection.
  const allocated = async (label: string, op: (i: number) => Promise<unknown>, start: number) => {
    gc()
    await new Promise((resolve) => setTimeout(resolve, 10))
    collections = 0
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < allocCalls; i++) await op(start + i)
    const after = process.memoryUsage().heapUsed
    await new Promise((resolve) => setTimeout(resolve, 10))
    console.log(
      `allocated: ${label} ${((after - before) / allocCalls / 1024).toFixed(1)} KB/call${collections > 0 ? ` (${collections} collections ran: under-counted)` : ""}`
    )
  }
  const base = messages ? 2 * n : n
  await allocated(messages ? "appendMessages of one" : `append of ${batch}`, ours, base)
  if (messages) await allocated("one append of one", (i) => single(i), n)
  observer.disconnect()
}
raw.close()
await runtime.dispose()
