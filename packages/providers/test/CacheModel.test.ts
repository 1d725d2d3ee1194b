import { ContextService, EventLog, Ids, type LanguageModel, Message } from "@ctxlog/core"
import { assert, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { CacheModel, CacheTable, CtxBuilder, RenderRecord } from "../src/index.js"

const live = ContextService.layerMemory({ ids: Ids.layerSequential("c") })

// A system prompt well past every minimum cacheable length (o200k counts ~1 token a word here).
const longSystem = Array.from({ length: 1500 }, (_, index) => `rule${index}`).join(" ")
const tools = [{ name: "read", description: "Read a file.", inputSchema: { type: "object" } }]

/** One model call: render with the config, record it, and record a usage (the "recorded" side). */
const call = (stream: string, config: CtxBuilder.ProviderConfig, usage?: Partial<LanguageModel.Usage>) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const window = yield* ctx.load(stream)
    const options = { tools }
    const built = CtxBuilder.forProvider(config).build(window, options)
    if (Either.isLeft(built)) return yield* Effect.die(built.left)
    yield* RenderRecord.recordRender(
      stream,
      built.right,
      { provider: config.provider, model: config.model },
      { config, options }
    )
    yield* RenderRecord.recordUsage(
      stream,
      {
        inputTokens: usage?.inputTokens ?? built.right.stats.total,
        outputTokens: 10,
        cacheReadTokens: usage?.cacheReadTokens ?? 0,
        cacheWriteTokens: usage?.cacheWriteTokens ?? 0
      },
      built.right.stats.total,
      { provider: config.provider, model: config.model }
    )
  })

const answerTurn = (stream: string, index: number) =>
  Effect.flatMap(ContextService.ContextService, (ctx) =>
    ctx.appendMessages(stream, [
      Message.assistant(`looking ${index}`, [Message.toolCall(`call_${index}`, "read", { path: `f${index}.ts` })]),
      Message.tool(`call_${index}`, `contents of file ${index}: ${"x ".repeat(200)}`),
      Message.user(`and now step ${index + 1}?`)
    ])
  )

/** The stream's events, with the times given per render (the calls' clock), in version order. */
const timed = (stream: string, times: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    let render = -1
    return envelopes.map((envelope): CacheModel.TimedEvent => {
      if (envelope.event._tag === "PromptRendered") render++
      return { version: envelope.version, recordedAt: times[Math.max(0, render)] ?? 0, event: envelope.event }
    })
  })

const anthropic: CtxBuilder.ProviderConfig = {
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  contextWindow: 200_000
}
const openai: CtxBuilder.ProviderConfig = { provider: "openai", model: "gpt-4.1", contextWindow: 200_000 }

layer(live)("CacheModel", (it) => {
  it("resolves prices and rules from the dated table", () => {
    const sonnet = CacheTable.resolve("anthropic", "claude-sonnet-4-5-20250929")
    assert.deepStrictEqual([sonnet.input, sonnet.write5m, sonnet.write1h], [3, 3.75, 6])
    assert.closeTo(sonnet.cacheRead, 0.3, 1e-12)
    assert.strictEqual(CacheTable.resolve("anthropic", "claude-opus-4-5").minCacheableTokens, 4096)
    const gpt = CacheTable.resolve("openai", "gpt-4.1-mini")
    assert.deepStrictEqual([gpt.input, gpt.cacheRead, gpt.write5m], [0.4, 0.1, 0.4])
    assert.strictEqual(CacheTable.resolve("ollama", "llama3").rules.kind, "none")
    assert.isFalse(CacheTable.resolve("anthropic", "claude-unknown").listed)
    // Claude's tokenizer counts the same text ~7% above o200k; OpenAI's is o200k.
    assert.strictEqual(sonnet.tokensPerCounted, 1.07)
    assert.strictEqual(gpt.tokensPerCounted, 1)
  })

  it.effect("Anthropic: writes at the breakpoints, reads them back, and a gap past the TTL expires them", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("a", longSystem)
      yield* ctx.appendMessages("a", [Message.user("step 1?")])
      for (let index = 1; index <= 4; index++) {
        yield* call("a", anthropic)
        yield* answerTurn("a", index)
      }
      // Calls at 0s, 30s, 60s, then 10 minutes later (past the 5-minute TTL).
      const report = CacheModel.predict(yield* timed("a", [0, 30_000, 60_000, 660_000]))
      const [first, second, third, fourth] = report.calls
      if (first === undefined || second === undefined || third === undefined || fourth === undefined) {
        return assert.fail("four calls expected")
      }
      assert.strictEqual(first.predicted.cacheRead, 0)
      assert.isAbove(first.predicted.cacheWrite, 1024)
      assert.strictEqual(first.predicted.class, "miss")
      assert.strictEqual(first.cause?.kind, "cold-start")
      // The second call reads everything the first wrote (its breakpoints' prefixes).
      assert.strictEqual(second.predicted.cacheRead, first.predicted.cacheWrite)
      assert.isAbove(second.predicted.cacheWrite, 0)
      assert.strictEqual(third.predicted.cacheRead, second.predicted.cacheRead + second.predicted.cacheWrite)
      assert.strictEqual(fourth.predicted.cacheRead, 0)
      assert.strictEqual(fourth.cause?.kind, "ttl-expiry")
      assert.isAbove(fourth.cause?.lost ?? 0, 0)
      // Dollars: writes at 1.25x, reads at 0.1x the input price.
      const { uncached, cacheWrite, cacheRead } = second.predicted
      assert.closeTo(second.predicted.cost, (uncached * 3 + cacheWrite * 3.75 + cacheRead * 0.3) / 1e6, 1e-12)
      assert.strictEqual(report.causes[0]?.kind, "ttl-expiry")
    })
  )

  it.effect("reads no usage but the first call's: stripping every later usage gives the same prediction", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      // No system prompt in the log (an imported session): the first usage reveals 20k unknown tokens.
      yield* ctx.appendMessages("s", [Message.user("step 1?")])
      for (let index = 1; index <= 3; index++) {
        const window = yield* ctx.load("s")
        yield* call("s", anthropic, {
          inputTokens: window.tokens.total + 20_000 + index * 7,
          cacheReadTokens: index * 1000
        })
        yield* answerTurn("s", index)
      }
      const events = yield* timed("s", [0, 10_000, 20_000])
      const full = CacheModel.predict(events)
      const firstUsage = events.findIndex((entry) => entry.event._tag === "UsageReported")
      const stripped = events.filter((entry, index) => entry.event._tag !== "UsageReported" || index === firstUsage)
      const bare = CacheModel.predict(stripped)
      assert.deepStrictEqual(
        bare.calls.map((entry) => entry.predicted),
        full.calls.map((entry) => entry.predicted)
      )
      assert.isAbove(full.unknownPrefix?.tokens ?? 0, 19_000)
      assert.include(full.unknownPrefix?.note ?? "", "first call's recorded usage")
      // Only the first call has a recording once stripped; every call has one in the full run.
      assert.deepStrictEqual(
        bare.calls.map((entry) => entry.recorded !== null),
        [true, false, false]
      )
      assert.isTrue(full.calls.every((entry) => entry.recorded !== null && entry.readError !== undefined))
      // The unknown prefix is cached and read back by the second call.
      assert.isAbove(full.calls[1]?.predicted.cacheRead ?? 0, 19_000)
    })
  )

  it.effect("an edit of one mid-history message is named: the message, the block, the event", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("e", longSystem)
      yield* ctx.appendMessages("e", [Message.user("step 1?")])
      for (let index = 1; index <= 3; index++) {
        yield* call("e", anthropic)
        yield* answerTurn("e", index)
      }
      // Rewrite the first tool result (mid-history, inside the prefix the last call cached) in place.
      const window = yield* ctx.load("e")
      const target = window.history.find(
        (message) => message.role === "tool" && Message.toolResultsOf(message)[0]?.toolCallId === "call_1"
      )
      if (target === undefined) return assert.fail("no tool result for call_1")
      const edited = yield* ctx.run("e", () =>
        Either.right([
          {
            _tag: "ToolOutputPruned" as const,
            outputs: [{ messageId: target.id, toolCallId: "call_1", content: "[pruned]", tokens: 3 }]
          }
        ])
      )
      yield* call("e", anthropic)
      const report = CacheModel.predict(yield* timed("e", [0, 10_000, 20_000, 30_000]))
      const last = report.calls.at(-1)
      assert.strictEqual(last?.cause?.kind, "pruning")
      assert.strictEqual(last?.cause?.message?.id, target.id)
      assert.match(last?.cause?.divergedAt ?? "", /^messages\[\d+\]\.content\[\d+\]$/)
      assert.deepStrictEqual(last?.cause?.events, [{ version: edited.window.version, type: "ToolOutputPruned" }])
      // The shared prefix stops before the edited message: less than the previous call cached.
      const previous = report.calls.at(-2)
      assert.isBelow(
        last?.predicted.cacheRead ?? 0,
        (previous?.predicted.cacheRead ?? 0) + (previous?.predicted.cacheWrite ?? 0)
      )
      assert.isAbove(last?.cause?.lost ?? 0, 0)
    })
  )

  it.effect("OpenAI: automatic prefix hits from 1,024 tokens in 128-token steps, no write premium", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("o", longSystem)
      yield* ctx.appendMessages("o", [Message.user("step 1?")])
      for (let index = 1; index <= 3; index++) {
        yield* call("o", openai)
        yield* answerTurn("o", index)
      }
      const report = CacheModel.predict(yield* timed("o", [0, 10_000, 20_000]))
      const [first, second] = report.calls
      assert.strictEqual(first?.predicted.cacheRead, 0)
      assert.strictEqual(first?.predicted.cacheWrite, 0)
      const read = second?.predicted.cacheRead ?? 0
      assert.isAtLeast(read, 1024)
      assert.strictEqual((read - 1024) % 128, 0)
      assert.isAtMost(read, first?.predicted.promptTokens ?? 0)
      assert.strictEqual(second?.predicted.class, "hit")

      // A short conversation stays below the minimum: nothing is read.
      yield* ctx.appendMessages("short", [Message.user("hi")])
      yield* call("short", openai)
      yield* ctx.appendMessages("short", [Message.assistant("hello"), Message.user("again")])
      yield* call("short", openai)
      const small = CacheModel.predict(yield* timed("short", [0, 1000]))
      assert.strictEqual(small.calls[1]?.predicted.cacheRead, 0)
      assert.strictEqual(small.calls[1]?.cause?.kind, "below-minimum")
    })
  )

  it.effect("a model switch is named, and each model keeps its own entries", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("m", longSystem)
      yield* ctx.appendMessages("m", [Message.user("step 1?")])
      yield* call("m", anthropic)
      yield* answerTurn("m", 1)
      yield* call("m", { ...anthropic, model: "claude-opus-4-1" })
      const report = CacheModel.predict(yield* timed("m", [0, 1000]))
      assert.strictEqual(report.calls[1]?.cause?.kind, "model-switch")
      assert.strictEqual(report.calls[1]?.predicted.cacheRead, 0)
    })
  )
})
