// Issue 11 acceptance: the items whose behaviour lives in the log (4, 8, 9, 10) on a SQLite file and on a
// fresh PostgreSQL database, each checked against a replay of what the store holds.
import { ContextService, EventLog, Message, TokenCounter, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { TieredCompaction } from "../src/index.js"
import { filler, toolTurn } from "./harness.js"
import { stores, storeLayer } from "./support/stores.js"

/** The stream's events as the store holds them. */
const stored = (stream: string) =>
  Effect.flatMap(EventLog.EventLog, (log) =>
    Effect.map(Stream.runCollect(log.read(stream)), (envelopes) =>
      Chunk.toReadonlyArray(envelopes).map((envelope) => envelope.event)
    )
  )

/** The live window equals a replay of the store's events. */
const replayMatches = (stream: string) =>
  Effect.gen(function* () {
    const live = yield* Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load(stream))
    const replayed = Window.replay(yield* stored(stream))
    assert.deepStrictEqual(replayed.tokens, live.tokens)
    assert.deepStrictEqual(Window.messages(replayed), Window.messages(live))
    return live
  })

const summariesIn = (messages: ReadonlyArray<Message.Message>) =>
  messages.filter((message) => message.kind === "summary").map((message) => message.id)

for (const store of stores) {
  describe(`item 4 on ${store.name}: injections never remove the summary compaction placed in history`, () => {
    it.effect("a blank recall, an empty injection and injectSummaries leave the live summary in place", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt("i4", "You are terse.")
        for (let i = 0; i < 4; i++) yield* ctx.appendMessages("i4", toolTurn(`step ${i}`, "grep", 800))
        const compacted = yield* TieredCompaction.compactContext("i4", 200, { keepTokens: 0 })
        const live = summariesIn(compacted.window.history)
        assert.strictEqual(live.length, 1)
        // A recall with nothing to find, an empty injection of the summary kind, and the no-query
        // injection of stored summaries (the live one is in the window, so there is nothing to add).
        yield* ctx.injectSemanticRecall("i4", "   ", 500)
        yield* ctx.inject("i4", "summary", [])
        const injected = yield* ctx.injectSummaries("i4", 500)
        assert.deepStrictEqual(summariesIn(injected.window.history), live)
        assert.deepStrictEqual(summariesIn(injected.window.knowledge), [])
        // A later compaction rolls the first summary into the second: injectSummaries leaves the live one
        // in place and does not bring the first back beside it (issue 20, behaviour 4).
        for (let i = 4; i < 7; i++) yield* ctx.appendMessages("i4", toolTurn(`step ${i}`, "grep", 800))
        const again = yield* TieredCompaction.compactContext("i4", 200, { keepTokens: 0 })
        const second = summariesIn(again.window.history)
        assert.notDeepEqual(second, live)
        const restored = yield* ctx.injectSummaries("i4", 2_000)
        assert.deepStrictEqual(summariesIn(restored.window.history), second)
        assert.deepStrictEqual(summariesIn(restored.window.knowledge), [])
        yield* replayMatches("i4")
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`item 8 on ${store.name}: clearHistory clears the conversation, keeps the system prompt and stable knowledge`, () => {
    it.effect("history, injected kinds, signals and the task state go; a replay of the store agrees", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt("c8", "You are terse.")
        yield* ctx.setKnowledge("c8", ["The repo uses pnpm."])
        yield* ctx.inject("c8", "recall", ["recalled note"])
        yield* ctx.setTaskGoal("c8", "ship it")
        yield* ctx.setSubgoals("c8", ["tag", "publish"])
        yield* ctx.raiseSignal("c8", "disk almost full")
        yield* ctx.appendMessages("c8", toolTurn("look", "ls", 300))
        const cleared = yield* ctx.clearHistory("c8")
        const window = cleared.window
        assert.deepStrictEqual(window.system.map(Message.textOf), ["You are terse."])
        assert.deepStrictEqual(window.knowledge.map(Message.textOf), ["The repo uses pnpm."])
        assert.deepStrictEqual(
          [window.history, window.signals, window.taskState.goal, window.taskState.subgoals],
          [[], [], null, []]
        )
        assert.strictEqual(window.tokens.total, window.tokens.system + window.tokens.knowledge)
        yield* replayMatches("c8")
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`item 9 on ${store.name}: resetConversation continues in a new stream`, () => {
    it.effect("the new stream begins with the system prompt and stable knowledge; the old ends pointing to it", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt("r9", "You are terse.")
        yield* ctx.setKnowledge("r9", ["The repo uses pnpm."])
        yield* ctx.appendMessages("r9", [Message.user("hello"), Message.assistant("hi")])
        const out = yield* ctx.resetConversation("r9")
        assert.notStrictEqual(out.stream, "r9")
        const fresh = yield* replayMatches(out.stream)
        assert.deepStrictEqual(Window.messages(fresh).map(Message.textOf), ["You are terse.", "The repo uses pnpm."])
        const old = yield* stored("r9")
        const last = old[old.length - 1]
        assert.strictEqual(last?._tag, "ConversationContinued")
        if (last?._tag === "ConversationContinued") assert.strictEqual(last.into, out.stream)
        assert.strictEqual((yield* replayMatches("r9")).history.length, 2)
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`item 10 on ${store.name}: task state and signals are stored with their rendered token counts`, () => {
    it.effect("a replay of the store counts the task state and signals as the builders render them", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const counter = yield* TokenCounter.TokenCounter
        yield* ctx.setTaskGoal("t10", "fix the date parser")
        yield* ctx.setSubgoals("t10", ["find the test", "patch it"])
        yield* ctx.setTaskGoal("t10", "fix the date parser before the release")
        yield* ctx.raiseSignal("t10", "CI is red")
        yield* ctx.raiseSignal("t10", "the user is waiting")
        yield* ctx.appendMessages("t10", [Message.user(filler(400, "q"))])
        const window = yield* replayMatches("t10")
        const rendered = Window.renderState(window) ?? ""
        const task = Window.renderTaskState(window.taskState.goal, window.taskState.subgoals) ?? ""
        const signals = Window.renderSignals(window.signals) ?? ""
        assert.strictEqual(rendered, `${task}\n${signals}`)
        // The task state is counted with the newline that separates it from the signals.
        assert.strictEqual(window.tokens.taskState, counter.count(`${task}\n`))
        assert.strictEqual(window.tokens.signals, counter.count(signals))
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })
}
