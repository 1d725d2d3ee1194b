import { assert, describe, it } from "@effect/vitest"
import { ContextService, Message } from "@ctxlog/core"
import { FileStore, SqliteEventLog } from "@ctxlog/memory"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Policy, Turn } from "../src/index.js"
import { type Counts, eventsOf, rebuildAll, stack } from "./support.js"

const tools = [
  {
    name: "read_file",
    description: "Read a file",
    inputSchema: { type: "object", properties: { path: { type: "string" } } }
  }
]

const policy = (contextWindow: number, extra: Partial<Policy.Policy> = {}): Policy.Policy => ({
  builder: { provider: "openai", model: "gpt-4.1", contextWindow, maxOutputTokens: 512 },
  render: { tools, turnReminder: "Stay in the workspace." },
  compaction: { softThreshold: 0.7, hardThreshold: 0.85, targetRatio: 0.45, cooldownTurns: 0 },
  ...extra
})

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ")

describe("Turn", () => {
  it.effect("each step loads once (from the cache) and writes in one append; every render rebuilds", () => {
    const counts: Counts = { appends: 0, reads: 0 }
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "turn-steps"
      yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
      const p = policy(8192)
      for (let turn = 0; turn < 3; turn++) {
        counts.appends = 0
        yield* Turn.prepare(stream, { messages: [Message.user(`question ${turn}: ${words(40, "q")}`)] }, p)
        assert.strictEqual(counts.appends, 1, "prepare appends once")
        const first = yield* Turn.render(stream, p)
        assert.isTrue(Turn.fits(first.built))
        assert.strictEqual(counts.appends, 2, "render appends once")
        yield* Turn.complete(
          stream,
          {
            answer: [Message.text("Reading it."), Message.toolCall(`call_${turn}`, "read_file", { path: "a.js" })],
            results: [Message.toolResult(`call_${turn}`, words(200, "line"))],
            usage: { inputTokens: first.built.stats.total, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
            estimatedInputTokens: first.built.stats.total,
            endTurn: false
          },
          p
        )
        assert.strictEqual(counts.appends, 3, "complete appends once")
        yield* Turn.render(stream, p, { iteration: 1 })
        yield* Turn.complete(stream, { answer: [Message.text("Done.")], endTurn: true }, p)
        assert.strictEqual(counts.appends, 5)
      }
      const events = yield* eventsOf(stream)
      const { renders, failures } = rebuildAll(events)
      assert.strictEqual(renders, 6)
      assert.deepStrictEqual(failures, [])
      // The policy is recorded once: it did not change.
      assert.strictEqual(events.filter((e) => e.event._tag === "TurnPolicySet").length, 1)
      // Every step's events name the step.
      const actors = new Set(events.slice(1).map((e) => e.metadata.actor))
      assert.deepStrictEqual([...actors].sort(), ["turn.complete", "turn.prepare", "turn.render"])
    }).pipe(Effect.provide(stack(counts)))
  })

  it.effect("the fit escalates until the render plus its reserve fits, keeping the unseen tool result", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "turn-fit"
      yield* ctx.setSystemPrompt(stream, "You are terse.")
      const p = policy(2048, { compaction: null })
      yield* Turn.prepare(stream, { messages: [Message.user("hello")] }, p)
      yield* Turn.render(stream, p)
      // A huge tool result the model has not seen, after a user interjection: it must survive, cut to fit.
      yield* Turn.complete(
        stream,
        {
          answer: [Message.toolCall("call_big", "read_file", { path: "big.log" })],
          results: [Message.toolResult("call_big", words(3000, "x"))],
          endTurn: false
        },
        p
      )
      yield* Turn.prepare(stream, { messages: [Message.user("also, hurry")] }, p)
      const rendered = yield* Turn.render(stream, p, { iteration: 1 })
      assert.isTrue(Turn.fits(rendered.built))
      const history = rendered.window.history
      const result = history.flatMap((m) => Message.toolResultsOf(m)).find((r) => r.toolCallId === "call_big")
      assert.isDefined(result, "the unseen tool result is in the render")
      assert.include(rendered.body, "call_big")
      const { failures } = rebuildAll(yield* eventsOf(stream))
      assert.deepStrictEqual(failures, [])
    }).pipe(Effect.provide(stack()))
  )

  it.effect(
    "a window too small for its reserves is a typed InvalidPolicy naming the field, and nothing is written",
    () =>
      Effect.gen(function* () {
        const stream = "turn-small"
        const result = yield* Effect.either(Turn.prepare(stream, { messages: [Message.user("hi")] }, policy(600)))
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "InvalidPolicy")
          assert.match(result.left.message, /builder\.contextWindow/)
        }
        assert.strictEqual((yield* eventsOf(stream)).length, 0)
      }).pipe(Effect.provide(stack()))
  )

  it.effect("a render that cannot fit fails with WindowOverflow and writes nothing", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "turn-overflow"
      yield* ctx.setSystemPrompt(stream, words(3000, "rule"))
      const p = policy(2048)
      const before = (yield* eventsOf(stream)).length
      const result = yield* Effect.either(Turn.render(stream, p))
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) assert.strictEqual(result.left._tag, "WindowOverflow")
      assert.strictEqual((yield* eventsOf(stream)).length, before)
    }).pipe(Effect.provide(stack()))
  )
  it("a policy whose compaction or seams would be refused at run time is an InvalidPolicy up front", () => {
    // targetRatio at or above hardThreshold: TieredCompaction refuses it (before, validate let it
    // through and prepare failed later with the compaction's InvalidConfig).
    const target = Policy.validate(
      Policy.toJson(policy(8192, { compaction: { softThreshold: 0.3, hardThreshold: 0.35, targetRatio: 0.35 } }))
    )
    assert.isTrue(Either.isLeft(target))
    if (Either.isLeft(target)) assert.strictEqual(target.left.field, "compaction.targetRatio")
    // Seam thresholds that are not strictly increasing in tokens at this budget.
    const seams = Policy.validate(Policy.toJson(policy(8192, { seams: { level1: 0.5, level2: 0.5, level3: 0.6 } })))
    assert.isTrue(Either.isLeft(seams))
    if (Either.isLeft(seams)) assert.strictEqual(seams.left.field, "seams")
    assert.isTrue(Either.isRight(Policy.validate(Policy.toJson(policy(8192)))))
  })

  it.effect("a refused step does not count as having recorded the policy: the next step records it", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = "turn-policy-after-failure"
      yield* ctx.setSystemPrompt(stream, words(3000, "rule"))
      const p = policy(2048)
      // The first step under this policy fails (and writes nothing, its TurnPolicySet included) ...
      const failed = yield* Effect.either(Turn.render(stream, p))
      assert.isTrue(Either.isLeft(failed))
      // ... so the next one, which succeeds, must record the policy.
      yield* ctx.setSystemPrompt(stream, "You are terse.")
      yield* Turn.prepare(stream, { messages: [Message.user("hello")] }, p)
      yield* Turn.render(stream, p)
      const events = yield* eventsOf(stream)
      assert.strictEqual(events.filter((e) => e.event._tag === "TurnPolicySet").length, 1)
    }).pipe(Effect.provide(stack()))
  )

  it.effect(
    "reload records the new policy between turns (even an equal one); renders after it use its builder; an invalid one writes nothing",
    () =>
      Effect.gen(function* () {
        const stream = "turn-reload"
        const small = policy(4096)
        const large = policy(16_384)
        yield* Turn.prepare(stream, { messages: [Message.user("hello")] }, small)
        yield* Turn.render(stream, small)
        yield* Turn.complete(stream, { answer: [Message.text("hi")], endTurn: true }, small)
        const bad = yield* Effect.either(Turn.reload(stream, policy(600)))
        assert.isTrue(Either.isLeft(bad) && bad.left._tag === "InvalidPolicy")
        const count = (events: ReadonlyArray<{ readonly event: { readonly _tag: string } }>) =>
          events.filter((e) => e.event._tag === "TurnPolicySet").length
        assert.strictEqual(count(yield* eventsOf(stream)), 1)
        const reloaded = yield* Turn.reload(stream, large)
        assert.deepStrictEqual(
          reloaded.events.map((event) => event._tag),
          ["TurnPolicySet"]
        )
        // The next steps under the reloaded policy record nothing more; an equal reload is recorded again.
        yield* Turn.prepare(stream, { messages: [Message.user("again")] }, large)
        const rendered = yield* Turn.render(stream, large)
        assert.strictEqual(rendered.built.stats.contextWindow, 16_384)
        yield* Turn.complete(stream, { answer: [Message.text("ok")], endTurn: true }, large)
        assert.strictEqual(count(yield* eventsOf(stream)), 2)
        yield* Turn.reload(stream, large)
        const events = yield* eventsOf(stream)
        assert.strictEqual(count(events), 3)
        const rebuilt = rebuildAll(events)
        assert.deepStrictEqual(rebuilt, { renders: 2, failures: [] })
      }).pipe(Effect.provide(stack()))
  )

  const big = Array.from({ length: 3000 }, (_, i) => `line ${i}: ${"x".repeat(40)}`).join("\n")
  const calls = [
    Message.toolCall("c1", "read_file", { path: "big" }),
    Message.toolCall("c2", "read_output", { id: "x" })
  ]
  const withStore = policy(8192, { fileStore: { thresholdBytes: 16_384, previewChars: 500 } })

  it.effect(
    "fileStore: a large result is stored and the event holds its handle; the read tool's result stays inline",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const stream = "turn-files"
          const durable = yield* SqliteEventLog.make({ filename: ":memory:" })
          const files = Context.get(durable, FileStore.FileStore)
          yield* Turn.prepare(stream, { messages: [Message.user("read it")] }, withStore)
          yield* Turn.render(stream, withStore)
          const done = yield* Turn.complete(
            stream,
            { answer: calls, results: [Message.toolResult("c1", big), Message.toolResult("c2", big)], endTurn: false },
            withStore
          ).pipe(Effect.provideService(FileStore.FileStore, files))
          const results = done.events.flatMap((event) =>
            event._tag === "MessageAppended" ? Message.toolResultsOf(event.message) : []
          )
          const [stored, inline] = results
          const handle = stored === undefined ? undefined : FileStore.handleOf(stored)
          assert.strictEqual(handle?.sha256, FileStore.sha256Of(big))
          assert.isBelow(stored?.content.length ?? Infinity, 1200)
          assert.isUndefined(inline === undefined ? "missing" : FileStore.handleOf(inline))
          assert.isTrue(big.startsWith((inline?.content ?? "-").slice(0, 200)))
          assert.strictEqual((yield* files.read(stream, handle?.sha256 ?? "")).content, big)
          // The render after it sends the preview, and rebuilds.
          yield* Turn.render(stream, withStore, { iteration: 1 })
          assert.deepStrictEqual(rebuildAll(yield* eventsOf(stream)), { renders: 2, failures: [] })
        })
      ).pipe(Effect.provide(stack()))
  )

  it.effect("fileStore without a FileStore in context: results are cut to the builder's limit, as before", () =>
    Effect.gen(function* () {
      const stream = "turn-no-files"
      yield* Turn.prepare(stream, { messages: [Message.user("read it")] }, withStore)
      yield* Turn.render(stream, withStore)
      const done = yield* Turn.complete(
        stream,
        { answer: [calls[0] ?? Message.text("")], results: [Message.toolResult("c1", big)], endTurn: true },
        withStore
      )
      const [result] = done.events.flatMap((event) =>
        event._tag === "MessageAppended" ? Message.toolResultsOf(event.message) : []
      )
      assert.isUndefined(result === undefined ? "missing" : FileStore.handleOf(result))
      assert.strictEqual(
        result?.content,
        Turn.truncateResult(withStore, Message.toolResult("c1", big), "read_file").content
      )
      assert.isBelow(result?.content.length ?? Infinity, big.length)
    }).pipe(Effect.provide(stack()))
  )
})
