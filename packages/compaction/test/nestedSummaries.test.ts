/**
 * Issue 39: on the demo, a seam re-summarized an earlier summary stored as a user message, taking it as
 * both the goal and a user request ("## Goal # Summary of earlier conversation ## Goal …"). A summary
 * among the messages a compactor folds is merged section by section, never taken as a request.
 */
import { Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { TemplateCompactor } from "../src/index.js"

const msg = (id: string, input: Message.MessageInput): Message.Message => ({
  id,
  role: input.role,
  kind: input.kind ?? "chat",
  parts: input.parts,
  tokens: 10
})

const count = (text: string, needle: string) => text.split(needle).length - 1

describe("a summary folded again", () => {
  it.effect("merges into the new summary: one title, one goal, and it is no user request", () =>
    Effect.gen(function* () {
      const compactor = TemplateCompactor.make()
      const first = yield* compactor.compact({
        messages: [
          msg("u1", Message.user("Fix the discount bug in src/cart.js")),
          msg("a1", Message.assistant("I will read src/cart.js first."))
        ],
        previousSummary: null
      })
      const summary = msg("s1", { ...Message.user(first.summary), kind: "summary" })
      const second = yield* compactor.compact({
        messages: [summary, msg("u2", Message.user("Now run the tests")), msg("a2", Message.assistant("Done."))],
        previousSummary: null
      })
      assert.strictEqual(count(second.summary, "# Summary of earlier conversation"), 1, second.summary)
      assert.strictEqual(count(second.summary, "## Goal"), 1, second.summary)
      assert.include(second.summary, "## Goal\nFix the discount bug in src/cart.js")
      assert.include(second.summary, "- Now run the tests")
      const requests = /## User requests\n((?:- .*\n?)*)/.exec(second.summary)?.[1] ?? ""
      assert.notInclude(requests, "Summary of earlier conversation")
    })
  )
})
