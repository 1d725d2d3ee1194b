/**
 * Prefix stability over the four real transcripts: replaying each one turn by turn, every Anthropic
 * render keeps the previous render's cached prefix (system blocks and every message up to its history
 * breakpoint) byte for byte, so the provider cache can hit. The share of stable bytes is printed.
 */
import { ContextService, EventLog, Ids, ToolPairs, Transcript, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { AnthropicCtx, OpenAICtx } from "../src/index.js"
import { yieldToEventLoop } from "../../../vitest.property.js"
import { readTranscript, transcriptFiles } from "@ctxlog/testing"

const live = ContextService.layerMemory({ ids: Ids.layerSequential("t") })

const strip = (value: unknown): string =>
  JSON.stringify(value, (key, item: unknown) => (key === "cache_control" ? undefined : item))

const commonPrefix = (a: string, b: string): number => {
  let index = 0
  while (index < a.length && index < b.length && a[index] === b[index]) index++
  return index
}

describe("prefix stability over real transcripts", () => {
  it.effect("each render keeps the previous render's cached prefix byte for byte", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const log = yield* EventLog.EventLog
      const anthropic = AnthropicCtx.make({ model: "claude-sonnet-4-5", minCacheableTokens: 1 })
      const openai = OpenAICtx.make({ model: "gpt-4o" })
      for (const file of transcriptFiles()) {
        const inputs = yield* Transcript.fromTranscriptJson(readTranscript(file))
        yield* ctx.appendMessages(file, inputs)
        const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(file))).map((envelope) => envelope.event)
        let window = Window.empty
        let previous: AnthropicCtx.AnthropicRequest | undefined
        let renders = 0
        let stableBytes = 0
        let totalBytes = 0
        for (const event of events) {
          // One turn of the event loop per step: a long run must not hold the worker (vitest RPC timeouts).
          yield* Effect.promise(yieldToEventLoop)
          window = Window.evolve(window, event)
          const last = window.history[window.history.length - 1]
          // Render where an agent would: after a user turn or after all results of a tool round.
          if (last === undefined || last.role === "assistant" || ToolPairs.pendingCalls(window.history).length > 0) {
            continue
          }
          const built = anthropic.build(window, { turnReminder: `turn ${window.version}` })
          if (Either.isLeft(built)) return assert.fail(`${file}: ${built.left.message}`)
          assert.isAtMost(built.right.stats.cacheBreakpoints, 4)
          assert.isTrue(Either.isRight(openai.build(window)), `${file}: openai render`)
          const request = built.right.request
          if (previous !== undefined) {
            assert.strictEqual(strip(request.system), strip(previous.system), `${file}: system changed`)
            const tail = previous.messages.map((message) => message.role).lastIndexOf("user") - 1
            assert.strictEqual(
              strip(request.messages.slice(0, tail + 1)),
              strip(previous.messages.slice(0, tail + 1)),
              `${file}: cached messages changed at version ${window.version}`
            )
            // Measured without the markers: moving a breakpoint forward does not change the cached content.
            const before = strip(previous)
            const after = strip(request)
            stableBytes += commonPrefix(before, after)
            totalBytes += after.length
          }
          previous = request
          renders += 1
        }
        assert.isAbove(renders, 1)
        console.log(
          `${file}: ${renders} renders, bytes shared with the previous render (prefix, markers aside): ${((100 * stableBytes) / Math.max(1, totalBytes)).toFixed(1)}%`
        )
      }
    }).pipe(Effect.provide(live))
  )
})
