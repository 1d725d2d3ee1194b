import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TemplateCompactor } from "@ctxlog/compaction"
import { ContextService, Ids, Message, TokenCounter } from "@ctxlog/core"
import { FullTextRecall, RecallIndex, SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Policy, Turn } from "../src/index.js"

// A prepare's recall costs one search of the index, whatever it looks up: the conversation's own
// messages and the owner's other conversations come from one `searchEach` (one SQLite statement), and a
// kind with no budget is not searched at all.
const dir = mkdtempSync(join(tmpdir(), "ctxlog-turn-recall-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Searches {
  search: number
  searchEach: number
  scopes: number
}

/** The store's recall index, counting the searches asked of it: a test double of our own service. */
const counting = (searches: Searches) =>
  Layer.effect(
    RecallIndex.RecallIndex,
    Effect.map(RecallIndex.RecallIndex, (index) => ({
      ...index,
      search: (request: RecallIndex.SearchRequest) =>
        Effect.suspend(() => {
          searches.search++
          searches.scopes++
          return index.search(request)
        }),
      searchEach: (requests: ReadonlyArray<RecallIndex.SearchRequest>) =>
        Effect.suspend(() => {
          searches.searchEach++
          searches.scopes += requests.length
          return index.searchEach(requests)
        })
    }))
  )

const stack = (filename: string, searches: Searches) => {
  const store = SqliteEventLog.layer({ filename })
  return ContextService.layer().pipe(
    Layer.provideMerge(FullTextRecall.layer().pipe(Layer.provide(counting(searches)))),
    Layer.provideMerge(store),
    Layer.provideMerge(
      Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7, TemplateCompactor.layer({ maxBytes: 2048 }))
    )
  )
}

const policy = (recall: NonNullable<Policy.Policy["recall"]>): Policy.Policy => ({
  builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 200_000, maxOutputTokens: 512 },
  recall
})

describe("recall work per prepare", () => {
  it.effect("one search for recall and cross-session context, none for a kind without a budget", () => {
    const searches: Searches = { search: 0, searchEach: 0, scopes: 0 }
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const index = yield* RecallIndex.RecallIndex
      yield* index.setOwner("mine", "alice")
      yield* index.setOwner("other", "alice")
      yield* ctx.appendMessages("other", [Message.user("the zeppelin build broke on the parser step")])
      yield* ctx.appendMessages("mine", [Message.user("the zeppelin parser: where is it configured?")])
      const both = policy({ recallShare: 0.05, crossSessionShare: 0.05, owner: "alice" })
      const reset = () => Object.assign(searches, { search: 0, searchEach: 0, scopes: 0 })
      reset()
      const done = yield* Turn.prepare("mine", { messages: [Message.user("zeppelin parser broke")] }, both)
      assert.deepStrictEqual(searches, { search: 0, searchEach: 1, scopes: 2 })
      // What the one search found went to both kinds: the other conversation's message is injected.
      const injected = done.window.knowledge.filter((message) => message.kind === "cross_session")
      assert.strictEqual(injected.length, 1)
      assert.include(Message.textOf(injected[0] ?? Message.user("")), "zeppelin build broke")
      // Recall only: one search; no budget at all (no recall share, a cross-session share that rounds
      // to 0 tokens): none, though the stale cross-session context is still removed.
      reset()
      yield* Turn.prepare("mine", { messages: [Message.user("zeppelin again")] }, policy({ recallShare: 0.05 }))
      assert.deepStrictEqual(searches, { search: 1, searchEach: 0, scopes: 1 })
      reset()
      yield* Turn.prepare(
        "mine",
        { messages: [Message.user("zeppelin once more")] },
        policy({ crossSessionShare: 1e-9, owner: "alice" })
      )
      assert.deepStrictEqual(searches, { search: 0, searchEach: 0, scopes: 0 })
      const window = yield* ctx.load("mine")
      assert.isFalse(window.knowledge.some((message) => message.kind === "cross_session"))
    }).pipe(Effect.scoped, Effect.provide(stack(join(dir, "recall.db"), searches)))
  })
})
