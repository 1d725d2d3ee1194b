// Issue 38 (speed): what the sweep's attribution of a lost item costs does not grow with the window.
// `Sweep.removers` finds the event that took a probe out of the window; it checks each probe against the
// messages an event took out and put in, never against the whole window again. Counted, not timed: the
// message texts checked per probe and event that removed something, on a stream of 60 and of 600
// messages (each removal takes one recall message out of a window that keeps growing).
import { assert, describe, it } from "@effect/vitest"
import { ContextService, EventLog, Message } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as Queries from "../src/Queries.js"
import * as Sweep from "../src/Sweep.js"

/** `messages` chat messages, with a recall message injected every 10 and removed 5 later. */
const streamOf = (messages: number) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const probes: Array<string> = []
    for (let index = 0; index < messages; index++) {
      yield* ctx.appendMessages("s", [
        index % 2 === 0 ? Message.user(`question ${index}`) : Message.assistant(`answer ${index}`)
      ])
      if (index % 10 === 0) {
        const probe = `recalled-fact-${index}`
        probes.push(probe)
        yield* ctx.inject("s", "recall", [Message.user(probe)])
      }
      if (index % 10 === 5) yield* ctx.removeKind("s", "recall")
    }
    const log = yield* EventLog.EventLog
    const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("s")))
    const entries = envelopes.map(
      (envelope): Queries.Entry => ({
        version: envelope.version,
        eventId: envelope.eventId,
        type: envelope.type,
        schemaVersion: envelope.schemaVersion,
        recordedAt: 0,
        event: envelope.event
      })
    )
    return { entries, probes }
  }).pipe(Effect.provide(ContextService.layerMemory()))

const costOf = (messages: number) =>
  Effect.map(streamOf(messages), ({ entries, probes }) => {
    const end = (entries.at(-1)?.version ?? 0) + 1
    const counter = { checks: 0 }
    const found = Sweep.removers(
      entries,
      probes.map((probe) => ({ probe, beforeVersion: end })),
      counter
    )
    const removals = entries.filter((entry) => entry.event._tag === "MessagesRemoved").length
    return { found, removals, perProbeAndRemoval: counter.checks / (probes.length * removals) }
  })

describe("Sweep.removers", () => {
  it.effect("checks what each event took out and put in: the same work per removal at 60 messages and at 600", () =>
    Effect.gen(function* () {
      const small = yield* costOf(60)
      const large = yield* costOf(600)
      // Every probe was taken out, by the event that removed its kind.
      for (const result of [small, large]) {
        assert.isAbove(result.removals, 0)
        for (const found of result.found) assert.strictEqual(found?.type, "MessagesRemoved")
      }
      // One message out per removal (and none in): about one check per probe and removal, at any length.
      assert.isAtMost(small.perProbeAndRemoval, 2)
      assert.isAtMost(large.perProbeAndRemoval, 2)
    })
  )
})
