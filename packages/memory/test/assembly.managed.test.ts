// Issue 11 item 11: prepareContext removes every stale injected kind it manages, and does proactive
// skill exploration. Runs on a SQLite file and on a fresh PostgreSQL database.
import { ContextService, Ids, Message, RecallSource, TokenCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ContextAssembly from "../src/ContextAssembly.js"
import { SqliteEventLog } from "../src/index.js"
import { layer as postgresLog } from "./support/postgres.js"
import { tempFile } from "./support/stores.js"

type Hits = Partial<Record<Message.InjectedKind, ReadonlyArray<RecallSource.RecallHit>>>

/** A recall source whose answer depends on the query: `byQuery[query][kind]`. */
const byQuery = (answers: Record<string, Hits>) =>
  Layer.succeed(RecallSource.RecallSource, {
    recall: (request) => Effect.succeed(answers[request.query]?.[request.kind] ?? [])
  })

const stores = [
  { name: "SQLite", log: () => SqliteEventLog.layer({ filename: tempFile() }) },
  { name: "PostgreSQL", log: () => postgresLog("assembly") }
] as const

const appOn = (store: (typeof stores)[number], answers: Record<string, Hits>) =>
  ContextService.layer().pipe(
    Layer.provideMerge(store.log()),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7, byQuery(answers)))
  )

const hit = (text: string, score: number): RecallSource.RecallHit => ({ message: Message.user(text), score })

const kindsOf = (window: { readonly knowledge: ReadonlyArray<Message.Message> }) =>
  [...new Set(window.knowledge.map((message) => message.kind))].sort()

/** Every retrieval kind, with one hit each, for the query "first". */
const everyKind: Hits = {
  recall: [hit("recalled: keys rotate monthly", 1)],
  graph_facts: [hit("admin shell -- grants --> rotation", 1)],
  correction: [hit("correction: the flag is --all, not -a", 1)],
  persona_facts: [hit("the user prefers short answers", 1)],
  trajectory_hints: [hit("last time, listing keys first helped", 1)],
  tree_memory: [hit("project > ops > keys", 1)],
  reasoning_strategies: [hit("check the audit log before rotating", 1)],
  cross_session: [hit("yesterday we rotated the staging keys", 1)],
  session_digest: [hit("this session: key rotation on prod", 1)],
  document_rag: [hit("runbook: rotate keys with keys rotate --all", 1)],
  code_context: [hit("function rotate() {}", 1)]
}

const everyBudget: ContextAssembly.RetrievalPolicy = {
  budgets: {
    recall: 200,
    graphFacts: 200,
    codeContext: 200,
    correction: 200,
    personaFacts: 200,
    trajectoryHints: 200,
    treeMemory: 200,
    reasoningStrategies: 200,
    crossSession: 200,
    sessionDigest: 200,
    documentRag: 200
  }
}

for (const store of stores) {
  describe(`prepareContext on ${store.name} (issue 11 item 11)`, () => {
    it.effect("removes the stale messages of every kind it manages when the next query finds nothing", () =>
      Effect.gen(function* () {
        const context = yield* ContextService.ContextService
        yield* context.appendMessages("m", [Message.user("rotate the keys"), Message.assistant("On it.")])
        const first = yield* ContextAssembly.prepareContext("m", "first", everyBudget)
        const managed = ContextAssembly.managedKinds.map(([, kind]) => kind)
        assert.deepStrictEqual(kindsOf(first.window), [...managed].sort())
        assert.deepStrictEqual(
          first.kinds.map((delta) => delta.kind),
          managed
        )
        // The caller applies the code context it was given.
        yield* ContextAssembly.injectCodeContext("m", first.codeContext)

        const second = yield* ContextAssembly.prepareContext("m", "second", everyBudget)
        assert.deepStrictEqual(kindsOf(second.window), [])
        for (const delta of second.kinds) assert.strictEqual(delta.removed.length, 1, delta.kind)
        assert.strictEqual(second.codeContextRemoved.length, 1)
        assert.strictEqual(second.window.history.length, 2)
      }).pipe(Effect.provide(appOn(store, { first: everyKind })))
    )

    it.effect("a kind without a budget is neither looked up nor touched; a budget of 0 removes it", () =>
      Effect.gen(function* () {
        const context = yield* ContextService.ContextService
        yield* context.inject("n", "document_rag", ["runbook kept by the caller"])
        yield* context.inject("n", "code_context", ["const kept = 1"])
        const untouched = yield* ContextAssembly.prepareContext("n", "first", {
          budgets: { recall: 100, graphFacts: 100 }
        })
        assert.deepStrictEqual(
          untouched.window.knowledge.filter((m) => m.kind === "document_rag").map(Message.textOf),
          ["runbook kept by the caller"]
        )
        assert.deepStrictEqual(
          untouched.window.knowledge.filter((m) => m.kind === "code_context").map(Message.textOf),
          ["const kept = 1"]
        )
        const off = yield* ContextAssembly.prepareContext("n", "first", {
          budgets: { recall: 100, graphFacts: 100, documentRag: 0, codeContext: 0 }
        })
        assert.deepStrictEqual(kindsOf(off.window), ["graph_facts", "recall"])
      }).pipe(Effect.provide(appOn(store, { first: everyKind })))
    )

    it.effect("code context the window holds stays while the query selects it again", () =>
      Effect.gen(function* () {
        const policy: ContextAssembly.RetrievalPolicy = { budgets: { recall: 0, graphFacts: 0, codeContext: 200 } }
        const first = yield* ContextAssembly.prepareContext("k", "first", policy)
        const applied = yield* ContextAssembly.injectCodeContext("k", first.codeContext)
        const again = yield* ContextAssembly.prepareContext("k", "first", policy)
        assert.deepStrictEqual(again.codeContextRemoved, [])
        assert.strictEqual(again.window.version, applied.window.version)
      }).pipe(Effect.provide(appOn(store, { first: everyKind })))
    )
  })
}

describe("proactive skill exploration (issue 11 item 11)", () => {
  const matches: ReadonlyArray<ContextAssembly.SkillMatch> = [
    { name: "git-rebase", description: "Rebase a branch onto another.", score: 0.9 },
    { name: "pdf-extract", description: "Extract text and tables from PDF files.", score: 0.45 },
    { name: "image-resize", description: "Resize images.", score: 0.44 },
    { name: "sql-tune", description: "Tune slow SQL queries.", score: 0.2 }
  ]
  const app = ContextService.layerMemory().pipe(Layer.provideMerge(RecallSource.layerEmpty))
  const run = (query: string, skills: Partial<ContextAssembly.SkillPolicy> = {}) =>
    ContextAssembly.prepareContext("s", query, {
      budgets: { recall: 0, graphFacts: 0 },
      skills: { matches, budget: 1000, minScore: 0.5, ...skills }
    })

  it.effect("a skill just below the floor surfaces when the query names it", () =>
    Effect.gen(function* () {
      const delta = yield* run("please use pdf extract on report.pdf and then rebase")
      assert.deepStrictEqual(
        delta.skills.map((skill) => [skill.name, skill.explored]),
        [
          ["git-rebase", false],
          ["pdf-extract", true]
        ]
      )
    }).pipe(Effect.provide(app))
  )

  it.effect("an unnamed skill below the floor, or a named one too far below it, stays out", () =>
    Effect.gen(function* () {
      const unnamed = yield* run("extract the tables")
      assert.deepStrictEqual(
        unnamed.skills.map((skill) => skill.name),
        ["git-rebase"]
      )
      const tooFar = yield* run("run sql-tune on the orders query")
      assert.deepStrictEqual(
        tooFar.skills.map((skill) => skill.name),
        ["git-rebase"]
      )
      const wider = yield* run("run sql-tune on the orders query", { explorationMargin: 0.35 })
      assert.deepStrictEqual(
        wider.skills.map((skill) => [skill.name, skill.explored]),
        [
          ["git-rebase", false],
          ["sql-tune", true]
        ]
      )
      const off = yield* run("use pdf extract", { explorationMargin: 0 })
      assert.deepStrictEqual(
        off.skills.map((skill) => skill.name),
        ["git-rebase"]
      )
    }).pipe(Effect.provide(app))
  )

  it("a name matches as whole words, case and separators aside", () => {
    assert.isTrue(ContextAssembly.namesSkill("Use PDF_Extract now", "pdf-extract"))
    assert.isFalse(ContextAssembly.namesSkill("use pdfextract", "pdf-extract"))
    assert.isFalse(ContextAssembly.namesSkill("use pdf-extractor", "pdf-extract"))
    assert.isFalse(ContextAssembly.namesSkill("anything", "  "))
  })

  it.effect("skills keep to their budget and a bad exploration margin is a typed error", () =>
    Effect.gen(function* () {
      const tight = yield* run("use pdf extract", { budget: 12 })
      assert.isAtMost(
        tight.skills.reduce((total, skill) => total + skill.tokens, 0),
        12
      )
      const bad = yield* Effect.flip(run("q", { explorationMargin: -1 }))
      assert.strictEqual(bad._tag, "InvalidRetrievalPolicy")
    }).pipe(Effect.provide(app))
  )
})
