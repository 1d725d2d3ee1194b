// Issue 11 item 10: the window counts task state and signals as the builders send them (labels,
// numbering, `<task_state>`/`<signals>` wrappers), and needsCompression counts what a render sends.
import { ContextService, EventLog, Message, TokenCounter, Window } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { CtxBuilder, DefaultCtx } from "../src/index.js"
import { memoryContext, stringsOf } from "./services.js"

const builders = [
  ["anthropic", CtxBuilder.forProvider({ provider: "anthropic", model: "claude-sonnet-4-5" })],
  ["openai", CtxBuilder.forProvider({ provider: "openai", model: "gpt-4o" })],
  ["openai-responses", CtxBuilder.forProvider({ provider: "openai", api: "responses", model: "gpt-5" })],
  ["ollama", CtxBuilder.forProvider({ provider: "ollama", model: "qwen2.5:7b" })],
  ["default", CtxBuilder.forProvider({ provider: "default", model: "local-model" })]
] as const

const live = (counter: TokenCounter.TokenCounter.Service) => memoryContext(counter, "s")

/** The text a builder sent for the task state and signals. */
const stateTextOf = (request: unknown): string | undefined =>
  stringsOf(request).find((text) => text.startsWith("<task_state>") || text.startsWith("<signals>"))

const counters = [
  ["o200k_base", TokenCounter.gpt("o200k_base")],
  ["heuristic(4)", TokenCounter.heuristic(4)]
] as const

describe("task state and signals are counted as rendered (issue 11 item 10)", () => {
  for (const [name, counter] of counters) {
    it.effect(`the state each builder sends has the window's task-state + signals tokens (${name})`, () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const stream = "state-tokens"
        yield* ctx.setSystemPrompt(stream, "You are a careful coding agent.")
        yield* ctx.setTaskGoal(stream, "Fix the failing date parser test on leap years")
        yield* ctx.setSubgoals(stream, ["Find the test", "Read the parser", "Patch it and rerun the suite"])
        yield* ctx.raiseSignal(stream, "Build cache is cold; the first test run is slow.")
        yield* ctx.raiseSignal(stream, "CI is red on main since 09:12.")
        const { window } = yield* ctx.appendMessages(stream, [
          Message.user("The date parser test fails on leap years."),
          Message.assistant("Looking at it.")
        ])
        const counted = window.tokens.taskState + window.tokens.signals
        for (const [label, builder] of builders) {
          const built = builder.build(window)
          if (Either.isLeft(built)) throw new Error(`${label}: ${built.left.message}`)
          const sent = stateTextOf(built.right.request)
          expect(sent, label).toBe(Window.renderState(window))
          const sentTokens = counter.count(sent ?? "")
          // The two blocks are counted apart; a character counter may round up once at their join.
          expect(counted - sentTokens, label).toBeGreaterThanOrEqual(0)
          expect(counted - sentTokens, label).toBeLessThanOrEqual(name === "o200k_base" ? 0 : 1)
          expect(built.right.stats.tokens.total, label).toBe(window.tokens.total)
        }
      }).pipe(Effect.provide(live(counter)))
    )

    it.effect(`each partition alone equals its rendered block through goal and subgoal changes (${name})`, () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const stream = "state-steps"
        const check = (window: Window.Window) => {
          // The task state is counted with the newline that separates it from the signals.
          const task = Window.renderTaskState(window.taskState.goal, window.taskState.subgoals)
          expect(window.tokens.taskState).toBe(task === undefined ? 0 : counter.count(`${task}\n`))
          const signals = Window.renderSignals(window.signals)
          expect(window.tokens.signals).toBe(signals === undefined ? 0 : counter.count(signals))
        }
        check((yield* ctx.setTaskGoal(stream, "Ship the release")).window)
        check((yield* ctx.setSubgoals(stream, ["Tag it", "Write the changelog"])).window)
        check((yield* ctx.setTaskGoal(stream, "Ship release 2.0 to every customer before Friday")).window)
        check((yield* ctx.raiseSignal(stream, "Disk is 91% full.")).window)
        check((yield* ctx.raiseSignal(stream, "Two reviewers are away.")).window)
        check((yield* ctx.setTaskGoal(stream, null)).window)
        check((yield* ctx.setSubgoals(stream, [])).window)
        check((yield* ctx.setSubgoals(stream, ["Only a subgoal"])).window)
        check((yield* ctx.setTaskGoal(stream, "Back to a goal")).window)
        // Replaying the log gives the same counts as the live window.
        const live = yield* ctx.load(stream)
        const log = yield* EventLog.EventLog
        const envelopes = yield* Stream.runCollect(log.read(stream))
        const replayed = Window.replay(Chunk.toReadonlyArray(envelopes).map((envelope) => envelope.event))
        expect(replayed.tokens).toEqual(live.tokens)
      }).pipe(Effect.provide(live(counter)))
    )
  }
})

describe("needsCompression counts what the render sends (issue 11 item 10)", () => {
  it.effect("an overriding system prompt replaces the identity's tokens", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "override"
      yield* ctx.setSystemPrompt(stream, "Short.")
      const { window } = yield* ctx.appendMessages(stream, [Message.user("hello")])
      const builder = DefaultCtx.make({ model: "m", contextWindow: 4096, maxOutputTokens: 256 })
      expect(builder.needsCompression(window)).toBe(false)
      // 14,000 characters ≈ 3,500 tokens: past 0.8 of the 3,840-token budget.
      const systemPrompt = "x".repeat(14_000)
      expect(builder.needsCompression(window, { systemPrompt })).toBe(true)
      // The same prompt in the window itself counts the same.
      const { window: big } = yield* ctx.setSystemPrompt(stream, systemPrompt)
      expect(builder.needsCompression(big)).toBe(true)
      // And an override shorter than the window's own identity relieves the pressure.
      expect(builder.needsCompression(big, { systemPrompt: "Short." })).toBe(false)
    }).pipe(Effect.provide(live(TokenCounter.heuristic(4))))
  )

  it.effect("tool schemas, the reminder and the output reserve all count against the window", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "extras"
      // ~2,000 tokens of history in a 4,096 window with a 1,024 reserve: 2,000 < 0.8 × 3,072.
      const { window } = yield* ctx.appendMessages(stream, [Message.user("y".repeat(8_000))])
      const builder = DefaultCtx.make({ model: "m", contextWindow: 4096, maxOutputTokens: 1024 })
      expect(builder.needsCompression(window)).toBe(false)
      expect(builder.needsCompression(window, { turnReminder: "r".repeat(2_400) })).toBe(true)
      const tool = { name: "t", description: "d".repeat(2_400), inputSchema: { type: "object" } }
      expect(builder.needsCompression(window, { tools: [tool] })).toBe(true)
      expect(builder.needsCompression(window, { maxOutputTokens: 1_600 })).toBe(true)
    }).pipe(Effect.provide(live(TokenCounter.heuristic(4))))
  )
})
