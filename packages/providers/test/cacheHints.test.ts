// Caller cache hints (issue 23): a caller's `cacheControl` breakpoints are a render option, placed by the
// Anthropic builder on the last block of each hinted message (instead of its own), recorded in
// `PromptRendered` v5 and placed again by a rebuild, byte for byte.
import { ContextService, EventLog, Ids, Message, TokenCounter, Window } from "@ctxlog/core"
import { assert, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { AnthropicCtx, type CtxBuilder, RenderRecord } from "../src/index.js"

const live = ContextService.layerMemory({ tokenCounter: TokenCounter.layerGpt(), ids: Ids.layerSequential("t") })

const config: CtxBuilder.ProviderConfig = { provider: "anthropic", model: "claude-sonnet-4-5", minCacheableTokens: 1 }
const builder = AnthropicCtx.make(config)

/** Where the request carries `cache_control`: `system[i]` and `messages[i].content[j]`, with the control. */
const markers = (request: AnthropicCtx.AnthropicRequest): Record<string, unknown> => {
  const found: Record<string, unknown> = {}
  request.system?.forEach((block, index) => {
    if (block.cache_control !== undefined) found[`system[${index}]`] = block.cache_control
  })
  request.tools?.forEach((tool, index) => {
    if (tool.cache_control !== undefined) found[`tools[${index}]`] = tool.cache_control
  })
  request.messages.forEach((message, index) => {
    message.content.forEach((block, inner) => {
      if (block.cache_control !== undefined) found[`messages[${index}].content[${inner}]`] = block.cache_control
    })
  })
  return found
}

// A window: a system prompt, knowledge, a user question, an answer with two tool calls, two tool messages,
// and a follow-up question.
const seed = (stream: string) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    yield* ctx.setSystemPrompt(stream, "You are a careful build engineer.")
    yield* ctx.setKnowledge(stream, ["The repository uses pnpm and turbo."])
    yield* ctx.appendMessages(stream, [
      Message.user("Why does the build fail?"),
      Message.assistant("Let me look.", [
        Message.toolCall("c1", "read", { path: "a.ts" }),
        Message.toolCall("c2", "read", { path: "b.ts" })
      ]),
      Message.tool("c1", "export const a = 1"),
      Message.tool("c2", "export const b = 2"),
      Message.user("And now?")
    ])
    return yield* ctx.load(stream)
  })

const ids = (window: Window.Window) => ({
  system: window.system[0]?.id ?? "",
  knowledge: window.knowledge[0]?.id ?? "",
  question: window.history[0]?.id ?? "",
  answer: window.history[1]?.id ?? "",
  result1: window.history[2]?.id ?? "",
  result2: window.history[3]?.id ?? "",
  followUp: window.history[4]?.id ?? ""
})

const built = (window: Window.Window, options: CtxBuilder.BuildOptions, make = builder) => {
  const result = make.build(window, options)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right
}

layer(live)("caller cache hints", (it) => {
  it.effect("mark the last block of each hinted message, with its TTL, and replace the builder's own", () =>
    Effect.gen(function* () {
      const window = yield* seed("hints")
      const id = ids(window)
      // Without hints the builder places its own breakpoints (identity, knowledge, the conversation prefix).
      const own = built(window, {})
      assert.isAbove(Object.keys(markers(own.request)).length, 0)
      const hints = [{ messageId: id.system }, { messageId: id.answer, ttl: "1h" as const }, { messageId: id.result1 }]
      const withHints = built(window, { cacheHints: hints })
      assert.deepStrictEqual(markers(withHints.request), {
        "system[0]": { type: "ephemeral" },
        // The answer: text, tool_use c1, tool_use c2 — its last block is marked.
        "messages[1].content[2]": { type: "ephemeral", ttl: "1h" },
        // The tool results of c1 and c2 share a user message with the follow-up: c1's block is marked.
        "messages[2].content[0]": { type: "ephemeral" }
      })
      assert.strictEqual(withHints.stats.cacheBreakpoints, 3)
      // Only the markers differ: the same request with them removed is the unhinted request less its own.
      const strip = (request: AnthropicCtx.AnthropicRequest) =>
        JSON.stringify(request, (key, value) => (key === "cache_control" ? undefined : value))
      assert.strictEqual(strip(withHints.request), strip(own.request))
    })
  )

  it.effect(
    "a hint on the knowledge and on the newest user message; a hint on a message not in the window marks nothing",
    () =>
      Effect.gen(function* () {
        const window = yield* seed("hints-2")
        const id = ids(window)
        const request = built(window, {
          cacheHints: [{ messageId: id.knowledge }, { messageId: id.followUp }, { messageId: "not-in-window" }]
        }).request
        assert.deepStrictEqual(markers(request), {
          "system[1]": { type: "ephemeral" },
          "messages[2].content[2]": { type: "ephemeral" }
        })
        // The newest user message is the follow-up text after the two tool results.
        const last = request.messages[2]?.content[2]
        assert.strictEqual(last?.type === "text" ? last.text : "", "And now?")
      })
  )

  it.effect("more than four breakpoints are refused (InvalidRequest), promptCaching false places none", () =>
    Effect.gen(function* () {
      const window = yield* seed("hints-3")
      const id = ids(window)
      const five = [id.system, id.knowledge, id.question, id.answer, id.followUp].map((messageId) => ({ messageId }))
      const refused = builder.build(window, { cacheHints: five })
      assert.isTrue(Either.isLeft(refused))
      if (Either.isLeft(refused)) assert.include(refused.left.message, "5 cache_control breakpoints")
      const off = AnthropicCtx.make({ model: "claude-sonnet-4-5", promptCaching: false })
      assert.deepStrictEqual(markers(built(window, { cacheHints: five }, off).request), {})
    })
  )

  it.effect("a hinted render leaves the render cache alone: the next render equals a render from scratch", () =>
    Effect.gen(function* () {
      const window = yield* seed("hints-4")
      const first = built(window, {})
      built(window, { cacheHints: [{ messageId: ids(window).question }] })
      const again = built(window, {})
      assert.strictEqual(JSON.stringify(again.request), JSON.stringify(first.request))
      const fresh = built(window, {}, AnthropicCtx.make(config))
      assert.strictEqual(JSON.stringify(again.request), JSON.stringify(fresh.request))
    })
  )

  it.effect(
    "cacheBreakpoints last-message (Claude Code's placement): one breakpoint on the last block of the last message, recorded in the config and rebuilt",
    () =>
      Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        const window = yield* seed("hints-6")
        const lastConfig: CtxBuilder.ProviderConfig = { ...config, cacheBreakpoints: "last-message" }
        const last = built(window, {}, AnthropicCtx.make(lastConfig))
        // The follow-up is the last history message: its text, after the two tool results, is marked, and nothing else.
        assert.deepStrictEqual(markers(last.request), { "messages[2].content[2]": { type: "ephemeral" } })
        assert.strictEqual(last.stats.cacheBreakpoints, 1)
        // The same request as a hint on the last message; the caller's hints still win over the config.
        const hinted = built(window, { cacheHints: [{ messageId: ids(window).followUp }] })
        assert.strictEqual(JSON.stringify(last.request), JSON.stringify(hinted.request))
        const question = built(
          window,
          { cacheHints: [{ messageId: ids(window).question }] },
          AnthropicCtx.make(lastConfig)
        )
        assert.deepStrictEqual(markers(question.request), { "messages[0].content[0]": { type: "ephemeral" } })
        // Off with promptCaching false.
        const off = AnthropicCtx.make({ ...lastConfig, promptCaching: false })
        assert.deepStrictEqual(markers(built(window, {}, off).request), {})
        // Recorded in the render's config (no hints in the spec), and a rebuild places it again.
        const outcome = yield* RenderRecord.recordRender(
          "hints-6",
          last,
          { provider: "anthropic", model: "claude-sonnet-4-5" },
          { config: lastConfig, options: {} }
        )
        const event = outcome.events[0]
        if (event?._tag !== "PromptRendered") return assert.fail("no PromptRendered")
        assert.isUndefined(event.render?.cacheHints)
        const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("hints-6")))
        const before = Window.replay(envelopes.slice(0, -1).map((envelope) => envelope.event))
        const rebuilt = RenderRecord.rebuild(before, event, envelopes.length, new Map())
        if (Either.isLeft(rebuilt)) return assert.fail(rebuilt.left.message)
        assert.strictEqual(rebuilt.right.body, RenderRecord.serialize(last.request))
      })
  )

  it.effect("are recorded with the render (PromptRendered v5) and a rebuild places them again, byte for byte", () =>
    Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      const window = yield* seed("hints-5")
      const id = ids(window)
      const options: CtxBuilder.BuildOptions = {
        turnReminder: "be brief",
        cacheHints: [{ messageId: id.system, ttl: "1h" }, { messageId: id.result2 }]
      }
      const request = built(window, options)
      const outcome = yield* RenderRecord.recordRender(
        "hints-5",
        request,
        { provider: "anthropic", model: "claude-sonnet-4-5" },
        { config, options }
      )
      const event = outcome.events[0]
      if (event?._tag !== "PromptRendered") return assert.fail("no PromptRendered")
      assert.deepStrictEqual(event.render?.cacheHints, options.cacheHints)
      const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("hints-5")))
      const stored = envelopes[envelopes.length - 1]
      if (stored === undefined || stored.event._tag !== "PromptRendered") return assert.fail("not stored")
      assert.deepStrictEqual(stored.event, event)
      const verification = RenderRecord.verifyAll(envelopes)
      assert.deepStrictEqual([verification.renders, verification.verified], [1, 1])
      const before = Window.replay(envelopes.slice(0, -1).map((envelope) => envelope.event))
      const rebuilt = RenderRecord.rebuild(before, stored.event, stored.version, new Map())
      if (Either.isLeft(rebuilt)) return assert.fail(rebuilt.left.message)
      assert.strictEqual(rebuilt.right.body, RenderRecord.serialize(request.request))
      assert.include(rebuilt.right.body, '"cache_control":{"type":"ephemeral","ttl":"1h"}')
      // The hints are what makes the bytes: the same spec without them rebuilds to another request.
      const spec = stored.event.render
      if (spec === undefined) return assert.fail("no spec")
      const { cacheHints: _hints, ...withoutHints } = spec
      const other = RenderRecord.rebuild(before, { ...stored.event, render: withoutHints }, stored.version, new Map())
      assert.isTrue(Either.isLeft(other) && other.left.reason === "hash-mismatch")
    })
  )
})
