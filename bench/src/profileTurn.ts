/**
 * Where a turn's time goes (not part of `pnpm bench`; see BENCHMARKS.md): one user turn of the `turn`
 * scenario (prepare; render + complete for a tool call; render + complete for the answer) on SQLite at
 * SIZE history messages, TURNS times after 5 warm-up turns, printing the mean per turn and per step (wall
 * time, and the process's CPU time, steadier on a loaded machine).
 * PROFILE=file writes a CPU profile of the measured turns (node:inspector, 100 µs sampling); SQLTIME=1
 * times every better-sqlite3 statement by its SQL; PREPONLY=1 runs prepare and a final complete only.
 *
 *   cd bench && SIZE=2000 TURNS=40 PROFILE=/tmp/turn.cpuprofile node --conditions=@ctxlog/source --import tsx src/profileTurn.ts
 */
import { rmSync, writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { join } from "node:path"
import { TemplateCompactor } from "@ctxlog/compaction"
import { Compactor, ContextService, Ids, Message, TokenCounter } from "@ctxlog/core"
import { FullTextRecall, SqliteEventLog } from "@ctxlog/memory"
import { Turn } from "@ctxlog/turn"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import Database from "better-sqlite3"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { turnPolicy, usage } from "./scenarios.js"
import { messageInput, prose, tempDir } from "./stores.js"
const sqlTimes = new Map<string, { n: number; ms: number }>()
if (process.env.SQLTIME) {
  const probe = new Database(":memory:")
  const proto: Record<string, (...args: Array<unknown>) => unknown> = Object.getPrototypeOf(probe.prepare("select 1"))
  for (const method of ["all", "get", "run", "iterate"]) {
    const original = proto[method]
    if (original === undefined) continue
    proto[method] = function (this: { source: string }, ...args: Array<unknown>) {
      const t0 = performance.now()
      const out = original.apply(this, args)
      const key = `${method} ${this.source.replace(/\s+/g, " ").slice(0, 110)}`
      const entry = sqlTimes.get(key) ?? { n: 0, ms: 0 }
      entry.n++
      entry.ms += performance.now() - t0
      sqlTimes.set(key, entry)
      return out
    }
  }
}
const size = Number(process.env.SIZE ?? 2000)
const turns = Number(process.env.TURNS ?? 40)
const provider = (process.env.PROVIDER ?? "anthropic") as "anthropic"
// The turn scenario's own policy (the turn `pnpm bench turn` times), on the provider asked for.
const policy = { ...turnPolicy, builder: { ...turnPolicy.builder, provider } }
const turn = (i: number, mark: (s: string) => void) =>
  Effect.gen(function* () {
    yield* Turn.prepare("s", { messages: [Message.user(`question ${i}: ${prose(300, i)}`)] }, policy)
    mark("prepare")
    if (process.env.PREPONLY) {
      yield* Turn.complete("s", { answer: [Message.text(`answer ${i}`)], usage, endTurn: true }, policy)
      mark("complete2")
      return
    }
    const first = yield* Turn.render("s", policy, { iteration: 0 })
    mark("render1")
    yield* Turn.complete(
      "s",
      {
        answer: [Message.text("Reading it."), Message.toolCall(`call_${i}`, "read_file", { path: "a.txt" })],
        results: [Message.toolResult(`call_${i}`, prose(2000, i))],
        usage,
        estimatedInputTokens: first.built.stats.total,
        endTurn: false
      },
      policy
    )
    mark("complete1")
    const second = yield* Turn.render("s", policy, { iteration: 1 })
    mark("render2")
    yield* Turn.complete(
      "s",
      {
        answer: [Message.text(`answer ${i}: ${prose(300, i + 1)}`)],
        usage,
        estimatedInputTokens: second.built.stats.total,
        endTurn: true
      },
      policy
    )
    mark("complete2")
  })
const main = async () => {
  const dir = tempDir("profile")
  const layer = ContextService.layer().pipe(
    Layer.provideMerge(FullTextRecall.layer()),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7)),
    Layer.provideMerge(SqliteEventLog.layer({ filename: join(dir, "ctxlog.db"), durability: "normal" }))
  )
  const runtime = ManagedRuntime.make(
    Layer.succeed(Compactor.Compactor, TemplateCompactor.make()).pipe(Layer.provideMerge(layer))
  )
  const ctx = await runtime.runPromise(ContextService.ContextService)
  for (let at = 0; at < size; at += 500) {
    await runtime.runPromise(
      ctx.appendMessages(
        "s",
        Array.from({ length: Math.min(500, size - at) }, (_, k) => messageInput(at + k))
      )
    )
  }
  // Per step: wall time, and the process's CPU time (user + system), which a loaded machine inflates less.
  const steps = new Map<string, number>()
  const stepsCpu = new Map<string, number>()
  let last = 0
  let lastCpu = process.cpuUsage()
  const mark = (s: string) => {
    const now = performance.now()
    const cpuNow = process.cpuUsage()
    steps.set(s, (steps.get(s) ?? 0) + now - last)
    stepsCpu.set(s, (stepsCpu.get(s) ?? 0) + (cpuNow.user - lastCpu.user + cpuNow.system - lastCpu.system) / 1000)
    last = now
    lastCpu = cpuNow
  }
  for (let i = 0; i < 5; i++) {
    last = performance.now()
    await runtime.runPromise(turn(i, () => {}))
  }
  sqlTimes.clear()
  const session = new Session()
  session.connect()
  const profile = process.env.PROFILE !== undefined
  if (profile) {
    await session.post("Profiler.enable")
    await session.post("Profiler.setSamplingInterval", { interval: 100 })
    await session.post("Profiler.start")
  }
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  for (let i = 5; i < 5 + turns; i++) {
    last = performance.now()
    lastCpu = process.cpuUsage()
    const t0 = last
    await runtime.runPromise(turn(i, mark))
    if (process.env.EACH) console.log(i, (performance.now() - t0).toFixed(1))
  }
  const total = performance.now() - started
  // CPU time of this process (user + system): steadier than wall time on a loaded machine.
  const cpu = process.cpuUsage(cpuBefore)
  for (const [k, v] of [...sqlTimes].sort((a, b) => b[1].ms - a[1].ms).slice(0, 12))
    console.log(`${(v.ms / turns).toFixed(2)} ms/turn ${(v.n / turns).toFixed(1)}x ${k}`)
  if (profile) {
    const { profile: p } = await session.post("Profiler.stop")
    writeFileSync(process.env.PROFILE ?? "turn.cpuprofile", JSON.stringify(p))
  }
  console.log(
    `size ${size}: ${(total / turns).toFixed(2)} ms/turn (cpu ${((cpu.user + cpu.system) / 1000 / turns).toFixed(2)}); ${[...steps].map(([s, ms]) => `${s} ${(ms / turns).toFixed(2)} (cpu ${((stepsCpu.get(s) ?? 0) / turns).toFixed(2)})`).join(", ")}`
  )
  await runtime.dispose()
  rmSync(dir, { recursive: true, force: true })
}
main()
