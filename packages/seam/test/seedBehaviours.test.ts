// Issue 20: seed behaviour 9 (a compaction that removes a seam keeps the levels it produced) and the
// seam half of the unseen-tool-result guarantee (part B).
import { ContextService, EventLog, Message, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { SeamHost } from "../src/index.js"
import type { SeamConfigInput } from "../src/SeamConfig.js"
import { hostLayer } from "./support.js"

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ")

/** One turn: a request, a tool call, its result, an answer (4 messages). */
const turn = (i: number): ReadonlyArray<Message.MessageInput> => [
  Message.user(`request ${i}: ${words(10, "w")}`),
  Message.assistant("", [Message.toolCall(`c${i}`, "read_file", { path: `src/file${i}.ts` })]),
  Message.tool(`c${i}`, `contents of file ${i}: ${words(20, "x")}`),
  Message.assistant(`done with step ${i}`)
]
const turns = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => turn(from + k)).flat()

const withHost = (config: SeamConfigInput) => Effect.provide(hostLayer(config))

/** The live window equals a replay of the log. */
const replayed = (stream: string) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream))).map((envelope) => envelope.event)
    const live = yield* Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load(stream))
    const window = Window.replay(events)
    assert.deepStrictEqual(window.seams, live.seams)
    assert.deepStrictEqual(Window.messages(window), Window.messages(live))
    return window
  })

describe("behaviour 9: a compaction that removes a seam keeps the seam levels it produced", () => {
  it.effect("after a summary rolls a level-2 seam in, the host is still at level 2 and the next seam too", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const host = yield* SeamHost.SeamHost
      yield* ctx.setSystemPrompt("s9", "You are a careful coding agent.")
      yield* ctx.appendMessages("s9", turns(0, 3))
      const seamed = yield* SeamHost.runSeamPipeline("s9", { activeInputTokens: 150 })
      assert.deepStrictEqual([seamed.action, seamed.level], ["produced", Option.some(2)])
      // A compaction summarizes everything before the newest turn, the seam included.
      const history = seamed.window.history
      const removed = history.slice(0, -1).map((message) => message.id)
      assert.isTrue(removed.some((id) => seamed.window.seams.some((seam) => seam.messageId === id)))
      const [summary] = yield* ctx.prepare([Message.assistant("Summary: files 0 to 2 were read.")], "summary")
      if (summary === undefined) return
      yield* ctx.run("s9", () =>
        Either.right([
          {
            _tag: "Compacted",
            tier: "hard",
            summary,
            removedIds: removed,
            carryOver: "files 0 to 2 were read",
            throughVersion: seamed.window.version,
            cooldownTurns: 0
          } as const
        ])
      )
      assert.deepStrictEqual(yield* host.highestLevel("s9"), Option.some(2))
      yield* ctx.appendMessages("s9", turns(3, 6))
      // Back at level-1 pressure: the level never falls, so the next seam is level 2 (it folds the summary in).
      const next = yield* SeamHost.runSeamPipeline("s9", { activeInputTokens: 60 })
      assert.notStrictEqual(next.action, "none")
      assert.deepStrictEqual(next.level, Option.some(2))
      assert.deepStrictEqual(
        next.window.seams.map((seam) => seam.level),
        [2]
      )
      yield* replayed("s9")
    }).pipe(withHost({ thresholds: { level1: 50, level2: 100, level3: 100_000 }, verbatimWindow: 4 }))
  )
})

describe("part B: the seam pipeline never folds a tool result the model has not seen", () => {
  it.effect("a turn stopped on a tool result, then a user interjection: the result and its call stay whole", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const output = `contents of a.ts\n${words(700, "line")}`
      yield* ctx.appendMessages("sb", [
        Message.user("hello"),
        Message.assistant("hi"),
        Message.user("read a.ts"),
        Message.assistant("", [Message.toolCall("x", "read_file", { path: "a.ts" })]),
        Message.tool("x", output),
        Message.user("also, hurry")
      ])
      const out = yield* SeamHost.runSeamPipeline("sb")
      assert.strictEqual(out.action, "produced")
      const results = out.window.history.flatMap(Message.toolResultsOf)
      assert.deepStrictEqual(
        results.map((result) => [result.toolCallId, result.content]),
        [["x", output]]
      )
      assert.isTrue(out.window.history.some((message) => Message.toolCallsOf(message).some((call) => call.id === "x")))
      assert.deepStrictEqual(Window.unseenToolResults(out.window).length, 1)
      yield* replayed("sb")
    }).pipe(withHost({ thresholds: { level1: 10, level2: 100_000, level3: 200_000 }, verbatimWindow: 1 }))
  )
})
