// Profiles the sweep's per-stream work in this thread (no workers): the fixtures' transcripts recorded
// once at a 16,000-token budget, each swept under the bench's 2 policies (`Sweep.sweepStream`), repeated
// BENCH_ROUNDS times. Prints replayed calls per CPU-second (process.cpuUsage, not wall time: the machine
// is shared). Run with --cpu-prof to see where the time goes:
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=@ctxlog/source --import tsx bench/profileSweep.ts
// BENCH_SPLIT=1 also times the replays alone (the turn's share of the total).
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { transcriptsDir } from "@ctxlog/core/transcripts"
import * as Effect from "effect/Effect"
import { Pipeline } from "../src/index.js"
import * as Sweep from "../src/Sweep.js"
import type * as Queries from "../src/Queries.js"

const rounds = Number(process.env.BENCH_ROUNDS ?? 5)

const main = Effect.gen(function* () {
  const files = readdirSync(transcriptsDir())
    .filter((name) => name.endsWith(".json"))
    .sort()
  const streams: Array<{ name: string; entries: ReadonlyArray<Queries.Entry> }> = []
  for (const file of files) {
    const messages = yield* Pipeline.fromOpenAIChat(JSON.parse(readFileSync(join(transcriptsDir(), file), "utf8")))
    const policy = Pipeline.importPolicy({ provider: "openai", model: "gpt-4.1", contextWindow: 16_000 }, true)
    const events = yield* Pipeline.run(file, Pipeline.turnsOf(messages), () => policy)
    streams.push({
      name: file,
      entries: events.map((event, index) => ({
        version: index + 1,
        eventId: event.id,
        type: event._tag,
        schemaVersion: 0,
        recordedAt: 1_000 * index,
        event
      }))
    })
  }
  const candidates: ReadonlyArray<Sweep.Candidate> = [
    { name: "recorded", settings: {} },
    {
      name: "tight",
      settings: { builder: { provider: "openai" as const, model: "gpt-4.1", contextWindow: 8000 }, compaction: {} }
    }
  ]
  const fallback = { provider: "openai" as const, model: "gpt-4.1", contextWindow: 16_000 }
  for (let round = 0; round < rounds; round++) {
    const cpu = process.cpuUsage()
    let calls = 0
    for (const stream of streams) {
      const result = yield* Sweep.sweepStream(stream.name, "bench", stream.entries, candidates)
      for (const run of result.candidates) calls += run.totals.calls
    }
    const used = process.cpuUsage(cpu)
    const seconds = (used.user + used.system) / 1_000_000
    if (process.env.BENCH_SPLIT === "1") {
      // The replays alone (no analysis, no pricing): the turn's share of the total.
      const replayCpu = process.cpuUsage()
      for (const stream of streams) {
        const input = Pipeline.inputOf(stream.entries)
        for (const candidate of candidates) {
          const { pricing: _pricing, ...overrides } = candidate.settings
          yield* Pipeline.run(stream.name, input, (recorded) => ({ builder: fallback, ...recorded, ...overrides }))
        }
      }
      const replayUsed = process.cpuUsage(replayCpu)
      console.log(`  replays alone: ${((replayUsed.user + replayUsed.system) / 1e6).toFixed(2)} CPU-s`)
    }
    console.log(
      `round ${round + 1}: ${calls} replayed calls, ${seconds.toFixed(2)} CPU-s, ${(calls / seconds).toFixed(1)} calls per CPU-second`
    )
  }
})

Effect.runPromise(main).catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
