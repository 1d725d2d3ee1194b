import { ContextService, EventLog, Message, TokenCounter, WindowRepository } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { CompressionPlan, TemplateCompactor, ToolOutputPruning } from "../src/index.js"
import { testLayer } from "./harness.js"

const shot = (n: number) => Message.imageUrl(`https://example.com/shot-${n}.png`, { width: 1000 + n, height: 1000 })

const turn = (n: number): ReadonlyArray<Message.MessageInput> => [
  { role: "user", parts: [Message.text(`screenshot ${n}`), shot(n)] },
  Message.assistant(`seen ${n}`)
]

const images = (history: ReadonlyArray<Message.Message>) =>
  history.flatMap((message) => message.parts.filter((part) => part.type === "image"))

describe("media pruning", () => {
  it.effect("older images become text stubs as a MediaPruned event; the newest and unseen stay", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const counter = yield* TokenCounter.TokenCounter
      const before = (yield* ctx.appendMessages("m", [
        ...turn(1),
        ...turn(2),
        ...turn(3),
        // Not seen by the model yet: never pruned.
        { role: "user", parts: [Message.text("and this one"), shot(4)] }
      ])).window
      assert.strictEqual(images(before.history).length, 4)
      // Each image costs Anthropic's formula (the test counter's default), far more than its stub.
      assert.isAbove(before.tokens.history, 4 * 1300)
      const outcome = yield* ToolOutputPruning.pruneMedia("m", { keepRecent: 2 })
      assert.deepStrictEqual(
        outcome.events.map((event) => event._tag),
        ["MediaPruned"]
      )
      const after = outcome.window
      // Kept: shot 4 (unseen, counts towards keepRecent) and shot 3.
      assert.deepStrictEqual(
        images(after.history).map((part) => (part.source.type === "url" ? part.source.url : "")),
        ["https://example.com/shot-3.png", "https://example.com/shot-4.png"]
      )
      assert.deepStrictEqual(after.history[0]?.parts, [
        Message.text("screenshot 1"),
        Message.text("[pruned image: https://example.com/shot-1.png, 1001×1000]")
      ])
      // Tokens: the rewritten messages are counted again, and the totals add up.
      assert.strictEqual(after.history[0]?.tokens, counter.countMessage({ parts: after.history[0]?.parts ?? [] }))
      assert.strictEqual(
        after.tokens.history,
        after.history.reduce((total, message) => total + message.tokens, 0)
      )
      assert.isBelow(after.tokens.history, before.tokens.history - 2 * 1300)
      // Nothing more to prune at the same setting; the log replays to the same window.
      assert.strictEqual((yield* ToolOutputPruning.pruneMedia("m", { keepRecent: 2 })).events.length, 0)
      const repository = yield* WindowRepository.WindowRepository
      const replayed = yield* repository.load("m")
      assert.deepStrictEqual(
        replayed.history.map((message) => message.parts),
        after.history.map((m) => m.parts)
      )
      const log = yield* EventLog.EventLog
      const types = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("m"))).map((event) => event.type)
      assert.include(types, "MediaPruned")
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("with targetTokens, the oldest go first and pruning stops at the target", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const before = (yield* ctx.appendMessages("t", [...turn(1), ...turn(2), ...turn(3)])).window
      const outcome = yield* ToolOutputPruning.pruneMedia("t", {
        keepRecent: 0,
        targetTokens: before.tokens.total - 1000
      })
      assert.strictEqual(images(outcome.window.history).length, 2)
      assert.strictEqual(images(outcome.window.history)[0]?.source.type, "url")
      assert.isAtMost(outcome.window.tokens.total, before.tokens.total - 1000)
    }).pipe(Effect.provide(testLayer))
  )
})

describe("reasoning in compaction", () => {
  it.effect("a tool round leaves whole with its reasoning, and the template summary drops the reasoning", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const secretThought = "internal musing about the loop bound"
      const out = yield* ctx.appendMessages("c", [
        Message.user("Fix the failing test in src/parser.ts"),
        {
          role: "assistant",
          parts: [
            Message.reasoning(secretThought, { signature: "sig-1" }),
            Message.toolCall("c1", "bash", { command: "npm test" })
          ]
        },
        Message.tool("c1", "Error: expected 3 but got 4", true),
        {
          role: "assistant",
          parts: [
            Message.reasoning("done thinking"),
            Message.text("The issue is an off-by-one in parse(). I will change the loop bound.")
          ]
        },
        Message.user("thanks")
      ])
      // The planner moves whole rounds: the reasoning message and its result leave together.
      const plan = CompressionPlan.compressionPlan(out.window, 20)
      const removed = new Set(plan.removeIds)
      const [, call, result] = out.window.history
      assert.isTrue(removed.has(call?.id ?? ""))
      assert.isTrue(removed.has(result?.id ?? ""))
      // Its tokens counted the reasoning: the round costs more than the call and result alone.
      assert.isAbove(
        call?.tokens ?? 0,
        TokenCounter.heuristic().countMessage({ parts: [Message.toolCall("c1", "bash", { command: "npm test" })] })
      )
      const { summary } = yield* TemplateCompactor.make().compact({
        messages: out.window.history.slice(0, 4),
        previousSummary: null
      })
      assert.include(summary, "bash(command=npm test) → error")
      assert.include(summary, "off-by-one")
      assert.notInclude(summary, secretThought)
    }).pipe(Effect.provide(testLayer))
  )
})
