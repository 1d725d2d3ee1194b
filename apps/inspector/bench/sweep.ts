// Issue 38's bench line: a policy sweep (`ctxlog whatif --all`, 2 policies: the recorded one replayed
// and a tighter window) over BENCH_STREAMS streams of a SQLite log (the fixtures' transcripts, each
// recorded once through the import pipeline at a 16,000-token budget, then written again under new
// stream names until there are enough), on 1 worker thread and then on 2. Prints the replayed model
// calls per second per worker and how the wall time scales. Printed, not asserted: numbers depend on
// the machine and its load. Run: BENCH_STREAMS=8 node --conditions=@ctxlog/source --import tsx bench/sweep.ts
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { transcriptsDir } from "@ctxlog/core/transcripts"
import * as Effect from "effect/Effect"
import { Pipeline, Transfer } from "../src/index.js"
import * as SweepPool from "../src/SweepPool.js"

const streams = Number(process.env.BENCH_STREAMS ?? 200)
const dir = mkdtempSync(join(tmpdir(), "ctxlog-bench-sweep-"))
const filename = join(dir, "corpus.db")

const main = Effect.gen(function* () {
  const files = readdirSync(transcriptsDir())
    .filter((name) => name.endsWith(".json"))
    .sort()
  const recorded = []
  for (const file of files) {
    const messages = yield* Pipeline.fromOpenAIChat(JSON.parse(readFileSync(join(transcriptsDir(), file), "utf8")))
    const policy = Pipeline.importPolicy({ provider: "openai", model: "gpt-4.1", contextWindow: 16_000 }, true)
    recorded.push(yield* Pipeline.run(file, Pipeline.turnsOf(messages), () => policy))
  }
  for (let index = 0; index < streams; index++) {
    const events = recorded[index % recorded.length] ?? []
    // Each copy its own event ids: a log holds an id once.
    yield* Transfer.write(
      { _tag: "sqlite", filename },
      `stream-${index}`,
      events.map((event) => ({ ...event, id: `${index}-${event.id}` }))
    )
  }
  const jobs: ReadonlyArray<SweepPool.Job> = Array.from({ length: streams }, (_, index) => ({
    _tag: "sqlite",
    file: filename,
    stream: `stream-${index}`,
    read: { integrity: "verified" }
  }))
  const candidates = [
    { name: "recorded", settings: {} },
    {
      name: "tight",
      settings: { builder: { provider: "openai" as const, model: "gpt-4.1", contextWindow: 8000 }, compaction: {} }
    }
  ]
  const seconds: Array<number> = []
  for (const workers of [1, 2]) {
    const started = performance.now()
    const cpu = process.cpuUsage()
    const outcomes = yield* SweepPool.runAll(jobs, candidates, { workers })
    const wall = (performance.now() - started) / 1000
    // CPU seconds of every thread of this process (workers included): the per-core rate on a shared,
    // loaded machine, where wall time counts other processes' turns too.
    const used = process.cpuUsage(cpu)
    const cpuSeconds = (used.user + used.system) / 1_000_000
    seconds.push(wall)
    const calls = outcomes.reduce(
      (sum, outcome) =>
        sum +
        (outcome.ok
          ? outcome.results.reduce(
              (streamSum, result) => streamSum + result.candidates.reduce((total, run) => total + run.totals.calls, 0),
              0
            )
          : 0),
      0
    )
    const failed = outcomes.filter((outcome) => !outcome.ok).length
    console.log(
      `sweep 2 policies x ${streams} streams, ${workers} workers: ${wall.toFixed(2)} s, ${calls} replayed calls, ${(calls / wall / workers).toFixed(1)} calls/s/core, ${(calls / cpuSeconds).toFixed(1)} calls per CPU-second (${cpuSeconds.toFixed(1)} CPU-s)${failed === 0 ? "" : `, ${failed} failed`}`
    )
  }
  const [one = 0, two = 0] = seconds
  console.log(`scaling: 2 workers ${(one / two).toFixed(2)}x one`)
})

Effect.runPromise(main)
  .catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }))
