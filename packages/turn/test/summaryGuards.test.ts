// Issue 39, build item 2's acceptance at the turn: a compactor returning an empty summary, or one that
// drops a pinned path, is refused with its reason, the refusal is recorded, and the render still fits:
// the turn falls to its next tier (truncation, trim) instead of failing the step.
import { Compactor, ContextService, Message } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Policy } from "../src/index.js"
import { Turn } from "../src/index.js"
import { eventsOf, stack } from "./support.js"

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ")

const answering = (summary: string): Compactor.Compactor.Service => ({
  name: "scripted",
  compact: () => Effect.succeed({ summary })
})

const policy: Policy.Policy = {
  builder: { provider: "openai", model: "gpt-4.1", contextWindow: 4096, maxOutputTokens: 256 },
  render: { turnReminder: "Stay in the workspace." },
  compaction: {
    softThreshold: 0.6,
    hardThreshold: 0.8,
    targetRatio: 0.4,
    cooldownTurns: 0,
    midIteration: false,
    pinnedIdentifiers: ["src/cart.js"]
  }
}

const scenario = (stream: string, summary: string, reason: string) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
    for (let i = 0; i < 10; i++) {
      yield* ctx.appendMessages(stream, [
        Message.user(`step ${i} on src/cart.js: ${words(150, "q")}`),
        Message.assistant(`done ${i}: ${words(150, "a")}`)
      ])
    }
    const rendered = yield* Turn.render(stream, policy).pipe(
      Effect.provideService(Compactor.Compactor, answering(summary))
    )
    assert.isTrue(RenderRecord.fits(rendered.built.stats), "the render fits")
    assert.include(rendered.tiers, `fit-hard-refused:${reason}`)
    const events = (yield* eventsOf(stream)).map((envelope) => envelope.event)
    assert.isFalse(
      events.some((event) => event._tag === "Compacted"),
      "no refused summary was written"
    )
    const refusals = events.flatMap((event) => (event._tag === "CompactionFailed" ? [event.reason] : []))
    assert.isTrue(
      refusals.some((text) => text.startsWith(`guard:${reason}: `)),
      `the refusal is recorded: ${refusals.join(" | ")}`
    )
    return rendered
  })

describe("summary guards at the turn (issue 39, build item 2)", () => {
  it.effect("an empty summary is refused (empty) and the render still fits", () =>
    scenario("guard-empty", "", "empty").pipe(Effect.provide(stack()))
  )

  it.effect("a summary dropping a pinned path is refused (pinned) and the render still fits", () =>
    scenario("guard-pinned", "The user asked for several steps; all were done.", "pinned").pipe(Effect.provide(stack()))
  )
})
