// Issue 20, "seed behaviours that still differ": behaviours 1, 2, 3, 4, 6 and 7, each on a SQLite file
// and on a fresh PostgreSQL database, each checked against a replay of what the store holds.
// (Behaviour 5 is in providers/test/seedBehaviours.test.ts, 8 in memory's, 9 in seam's.)
import { ContextService, EventLog, Message, Window, type WindowEvent } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { Budget, TieredCompaction, type ToolOutputPruning, UndoCompaction } from "../src/index.js"
import { CompactorProbe, fillWithTools, toolTurn } from "./harness.js"
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
    assert.deepStrictEqual(Window.messages(replayed), Window.messages(live))
    assert.deepStrictEqual(
      [replayed.tokens, replayed.carryOver, replayed.watermark, replayed.compaction, replayed.calibration],
      [live.tokens, live.carryOver, live.watermark, live.compaction, live.calibration]
    )
    return live
  })

const textsOfKind = (messages: ReadonlyArray<Message.Message>, kind: Message.MessageKind) =>
  messages.filter((message) => message.kind === kind).map(Message.textOf)

const modelCalls = Effect.flatMap(CompactorProbe, (probe) => Ref.get(probe.calls))

const repeat = (phrase: string, chars: number) => phrase.repeat(Math.ceil(chars / phrase.length)).slice(0, chars)

for (const store of stores) {
  describe(`behaviour 1 on ${store.name}: clearHistory forgets compaction's carry-over, watermark, cooldown and guard`, () => {
    it.effect("after a clear, the next summary no longer names the cleared topic", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const config: TieredCompaction.Config = { budget: 2_000, prune: { keepRecent: 1_000 } }
        for (let i = 0; i < 3; i++) yield* ctx.appendMessages("b1", toolTurn(`zebrafish topic ${i}`, "grep", 1_500))
        yield* fillWithTools(config, "b1", "Hard")
        const hard = yield* TieredCompaction.maybeCompact("b1", config)
        assert.strictEqual(hard._tag, "Compacted")
        assert.include(hard.window.carryOver ?? "", "zebrafish")
        assert.isTrue(hard.window.compaction.compactedThisTurn)
        assert.isAbove(hard.window.compaction.cooldownRemaining, 0)
        const cleared = (yield* ctx.clearHistory("b1")).window
        assert.deepStrictEqual(
          [
            cleared.carryOver,
            cleared.watermark,
            cleared.compaction.compactedThisTurn,
            cleared.compaction.cooldownRemaining
          ],
          [null, null, false, 0]
        )
        // A new conversation: the next compaction summarizes it alone.
        for (let i = 0; i < 4; i++) yield* ctx.appendMessages("b1", toolTurn(`heron topic ${i}`, "grep", 800))
        const next = yield* TieredCompaction.compactContext("b1", 400, { keepTokens: 0 })
        assert.strictEqual(next._tag, "Compacted")
        const summary = textsOfKind(next.window.history, "summary").join("\n")
        assert.include(summary, "heron")
        assert.notInclude(summary, "zebrafish")
        yield* replayMatches("b1")
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`behaviour 2 on ${store.name}: maybeCompact without completeTurn`, () => {
    it.effect("with advanceTurn, each call is a turn: a second model compaction once the cooldown has passed", () =>
      Effect.gen(function* () {
        const config: TieredCompaction.Config = {
          budget: 2_000,
          cooldownTurns: 1,
          prune: { keepRecent: 1_000 },
          advanceTurn: true
        }
        yield* fillWithTools(config, "b2", "Hard")
        assert.strictEqual((yield* TieredCompaction.maybeCompact("b2", config))._tag, "Compacted")
        assert.strictEqual(yield* modelCalls, 1)
        yield* fillWithTools(config, "b2", "Hard")
        const second = yield* TieredCompaction.maybeCompact("b2", config)
        assert.strictEqual(second._tag, "Compacted")
        if (second._tag === "Compacted") assert.strictEqual(second.tier, "hard")
        assert.strictEqual(yield* modelCalls, 2)
        const live = yield* replayMatches("b2")
        assert.strictEqual(live.compaction.turn, 2)
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("without it (the default), the guard holds until completeTurn and the result says why", () =>
      Effect.gen(function* () {
        const config: TieredCompaction.Config = { budget: 2_000, cooldownTurns: 0, prune: { keepRecent: 1_000 } }
        yield* fillWithTools(config, "b2d", "Hard")
        assert.strictEqual((yield* TieredCompaction.maybeCompact("b2d", config))._tag, "Compacted")
        yield* fillWithTools(config, "b2d", "Hard")
        const guarded = yield* TieredCompaction.maybeCompact("b2d", config)
        // No model: nothing, or the deterministic template when the window is over the budget itself.
        if (guarded._tag === "NoChange") assert.strictEqual(guarded.reason, "already compacted this turn")
        else assert.strictEqual(guarded._tag === "Compacted" ? guarded.tier : guarded._tag, "soft")
        assert.strictEqual(yield* modelCalls, 1)
        assert.isTrue((yield* replayMatches("b2d")).compaction.compactedThisTurn)
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`behaviour 3 on ${store.name}: the pruning strategy decides maybeCompact's soft tier`, () => {
    it.effect("Default, TaskAware and Mig each stub their own output, only as far as the Soft threshold", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const victims: Record<string, ReadonlyArray<string>> = {}
        for (const strategy of [
          "Default",
          "TaskAware",
          "Mig"
        ] as const satisfies ReadonlyArray<ToolOutputPruning.Strategy>) {
          const stream = `b3-${strategy}`
          yield* ctx.setTaskGoal(stream, "fix the date parser leap year bug in the config loader")
          const outputs = {
            o1: repeat("date parser leap year february handling ", 1200),
            o2: repeat("network socket timeout packets dropped retry ", 1200),
            o3: repeat("config loader yaml settings values merged ", 1200),
            o4: `${repeat("config loader yaml settings values merged ", 1190)} (again)`
          }
          for (const [id, content] of Object.entries(outputs)) {
            yield* ctx.appendMessages(stream, [
              Message.user(`look at ${id}`),
              Message.assistant("", [Message.toolCall(id, "cat", { path: `${id}.txt` })]),
              Message.tool(id, content),
              Message.assistant(`read ${id}`)
            ])
          }
          const window = yield* ctx.load(stream)
          // 72% of the budget: Soft pressure, and one stub is enough to get under the 70% threshold.
          const config: TieredCompaction.Config = {
            budget: Math.ceil(window.tokens.total / 0.72),
            prune: { strategy, keepRecent: 0 }
          }
          assert.strictEqual(TieredCompaction.pressure(window, config), "Soft")
          const result = yield* TieredCompaction.maybeCompact(stream, config)
          assert.strictEqual(result._tag, "SoftCompacted")
          const events = result._tag === "NoChange" ? [] : result.events
          const pruned = events.flatMap((event) => (event._tag === "ToolOutputPruned" ? event.outputs : []))
          victims[strategy] = pruned.map((output) => output.toolCallId)
          assert.strictEqual(TieredCompaction.pressure(result.window, config), "None")
          yield* replayMatches(stream)
        }
        assert.deepStrictEqual(victims, { Default: ["o1"], TaskAware: ["o2"], Mig: ["o3"] })
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`behaviour 4 on ${store.name}: injectSummaries injects only the summaries the log still stands behind`, () => {
    it.effect("the summary of an undone compaction is not injected", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        for (let i = 0; i < 4; i++) yield* ctx.appendMessages("b4u", toolTurn(`step ${i}`, "grep", 800))
        const compacted = yield* TieredCompaction.compactContext("b4u", 200, { keepTokens: 0 })
        const event = (compacted._tag === "Compacted" ? compacted.events : []).find((each) => each._tag === "Compacted")
        assert.isDefined(event)
        if (event === undefined) return
        yield* UndoCompaction.undoCompaction("b4u", event.id)
        const injected = yield* ctx.injectSummaries("b4u", 5_000)
        assert.deepStrictEqual(textsOfKind(injected.window.knowledge, "summary"), [])
        assert.deepStrictEqual(textsOfKind(injected.window.history, "summary"), [])
        yield* replayMatches("b4u")
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("a summary rolled into a newer one is not injected beside it", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        for (let i = 0; i < 4; i++) yield* ctx.appendMessages("b4r", toolTurn(`step ${i}`, "grep", 800))
        const first = yield* TieredCompaction.compactContext("b4r", 200, { keepTokens: 0 })
        const firstText = textsOfKind(first.window.history, "summary")
        for (let i = 4; i < 7; i++) yield* ctx.appendMessages("b4r", toolTurn(`step ${i}`, "grep", 800))
        const second = yield* TieredCompaction.compactContext("b4r", 200, { keepTokens: 0 })
        const secondText = textsOfKind(second.window.history, "summary")
        assert.notDeepEqual(secondText, firstText)
        // The newest summary leaves the window (say a removal); injectSummaries brings it back, and only it.
        yield* ctx.removeKind("b4r", "summary")
        const injected = yield* ctx.injectSummaries("b4r", 5_000)
        assert.deepStrictEqual(textsOfKind(injected.window.knowledge, "summary"), secondText)
        yield* replayMatches("b4r")
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`behaviour 6 on ${store.name}: proactive compression compares like with like`, () => {
    it.effect("reported usage loses the tool schemas and reminder the budget leaves out", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        for (let i = 0; i < 6; i++) yield* ctx.appendMessages("b6", toolTurn(`step ${i}`, "grep", 800))
        const window = yield* ctx.load("b6")
        // 40 tools' schemas: 4,000 tokens that every request carries and the budget already leaves out.
        const budget = Budget.make({
          contextWindow: 12_000,
          outputReserve: 1_000,
          toolTokens: 4_000,
          reminderTokens: 50
        })
        const config: TieredCompaction.Config = { budget }
        const available = Budget.available(budget)
        assert.isBelow(window.tokens.total, available * 0.6)
        const reported = window.tokens.total + budget.toolTokens + budget.reminderTokens
        // Reported usage with the schemas is over 60% of the budget; the prompt the budget measures is not.
        assert.isAbove(reported, available * 0.6)
        const quiet = yield* TieredCompaction.maybeProactiveCompress("b6", config, { inputTokens: reported })
        assert.strictEqual(quiet._tag, "NoChange")
        if (quiet._tag === "NoChange") assert.strictEqual(quiet.reason, "below the proactive threshold")
        // A bare-number budget says nothing of the schemas: the caller names them.
        const bare = yield* TieredCompaction.maybeProactiveCompress(
          "b6",
          { budget: available },
          { inputTokens: reported, reservedTokens: budget.toolTokens + budget.reminderTokens }
        )
        assert.strictEqual(bare._tag, "NoChange")
        // Real pressure still fires.
        const busy = yield* TieredCompaction.maybeProactiveCompress("b6", config, {
          inputTokens: Math.ceil(available * 0.8) + budget.toolTokens + budget.reminderTokens
        })
        assert.strictEqual(busy._tag, "Compacted")
        yield* replayMatches("b6")
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`behaviour 7 on ${store.name}: resetConversation carries the usage calibration`, () => {
    it.effect("the new stream corrects estimates as the old one did", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt("b7", "You are terse.")
        yield* ctx.appendMessages("b7", [Message.user("hello"), Message.assistant("hi")])
        const usage = (estimated: number, reported: number): WindowEvent.Draft => ({
          _tag: "UsageReported",
          provider: "anthropic",
          model: "m",
          estimatedInputTokens: estimated,
          inputTokens: reported,
          outputTokens: 5,
          cacheReadTokens: 0,
          cacheWriteTokens: 0
        })
        yield* ctx.run("b7", () => Either.right([usage(100, 130), usage(200, 250)]))
        const before = yield* ctx.load("b7")
        assert.closeTo(Window.calibrationRatio(before), 380 / 300, 1e-9)
        const out = yield* ctx.resetConversation("b7")
        assert.deepStrictEqual(out.window.calibration, before.calibration)
        const fresh = yield* replayMatches(out.stream)
        assert.deepStrictEqual(fresh.calibration, before.calibration)
        assert.deepStrictEqual(fresh.history, [])
        const carried = (yield* stored(out.stream)).find((event) => event._tag === "CalibrationCarried")
        assert.strictEqual(carried?._tag === "CalibrationCarried" ? carried.from : undefined, "b7")
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })
}
