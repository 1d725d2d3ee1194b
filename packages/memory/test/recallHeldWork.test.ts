/**
 * A prepare's recall skips the searches whose every hit it would drop (ADR 0076): the conversation's own
 * messages when the window holds all of them, an owner's other conversations when there are none. What
 * it injects is what the full search and the dedupe gave (compared against a source that is not told
 * what the window holds), and the check costs the entries indexed since the last prepare, not the history.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService, Ids, Message, RecallSource, TokenCounter, WorkCounter } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ContextAssembly from "../src/ContextAssembly.js"
import * as FullTextRecall from "../src/FullTextRecall.js"
import * as RecallIndex from "../src/RecallIndex.js"
import * as SqliteEventLog from "../src/SqliteEventLog.js"
import { entriesPage } from "../src/internal/search.js"
import { counters } from "../src/internal/workCounters.js"
import { postgres } from "./support/stores.js"

/** Recall's search work, read as its change since the last `searchWork.reset()` (ADR 0160). */
const searchWork = WorkCounter.since({ statements: counters.searchStatements, entriesChecked: counters.entriesChecked })

const dir = mkdtempSync(join(tmpdir(), "ctxlog-recall-held-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const text = (index: number) => `note ${index}: the zeppelin parser step ${index % 7} failed on input ${index}`

type Store = Layer.Layer<SqliteEventLog.Services, unknown>

/** The full-text source, told what the window holds (as `prepareContext` tells it) or not. */
const stack = (store: Store, told: boolean) => {
  const source = told
    ? FullTextRecall.layer()
    : Layer.effect(
        RecallSource.RecallSource,
        Effect.map(FullTextRecall.make(), (inner) => ({
          recall: ({ held: _held, ...request }: RecallSource.RecallRequest) => inner.recall(request)
        }))
      )
  return ContextService.layer().pipe(
    Layer.provideMerge(source),
    Layer.provideMerge(store),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7))
  )
}

const policy: ContextAssembly.RetrievalPolicy = {
  budgets: { recall: 2000, graphFacts: 0, crossSession: 2000 },
  owner: "alice",
  dedupe: true
}

/** One prepare: its full-text statements and entries checked, and what it injected. */
const prepare = (query: string) =>
  Effect.gen(function* () {
    searchWork.reset()
    const delta = yield* ContextAssembly.prepareContext("mine", query, policy)
    return {
      statements: searchWork.statements,
      entriesChecked: searchWork.entriesChecked,
      injected: delta.kinds.map((kind) => [kind.kind, kind.injected.map(Message.textOf)] as const)
    }
  })

/** One conversation's prepares: run once with a source told what the window holds, once with one not told. */
const scenario = (size: number) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const index = yield* RecallIndex.RecallIndex
    yield* index.setOwner("mine", "alice")
    for (let at = 0; at < size; at += 500) {
      yield* ctx.appendMessages(
        "mine",
        Array.from({ length: Math.min(500, size - at) }, (_, k) => Message.user(text(at + k)))
      )
    }
    // Everything indexed before the first prepare (the appends' background catch-ups may still be running).
    yield* index.catchUp()
    const steps: Array<{
      statements: number
      entriesChecked: number
      injected: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
    }> = []
    // The window holds every message, and alice has no other conversation: nothing is searched.
    steps.push(yield* prepare("zeppelin parser failed"))
    // Steady state: two new messages a turn, not indexed yet; the prepare checks them against the window
    // as a catch-up would index them, finds them held, and leaves the index to catch up later.
    for (let turn = 0; turn < 2; turn++) {
      yield* ctx.appendMessages("mine", [Message.user(text(size + 2 * turn)), Message.user(text(size + 2 * turn + 1))])
      steps.push(yield* prepare("zeppelin parser failed"))
    }
    const leftToIndex = (yield* index.catchUp()).events
    // Indexed now: the next check reads the four new entries, and only them.
    steps.push(yield* prepare("zeppelin parser failed"))
    // Another conversation of alice's: the cross-session scope is searched (and finds it).
    yield* index.setOwner("other", "alice")
    yield* ctx.appendMessages("other", [Message.user("the zeppelin parser failed in the other conversation")])
    steps.push(yield* prepare("zeppelin parser failed"))
    // The oldest history trimmed: the window no longer holds every message, so the stream is searched.
    yield* ctx.trimToBudget("mine", 600)
    steps.push(yield* prepare("zeppelin parser step 3 failed on input 3"))
    steps.push(yield* prepare("zeppelin parser step 3 failed on input 3"))
    return { steps, leftToIndex }
  })

const stores: ReadonlyArray<{
  readonly name: string
  readonly sizes: ReadonlyArray<number>
  readonly store: (label: string) => Store
}> = [
  {
    name: "SQLite",
    sizes: [300, 3000],
    store: (label) => SqliteEventLog.layer({ filename: join(dir, `${label}.db`) })
  },
  { name: "PostgreSQL", sizes: [300], store: (label) => postgres(`held_${label}`) }
]

describe("recall of a prepare: searches whose every hit would be dropped are skipped", () => {
  for (const { name, sizes, store } of stores) {
    for (const size of sizes) {
      it.effect(
        `${name}: injects what the full search gives, and checks only new entries, at ${size} messages`,
        () =>
          Effect.gen(function* () {
            const { steps: told, leftToIndex } = yield* scenario(size).pipe(
              Effect.provide(stack(store(`told${size}`), true)),
              Effect.scoped
            )
            const { steps: plain, leftToIndex: plainLeft } = yield* scenario(size).pipe(
              Effect.provide(stack(store(`plain${size}`), false)),
              Effect.scoped
            )
            // What each prepare injected is the same either way.
            assert.deepStrictEqual(
              told.map((step) => step.injected),
              plain.map((step) => step.injected)
            )
            // Not told, every prepare searches the conversation (and, once alice has another, that one
            // too: outside `FullTextRecall.together` each kind searches on its own); told, the
            // conversation is searched only once the window no longer holds all of it.
            assert.deepStrictEqual(
              plain.map((step) => step.statements),
              [1, 1, 1, 1, 2, 2, 2]
            )
            assert.deepStrictEqual(
              told.map((step) => step.statements),
              [0, 0, 0, 0, 1, 2, 2]
            )
            // Not told, each prepare caught the index up; told, the two turns' four messages (an event each) were left to index.
            assert.strictEqual(plainLeft, 0)
            assert.strictEqual(leftToIndex, 4)
            // The first check reads the history's entries once; then only the new ones, once indexed.
            // After the trim the window's history is indexed again and the check starts over: one page of
            // entries, whose first is not held; then no read while that entry stays out of the window.
            assert.deepStrictEqual(
              told.map((step) => step.entriesChecked),
              [size, 0, 0, 4, 0, Math.min(size + 4, entriesPage), 0]
            )
            const [, , , , cross, trimmed] = told
            assert.isTrue(
              cross?.injected.some(
                ([kind, texts]) => kind === "cross_session" && texts.some((t) => t.includes("other conversation"))
              )
            )
            assert.isTrue(
              trimmed?.injected.some(([kind, texts]) => kind === "recall" && texts.some((t) => t.includes("input 3")))
            )
          }),
        { timeout: 120_000 }
      )
    }
  }
})

// The entries a catch-up would add are read once per search and kept: a search of one stream keeps
// what it read of another's, and that stream's next search still counts it.
describe("recall of a prepare: pending entries read for one stream count for another", () => {
  it.effect(
    "an entry of another stream the window does not hold, read while skipping, makes that stream's search run",
    () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.appendMessages("mine", [Message.user(text(1)), Message.user(text(2))])
        yield* ctx.appendMessages("yours", [Message.user(text(3))])
        const index = yield* RecallIndex.RecallIndex
        yield* index.catchUp()
        const prepareOf = (stream: string) =>
          Effect.gen(function* () {
            searchWork.reset()
            yield* ContextAssembly.prepareContext(stream, "zeppelin parser failed", {
              budgets: { recall: 2000, graphFacts: 0 },
              dedupe: true
            })
            return searchWork.statements
          })
        assert.strictEqual(yield* prepareOf("mine"), 0)
        assert.strictEqual(yield* prepareOf("yours"), 0)
        // A correction injected into yours: in its knowledge, not its history, so a search of yours may find it.
        yield* ctx.inject("yours", "correction", ["the zeppelin parser failed because of a missing token"])
        // Mine's search reads it (pending, not indexed) and skips all the same; the index stays behind.
        assert.strictEqual(yield* prepareOf("mine"), 0)
        // Yours: the pending entry read by mine's search is not held by its history: searched.
        assert.strictEqual(yield* prepareOf("yours"), 1)
      }).pipe(
        Effect.provide(stack(SqliteEventLog.layer({ filename: join(dir, "two-streams.db") }), true)),
        Effect.scoped
      )
  )
})
