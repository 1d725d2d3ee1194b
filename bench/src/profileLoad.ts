/**
 * Profile the `load` scenario's ctxlog side without snapshots: `WindowRepository.load` of a stream of
 * SIZE events replayed from the first one:
 * `SIZE=10000 ROUNDS=10 node --cpu-prof --conditions=@ctxlog/source --import tsx src/profileLoad.ts`.
 */
import { join } from "node:path"
import { EventLog, WindowRepository } from "@ctxlog/core"
import { messageEvent, sqliteRuntime, tempDir } from "./stores.js"

const size = Number(process.env.SIZE ?? 10_000)
const rounds = Number(process.env.ROUNDS ?? 10)
const file = join(tempDir("profile-load"), "ctxlog.db")
const writer = sqliteRuntime(file, { snapshotEvery: 0 })
const log = await writer.runPromise(EventLog.EventLog)
for (let at = 0; at < size; at += 1000) {
  await writer.runPromise(
    log.append(
      "s",
      Array.from({ length: Math.min(1000, size - at) }, (_, k) => messageEvent(at + k)),
      at
    )
  )
}
await writer.dispose()
const reader = sqliteRuntime(file, { snapshotEvery: 0 })
const repository = await reader.runPromise(WindowRepository.WindowRepository)
let cpu = 0
let wall = 0
for (let round = 0; round <= rounds; round++) {
  const c = process.cpuUsage()
  const t = performance.now()
  const window = await reader.runPromise(repository.load("s"))
  if (window.history.length !== size) throw new Error(`loaded ${window.history.length} of ${size}`)
  const used = process.cpuUsage(c)
  if (round > 0) {
    wall += performance.now() - t
    cpu += (used.user + used.system) / 1000
  }
}
console.log(`load of ${size} events: ${(wall / rounds).toFixed(1)} ms wall, ${(cpu / rounds).toFixed(1)} ms CPU`)
await reader.dispose()
