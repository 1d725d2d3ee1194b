/**
 * Profile reloading a small conversation from a freshly opened store (the `reload` scenario's ctxlog side):
 * `SIZE=100 ROUNDS=50 node --cpu-prof --conditions=@ctxlog/source --import tsx src/profileReload.ts`.
 * Prints the mean time of open, load and close, and the process's CPU time per reload (on a shared machine
 * steadier than the wall-clock figures; it counts V8's GC and zlib threads too).
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { messageInput, sqliteLayer } from "./stores.js"

const size = Number(process.env.SIZE ?? 100)
const rounds = Number(process.env.ROUNDS ?? 50)
const file = join(mkdtempSync(join(tmpdir(), "ctxlog-reload-")), "ctxlog.db")

const writer = ManagedRuntime.make(sqliteLayer(file))
await writer.runPromise(
  Effect.flatMap(ContextService.ContextService, (ctx) =>
    ctx.appendMessages(
      "s",
      Array.from({ length: size }, (_, i) => messageInput(i))
    )
  )
)
await writer.dispose()

let open = 0
let load = 0
let close = 0
let cpu = 0
for (let round = 0; round < rounds; round++) {
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  const runtime = ManagedRuntime.make(sqliteLayer(file))
  const ctx = await runtime.runPromise(ContextService.ContextService)
  const t1 = performance.now()
  const window = await runtime.runPromise(ctx.load("s"))
  if (window.history.length !== size) throw new Error(`reloaded ${window.history.length} of ${size}`)
  const t2 = performance.now()
  await runtime.dispose()
  const t3 = performance.now()
  const used = process.cpuUsage(c0)
  if (round > 0) {
    open += t1 - t0
    load += t2 - t1
    close += t3 - t2
    cpu += (used.user + used.system) / 1000
  }
}
const n = rounds - 1
console.log(
  `size ${size}: open ${(open / n).toFixed(2)} ms, load ${(load / n).toFixed(2)} ms, close ${(close / n).toFixed(2)} ms; CPU ${(cpu / n).toFixed(2)} ms a reload`
)
