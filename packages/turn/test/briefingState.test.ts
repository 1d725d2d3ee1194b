// Issue 39, defect 7 (the turn's half): a cycle's briefing restates the agent's state (mode, workspace,
// working set, todos, plan, sub-agents) when the caller gives it to `Turn.render`.
import { ContextService, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { Policy } from "../src/index.js"
import { Turn } from "../src/index.js"
import { stack } from "./support.js"

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ")

const policy: Policy.Policy = {
  builder: { provider: "openai", model: "gpt-4.1", contextWindow: 8192, maxOutputTokens: 512 },
  render: { turnReminder: "Stay in the workspace." },
  compaction: null,
  seams: { level1: 0.1, level2: 0.15, level3: 0.2, verbatimWindow: 2, advanceCycle: true, workspace: "/work/repo" }
}

describe("Turn.render and the briefing's state (issue 39, defect 7)", () => {
  it.effect("the briefing a cycle opens with carries the state text the caller gave", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "briefing-state"
      yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
      for (let i = 0; i < 8; i++) {
        yield* ctx.appendMessages(stream, [
          Message.user(`step ${i}: ${words(120, "q")}`),
          Message.assistant(`done ${i}: ${words(120, "a")}`)
        ])
      }
      const rendered = yield* Turn.render(stream, policy, {
        briefing: {
          mode: "fix",
          workingSet: ["src/parser.ts"],
          todos: ["run the tests"],
          plan: ["read", "fix"],
          subAgents: ["reviewer: checking src/parser.ts"]
        }
      })
      const briefing = rendered.window.history.find((message) => message.kind === "briefing")
      if (briefing === undefined) return assert.fail("the cycle opened with no briefing")
      const text = Message.textOf(briefing)
      assert.include(text, "<state>\nMode: fix\nWorkspace: /work/repo\nWorking set:\n- src/parser.ts")
      assert.include(text, "Todos:\n- run the tests")
      assert.include(text, "Plan:\n- read\n- fix")
      assert.include(text, "Sub-agents:\n- reviewer: checking src/parser.ts")
    }).pipe(Effect.provide(stack()))
  )
})
