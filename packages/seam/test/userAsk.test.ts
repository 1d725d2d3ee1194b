// Issue 39 (ADR 0124): no seam folds the user's latest ask. A one-ask agent turn (one request, then many
// tool rounds) runs the seam pipeline after every round through soft seams, recompaction and a cycle
// boundary: after each run the window holds the ask verbatim, and no seam summary is refused by the
// user-ask guard (it is on for the seam path).
import { ContextService, Message, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SeamHost } from "../src/index.js"
import { hostLayer } from "./support.js"

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ")

/** One tool round of the turn: a call, its result, a note (no user message). */
const round = (i: number): ReadonlyArray<Message.MessageInput> => [
  Message.assistant("", [Message.toolCall(`c${i}`, "read_file", { path: `src/file${i}.ts` })]),
  Message.tool(`c${i}`, `contents of file ${i}: ${words(30, "x")}`),
  Message.assistant(`read file ${i}, ${words(8, "n")}`)
]

describe("seams keep the user's latest ask (issue 39)", () => {
  it.effect("a one-ask turn through seams, recompaction and a cycle: every window holds the ask", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("one-ask", "You are a careful coding agent.")
      const ask = Message.user(`Fix the failing cart test. ${words(20, "detail")}`)
      const [asked] = (yield* ctx.appendMessages("one-ask", [ask])).window.history
      assert.isDefined(asked)
      const actions: Array<string> = []
      let cycles = 0
      for (let i = 0; i < 24; i++) {
        yield* ctx.appendMessages("one-ask", round(i))
        const out = yield* SeamHost.runSeamPipeline("one-ask", { workspace: "/repo" })
        actions.push(out.action)
        if (out.cycleAdvanced) cycles += 1
        const kept: Message.Message | undefined = out.window.history.find((message) => message.id === asked?.id)
        assert.isDefined(kept, `after round ${i} (${out.action}) the window lost the user's ask`)
        assert.deepStrictEqual(kept?.parts, asked?.parts)
        assert.strictEqual(Window.latestUserAsk(out.window), asked?.id)
        for (const event of out.events) {
          if (event._tag === "SeamProduced" || event._tag === "SeamsRecompacted") {
            assert.notInclude(event.replacedIds, asked?.id)
          }
          if (event._tag === "CycleAdvanced") assert.notInclude(event.removedIds, asked?.id)
        }
      }
      // The pipeline did act, through every kind of step, and the guard refused none of it.
      assert.notInclude(actions, "refused")
      assert.include(actions, "produced")
      assert.include(actions, "recompacted")
      assert.isAbove(cycles, 0, `a cycle boundary (${actions.join(",")})`)
    }).pipe(
      Effect.provide(
        hostLayer({
          thresholds: { level1: 200, level2: 350, level3: 500 },
          verbatimWindow: 3,
          maxSeamsPerLevel: 2,
          advanceCycle: true
        })
      )
    )
  )
})
