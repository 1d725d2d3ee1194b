import { ContextService, type Message, ToolPairs, Transcript } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { yieldToEventLoop } from "../../../vitest.property.js"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { SeamHost } from "../src/index.js"
import type { SeamConfigInput } from "../src/SeamConfig.js"
import { coreLayer } from "./support.js"
import { readTranscript } from "@ctxlog/testing"

/** Split a transcript into turns: each user or assistant message with the tool results that follow it. */
const turnsOf = (inputs: ReadonlyArray<Message.MessageInput>) => {
  const turns: Array<Array<Message.MessageInput>> = []
  for (const input of inputs) {
    const last = turns[turns.length - 1]
    if (input.role === "tool" && last !== undefined) last.push(input)
    else turns.push([input])
  }
  return turns
}

/** Append a transcript turn by turn, running the pipeline after each; print the window size per turn. */
const runTranscript = (file: string) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const host = yield* SeamHost.SeamHost
    const inputs = yield* Transcript.fromTranscriptJson(readTranscript(file))
    yield* ctx.setSystemPrompt(
      file,
      inputs.filter((input) => input.role === "system")
    )
    const levels = new Set<number>()
    let cycles = 0
    const lines: Array<string> = []
    for (const [index, turn] of turnsOf(inputs.filter((input) => input.role !== "system")).entries()) {
      // One turn of the event loop per step: a long run must not hold the worker (vitest RPC timeouts).
      yield* Effect.promise(yieldToEventLoop)
      const appended = yield* ctx.appendMessages(file, turn)
      const out = yield* SeamHost.runSeamPipeline(file, { workspace: "/testbed" })
      for (const event of out.events) {
        if (event._tag === "SeamProduced" || event._tag === "SeamsRecompacted") levels.add(event.level)
        if (event._tag === "CycleAdvanced") cycles++
      }
      const window = out.events.length === 0 ? appended.window : out.window
      assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [])
      const step =
        out.action === "none"
          ? ""
          : ` <- ${appended.window.tokens.total} before (${out.action} level ${Option.getOrElse(out.level, () => 0)}${out.cycleAdvanced ? ", cycle advanced" : ""})`
      lines.push(`turn ${index + 1}: ${window.tokens.total} tokens, ${window.history.length} messages${step}`)
    }
    const thresholds = host.config.thresholds
    console.log(
      `${file}: window size per turn (thresholds ${thresholds.level1}/${thresholds.level2}/${thresholds.level3})\n` +
        `${lines.join("\n")}\nlevels: ${[...levels].sort().join(", ")}; cycles: ${cycles}`
    )
    return { levels, cycles, window: yield* ctx.load(file) }
  })

const withHost = (config: SeamConfigInput) => Effect.provide(SeamHost.layer(config).pipe(Layer.provideMerge(coreLayer)))

describe("transcript", () => {
  it.effect(
    "a real run through the pipeline with a small budget produces seams of at least two levels",
    () =>
      Effect.gen(function* () {
        const { levels } = yield* runTranscript("04-mini-swe-agent-django-11910.json")
        assert.isAtLeast(levels.size, 2)
      }).pipe(withHost({ budget: 8000, verbatimWindow: 6 })),
    120_000
  )

  it.effect(
    "with advanceCycle, level-3 seams start new cycles led by a briefing",
    () =>
      Effect.gen(function* () {
        const { levels, cycles, window } = yield* runTranscript("06-openhands-codeact-ponyc-4588.json")
        assert.isAtLeast(levels.size, 2)
        assert.isAtLeast(cycles, 1)
        assert.strictEqual(window.cycle, cycles)
        assert.strictEqual(window.history.filter((message) => message.kind === "briefing").length, 1)
      }).pipe(withHost({ budget: 8000, verbatimWindow: 4, advanceCycle: true })),
    120_000
  )
})
