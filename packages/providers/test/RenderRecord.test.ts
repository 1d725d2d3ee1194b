import { ContextService, EventLog, Ids, Message, TokenCounter, Window } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { AnthropicCtx, CtxBuilder, RenderRecord, TokenEstimate } from "../src/index.js"

const live = ContextService.layerMemory({ ids: Ids.layerSequential("t") })

const builder = AnthropicCtx.make({ model: "claude-sonnet-4-5" })

layer(live)("RenderRecord", (it) => {
  it.effect("records PromptRendered with the sha256 of the exact request and clears signals", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("render", "You are helpful.")
      yield* ctx.raiseSignal("render", "disk almost full")
      yield* ctx.appendMessages("render", [Message.user("hi")])
      const window = yield* ctx.load("render")
      const built = builder.build(window, { turnReminder: "be brief" })
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      assert.include(JSON.stringify(built.right.request), "disk almost full")
      const outcome = yield* RenderRecord.recordRender("render", built.right, {
        provider: "anthropic",
        model: "claude-sonnet-4-5"
      })
      const event = outcome.events[0]
      assert.strictEqual(event?._tag, "PromptRendered")
      if (event?._tag !== "PromptRendered") return
      assert.strictEqual(event.sha256, RenderRecord.requestSha256(built.right.request))
      assert.match(event.sha256, /^[0-9a-f]{64}$/)
      assert.deepStrictEqual(event.tokens, window.tokens)
      assert.deepStrictEqual(outcome.window.signals, [])
      // The next render no longer carries the signal, and its hash differs.
      const next = builder.build(outcome.window, { turnReminder: "be brief" })
      if (Either.isLeft(next)) return yield* Effect.die(next.left)
      assert.notInclude(JSON.stringify(next.right.request), "disk almost full")
      assert.notStrictEqual(RenderRecord.requestSha256(next.right.request), event.sha256)
    })
  )

  it.effect("records a rebuildable render: tools stored once per stream, every render verifies from the log", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const log = yield* EventLog.EventLog
      const tools = [{ name: "read", description: "Read a file.", inputSchema: { type: "object" } }]
      const configs: ReadonlyArray<CtxBuilder.ProviderConfig> = [
        { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow: 50_000 },
        { provider: "openai", model: "gpt-4.1" }
      ]
      yield* ctx.setSystemPrompt("rebuild", "You are helpful.")
      for (const [turn, question] of ["first?", "second?"].entries()) {
        yield* ctx.raiseSignal("rebuild", `signal ${turn}`)
        yield* ctx.appendMessages("rebuild", [Message.user(question)])
        for (const config of configs) {
          const window = yield* ctx.load("rebuild")
          const options = { tools, turnReminder: "be brief", maxOutputTokens: 512, systemPrompt: "Override." }
          const built = CtxBuilder.forProvider(config).build(window, options)
          if (Either.isLeft(built)) return yield* Effect.die(built.left)
          yield* RenderRecord.recordRender(
            "rebuild",
            built.right,
            { provider: config.provider, model: config.model },
            { config, options }
          )
        }
      }
      const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("rebuild")))
      const renders = envelopes.filter((envelope) => envelope.event._tag === "PromptRendered")
      assert.strictEqual(renders.length, 4)
      // The tools blob is stored by the first render only.
      const withBlobs = renders.filter((envelope) => RenderRecord.collectBlobs([envelope.event]).size > 0)
      assert.deepStrictEqual(
        withBlobs.map((envelope) => envelope.version),
        [renders[0]?.version]
      )
      const blobs = RenderRecord.collectBlobs(envelopes.map((envelope) => envelope.event))
      for (const render of renders) {
        if (render.event._tag !== "PromptRendered") continue
        const before = Window.replay(
          envelopes.filter((envelope) => envelope.version < render.version).map((envelope) => envelope.event)
        )
        const rebuilt = RenderRecord.rebuild(before, render.event, render.version, blobs)
        assert.isTrue(Either.isRight(rebuilt), Either.isLeft(rebuilt) ? rebuilt.left.message : "")
        if (Either.isRight(rebuilt)) assert.include(rebuilt.right.body, "Override.")
      }
      // A window that is not the one before the render rebuilds to other bytes: a clear mismatch.
      const last = renders[3]
      if (last === undefined || last.event._tag !== "PromptRendered") return assert.fail("no last render")
      const wrong = RenderRecord.rebuild(Window.empty, last.event, last.version, blobs)
      assert.isTrue(Either.isLeft(wrong))
      if (Either.isLeft(wrong)) assert.strictEqual(wrong.left.reason, "hash-mismatch")
      // Without the blob the render cannot be rebuilt, and says which blob is missing.
      const first = renders[0]
      if (first === undefined || first.event._tag !== "PromptRendered") return assert.fail("no first render")
      const missing = RenderRecord.rebuild(Window.empty, first.event, first.version, new Map())
      assert.isTrue(Either.isLeft(missing) && missing.left.reason === "missing-blob")
      // A render recorded without its config is not rebuildable.
      const bare = RenderRecord.rebuild(Window.empty, { ...first.event, render: undefined }, 1, blobs)
      assert.isTrue(Either.isLeft(bare) && bare.left.reason === "not-rebuildable")
    })
  )

  it.effect("records usage and calibrates the next estimate by the observed ratio", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const counter = yield* TokenCounter.TokenCounter
      yield* ctx.appendMessages("usage", [Message.user("a question of some length")])
      const window = yield* ctx.load("usage")
      const before = TokenEstimate.estimateTokens(window, counter)
      assert.strictEqual(before.ratio, 1)
      assert.strictEqual(before.calibrated, before.raw)
      const usage = { inputTokens: before.raw * 3, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 }
      const outcome = yield* RenderRecord.recordUsage("usage", usage, before.raw, { provider: "p", model: "m" })
      const event = outcome.events[0]
      assert.strictEqual(event?._tag, "UsageReported")
      assert.deepStrictEqual(outcome.window.calibration, {
        estimatedInputTokens: before.raw,
        reportedInputTokens: before.raw * 3,
        observations: 1
      })
      const after = TokenEstimate.estimateTokens(outcome.window, counter, { turnReminder: "note" })
      assert.strictEqual(after.ratio, 3)
      assert.strictEqual(after.raw, before.raw + counter.count("note"))
      assert.strictEqual(after.calibrated, after.raw * 3)
      assert.strictEqual(TokenEstimate.calibrate(outcome.window, 100), 300)
    })
  )
})

describe("RenderRecord.serialize", () => {
  it("is JSON.stringify, the bytes the clients send", () => {
    assert.strictEqual(RenderRecord.serialize({ a: 1, b: [true] }), '{"a":1,"b":[true]}')
  })
})
