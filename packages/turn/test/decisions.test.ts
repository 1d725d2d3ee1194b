// Decisions not to compact (issue 39, build item 1; ADR 0128): each turn step that evaluated a compaction
// tier which did not act writes one `CompactionDecided` in its own append, naming the tier, the reason and
// the tokens it compared; a step where every tier acted or none ran writes none. The window is not changed
// by it and every render still rebuilds byte for byte.
import { assert, describe, it } from "@effect/vitest"
import { ContextService, type EventLog, Message, type WindowEvent } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { type Policy, Turn } from "../src/index.js"
import { type Counts, eventsOf, rebuildAll, stack } from "./support.js"

const tools = [
  {
    name: "read_file",
    description: "Read a file",
    inputSchema: { type: "object", properties: { path: { type: "string" } } }
  }
]

const policy = (contextWindow: number): Policy.Policy => ({
  builder: { provider: "openai", model: "gpt-4.1", contextWindow, maxOutputTokens: 512 },
  render: { tools, turnReminder: "Stay in the workspace." },
  compaction: { softThreshold: 0.7, hardThreshold: 0.85, targetRatio: 0.45, cooldownTurns: 2 }
})

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ")

type Decided = WindowEvent.EventOf<"CompactionDecided">

const decidedIn = (events: ReadonlyArray<EventLog.Envelope>): ReadonlyArray<Decided> =>
  events.flatMap((e) => (e.event._tag === "CompactionDecided" ? [e.event] : []))

/** One agent turn: a question, a tool round, an answer. */
const turn = (stream: string, p: Policy.Policy, n: number, outputWords: number) =>
  Effect.gen(function* () {
    yield* Turn.prepare(stream, { messages: [Message.user(`question ${n}: ${words(30, "q")}`)] }, p)
    const first = yield* Turn.render(stream, p)
    yield* Turn.complete(
      stream,
      {
        answer: [Message.text("Reading it."), Message.toolCall(`call_${n}`, "read_file", { path: "a.js" })],
        results: [Message.toolResult(`call_${n}`, words(outputWords, `l${n}-`))],
        usage: { inputTokens: first.built.stats.total, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
        estimatedInputTokens: first.built.stats.total,
        endTurn: false
      },
      p
    )
    yield* Turn.render(stream, p, { iteration: 1 })
    yield* Turn.complete(stream, { answer: [Message.text("Done.")], endTurn: true }, p)
  })

describe("decisions not to compact (ADR 0128)", () => {
  it.effect(
    "below every threshold: each step that evaluated a tier records why it did not act, in its own append",
    () => {
      const counts: Counts = { appends: 0, reads: 0 }
      return Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const stream = "decisions-below"
        yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
        const p = policy(128_000)
        counts.appends = 0
        yield* turn(stream, p, 0, 50)
        // prepare, render, complete, render, complete: one append each, the decisions inside them.
        assert.strictEqual(counts.appends, 5)
        const events = yield* eventsOf(stream)
        const decided = decidedIn(events)
        assert.deepStrictEqual(
          decided.map((d) => [d.step, d.decisions.map((x) => `${x.tier}:${x.reason}`)]),
          [
            ["prepare", ["soft:below-threshold"]],
            ["render", ["soft:below-threshold"]],
            ["complete", ["proactive:below-threshold"]]
          ]
        )
        const budget = decided[0]?.budgetTokens ?? 0
        assert.isAbove(budget, 100_000)
        for (const d of decided) {
          for (const x of d.decisions) {
            assert.isAbove(x.usedTokens, 0)
            assert.isBelow(x.usedTokens, x.thresholdTokens, `${d.step} ${x.tier}: measured under its line`)
          }
        }
        assert.strictEqual(decided[0]?.decisions[0]?.thresholdTokens, Math.floor(budget * 0.7))
        // The first render (iteration 0) runs no tier between calls, so it records nothing.
        const stepsOfDecided = events.filter((e) => e.event._tag === "CompactionDecided").map((e) => e.metadata.actor)
        assert.deepStrictEqual(stepsOfDecided, ["turn.prepare", "turn.render", "turn.complete"])
        const { renders, failures } = rebuildAll(events)
        assert.strictEqual(renders, 2)
        assert.deepStrictEqual(failures, [])
      }).pipe(Effect.provide(stack(counts)))
    }
  )

  it.effect("the log grows by at most one decision per step: 100 turns under pressure, every render rebuilds", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "decisions-100"
      yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
      const p = policy(6_000)
      const perTurn: Array<number> = []
      let seen = 0
      for (let n = 0; n < 100; n++) {
        yield* turn(stream, p, n, 120)
        const events = yield* eventsOf(stream)
        perTurn.push(decidedIn(events).length - seen)
        seen = decidedIn(events).length
      }
      const events = yield* eventsOf(stream)
      const decided = decidedIn(events)
      // Five steps a turn, two of which evaluate no threshold tier (the first render, the tool round's
      // complete): at most three decisions a turn, whatever the history's length.
      assert.isTrue(
        perTurn.every((count) => count <= 3),
        `decisions per turn: ${perTurn.join(",")}`
      )
      assert.isTrue(decided.every((d) => d.decisions.length <= 2))
      // The run compacted (the tiers acted on some turns) and declined on others, with reasons beyond
      // the threshold: cooldown or nothing to do at pressure.
      assert.isAbove(events.filter((e) => e.event._tag === "Compacted").length, 0)
      const reasons = new Set(decided.flatMap((d) => d.decisions.map((x) => `${x.tier}:${x.reason}`)))
      assert.isTrue(reasons.has("soft:below-threshold"), [...reasons].join(", "))
      assert.isAbove(reasons.size, 1, [...reasons].join(", "))
      // The share of the log they take stays below a quarter.
      assert.isBelow(decided.length / events.length, 0.25, `${decided.length} of ${events.length}`)
      const { renders, failures } = rebuildAll(events)
      assert.strictEqual(renders, 200)
      assert.deepStrictEqual(failures, [])
    }).pipe(Effect.provide(stack()))
  )
})
