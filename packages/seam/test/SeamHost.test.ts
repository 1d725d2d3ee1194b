import { Compactor, ContextService, EventLog, Message, ToolPairs } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { ArchivedContext, Briefing, type SeamConfig, SeamHost } from "../src/index.js"
import type { SeamConfigInput } from "../src/SeamConfig.js"
import { type CompactorCalls, coreLayer, hostLayer, prepared } from "./support.js"

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ")

/** One turn: a request, a tool call, its result, an answer (4 messages). */
const turn = (i: number): ReadonlyArray<Message.MessageInput> => [
  Message.user(`request ${i}: ${words(10, "w")}`),
  Message.assistant("", [Message.toolCall(`c${i}`, "read_file", { path: `src/file${i}.ts` })]),
  Message.tool(`c${i}`, `contents of file ${i}: ${words(20, "x")}`),
  Message.assistant(`done with step ${i}`)
]

const turns = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => turn(from + k)).flat()

const low = { level1: 50, level2: 100_000, level3: 200_000 }

const ids = (messages: ReadonlyArray<Message.Message>) => messages.map((message) => message.id)

const setup = (stream: string, inputs: ReadonlyArray<Message.MessageInput>) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    yield* ctx.setSystemPrompt(stream, "You are a careful coding agent.")
    return yield* ctx.appendMessages(stream, inputs)
  })

const withHost = (config: SeamConfigInput, calls: CompactorCalls = []) => Effect.provide(hostLayer(config, calls))

describe("produceSoftSeam", () => {
  it.effect("summarizes the range into an archived_context block and keeps pinned messages verbatim", () => {
    const calls: CompactorCalls = []
    return Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const messages = yield* prepared([
        Message.user("first request"),
        Message.assistant("first answer"),
        { ...Message.user("PINNED: never forget the API key lives in vault"), pinned: true },
        Message.assistant("second answer"),
        Message.user("third request"),
        Message.assistant("third answer")
      ])
      const seam = yield* host.produceSoftSeam(messages, 1, 0, 5, "/repo", [3])
      const [first, second, pinned, byIndex, third] = messages
      // The third request is the user's latest ask: kept like a pinned message (ADR 0124).
      assert.deepStrictEqual(seam.replacedIds, ids([first, second].flatMap((m) => (m ? [m] : []))))
      assert.deepStrictEqual(seam.keptIds, ids([pinned, byIndex, third].flatMap((m) => (m ? [m] : []))))
      assert.strictEqual(seam.message.kind, "seam")
      assert.strictEqual(seam.message.role, "assistant")
      const blocks = ArchivedContext.parse(Message.textOf(seam.message))
      assert.strictEqual(blocks.length, 1)
      assert.strictEqual(blocks[0]?.level, 1)
      assert.deepStrictEqual(blocks[0]?.attributes, { workspace: "/repo" })
      // The summarizer never saw the pinned messages: they stay as they are.
      assert.strictEqual(calls.length, 1)
      assert.deepStrictEqual(ids(calls[0]?.messages ?? []), seam.replacedIds)
      assert.strictEqual(calls[0]?.maxSummaryTokens, 1200)
    }).pipe(withHost({ thresholds: low }, calls))
  })

  it.effect("moves range ends so no tool call is separated from its result", () =>
    Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const messages = yield* prepared([
        Message.user("go"),
        // Two parallel calls answered by two tool messages: one group of three messages.
        Message.assistant("", [Message.toolCall("a", "ls", {}), Message.toolCall("b", "cat", { path: "x" })]),
        Message.tool("a", "x y"),
        Message.tool("b", "hello"),
        Message.assistant("ok"),
        Message.assistant("", [Message.toolCall("c", "ls", {})]),
        // The user's latest ask, after every range below: "go" is an earlier request a seam may fold.
        Message.user("and now?")
      ])
      // End inside the group: pulled back before the call.
      const cutEnd = yield* host.produceSoftSeam(messages, 1, 0, 3)
      assert.deepStrictEqual([cutEnd.start, cutEnd.end], [0, 1])
      // Start inside the group: pushed past its last result.
      const cutStart = yield* host.produceSoftSeam(messages, 1, 2, 5)
      assert.deepStrictEqual([cutStart.start, cutStart.end], [4, 5])
      // A call still waiting for its result is never folded.
      const pending = yield* host.produceSoftSeam(messages, 1, 0, 6)
      assert.deepStrictEqual([pending.start, pending.end], [0, 5])
      for (const seam of [cutEnd, cutStart, pending]) {
        const replaced = new Set(seam.replacedIds)
        const rest = [seam.message, ...messages.filter((message) => !replaced.has(message.id))]
        assert.deepStrictEqual(ToolPairs.problems(rest), [])
      }
    }).pipe(withHost({ thresholds: low }))
  )

  it.effect("keeps a pinned tool result together with its call", () =>
    Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const messages = yield* prepared([
        Message.user("go"),
        Message.assistant("", [Message.toolCall("k", "grep", { q: "TODO" })]),
        { ...Message.tool("k", "3 matches"), pinned: true },
        Message.assistant("found them")
      ])
      const seam = yield* host.produceSoftSeam(messages, 2, 0, 4)
      // "go" is the user's latest ask: kept too (ADR 0124).
      assert.deepStrictEqual(seam.keptIds, ids(messages.slice(0, 3)))
      assert.deepStrictEqual(seam.replacedIds, ids([messages[3]].flatMap((m) => (m ? [m] : []))))
      // A range that holds only the ask folds nothing: a typed error, as for a range of pinned messages.
      const onlyAsk = yield* Effect.flip(host.produceSoftSeam(messages, 2, 0, 1))
      assert.include(onlyAsk.message, "nothing to fold")
    }).pipe(withHost({ thresholds: low }))
  )

  it.effect("rejects a bad range or level with a typed error naming it", () =>
    Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const messages = yield* prepared([Message.user("a"), { ...Message.user("b"), pinned: true }])
      const outOfBounds = yield* Effect.flip(host.produceSoftSeam(messages, 1, 0, 3))
      assert.strictEqual(outOfBounds._tag, "SeamRangeError")
      assert.include(outOfBounds.message, "produceSoftSeam: range [0, 3) of 2 messages")
      const reversed = yield* Effect.flip(host.produceSoftSeam(messages, 1, 2, 1))
      assert.include(reversed.message, "start is after end")
      const onlyPinned = yield* Effect.flip(host.produceSoftSeam(messages, 1, 1, 2))
      assert.include(onlyPinned.message, "nothing to fold")
      // A level from untyped input (JSON), as a caller outside TypeScript could pass it.
      const untypedLevel: SeamConfig.SeamLevel = JSON.parse("4")
      const badLevel = yield* Effect.flip(host.recompact([], messages, untypedLevel, 0, 1))
      assert.include(badLevel.message, "level 4 is not 1, 2 or 3")
    }).pipe(withHost({ thresholds: low }))
  )
})

describe("recompact", () => {
  it.effect("fuses earlier seams and recent messages into one seam, never at a lower level", () => {
    const calls: CompactorCalls = []
    return Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const messages = yield* prepared(turns(0, 3))
      const first = yield* host.produceSoftSeam(messages, 1, 0, 4)
      const second = yield* host.produceSoftSeam(messages, 2, 4, 8)
      const fused = yield* host.recompact([first.message, second.message], messages, 2, 8, 12)
      assert.isTrue(fused.recompacted)
      // Request 2 (index 8) is the user's latest ask: the fused seam keeps it (ADR 0124).
      assert.deepStrictEqual(fused.replacedIds, [first.message.id, second.message.id, ...ids(messages.slice(9, 12))])
      assert.deepStrictEqual(fused.keptIds, ids(messages.slice(8, 9)))
      assert.deepStrictEqual(ids(calls[2]?.messages ?? []), fused.replacedIds)
      assert.strictEqual(calls[2]?.maxSummaryTokens, 800)
      const lower = yield* Effect.flip(host.recompact([first.message, second.message], messages, 1, 8, 12))
      assert.include(lower.message, "level 1 is below an existing seam's level 2")
    }).pipe(withHost({ thresholds: low }, calls))
  })
})

describe("produceFlashBriefing", () => {
  it.effect("includes the seams, highest level first, and the state text", () =>
    Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const messages = yield* prepared(turns(0, 2))
      const light = yield* host.produceSoftSeam(messages, 1, 0, 4)
      const dense = yield* host.produceSoftSeam(messages, 3, 4, 8)
      const state = Briefing.stateText({
        mode: "implement",
        workspace: "/work/repo",
        workingSet: ["src/parser.ts", "test/parser.test.ts"],
        todos: ["handle empty input"],
        plan: ["write the failing test", "fix the parser"]
      })
      const briefing = yield* host.produceFlashBriefing([light.message, dense.message], state)
      assert.strictEqual(briefing.kind, "briefing")
      assert.strictEqual(briefing.role, "user")
      const text = Message.textOf(briefing)
      for (const expected of [
        "Mode: implement",
        "Workspace: /work/repo",
        "- src/parser.ts",
        "- handle empty input",
        "Plan:\n- write the failing test\n- fix the parser"
      ]) {
        assert.include(text, expected)
      }
      assert.isBelow(text.indexOf('level="3"'), text.indexOf('level="1"'))
      assert.isBelow(text.indexOf('level="1"'), text.indexOf("<state>"))
      // Blocks in a briefing (a user message) are not collected as seams.
      assert.deepStrictEqual(host.collectSeamTexts([briefing]), [])
    }).pipe(withHost({ thresholds: low }))
  )
})

describe("runSeamPipeline", () => {
  it.effect("replaces the history before the verbatim window with a level-1 seam", () =>
    Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const before = yield* setup("p1", turns(0, 3))
      assert.deepStrictEqual(yield* host.highestLevel("p1"), Option.none())
      assert.deepStrictEqual(host.seamLevelFor(49, Option.none()), Option.none())
      assert.deepStrictEqual(host.seamLevelFor(50, Option.none()), Option.some(1))
      assert.deepStrictEqual(host.seamLevelFor(50, Option.some(3)), Option.some(3))
      assert.strictEqual(host.verbatimWindowStart(before.window.history.length), 8)
      const out = yield* SeamHost.runSeamPipeline("p1", { workspace: "/repo" })
      assert.strictEqual(out.action, "produced")
      assert.deepStrictEqual(out.level, Option.some(1))
      assert.deepStrictEqual(
        out.events.map((event) => event._tag),
        ["SeamProduced"]
      )
      const history = out.window.history
      assert.strictEqual(history.length, 5)
      assert.strictEqual(history[0]?.kind, "seam")
      assert.deepStrictEqual(ids(history.slice(1)), ids(before.window.history.slice(8)))
      assert.deepStrictEqual(out.window.seams, [{ messageId: history[0]?.id ?? "", level: 1 }])
      assert.deepStrictEqual(
        host.collectSeamTexts(history).map((text) => [text.level, text.attributes.workspace]),
        [[1, "/repo"]]
      )
      assert.deepStrictEqual(yield* host.highestLevel("p1"), Option.some(1))
      assert.strictEqual(yield* host.seamCount("p1"), 1)
      assert.isBelow(out.window.tokens.history, before.window.tokens.history)
      const log = yield* EventLog.EventLog
      const stored = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("p1", { from: out.window.version })))
      assert.deepStrictEqual(
        stored.map((envelope) => [envelope.type, envelope.metadata.actor]),
        [["SeamProduced", "seam"]]
      )
      // Nothing more to fold: a second run is a no-op.
      const again = yield* SeamHost.runSeamPipeline("p1")
      assert.strictEqual(again.action, "none")
      assert.deepStrictEqual(again.events, [])
    }).pipe(withHost({ thresholds: low, verbatimWindow: 4 }))
  )

  it.effect("never splits a tool call from its result at the verbatim boundary", () =>
    Effect.gen(function* () {
      yield* setup("p2", turns(0, 3))
      // The verbatim window of 2 would start between c2's call and result; the seam stops before the call.
      // Request 2, the user's latest ask, stays after the seam (ADR 0124).
      const out = yield* SeamHost.runSeamPipeline("p2")
      const history = out.window.history
      assert.deepStrictEqual(
        history.map((message) => message.role),
        ["assistant", "user", "assistant", "tool", "assistant"]
      )
      assert.strictEqual(history[0]?.kind, "seam")
      assert.include(Message.textOf(history[1] ?? Message.user("")), "request 2:")
      assert.deepStrictEqual(history[2] === undefined ? [] : Message.toolCallsOf(history[2]).map((call) => call.id), [
        "c2"
      ])
      assert.deepStrictEqual(ToolPairs.problems(history, out.window.completedToolIds), [])
    }).pipe(withHost({ thresholds: low, verbatimWindow: 2 }))
  )

  it.effect("keeps pinned messages verbatim in the window", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const before = yield* setup("p3", turns(0, 3))
      const pinned = before.window.history[4]
      assert.isDefined(pinned)
      yield* ctx.pin("p3", pinned?.id ?? "")
      const out = yield* SeamHost.runSeamPipeline("p3")
      const kept = out.window.history.find((message) => message.id === pinned?.id)
      assert.deepStrictEqual(kept?.parts, pinned?.parts)
      assert.isTrue(kept?.pinned)
      const event = out.events[0]
      assert.strictEqual(event?._tag, "SeamProduced")
      if (event?._tag === "SeamProduced") assert.notInclude(event.replacedIds, pinned?.id)
      assert.deepStrictEqual(
        out.window.history.slice(0, 2).map((message) => message.id),
        [out.window.seams[0]?.messageId, pinned?.id]
      )
    }).pipe(withHost({ thresholds: low, verbatimWindow: 4 }))
  )

  it.effect("recompaction consumes earlier seams when the level rises, and the level never falls", () => {
    const calls: CompactorCalls = []
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* setup("p4", turns(0, 3))
      const first = yield* SeamHost.runSeamPipeline("p4", { activeInputTokens: 60 })
      yield* ctx.appendMessages("p4", turns(3, 5))
      const second = yield* SeamHost.runSeamPipeline("p4", { activeInputTokens: 60 })
      assert.deepStrictEqual([first.action, second.action], ["produced", "produced"])
      const earlier = second.window.seams.map((seam) => seam.messageId)
      assert.strictEqual(earlier.length, 2)
      yield* ctx.appendMessages("p4", turns(5, 7))
      const fused = yield* SeamHost.runSeamPipeline("p4", { activeInputTokens: 150 })
      assert.strictEqual(fused.action, "recompacted")
      const event = fused.events[0]
      assert.strictEqual(event?._tag, "SeamsRecompacted")
      if (event?._tag === "SeamsRecompacted") {
        assert.strictEqual(event.level, 2)
        assert.deepStrictEqual(event.replacedIds.slice(0, 2), earlier)
      }
      assert.deepStrictEqual(fused.window.seams, [{ messageId: fused.window.history[0]?.id ?? "", level: 2 }])
      const historyIds = new Set(ids(fused.window.history))
      for (const id of earlier) assert.isFalse(historyIds.has(id))
      // The summarizer got the earlier seams' text to fuse.
      assert.deepStrictEqual(ids(calls[2]?.messages ?? []).slice(0, 2), earlier)
      // Back at level-1 pressure, the next seam is still level 2.
      yield* ctx.appendMessages("p4", turns(7, 9))
      const next = yield* SeamHost.runSeamPipeline("p4", { activeInputTokens: 60 })
      assert.deepStrictEqual([next.action, next.level], ["produced", Option.some(2)])
      assert.deepStrictEqual(
        next.window.seams.map((seam) => seam.level),
        [2, 2]
      )
    }).pipe(withHost({ thresholds: { level1: 50, level2: 100, level3: 100_000 }, verbatimWindow: 4 }, calls))
  })

  it.effect("fuses seams at the same level once maxSeamsPerLevel exist", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* setup("p5", turns(0, 3))
      yield* SeamHost.runSeamPipeline("p5")
      yield* ctx.appendMessages("p5", turns(3, 5))
      yield* SeamHost.runSeamPipeline("p5")
      yield* ctx.appendMessages("p5", turns(5, 7))
      const out = yield* SeamHost.runSeamPipeline("p5")
      assert.strictEqual(out.action, "recompacted")
      assert.deepStrictEqual(
        out.window.seams.map((seam) => seam.level),
        [1]
      )
    }).pipe(withHost({ thresholds: low, verbatimWindow: 4, maxSeamsPerLevel: 2 }))
  )

  it.effect("at level 3 with advanceCycle: briefing with state text, cycle advanced, seams reset", () => {
    const calls: CompactorCalls = []
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const host = yield* SeamHost.SeamHost
      const before = yield* setup("p6", turns(0, 4))
      const pinned = before.window.history[0]
      yield* ctx.pin("p6", pinned?.id ?? "")
      const state = Briefing.stateText({ mode: "debug", workspace: "/srv/app", todos: ["rerun tests"] })
      const out = yield* SeamHost.runSeamPipeline("p6", { activeInputTokens: 400, stateText: state })
      assert.deepStrictEqual(
        out.events.map((event) => event._tag),
        ["SeamProduced", "BriefingProduced", "CycleAdvanced", "SeamsReset"]
      )
      assert.isTrue(out.cycleAdvanced)
      assert.strictEqual(out.window.cycle, 1)
      assert.deepStrictEqual(out.window.seams, [])
      const [briefing, ...rest] = out.window.history
      assert.strictEqual(briefing?.kind, "briefing")
      const text = briefing === undefined ? "" : Message.textOf(briefing)
      assert.include(text, "Mode: debug")
      assert.include(text, "- rerun tests")
      assert.include(text, '<archived_context level="3">')
      // The pinned message and the verbatim window survive; the seam left with the cycle.
      assert.deepStrictEqual(ids(rest), [pinned?.id, ...ids(before.window.history.slice(12))])
      assert.deepStrictEqual(yield* host.highestLevel("p6"), Option.none())
      assert.strictEqual(yield* host.seamCount("p6"), 0)
      // The next cycle's seam folds the previous briefing in, so its content is carried, not dropped.
      yield* ctx.appendMessages("p6", turns(4, 6))
      const next = yield* SeamHost.runSeamPipeline("p6", { activeInputTokens: 400 })
      const fused = next.events[0]
      assert.strictEqual(fused?._tag, "SeamsRecompacted")
      if (fused?._tag === "SeamsRecompacted") assert.strictEqual(fused.replacedIds[0], briefing?.id)
      assert.strictEqual(calls[calls.length - 1]?.messages[0]?.id, briefing?.id)
      assert.strictEqual(next.window.cycle, 2)
      assert.deepStrictEqual(
        next.window.history.filter((message) => message.kind === "briefing").map((message) => message.id),
        [next.events[1]?._tag === "BriefingProduced" ? next.events[1].message.id : "missing"]
      )
    }).pipe(
      withHost({ thresholds: { level1: 50, level2: 100, level3: 300 }, verbatimWindow: 4, advanceCycle: true }, calls)
    )
  })

  it.effect("reset clears seam state; the next seam starts at level 1 again after the old one", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const host = yield* SeamHost.SeamHost
      yield* setup("p7", turns(0, 3))
      yield* SeamHost.runSeamPipeline("p7", { activeInputTokens: 150 })
      assert.deepStrictEqual(yield* host.highestLevel("p7"), Option.some(2))
      const reset = yield* host.reset("p7")
      assert.deepStrictEqual(
        reset.events.map((event) => event._tag),
        ["SeamsReset"]
      )
      assert.strictEqual(yield* host.seamCount("p7"), 0)
      assert.deepStrictEqual(yield* host.highestLevel("p7"), Option.none())
      assert.deepStrictEqual((yield* host.reset("p7")).events, [])
      const oldSeam = reset.window.history[0]
      yield* ctx.appendMessages("p7", turns(3, 5))
      const out = yield* SeamHost.runSeamPipeline("p7", { activeInputTokens: 60 })
      assert.deepStrictEqual([out.action, out.level], ["produced", Option.some(1)])
      // The old seam message stays where it was and is not folded again.
      assert.strictEqual(out.window.history[0]?.id, oldSeam?.id)
      const event = out.events[0]
      if (event?._tag === "SeamProduced") assert.notInclude(event.replacedIds, oldSeam?.id)
    }).pipe(withHost({ thresholds: { level1: 50, level2: 100, level3: 100_000 }, verbatimWindow: 4 }))
  )

  it.effect("writes nothing when disabled or below the first threshold", () =>
    Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      yield* setup("p8", turns(0, 3))
      const version = yield* log.version("p8")
      const host = yield* SeamHost.SeamHost
      assert.isFalse(host.configEnabled)
      const out = yield* SeamHost.runSeamPipeline("p8", { activeInputTokens: 1_000_000 })
      assert.deepStrictEqual([out.action, out.events.length], ["none", 0])
      assert.strictEqual(yield* log.version("p8"), version)
    }).pipe(withHost({ thresholds: low, enabled: false }))
  )

  it.effect("fails with SeamRangeChanged and writes nothing when the range leaves the window meanwhile", () => {
    // A summarizer that, while it works, has another writer trim the oldest history away.
    const interfering = Layer.effect(
      Compactor.Compactor,
      Effect.map(ContextService.ContextService, (ctx) => ({
        name: "interfering",
        compact: () => ctx.trimToBudget("p9", 1).pipe(Effect.orDie, Effect.as({ summary: "too late" }))
      }))
    )
    return Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      yield* setup("p9", turns(0, 3))
      const error = yield* Effect.flip(SeamHost.runSeamPipeline("p9"))
      assert.strictEqual(error._tag, "SeamRangeChanged")
      const version = yield* log.version("p9")
      const ctx = yield* ContextService.ContextService
      const window = yield* ctx.load("p9")
      assert.strictEqual(window.version, version)
      assert.deepStrictEqual(window.seams, [])
      assert.isFalse(window.history.some((message) => message.kind === "seam"))
    }).pipe(
      Effect.provide(
        SeamHost.layerCompactor({ thresholds: low, verbatimWindow: 4 }).pipe(
          Layer.provide(interfering),
          Layer.provideMerge(coreLayer)
        )
      )
    )
  })
})
