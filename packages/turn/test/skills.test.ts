// Issue 39, build item 5: skills as a window kind the turn places. `prepareContext` chose skills (with
// proactive exploration) and returned them, and `Turn.prepare` passed none: no render ever held a skill.
// The turn now places its choice as the `skill` kind (budgeted by the policy, replaced every turn, one
// `MessagesInjected` each), so a render rebuilds byte for byte and its provenance explains each skill.
import { ContextService, GenAi, Message } from "@ctxlog/core"
import type { ContextAssembly } from "@ctxlog/memory"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type Policy, Turn } from "../src/index.js"
import { eventsOf, rebuildAll, stack } from "./support.js"

const base: Policy.Policy = {
  builder: { provider: "openai", model: "gpt-4.1", contextWindow: 16_384, maxOutputTokens: 1024 },
  render: { systemPrompt: "You are a careful coding agent." },
  skills: { minScore: 0.5 }
}

const matches: ReadonlyArray<ContextAssembly.SkillMatch> = [
  { name: "run-tests", description: "Run the project's test suite with pnpm and read the failures.", score: 0.9 },
  { name: "git-bisect", description: "Find the commit that broke a behaviour by bisecting history.", score: 0.45 },
  { name: "write-docs", description: "Write the package README.", score: 0.2 }
]

const skillTexts = (window: { readonly knowledge: ReadonlyArray<Message.Message> }) =>
  window.knowledge.filter((message) => message.kind === "skill").map(Message.textOf)

describe("Turn.prepare places skills (issue 39, build item 5)", () => {
  it.effect("the chosen skills are in knowledge as the `skill` kind and in the request; the others are not", () =>
    Effect.gen(function* () {
      const stream = "skills-placed"
      // The query names git-bisect: 0.05 under the floor, it surfaces by exploration.
      const step = yield* Turn.prepare(
        stream,
        { messages: [Message.user("The parser broke last week; use git bisect to find it.")], skills: matches },
        base
      )
      assert.deepStrictEqual(skillTexts(step.window), [
        "run-tests: Run the project's test suite with pnpm and read the failures.",
        "git-bisect: Find the commit that broke a behaviour by bisecting history."
      ])
      const rendered = yield* Turn.render(stream, base)
      assert.include(rendered.body, "run-tests: Run the project's test suite")
      assert.include(rendered.body, "git-bisect: Find the commit")
      assert.notInclude(rendered.body, "write-docs")
      // Recorded as events: every render of the stream rebuilds byte for byte from the log.
      assert.deepStrictEqual(rebuildAll(yield* eventsOf(stream)), { renders: 1, failures: [] })
      // Explained: each skill is a knowledge element with its reason and the event that placed it.
      const elements = GenAi.elementsOf(rendered.window).filter((element) => element.reason === "injected:skill")
      assert.strictEqual(elements.length, 2)
      for (const element of elements) {
        assert.strictEqual(element.kind, "knowledge")
        assert.notStrictEqual(element.source, "")
      }
    }).pipe(Effect.provide(stack()))
  )

  it.effect(
    "each turn replaces the last turn's skills; the same choice writes nothing; an empty list removes them",
    () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const stream = "skills-replaced"
        yield* Turn.prepare(stream, { messages: [Message.user("run the tests")], skills: matches }, base)
        const next = yield* Turn.prepare(
          stream,
          {
            messages: [Message.user("now document it")],
            skills: [{ name: "write-docs", description: "Write the package README.", score: 0.8 }]
          },
          base
        )
        assert.deepStrictEqual(skillTexts(next.window), ["write-docs: Write the package README."])
        const same = yield* Turn.prepare(
          stream,
          {
            messages: [Message.user("more docs")],
            skills: [{ name: "write-docs", description: "Write the package README.", score: 0.7 }]
          },
          base
        )
        assert.isFalse(same.events.some((event) => event._tag === "MessagesInjected"))
        // Without `skills` the turn leaves the kind alone.
        const untouched = yield* Turn.prepare(stream, { messages: [Message.user("carry on")] }, base)
        assert.deepStrictEqual(skillTexts(untouched.window), ["write-docs: Write the package README."])
        const cleared = yield* Turn.prepare(stream, { messages: [Message.user("thanks")], skills: [] }, base)
        assert.deepStrictEqual(skillTexts(cleared.window), [])
        assert.deepStrictEqual(skillTexts(yield* ctx.load(stream)), [])
      }).pipe(Effect.provide(stack()))
  )

  it.effect("skills are budgeted by the policy's share, and `skills: null` places none", () =>
    Effect.gen(function* () {
      const many = Array.from({ length: 40 }, (_, i) => ({
        name: `skill-${i}`,
        description: `A skill with a long description of what it does, number ${i}, `.repeat(4),
        score: 1 - i / 100
      }))
      const small: Policy.Policy = { ...base, skills: { share: 0.02 } }
      const budget = Math.floor(Turn.budgetTokens(small) * 0.02)
      const step = yield* Turn.prepare("skills-budget", { messages: [Message.user("go")], skills: many }, small)
      const placed = step.window.knowledge.filter((message) => message.kind === "skill")
      assert.isAbove(placed.length, 0)
      assert.isBelow(placed.length, many.length)
      assert.isAtMost(
        placed.reduce((total, message) => total + message.tokens, 0),
        budget
      )
      // The default share is larger than 2%: more of them fit.
      const byDefault = yield* Turn.prepare(
        "skills-default",
        { messages: [Message.user("go")], skills: many },
        { ...base, skills: {} }
      )
      assert.isAbove(byDefault.window.knowledge.filter((message) => message.kind === "skill").length, placed.length)
      const off = yield* Turn.prepare(
        "skills-off",
        { messages: [Message.user("go")], skills: many },
        { ...base, skills: null }
      )
      assert.deepStrictEqual(skillTexts(off.window), [])
    }).pipe(Effect.provide(stack()))
  )

  it.effect("with recall on, prepareContext's choice is placed the same way", () =>
    Effect.gen(function* () {
      const withRecall: Policy.Policy = { ...base, recall: { recallShare: 0.1 } }
      const step = yield* Turn.prepare(
        "skills-recall",
        { messages: [Message.user("please git bisect this")], skills: matches },
        withRecall
      )
      assert.deepStrictEqual(
        skillTexts(step.window).map((text) => text.split(":")[0]),
        ["run-tests", "git-bisect"]
      )
    }).pipe(Effect.provide(stack()))
  )

  it.effect("a replay that sets the recorded injections sets the recorded skills", () =>
    Effect.gen(function* () {
      const step = yield* Turn.prepare(
        "skills-replay",
        {
          messages: [Message.user("go")],
          injected: [{ kind: "skill", messages: [Message.system("run-tests: Run the suite.")] }]
        },
        base
      )
      assert.deepStrictEqual(skillTexts(step.window), ["run-tests: Run the suite."])
    }).pipe(Effect.provide(stack()))
  )
})
