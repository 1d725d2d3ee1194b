import { Message, ToolPairs, Window, type WindowEvent } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import * as Either from "effect/Either"
import fc from "fast-check"
import { AnthropicCtx, type CtxBuilder, OllamaCtx, OpenAICtx, RequestValidator } from "../src/index.js"
import { msg, windowOf } from "./fixture.js"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"

type Step =
  | { readonly _tag: "user"; readonly tokens: number }
  | { readonly _tag: "assistant"; readonly tokens: number }
  | { readonly _tag: "summary"; readonly tokens: number }
  | {
      readonly _tag: "round"
      readonly calls: number
      readonly order: ReadonlyArray<number>
      readonly interleave: boolean
      readonly resultsAsUser: boolean
      readonly tokens: number
    }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ _tag: fc.constant("user" as const), tokens: fc.integer({ min: 1, max: 900 }) }),
  fc.record({ _tag: fc.constant("assistant" as const), tokens: fc.integer({ min: 1, max: 900 }) }),
  fc.record({ _tag: fc.constant("summary" as const), tokens: fc.integer({ min: 1, max: 900 }) }),
  fc.integer({ min: 1, max: 3 }).chain((calls) =>
    fc.record({
      _tag: fc.constant("round" as const),
      calls: fc.constant(calls),
      order: fc.shuffledSubarray([...Array(calls).keys()], { minLength: calls, maxLength: calls }),
      interleave: fc.boolean(),
      resultsAsUser: fc.boolean(),
      tokens: fc.integer({ min: 1, max: 900 })
    })
  )
)

const scenario = fc.record({
  system: fc.array(fc.integer({ min: 1, max: 3000 }), { maxLength: 2 }),
  stable: fc.array(fc.integer({ min: 1, max: 3000 }), { maxLength: 2 }),
  injected: fc.array(fc.integer({ min: 1, max: 1500 }), { maxLength: 2 }),
  goal: fc.boolean(),
  signals: fc.integer({ min: 0, max: 2 }),
  steps: fc.array(step, { maxLength: 14 }),
  dropGroups: fc.array(fc.boolean(), { maxLength: 20 }),
  minCacheable: fc.integer({ min: 1, max: 4096 }),
  reminder: fc.boolean(),
  // Assistant turns carry signed (and sometimes redacted or readable-only) reasoning; users send images.
  reasoning: fc.constantFrom("none", "signed", "mixed"),
  images: fc.boolean()
})

type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

const windowFor = (s: Scenario): Window.Window => {
  const events: Array<WindowEvent.Draft> = []
  if (s.system.length > 0) {
    events.push({
      _tag: "SystemPromptSet",
      messages: s.system.map((tokens, i) => msg(`sys-${i}`, Message.system(`identity ${i}`), tokens))
    })
  }
  if (s.stable.length > 0) {
    events.push({
      _tag: "KnowledgeSet",
      messages: s.stable.map((tokens, i) => msg(`kn-${i}`, Message.system(`knowledge ${i}`), tokens))
    })
  }
  if (s.injected.length > 0) {
    events.push({
      _tag: "MessagesInjected",
      kind: "recall",
      messages: s.injected.map((tokens, i) => msg(`rc-${i}`, Message.system(`recall ${i}`), tokens, "recall")),
      replacesInHistory: false
    })
  }
  if (s.goal) events.push({ _tag: "TaskGoalSet", goal: "ship it", tokens: 3 })
  for (let i = 0; i < s.signals; i++) {
    events.push({ _tag: "SignalRaised", signal: { id: `sig-${i}`, text: `signal ${i}`, tokens: 3 } })
  }
  const append = (message: Message.Message): void => {
    events.push({ _tag: "MessageAppended", message })
  }
  const thoughts = (n: number): ReadonlyArray<Message.Part> =>
    s.reasoning === "none"
      ? []
      : s.reasoning === "signed"
        ? [Message.reasoning(`thinking ${n}`, { signature: `sig-${n}` })]
        : n % 3 === 0
          ? [Message.reasoning("", { redactedData: `data-${n}` }), Message.reasoning(`thinking ${n}`)]
          : [Message.reasoning(`thinking ${n}`, { signature: `sig-${n}`, itemId: `rs_${n}` })]
  for (const [n, st] of s.steps.entries()) {
    switch (st._tag) {
      case "user":
        append(
          msg(
            `u-${n}`,
            s.images
              ? { role: "user", parts: [Message.text(`user ${n}`), Message.imageUrl(`https://example.com/${n}.png`)] }
              : Message.user(`user ${n}`),
            st.tokens
          )
        )
        break
      case "assistant":
        append(msg(`a-${n}`, { role: "assistant", parts: [...thoughts(n), Message.text(`assistant ${n}`)] }, st.tokens))
        break
      case "summary":
        append(msg(`s-${n}`, Message.system(`summary ${n}`), st.tokens, "summary"))
        break
      case "round": {
        const ids = [...Array(st.calls).keys()].map((i) => `call-${n}-${i}`)
        append(
          msg(
            `a-${n}`,
            { role: "assistant", parts: [...thoughts(n), ...ids.map((id) => Message.toolCall(id, "tool", { n }))] },
            st.tokens
          )
        )
        st.order.forEach((i, position) => {
          if (st.interleave && position === 1) append(msg(`ui-${n}`, Message.user(`meanwhile ${n}`), 2))
          const id = ids[i] ?? "missing"
          append(
            st.resultsAsUser
              ? msg(`r-${n}-${i}`, { role: "user", parts: [Message.toolResult(id, `out ${i}`)] }, 5)
              : msg(`r-${n}-${i}`, Message.tool(id, `out ${i}`, i === 0), 5)
          )
        })
      }
    }
  }
  const full = windowOf(events)
  // Trim whole tool rounds, as every policy must.
  const dropped = ToolPairs.groups(full.history)
    .filter((_, i) => s.dropGroups[i] === true)
    .flatMap((group) => group.map((message) => message.id))
  return dropped.length === 0
    ? full
    : Window.evolve(full, { _tag: "MessagesRemoved", id: "trim", messageIds: dropped, reason: "trim" })
}

const reminder = (s: Scenario) => (s.reminder ? { turnReminder: "remember" } : {})

describe("properties over random windows", () => {
  it("every Anthropic request has <= 4 cache_control markers and valid tool_use/tool_result adjacency", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        await yieldToEventLoop()
        const window = windowFor(s)
        const result = AnthropicCtx.make({ model: "claude-sonnet-4-5", minCacheableTokens: s.minCacheable }).build(
          window,
          reminder(s)
        )
        if (window.history.length === 0 && !s.goal && s.signals === 0 && !s.reminder) {
          expect(Either.isLeft(result)).toBe(true)
          return
        }
        if (Either.isLeft(result)) throw new Error(result.left.message)
        const request = result.right.request
        const json = JSON.stringify(request)
        expect((json.match(/"cache_control"/g) ?? []).length).toBeLessThanOrEqual(4)
        request.messages.forEach((message, i) => {
          const previous = request.messages[i - 1]
          const next = request.messages[i + 1]
          if (previous !== undefined) expect(previous.role).not.toBe(message.role)
          for (const block of message.content) {
            if (block.type === "tool_use") {
              expect(message.role).toBe("assistant")
              expect(next?.content.some((b) => b.type === "tool_result" && b.tool_use_id === block.id)).toBe(true)
            }
            if (block.type === "tool_result") {
              expect(message.role).toBe("user")
              expect(previous?.content.some((b) => b.type === "tool_use" && b.id === block.tool_use_id)).toBe(true)
            }
          }
          const types = message.content.map((block) => block.type)
          const firstOther = types.findIndex((type) => type !== "tool_result")
          if (firstOther !== -1) expect(types.slice(firstOther)).not.toContain("tool_result")
          // Thinking only in assistant messages, before everything else, signed.
          const thinking = (type: string) => type === "thinking" || type === "redacted_thinking"
          const firstNonThinking = types.findIndex((type) => !thinking(type))
          if (types.some(thinking)) expect(message.role).toBe("assistant")
          if (firstNonThinking !== -1) expect(types.slice(firstNonThinking).some(thinking)).toBe(false)
          for (const block of message.content) {
            if (block.type === "thinking") expect(block.signature).toMatch(/^sig-/)
          }
        })
        // Every signed reasoning part of a rendered assistant turn went out (the default keeps all).
        const signed = window.history.flatMap((message) =>
          Message.toolCallsOf(message).length > 0 || Message.textOf(message).length > 0
            ? Message.reasoningOf(message).flatMap((part) => (part.signature === undefined ? [] : [part.signature]))
            : []
        )
        for (const signature of signed) expect(json).toContain(`"signature":"${signature}"`)
        expect(request.messages[0]?.role).toBe("user")
      }),
      { numRuns: propertyRuns(300) }
    )
  })

  it("every OpenAI request has each tool message right after its tool_calls assistant message", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        await yieldToEventLoop()
        const window = windowFor(s)
        for (const builder of [OpenAICtx.make({ model: "gpt-4o" }), OllamaCtx.make({ model: "llama3.2" })]) {
          const result = builder.build(window, reminder(s))
          const nothing =
            window.system.length + window.knowledge.length + window.history.length + s.signals === 0 &&
            !s.goal &&
            !s.reminder
          if (nothing) {
            expect(Either.isLeft(result)).toBe(true)
            continue
          }
          if (Either.isLeft(result)) throw new Error(result.left.message)
          const messages = result.right.request.messages
          messages.forEach((message, i) => {
            if (message.role !== "tool") return
            let j = i - 1
            while (messages[j]?.role === "tool") j--
            const owner = messages[j]
            expect(owner?.role).toBe("assistant")
            const calls = owner?.role === "assistant" ? (owner.tool_calls ?? []).map((call) => call.id) : []
            expect(calls).toContain(message.tool_call_id)
          })
          // and every call is answered
          messages.forEach((message, i) => {
            if (message.role !== "assistant") return
            const answered = new Set<string>()
            for (let j = i + 1; messages[j]?.role === "tool"; j++) {
              const tool = messages[j]
              if (tool?.role === "tool") answered.add(tool.tool_call_id)
            }
            for (const call of message.tool_calls ?? []) expect(answered.has(call.id)).toBe(true)
          })
        }
      }),
      { numRuns: propertyRuns(300) }
    )
  })

  it("removing a tool call but keeping its results is always a typed InvalidRequest naming the call", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.nat(), async (s, pick) => {
        await yieldToEventLoop()
        const window = windowFor(s)
        const callers = window.history.filter((message) => Message.toolCallsOf(message).length > 0)
        fc.pre(callers.length > 0)
        const victim = callers[pick % callers.length]
        if (victim === undefined) return
        const broken = Window.evolve(window, {
          _tag: "MessagesRemoved",
          id: "break",
          messageIds: [victim.id],
          reason: "bug"
        })
        const ids = Message.toolCallsOf(victim).map((call) => call.id)
        const builders: ReadonlyArray<CtxBuilder.CtxBuilder<CtxBuilder.RenderedRequest>> = [
          AnthropicCtx.make({ model: "claude-sonnet-4-5" }),
          OpenAICtx.make({ model: "gpt-4o" }),
          OpenAICtx.makeResponses({ model: "gpt-4o" })
        ]
        for (const builder of builders) {
          const result = builder.build(broken)
          expect(Either.isLeft(result)).toBe(true)
          if (Either.isLeft(result)) expect(ids).toContain(result.left.toolCallId)
        }
      }),
      { numRuns: propertyRuns(200) }
    )
  })

  it("a compression plan removes whole tool rounds: the rest of history stays valid", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.integer({ min: 0, max: 5000 }), async (s, ceiling) => {
        await yieldToEventLoop()
        const window = windowFor(s)
        const plan = AnthropicCtx.make({ model: "claude-sonnet-4-5" }).compressionPlan(window, ceiling)
        const removed = new Set(plan.removeIds)
        const kept = window.history.filter((message) => !removed.has(message.id))
        const removedMessages = window.history.filter((message) => removed.has(message.id))
        expect(Either.isRight(RequestValidator.history("any", kept))).toBe(true)
        expect(Either.isRight(RequestValidator.history("any", removedMessages))).toBe(true)
        expect(plan.tokens + plan.keptTokens).toBe(window.tokens.history)
        // The one planner drains an oversized tail (issue 11 item 7): history past the ceiling stays only
        // for rounds that must (a pinned message, an open call, a result the model has not seen).
        const lastAssistant = window.history.map((message) => message.role).lastIndexOf("assistant")
        const unseen = window.history
          .slice(lastAssistant + 1)
          .some((message) => Message.toolResultsOf(message).length > 0)
        const forced =
          unseen ||
          window.history.some((message) => message.pinned === true) ||
          ToolPairs.pendingCalls(window.history).length > 0
        // The group of the user's latest ask stays too (issue 39, ADR 0114): past the ceiling by that group
        // at most, and the ask itself is never removed.
        const ask = Window.latestUserAsk(window)
        const askGroup = ToolPairs.groups(window.history).find((group) => group.some((m) => m.id === ask)) ?? []
        const askTokens = askGroup.reduce((sum, message) => sum + message.tokens, 0)
        if (ask !== undefined) expect(removed.has(ask)).toBe(false)
        if (!forced) expect(plan.keptTokens).toBeLessThanOrEqual(ceiling + askTokens)
      }),
      { numRuns: propertyRuns(300) }
    )
  })
})
