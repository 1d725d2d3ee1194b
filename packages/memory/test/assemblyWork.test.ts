import {
  ContextService,
  Ids,
  Message,
  RecallSource,
  TokenCounter,
  Window,
  type WindowEvent,
  WorkCounter
} from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import type * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as ContextAssembly from "../src/ContextAssembly.js"
import { held } from "../src/internal/assembly.js"
import { counters } from "../src/internal/workCounters.js"

/** Context assembly's work counters, read as their change since the last `work.reset()` (ADR 0160). */
const work = WorkCounter.since({ textsNormalized: counters.textsNormalized, messagesIndexed: counters.messagesIndexed })

// The recall's dedupe reads what the window holds on every prepare: it must cost the new messages,
// not the window (messages are immutable; a held window keeps the same message objects).
const appended = (index: number): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `event-${index}`,
  message: {
    id: `message-${index}`,
    role: index % 2 === 0 ? "user" : "assistant",
    kind: "chat",
    parts: [Message.text(`Message ${index}: the build failed at step ${index}.`)],
    tokens: 12
  }
})

describe("recall dedupe work", () => {
  for (const size of [1000, 10_000]) {
    it(`normalizes each message once, not the window, at ${size} messages`, () => {
      let window = Window.replay(Array.from({ length: size }, (_, index) => appended(index)))
      const none = new Set<Message.MessageKind>()
      work.reset()
      const first = held(window, none)
      assert.strictEqual(work.textsNormalized, size)
      assert.strictEqual(work.messagesIndexed, size)
      assert.isTrue(first.texts.has(`message ${size - 1}: the build failed at step ${size - 1}.`))
      assert.isTrue(first.ids.has("message-0"))
      for (let turn = 0; turn < 3; turn++) {
        const newest = size + 2 * turn + 1
        window = Window.evolve(Window.evolve(window, appended(newest - 1)), appended(newest))
        work.reset()
        const next = held(window, none)
        // Only the two new messages: normalized once, indexed once.
        assert.strictEqual(work.textsNormalized, 2)
        assert.strictEqual(work.messagesIndexed, 2)
        assert.isTrue(next.ids.has(`message-${newest}`))
        assert.isTrue(next.texts.has(`message ${newest}: the build failed at step ${newest}.`))
        // A view handed out before stays true for its own window after the index grew.
        assert.isFalse(first.ids.has(`message-${newest}`))
        assert.isFalse(first.texts.has(`message ${newest}: the build failed at step ${newest}.`))
      }
      // A window whose history is not an extension (a trim) is indexed again, and stays exact.
      const trimmed = Window.evolve(window, {
        _tag: "HistoryTrimmed",
        id: `trim-${size}`,
        budget: 1000,
        removedIds: ["message-0", "message-1"]
      })
      const again = held(trimmed, none)
      assert.isFalse(again.ids.has("message-0"))
      assert.isTrue(again.ids.has("message-2"))
      assert.isFalse(again.texts.has("message 1: the build failed at step 1."))
    })
  }
})

// A recall hit is counted (its tokens, as it would enter the log) only when the policy could keep it:
// hits under the floor or already in the window are dropped before their tokens are read.
describe("recall candidate counting", () => {
  it.effect("counts only the hits that could be injected", () => {
    const counted: Array<string> = []
    const counter = TokenCounter.make("counting", (text) => {
      counted.push(text)
      return Math.ceil(text.length / 4)
    })
    const inWindow = Array.from({ length: 8 }, (_, at) => `known fact ${at}: the parser lives in src/parse.ts`)
    const fresh = "a fresh fact: the lexer lives in src/lex.ts"
    const low = "a weak fact: nobody knows where the tests live"
    const hits: ReadonlyArray<RecallSource.RecallHit> = [
      ...inWindow.map((text, at) => ({ message: Message.user(text), score: 10 - at })),
      { message: Message.user(fresh), score: 5 },
      { message: Message.user(low), score: 0.5 }
    ]
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages(
        "s",
        inWindow.map((text) => Message.user(text))
      )
      counted.length = 0
      const delta = yield* ContextAssembly.prepareContext("s", "where does the parser live", {
        budgets: { recall: 1000, graphFacts: 0 },
        minScore: 1
      })
      assert.deepStrictEqual(
        delta.recall.injected.map((message) => Message.textOf(message)),
        [fresh]
      )
      assert.deepStrictEqual(delta.recall.dropped, { belowFloor: 1, duplicate: 8, overBudget: 0 })
      // Only the fresh hit's text was counted (as a candidate, then as injected): never a dropped one.
      assert.isTrue(counted.length > 0)
      assert.isTrue(counted.every((text) => !inWindow.some((known) => text.includes(known)) && !text.includes(low)))
    }).pipe(
      Effect.provide(
        ContextService.layerMemory({
          ids: Ids.layerSequential("w"),
          tokenCounter: Layer.succeed(TokenCounter.TokenCounter, counter),
          recall: RecallSource.layerStatic({ recall: hits })
        })
      )
    )
  })
})

// The lookups of a prepare are forked to run at the same time only when more than one has work to do:
// a single lookup (a turn's recall) runs in the caller's fiber, a fork costing more than a local lookup.
describe("recall lookup fibers", () => {
  const hits: ReadonlyArray<RecallSource.RecallHit> = [
    { message: Message.user("the lexer lives in src/lex.ts"), score: 1 }
  ]
  const lookups = (budgets: ContextAssembly.RetrievalPolicy["budgets"]) =>
    Effect.gen(function* () {
      const caller = yield* Effect.fiberId
      const fibers: Array<FiberId.FiberId> = []
      const source = Layer.succeed(RecallSource.RecallSource, {
        recall: (request: RecallSource.RecallRequest) =>
          Effect.map(Effect.fiberId, (fiber) => {
            fibers.push(fiber)
            return request.kind === "recall" || request.kind === "correction" ? hits : []
          })
      })
      yield* ContextAssembly.prepareContext("s", "where does the lexer live", { budgets }).pipe(
        Effect.provide(ContextService.layerMemory({ ids: Ids.layerSequential("f"), recall: source }))
      )
      return fibers.map((fiber) => Equal.equals(fiber, caller))
    })
  it.effect("one lookup runs in the caller's fiber, several each in their own", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* lookups({ recall: 1000, graphFacts: 0 }), [true])
      assert.deepStrictEqual(yield* lookups({ recall: 1000, graphFacts: 0, correction: 1000 }), [false, false])
    })
  )
})
