// The seam pipeline's summaries pass the same guards as every summarizing path (issue 39, build item 2):
// an empty summary used to become an empty `<archived_context>` seam. Now it is refused, recorded as
// `CompactionFailed` (tier `seam`, `guard:<reason>`), and the window stays as it was; a guard a policy
// adds (`SummaryGuard.layer`) refuses the same way; a seam's receipt names what it replaced.
import { SummaryGuard } from "@ctxlog/compaction"
import { Compactor, ContextService, Message, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { SeamHost } from "../src/index.js"
import { coreLayer, hostLayer } from "./support.js"

const turns = (count: number): ReadonlyArray<Message.MessageInput> =>
  Array.from({ length: count }, (_, i) => [
    Message.user(`request ${i}: edit src/cart.js and keep the totals right, step ${i}`),
    Message.assistant(`done with step ${i}, src/cart.js updated`)
  ]).flat()

const config = { thresholds: { level1: 50, level2: 100_000, level3: 200_000 }, verbatimWindow: 2 }

const answering = (summary: string): Layer.Layer<Compactor.Compactor> =>
  Layer.succeed(Compactor.Compactor, { name: "fixed", compact: () => Effect.succeed({ summary }) })

const hostAnswering = (summary: string) =>
  SeamHost.layerCompactor(config).pipe(Layer.provide(answering(summary)), Layer.provideMerge(coreLayer))

const setup = (stream: string) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    return (yield* ctx.appendMessages(stream, turns(4))).window
  })

describe("seam pipeline guards", () => {
  it.effect("an empty summary makes no seam: refused, recorded, the window unchanged", () =>
    Effect.gen(function* () {
      const before = yield* setup("g1")
      const out = yield* SeamHost.runSeamPipeline("g1")
      assert.strictEqual(out.action, "refused")
      assert.deepStrictEqual(out.level, Option.some(1))
      const [failed] = out.events
      assert.strictEqual(out.events.length, 1)
      if (failed?._tag !== "CompactionFailed") return assert.fail("no CompactionFailed")
      assert.strictEqual(failed.tier, "seam")
      assert.match(failed.reason, /^guard:empty: /)
      assert.deepStrictEqual(out.window.history, before.history)
      assert.deepStrictEqual(out.window.seams, [])
    }).pipe(Effect.provide(hostAnswering("   ")))
  )

  it.effect("a fallback text is refused the same way", () =>
    Effect.gen(function* () {
      yield* setup("g2")
      const out = yield* SeamHost.runSeamPipeline("g2")
      assert.strictEqual(out.action, "refused")
      assert.match(out.events[0]?._tag === "CompactionFailed" ? out.events[0].reason : "", /^guard:fallback: /)
    }).pipe(Effect.provide(hostAnswering("No summary.")))
  )

  it.effect("a guard a policy adds refuses a seam's summary; pinned identifiers from the policy are kept", () =>
    Effect.gen(function* () {
      yield* setup("g3")
      const out = yield* SeamHost.runSeamPipeline("g3")
      assert.strictEqual(out.action, "refused")
      const reason = out.events[0]?._tag === "CompactionFailed" ? out.events[0].reason : ""
      assert.strictEqual(reason, "guard:pinned: it drops pinned identifier(s) src/cart.js")
    }).pipe(
      Effect.provide(hostAnswering("The user asked for edits to the cart; all done.")),
      Effect.provide(SummaryGuard.layer({ pinnedIdentifiers: ["src/cart.js"] }))
    )
  )

  it.effect("a policy's own guard is the last word", () =>
    Effect.gen(function* () {
      yield* setup("g4")
      const out = yield* SeamHost.runSeamPipeline("g4")
      assert.strictEqual(out.action, "refused")
      const reason = out.events[0]?._tag === "CompactionFailed" ? out.events[0].reason : ""
      assert.strictEqual(reason, "guard:policy: mentions-totals: the summary never says 'totals'")
    }).pipe(
      Effect.provide(hostAnswering("Steps 0 to 2 edited src/cart.js.")),
      Effect.provide(
        SummaryGuard.layer({
          guards: [
            {
              name: "mentions-totals",
              check: (summary) =>
                summary.includes("totals") ? Option.none() : Option.some({ detail: "the summary never says 'totals'" })
            }
          ]
        })
      )
    )
  )

  it.effect("a produced seam's receipt: what it replaced, its tokens and the events they came from", () =>
    Effect.gen(function* () {
      const before = yield* setup("g5")
      const out = yield* SeamHost.runSeamPipeline("g5")
      assert.strictEqual(out.action, "produced")
      const seam = out.events[0]
      if (seam?._tag !== "SeamProduced") return assert.fail("no SeamProduced")
      const replaced = seam.replacedIds.map((id) => Window.findMessage(before, id))
      assert.deepStrictEqual(seam.receipt, {
        tokensBefore: before.tokens.total,
        tokensAfter: out.window.tokens.total,
        replacedTokens: replaced.reduce((sum, message) => sum + (message?.tokens ?? 0), 0),
        sources: [...new Set(replaced.map((message) => message?.origin?.eventId ?? "?"))]
      })
    }).pipe(Effect.provide(hostLayer(config)))
  )
})
