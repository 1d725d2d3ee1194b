import { ContextService, Ids, type Message, ToolPairs, Transcript, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { yieldToEventLoop } from "../../../vitest.property.js"
import * as Layer from "effect/Layer"
import { TemplateCompactor, TieredCompaction } from "../src/index.js"
import { readTranscript, transcriptFiles } from "@ctxlog/testing"

const live = Layer.mergeAll(ContextService.layerMemory({ ids: Ids.layerSequential("r") }), TemplateCompactor.layer())

const budget = 16_000

const config: TieredCompaction.Config = {
  budget,
  softThreshold: 0.7,
  hardThreshold: 0.85,
  targetRatio: 0.5,
  cooldownTurns: 2,
  prune: { keepRecent: 3, minChars: 400, clearAtLeast: 2000 }
}

/** A simple serialization of what would be sent: every message, in render order. */
const render = (window: Window.Window): string =>
  Window.messages(window)
    .map((message) => JSON.stringify([message.role, message.parts]))
    .join("\n")

const commonPrefix = (a: string, b: string): number => {
  const max = Math.min(a.length, b.length)
  let i = 0
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

const files = transcriptFiles()

describe("transcript replay at a 16k-token budget", () => {
  it("finds the shared transcripts", () => {
    assert.isAtLeast(files.length, 4)
  })

  for (const file of files) {
    it.effect(`${file}: every turn's window is within budget with no orphaned tool pair`, () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const inputs = yield* Transcript.fromTranscriptJson(readTranscript(file))
        const system = inputs.filter((input) => input.role === "system")
        if (system.length > 0) yield* ctx.setSystemPrompt(file, system)
        const rest = inputs.filter((input) => input.role !== "system")
        const rows: Array<string> = []
        let previous: string | undefined
        let pending: Array<Message.MessageInput> = []
        let turns = 0
        let shares = 0
        let compactions = 0
        // One turn = one model call: append what arrived since the last answer, compact, render, answer.
        for (const input of rest) {
          // One turn of the event loop per step: a long run must not hold the worker (vitest RPC timeouts).
          yield* Effect.promise(yieldToEventLoop)
          if (input.role !== "assistant") {
            pending.push(input)
            continue
          }
          if (pending.length > 0) yield* ctx.appendMessages(file, pending)
          pending = []
          const result = yield* TieredCompaction.maybeCompact(file, config)
          if (result._tag !== "NoChange") compactions += 1
          const window = yield* ctx.load(file)
          assert.isAtMost(window.tokens.total, budget, `${file} turn ${turns + 1}`)
          assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [])
          const prompt = render(window)
          const share = previous === undefined ? 0 : commonPrefix(previous, prompt) / prompt.length
          if (previous !== undefined) shares += share
          rows.push(
            `${turns + 1}:${window.tokens.total}:${Math.round(share * 100)}%${result._tag === "NoChange" ? "" : `(${result._tag === "Compacted" ? result.tier : "soft"})`}`
          )
          previous = prompt
          yield* ctx.appendMessages(file, [input])
          yield* ctx.completeTurn(file)
          turns += 1
        }
        console.log(
          `${file}: ${turns} turns, ${compactions} compaction steps, mean unchanged-prefix share ${
            turns > 1 ? Math.round((shares / (turns - 1)) * 100) : 0
          }%\n  turn:tokens:prefix-share ${rows.join(" ")}`
        )
      }).pipe(Effect.provide(live))
    )
  }
})
