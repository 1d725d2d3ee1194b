import { ContextService, Ids, LanguageModel, Message, RecallSource } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as ContextAssembly from "../src/ContextAssembly.js"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"

// ---- layers -------------------------------------------------------------------------------------------

const contextWith = (source: Layer.Layer<RecallSource.RecallSource>) =>
  ContextService.layerMemory({ ids: Ids.layerSequential("a"), recall: source })

const hit = (text: string, score: number, source?: { stream: string; messageId: string }): RecallSource.RecallHit => ({
  message: Message.user(text),
  score,
  source
})

/**
 * A recall source that answers each kind from `hits`, but only after the recall AND the graph-fact
 * lookups have both started: code that looks them up one after the other waits forever.
 */
const layerRendezvous = (hits: Partial<Record<Message.InjectedKind, ReadonlyArray<RecallSource.RecallHit>>>) =>
  Layer.effect(
    RecallSource.RecallSource,
    Effect.gen(function* () {
      const recallStarted = yield* Deferred.make<void>()
      const factsStarted = yield* Deferred.make<void>()
      const bothStarted = Effect.zip(Deferred.await(recallStarted), Deferred.await(factsStarted))
      return {
        recall: (request: RecallSource.RecallRequest) =>
          Effect.gen(function* () {
            if (request.kind === "recall") yield* Deferred.succeed(recallStarted, undefined)
            if (request.kind === "graph_facts") yield* Deferred.succeed(factsStarted, undefined)
            if (request.kind === "recall" || request.kind === "graph_facts") yield* bothStarted
            return hits[request.kind] ?? []
          })
      }
    })
  )

/** A recall source whose answer depends on the query: `byQuery[query][kind]`. */
const layerByQuery = (
  byQuery: Record<string, Partial<Record<Message.InjectedKind, ReadonlyArray<RecallSource.RecallHit>>>>
) =>
  Layer.succeed(RecallSource.RecallSource, {
    recall: (request) => Effect.succeed(byQuery[request.query]?.[request.kind] ?? [])
  })

const injectedOf = (window: { readonly knowledge: ReadonlyArray<Message.Message> }, kind: Message.InjectedKind) =>
  window.knowledge.filter((message) => message.kind === kind).map(Message.textOf)

const seed = (stream: string) =>
  Effect.flatMap(ContextService.ContextService, (context) =>
    context.appendMessages(stream, [
      Message.user("How do I rotate the API keys?"),
      Message.assistant("Run `keys rotate --all` from the admin shell.")
    ])
  )

// ---- prepareContext -----------------------------------------------------------------------------------

describe("prepareContext", () => {
  it.live("looks up recall and graph facts concurrently", () =>
    Effect.gen(function* () {
      yield* seed("c")
      const delta = yield* ContextAssembly.prepareContext("c", "rotate keys", {
        budgets: { recall: 500, graphFacts: 500 }
      }).pipe(
        // Sequential lookups never get past the rendezvous: fail the test instead of hanging.
        Effect.timeoutFail({
          duration: "10 seconds",
          onTimeout: () => new Error("recall and graph-fact lookups did not run concurrently")
        })
      )
      assert.deepStrictEqual(delta.recall.injected.map(Message.textOf), ["Keys were last rotated on 2024-03-01."])
      assert.deepStrictEqual(delta.graphFacts.injected.map(Message.textOf), ["admin shell -- grants --> key rotation"])
    }).pipe(
      Effect.provide(
        contextWith(
          layerRendezvous({
            recall: [hit("Keys were last rotated on 2024-03-01.", 3)],
            graph_facts: [hit("admin shell -- grants --> key rotation", 2)]
          })
        )
      )
    )
  )

  it.effect("holds each kind's token budget, best scores first", () =>
    Effect.gen(function* () {
      yield* seed("b")
      const delta = yield* ContextAssembly.prepareContext("b", "q", { budgets: { recall: 40, graphFacts: 12 } })
      assert.isAtMost(delta.recall.tokens, 40)
      assert.isAtMost(delta.graphFacts.tokens, 12)
      assert.isAbove(delta.recall.injected.length, 0)
      assert.isAbove(delta.recall.dropped.overBudget, 0)
      // The best-scoring recall hit is injected first.
      assert.strictEqual(Message.textOf(delta.recall.injected[0] ?? Message.user("")), "recall hit number 9")
      const window = yield* Effect.flatMap(ContextService.ContextService, (context) => context.load("b"))
      const sum = (kind: Message.InjectedKind) =>
        window.knowledge
          .filter((message) => message.kind === kind)
          .reduce((total, message) => total + message.tokens, 0)
      assert.isAtMost(sum("recall"), 40)
      assert.isAtMost(sum("graph_facts"), 12)
      assert.strictEqual(delta.tokens, sum("recall") + sum("graph_facts"))
    }).pipe(
      Effect.provide(
        contextWith(
          RecallSource.layerStatic({
            recall: Array.from({ length: 10 }, (_, index) => hit(`recall hit number ${index}`, index)),
            graph_facts: Array.from({ length: 6 }, (_, index) => hit(`fact ${index} holds`, index))
          })
        )
      )
    )
  )

  it.effect("drops hits under the score floor", () =>
    Effect.gen(function* () {
      const delta = yield* ContextAssembly.prepareContext("f", "q", {
        budgets: { recall: 1000, graphFacts: 1000 },
        minScore: 0.5
      })
      assert.deepStrictEqual(delta.recall.injected.map(Message.textOf), ["strong match"])
      assert.strictEqual(delta.recall.dropped.belowFloor, 2)
      assert.deepStrictEqual(delta.graphFacts.injected, [])
      assert.strictEqual(delta.graphFacts.dropped.belowFloor, 1)
    }).pipe(
      Effect.provide(
        contextWith(
          RecallSource.layerStatic({
            recall: [hit("weak match", 0.1), hit("strong match", 0.9), hit("borderline match", 0.49)],
            graph_facts: [hit("a weak fact", 0.2)]
          })
        )
      )
    )
  )

  it.effect("dedupes against the window, its source messages, and across kinds", () =>
    Effect.gen(function* () {
      yield* seed("d")
      const delta = yield* ContextAssembly.prepareContext("d", "q", { budgets: { recall: 1000, graphFacts: 1000 } })
      assert.deepStrictEqual(delta.recall.injected.map(Message.textOf), ["something new"])
      assert.strictEqual(delta.recall.dropped.duplicate, 2)
      // "something new" went in as recall; the same text as a graph fact is not injected twice.
      assert.deepStrictEqual(delta.graphFacts.injected.map(Message.textOf), ["a fresh fact"])
      assert.strictEqual(delta.graphFacts.dropped.duplicate, 1)

      const undeduped = yield* ContextAssembly.prepareContext("d", "q", {
        budgets: { recall: 1000, graphFacts: 1000 },
        dedupe: false
      })
      assert.strictEqual(undeduped.recall.injected.length, 3)
    }).pipe(
      Effect.provide(
        contextWith(
          RecallSource.layerStatic({
            recall: [
              // Same text as the user's message, up to case and spacing.
              hit("how do I   rotate the api keys?", 5),
              // A copy of a message the window holds, by source id.
              hit("Run keys rotate (paraphrased by the index)", 4, { stream: "d", messageId: "a-000002" }),
              hit("something new", 3)
            ],
            graph_facts: [hit("Something new", 2), hit("a fresh fact", 1)]
          })
        )
      )
    )
  )

  it.effect("a second call replaces the injected context instead of adding to it", () =>
    Effect.gen(function* () {
      yield* seed("r")
      const policy: ContextAssembly.RetrievalPolicy = { budgets: { recall: 1000, graphFacts: 1000 } }
      const first = yield* ContextAssembly.prepareContext("r", "first", policy)
      assert.deepStrictEqual(injectedOf(first.window, "recall"), ["old one", "old two"])

      const second = yield* ContextAssembly.prepareContext("r", "second", policy)
      assert.deepStrictEqual(injectedOf(second.window, "recall"), ["new one"])
      assert.deepStrictEqual(injectedOf(second.window, "graph_facts"), ["new fact"])
      assert.sameMembers(
        [...second.recall.removed],
        first.recall.injected.map((message) => message.id)
      )

      // The same selection again: the window keeps one set, and nothing is written.
      const again = yield* ContextAssembly.prepareContext("r", "second", policy)
      assert.isTrue(again.recall.unchanged && again.graphFacts.unchanged)
      assert.strictEqual(again.window.version, second.window.version)
      assert.deepStrictEqual(injectedOf(again.window, "recall"), ["new one"])
      assert.strictEqual(again.tokens, 0)

      // Nothing relevant any more: the stale context goes.
      const empty = yield* ContextAssembly.prepareContext("r", "nothing", policy)
      assert.deepStrictEqual(injectedOf(empty.window, "recall"), [])
      assert.deepStrictEqual(injectedOf(empty.window, "graph_facts"), [])
      assert.strictEqual(empty.recall.removed.length, 1)
      // History is untouched throughout.
      assert.strictEqual(empty.window.history.length, 2)
    }).pipe(
      Effect.provide(
        contextWith(
          layerByQuery({
            first: { recall: [hit("old one", 2), hit("old two", 1)], graph_facts: [hit("old fact", 1)] },
            second: { recall: [hit("new one", 1)], graph_facts: [hit("new fact", 1)] }
          })
        )
      )
    )
  )

  it.effect("returns code context for the caller, who applies it with injectCodeContext", () =>
    Effect.gen(function* () {
      const policy: ContextAssembly.RetrievalPolicy = { budgets: { recall: 100, graphFacts: 100, codeContext: 200 } }
      const delta = yield* ContextAssembly.prepareContext("k", "q", policy)
      assert.deepStrictEqual(delta.codeContext, ["function rotate() {}", "class KeyStore {}"])
      assert.isAbove(delta.codeContextTokens, 0)
      assert.deepStrictEqual(injectedOf(delta.window, "code_context"), [])

      const applied = yield* ContextAssembly.injectCodeContext("k", delta.codeContext)
      assert.deepStrictEqual(injectedOf(applied.window, "code_context"), delta.codeContext)
      const replaced = yield* ContextAssembly.injectCodeContext("k", ["const only = 1"])
      assert.deepStrictEqual(injectedOf(replaced.window, "code_context"), ["const only = 1"])

      // Code context the window holds is offered again: injectCodeContext replaces the whole kind, so
      // deduping against it would drop what the caller re-applies.
      const next = yield* ContextAssembly.prepareContext("k", "q", policy)
      assert.deepStrictEqual(next.codeContext, ["function rotate() {}", "class KeyStore {}"])
    }).pipe(
      Effect.provide(
        contextWith(
          RecallSource.layerStatic({
            code_context: [hit("function rotate() {}", 2), hit("class KeyStore {}", 1)]
          })
        )
      )
    )
  )

  it.effect("a recalled tool output is injected as plain text", () =>
    Effect.gen(function* () {
      // Injected messages may not carry tool parts; the hit's content goes in as text.
      const delta = yield* ContextAssembly.prepareContext("t", "q", { budgets: { recall: 100, graphFacts: 0 } })
      assert.deepStrictEqual(delta.recall.injected.map(Message.textOf), ["drwxr-xr-x keys/"])
      assert.deepStrictEqual(
        delta.recall.injected.map((message) => message.role),
        ["system"]
      )
    }).pipe(
      Effect.provide(
        contextWith(
          RecallSource.layerStatic({
            recall: [{ message: Message.tool("call-7", "drwxr-xr-x keys/"), score: 1 }, hit("   ", 2)]
          })
        )
      )
    )
  )

  it.effect("bad policies and failed lookups are typed errors that write nothing", () =>
    Effect.gen(function* () {
      yield* seed("e")
      const context = yield* ContextService.ContextService
      const version = (yield* context.load("e")).version
      for (const [budgets, field] of [
        [{ recall: -1, graphFacts: 10 }, "budgets.recall"],
        [{ recall: 10, graphFacts: 2.5 }, "budgets.graphFacts"],
        [{ recall: 10, graphFacts: 10, codeContext: -5 }, "budgets.codeContext"]
      ] as const) {
        const error = yield* Effect.flip(ContextAssembly.prepareContext("e", "q", { budgets }))
        assert.strictEqual(error._tag, "InvalidRetrievalPolicy")
        if (error._tag === "InvalidRetrievalPolicy") assert.strictEqual(error.field, field)
        assert.include(error.message, field)
      }
      const failed = yield* Effect.flip(
        ContextAssembly.prepareContext("e", "q", { budgets: { recall: 10, graphFacts: 10 } })
      )
      assert.strictEqual(failed._tag, "RecallError")
      assert.strictEqual((yield* context.load("e")).version, version)
    }).pipe(
      Effect.provide(
        contextWith(
          Layer.succeed(RecallSource.RecallSource, {
            recall: (request) =>
              request.kind === "graph_facts"
                ? Effect.fail(new RecallSource.RecallError({ kind: request.kind, detail: "index offline" }))
                : Effect.succeed([hit("would be injected", 1)])
          })
        )
      )
    )
  )
})

describe("prepareContext properties", () => {
  const hitArb = fc.record({
    text: fc.constantFrom("alpha", "beta gamma", "Alpha", "delta epsilon zeta", "eta", "theta iota", "kappa"),
    suffix: fc.nat({ max: 3 }),
    score: fc.double({ min: 0, max: 1, noNaN: true })
  })
  const toHits = (items: ReadonlyArray<{ text: string; suffix: number; score: number }>) =>
    items.map((item) => hit(`${item.text} ${"x".repeat(item.suffix * 5)}`.trim(), item.score))

  it.effect.prop(
    "budgets, floor and dedupe hold, and repeated calls keep one set per kind",
    [
      fc.array(hitArb, { maxLength: 12 }),
      fc.array(hitArb, { maxLength: 8 }),
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 0, max: 20 }),
      fc.double({ min: 0, max: 1, noNaN: true })
    ],
    ([recallItems, factItems, recallBudget, factsBudget, minScore]) =>
      Effect.gen(function* () {
        yield* Effect.promise(yieldToEventLoop)
        const context = yield* ContextService.ContextService
        yield* context.appendMessages("p", [Message.user("alpha"), Message.assistant("kappa")])
        const policy = { budgets: { recall: recallBudget, graphFacts: factsBudget }, minScore }
        for (let call = 0; call < 2; call++) {
          const delta = yield* ContextAssembly.prepareContext("p", "q", policy)
          const window = delta.window
          const of = (kind: Message.InjectedKind) => window.knowledge.filter((message) => message.kind === kind)
          const tokensOf = (messages: ReadonlyArray<Message.Message>) =>
            messages.reduce((total, message) => total + message.tokens, 0)
          assert.isAtMost(tokensOf(of("recall")), recallBudget)
          assert.isAtMost(tokensOf(of("graph_facts")), factsBudget)
          // Every injected text has, within its kind, a hit at or above the floor.
          const passes = (items: typeof recallItems, text: string) =>
            toHits(items).some((item) => Message.textOf(item.message) === text && item.score >= minScore)
          for (const message of of("recall")) assert.isTrue(passes(recallItems, Message.textOf(message)))
          for (const message of of("graph_facts")) assert.isTrue(passes(factItems, Message.textOf(message)))
          const injected = [...of("recall"), ...of("graph_facts")].map(Message.textOf)
          // No text twice, and nothing the history already says.
          const keys = injected.map((text) => text.toLowerCase())
          assert.strictEqual(new Set(keys).size, keys.length)
          assert.isFalse(keys.includes("alpha") || keys.includes("kappa"))
        }
      }).pipe(
        Effect.provide(
          contextWith(RecallSource.layerStatic({ recall: toHits(recallItems), graph_facts: toHits(factItems) }))
        )
      ),
    { fastCheck: { numRuns: propertyRuns(40, 0.3) } }
  )
})

// ---- disambiguateSkills -------------------------------------------------------------------------------

/** A scripted language model: answers every request with `answer`, recording the requests. */
const layerModel = (
  answer: Effect.Effect<string, LanguageModel.ProviderError>,
  requests: Ref.Ref<ReadonlyArray<LanguageModel.ModelRequest>>
): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.succeed(LanguageModel.LanguageModel, {
    provider: "scripted",
    model: "scripted-1",
    generate: (request) =>
      Ref.update(requests, (all) => [...all, request]).pipe(
        Effect.zipRight(answer),
        Effect.map(
          (text): LanguageModel.ModelResponse => ({
            provider: "scripted",
            model: "scripted-1",
            parts: [{ type: "text", text }],
            stopReason: "end_turn",
            usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 }
          })
        )
      ),
    stream: () =>
      Stream.fail(
        new LanguageModel.ProviderError({ provider: "scripted", reason: "bad_request", detail: "no streaming" })
      )
  })

const skills: ReadonlyArray<ContextAssembly.Skill> = [
  { name: "deploy", description: "Ship a build to production" },
  { name: "rollback", description: "Revert production to the previous build" },
  { name: "status", description: "Report what is running in production" },
  { name: "billing", description: "Explain the invoice" }
]
const scored: ReadonlyArray<ContextAssembly.ScoredSkill> = [
  { name: "deploy", score: 0.81 },
  { name: "rollback", score: 0.8 },
  { name: "status", score: 0.76 },
  { name: "billing", score: 0.2 }
]

const withModel = <A, E>(
  answer: Effect.Effect<string, LanguageModel.ProviderError>,
  body: (
    requests: Ref.Ref<ReadonlyArray<LanguageModel.ModelRequest>>
  ) => Effect.Effect<A, E, LanguageModel.LanguageModel>
) =>
  Effect.flatMap(Ref.make<ReadonlyArray<LanguageModel.ModelRequest>>([]), (requests) =>
    Effect.provide(body(requests), layerModel(answer, requests))
  )

const names = (order: Option.Option<ReadonlyArray<ContextAssembly.ScoredSkill>>) =>
  Option.map(order, (matches) => matches.map((match) => match.name))

describe("disambiguateSkills", () => {
  it.effect("the model's answer reorders the ambiguous matches; the rest follow in score order", () =>
    withModel(Effect.succeed('Sure! ["rollback", "status", "deploy"]'), (requests) =>
      Effect.gen(function* () {
        const order = yield* ContextAssembly.disambiguateSkills("undo the last release", skills, scored)
        assert.deepStrictEqual(names(order), Option.some(["rollback", "status", "deploy", "billing"]))
        const [request] = yield* Ref.get(requests)
        const prompt = request?.messages[0]?.parts[0]
        assert.isTrue(prompt?.type === "text" && prompt.text.includes("undo the last release"))
        // Only the close matches are offered to the model.
        assert.isTrue(prompt?.type === "text" && !prompt.text.includes("billing"))
      })
    )
  )

  it.effect("names the model leaves out follow the ones it ordered", () =>
    withModel(Effect.succeed('["status"]'), () =>
      Effect.map(ContextAssembly.disambiguateSkills("what is live?", skills, scored), (order) =>
        assert.deepStrictEqual(names(order), Option.some(["status", "deploy", "rollback", "billing"]))
      )
    )
  )

  it.effect("a model failure gives None", () =>
    withModel(
      Effect.fail(new LanguageModel.ProviderError({ provider: "scripted", reason: "overloaded", detail: "try later" })),
      () =>
        Effect.map(ContextAssembly.disambiguateSkills("undo", skills, scored), (order) =>
          assert.isTrue(Option.isNone(order))
        )
    )
  )

  it.effect("a garbage answer gives None", () =>
    Effect.gen(function* () {
      for (const answer of [
        "I would pick rollback.",
        "[rollback, deploy]",
        '["rollback", "teleport"]',
        "[]",
        '["deploy","deploy"]',
        "[1, 2]"
      ]) {
        const order = yield* withModel(Effect.succeed(answer), () =>
          ContextAssembly.disambiguateSkills("undo", skills, scored)
        )
        assert.isTrue(Option.isNone(order), `answer ${answer} should give None`)
      }
    })
  )

  it.effect("a model that never answers gives None after the timeout", () =>
    withModel(Effect.never, () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(
          ContextAssembly.disambiguateSkills("undo", skills, scored, { timeout: "2 seconds" })
        )
        yield* TestClock.adjust("3 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.join(fiber)))
      })
    )
  )

  it.effect("clear winners do not call the model", () =>
    withModel(Effect.succeed('["billing"]'), (requests) =>
      Effect.gen(function* () {
        const order = yield* ContextAssembly.disambiguateSkills("undo", skills, scored, { margin: 0.005 })
        assert.isTrue(Option.isNone(order))
        assert.strictEqual((yield* Ref.get(requests)).length, 0)
      })
    )
  )

  it.effect("inconsistent input is an InvalidSkillInput", () =>
    withModel(Effect.succeed("[]"), () =>
      Effect.gen(function* () {
        const cases: ReadonlyArray<[string, ReadonlyArray<ContextAssembly.ScoredSkill>, number, string]> = [
          ["q", [{ name: "nope", score: 1 }], 0.1, "not among the skills"],
          ["q", [{ name: "deploy", score: Number.NaN }], 0.1, "score NaN"],
          [
            "q",
            [
              { name: "deploy", score: 1 },
              { name: "deploy", score: 0.9 }
            ],
            0.1,
            "scored twice"
          ],
          ["q", scored, -1, "margin"],
          [" ", scored, 0.1, "query is empty"]
        ]
        for (const [query, matches, margin, expected] of cases) {
          const error = yield* Effect.flip(ContextAssembly.disambiguateSkills(query, skills, matches, { margin }))
          assert.strictEqual(error._tag, "InvalidSkillInput")
          assert.include(error.message, expected)
        }
      })
    )
  )
})
