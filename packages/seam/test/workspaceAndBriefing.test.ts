// Issue 25 item 5: the summarizer receives the workspace and states paths relative to it; a briefing
// goes through a Compactor when one is given, within a token cap; the deterministic briefing otherwise.
import { Compactor, Message } from "@ctxlog/core"
import { TemplateCompactor } from "@ctxlog/compaction"
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ArchivedContext, Briefing, SeamHost } from "../src/index.js"
import { type CompactorCalls, coreLayer, prepared, recordingCompactor } from "./support.js"

const low = { level1: 50, level2: 100_000, level3: 200_000 }

const work = [
  Message.user("fix the parser in /work/repo/src/parser.ts"),
  Message.assistant("", [Message.toolCall("c1", "read_file", { path: "/work/repo/src/parser.ts" })]),
  Message.tool("c1", "export const parse = () => null // see /work/repo/test/parser.test.ts"),
  Message.assistant("The parser in /work/repo/src/parser.ts returns null; /work/repo2/x is another repo."),
  Message.user("now run the tests"),
  Message.assistant("running")
]

/** A "model" briefer that writes far past any cap, and counts its calls. */
const verbose = (calls: CompactorCalls): Compactor.Compactor.Service => ({
  name: "verbose",
  compact: (input) =>
    Effect.sync(() => {
      calls.push(input)
      return {
        summary: `Flash briefing of ${input.messages.length} messages. ${"The parser work continues. ".repeat(400)}`
      }
    })
})

const failing: Compactor.Compactor.Service = {
  name: "failing",
  compact: () => Effect.fail(new Compactor.CompactionError({ compactor: "failing", reason: "model", detail: "down" }))
}

describe("the seam summarizer receives the workspace", () => {
  it.effect("the compactor is given the workspace; the template summary states paths relative to it", () => {
    const calls: CompactorCalls = []
    return Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const messages = yield* prepared(work)
      const seam = yield* host.produceSoftSeam(messages, 1, 0, 4, "/work/repo")
      const body = ArchivedContext.parse(Message.textOf(seam.message))[0]?.body ?? ""
      assert.include(body, "src/parser.ts")
      assert.notInclude(body, "/work/repo/src")
      assert.include(body, "/work/repo2/x")
      const recomp = yield* host.recompact([seam.message], messages, 2, 4, 6, "/work/repo")
      assert.deepStrictEqual(
        ArchivedContext.parse(Message.textOf(recomp.message)).map((block) => block.attributes),
        [{ workspace: "/work/repo" }]
      )
    }).pipe(
      Effect.provide(
        SeamHost.layerCompactor({ thresholds: low }).pipe(
          Layer.provide(
            Layer.succeed(Compactor.Compactor, {
              name: "template-recording",
              compact: (input) => {
                calls.push(input)
                return TemplateCompactor.make({ maxBytes: 4000 }).compact(input)
              }
            })
          ),
          Layer.provideMerge(coreLayer)
        )
      ),
      Effect.tap(() =>
        Effect.sync(() =>
          assert.deepStrictEqual(
            calls.map((call) => call.workspace),
            ["/work/repo", "/work/repo"]
          )
        )
      )
    )
  })

  it("relativeToWorkspace leaves paths that only share a prefix or hold the workspace inside", () => {
    const relative = Compactor.relativeToWorkspace(
      "edited /repo/src/a.ts and /repo/README.md in /repo, not /repo2/x or /x/repo/y; cwd /repo. git /repo.git",
      "/repo/"
    )
    assert.strictEqual(relative, "edited src/a.ts and README.md in ., not /repo2/x or /x/repo/y; cwd .. git /repo.git")
    assert.strictEqual(Compactor.relativeToWorkspace("/repo/a", undefined), "/repo/a")
  })
})

describe("briefings", () => {
  it.effect("through the briefing compactor: a summary of the seams and the state, within the token cap", () => {
    const summarizer: CompactorCalls = []
    const briefer: CompactorCalls = []
    return Effect.gen(function* () {
      const host = yield* SeamHost.SeamHost
      const messages = yield* prepared(work)
      const seams = [
        (yield* host.produceSoftSeam(messages, 1, 0, 4)).message,
        (yield* host.produceSoftSeam(messages, 2, 4, 6)).message
      ]
      const briefing = yield* host.produceFlashBriefing(seams, Briefing.stateText({ todos: ["run the tests"] }))
      assert.strictEqual(briefing.kind, "briefing")
      assert.isAtMost(briefing.tokens, 120)
      assert.isAbove(briefing.tokens, 60)
      const text = Message.textOf(briefing)
      assert.isTrue(
        text.startsWith("<briefing>\nContext carried over from the previous cycle.\nFlash briefing of 3 messages.")
      )
      assert.isTrue(text.endsWith("…\n</briefing>"))
      // The briefer saw both seams and the state, and was asked for what fits the cap.
      assert.strictEqual(briefer.length, 1)
      assert.deepStrictEqual(
        briefer[0]?.messages.slice(0, 2).map((message) => message.id),
        seams.map((seam) => seam.id)
      )
      assert.include(Message.textOf(briefer[0]?.messages[2] ?? { parts: [] }), "- run the tests")
      assert.isBelow(briefer[0]?.maxSummaryTokens ?? 999, 120)
    }).pipe(
      Effect.provide(
        SeamHost.layerCompactor({ thresholds: low }).pipe(
          Layer.provide(recordingCompactor(summarizer)),
          Layer.provide(Briefing.layer(verbose(briefer), 120)),
          Layer.provideMerge(coreLayer)
        )
      )
    )
  })

  it.effect("without a briefing compactor, or when it fails, the deterministic briefing", () =>
    Effect.gen(function* () {
      const run = (layer: Layer.Layer<SeamHost.SeamHost, unknown, never>) =>
        Effect.gen(function* () {
          const host = yield* SeamHost.SeamHost
          const messages = yield* prepared(work)
          const seam = (yield* host.produceSoftSeam(messages, 1, 0, 4)).message
          return { briefing: Message.textOf(yield* host.produceFlashBriefing([seam], "Mode: fix")), seam }
        }).pipe(Effect.provide(Layer.merge(layer, coreLayer)))
      const plain = yield* run(
        SeamHost.layerCompactor({ thresholds: low }).pipe(Layer.provide(recordingCompactor()), Layer.provide(coreLayer))
      )
      assert.strictEqual(plain.briefing, Briefing.render(ArchivedContext.collect([plain.seam]), "Mode: fix"))
      const fellBack = yield* run(
        SeamHost.layerCompactor({ thresholds: low }).pipe(
          Layer.provide(recordingCompactor()),
          Layer.provide(Briefing.layer(failing, 200)),
          Layer.provide(coreLayer)
        )
      )
      assert.include(fellBack.briefing, "<archived_context")
      assert.include(fellBack.briefing, "<state>\nMode: fix\n</state>")
    })
  )

  it.effect("a cap that is not a positive integer is a typed error", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Layer.build(Briefing.layer(failing, 0)).pipe(Effect.scoped))
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(exit), "InvalidBriefingCap")
    })
  )

  it.effect("issue 39 defect 6: a cap smaller than the briefing's wrapper is a typed error naming the least cap", () =>
    Effect.gen(function* () {
      const calls: CompactorCalls = []
      const exit = yield* Effect.exit(
        Layer.build(
          SeamHost.layerCompactor({ thresholds: low }).pipe(
            Layer.provide(recordingCompactor()),
            Layer.provide(Briefing.layer(verbose(calls), 5)),
            Layer.provide(coreLayer)
          )
        ).pipe(Effect.scoped)
      )
      if (Exit.isSuccess(exit)) return assert.fail("a 5-token cap cannot hold the briefing's wrapper")
      const error = Cause.failureOption(exit.cause)
      if (Option.isNone(error) || error.value._tag !== "InvalidBriefingCap") return assert.fail(String(exit))
      assert.strictEqual(error.value.maxTokens, 5)
      assert.isAbove(error.value.minimum ?? 0, 5)
      assert.include(error.value.message, "wrapper")
      assert.strictEqual(calls.length, 0)
    })
  )
})
