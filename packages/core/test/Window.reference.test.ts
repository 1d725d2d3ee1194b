/**
 * The O(change) projection against the reference model (the first release's array projection, in
 * `support/referenceEvolve.ts`): on random event sequences, including ones `decide` would never write,
 * both fold to equal windows after every event, and on valid conversations the lazy trim plan removes
 * exactly what the whole-history plan removes. Run count: `CTXLOG_PROPERTY_RUNS`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Decide, Message, Window, type WindowEvent } from "../src/index.js"
import { leafSize, setLeafSize } from "../src/internal/seq.js"
import { empty as referenceEmpty, evolve as referenceEvolve, referenceTrimPlan } from "./support/referenceEvolve.js"

const runs = Number(process.env.CTXLOG_PROPERTY_RUNS ?? 100)

/** An op: what to do, with random numbers that pick ids among the window's current messages. */
const op = fc.record({
  kind: fc.integer({ min: 0, max: 28 }),
  a: fc.nat(1000),
  b: fc.nat(1000),
  c: fc.nat(1000),
  tokens: fc.integer({ min: 0, max: 60 }),
  flag: fc.boolean()
})

const kinds = ["recall", "summary", "seam", "briefing", "lsp"] as const

/** Turn ops into events, reading ids from the reference window as it goes. */
type Op = typeof op extends fc.Arbitrary<infer O> ? O : never

const eventsFor = (ops: ReadonlyArray<Op>) => {
  let ref: Window.Window = referenceEmpty
  let fresh = 0
  const next = (prefix: string) => `${prefix}${fresh++}`
  const events: Array<WindowEvent.WindowEvent> = []
  const pick = <A>(items: ReadonlyArray<A>, n: number): A | undefined => items[n % Math.max(1, items.length)]
  const some = <A>(items: ReadonlyArray<A>, n: number, m: number): ReadonlyArray<A> =>
    items.filter((_, i) => (i * 7 + n) % (2 + (m % 5)) === 0)
  const msg = (
    role: Message.Role,
    text: string,
    tokens: number,
    kind: Message.MessageKind = "chat"
  ): Message.Message => ({
    id: next("m"),
    role,
    kind,
    parts: [Message.text(text)],
    tokens
  })
  const pendingCalls = () => {
    const answered = new Set(ref.completedToolIds)
    return ref.history.flatMap((m) => Message.toolCallsOf(m).map((c) => c.id)).filter((id) => !answered.has(id))
  }
  const toolMessages = () => ref.history.filter((m) => Message.toolResultsOf(m).length > 0)
  for (const o of ops) {
    const id = next("e")
    const all = [...ref.knowledge, ...ref.history].map((m) => m.id)
    const history = ref.history.map((m) => m.id)
    let event: WindowEvent.WindowEvent
    switch (o.kind) {
      case 0:
      case 1:
      case 2:
        event = { _tag: "MessageAppended", id, message: msg(o.flag ? "user" : "assistant", `t${o.a}`, o.tokens) }
        break
      case 3:
      case 4: {
        const calls = Array.from({ length: 1 + (o.a % 2) }, () => Message.toolCall(next("c"), "run", { n: o.b }))
        event = {
          _tag: "MessageAppended",
          id,
          message: { id: next("m"), role: "assistant", kind: "chat", parts: calls, tokens: o.tokens }
        }
        break
      }
      case 5:
      case 6: {
        const call = pick(pendingCalls(), o.a) ?? pick(ref.completedToolIds, o.b) ?? "nowhere"
        event = {
          _tag: "MessageAppended",
          id,
          message: {
            id: next("m"),
            role: "tool",
            kind: "chat",
            parts: [Message.toolResult(call, `out${o.c}`)],
            tokens: o.tokens
          }
        }
        break
      }
      case 7: {
        const kind = pick(kinds, o.a) ?? "recall"
        const count = o.b % 3
        event = {
          _tag: "MessagesInjected",
          id,
          kind,
          replacesInHistory: o.c % 2 === 0,
          messages: Array.from({ length: count }, () => msg("system", `inj${o.c}`, o.tokens, kind))
        }
        break
      }
      case 8:
        event = { _tag: "MessagesRemoved", id, messageIds: some(all, o.a, o.b), reason: "test" }
        break
      case 9:
        event = { _tag: "MessagePinned", id, messageId: pick(all, o.a) ?? "none", pinned: o.flag }
        break
      case 10:
        event = {
          _tag: "HistoryTrimmed",
          id,
          budget: o.tokens,
          removedIds: history.slice(0, o.a % (history.length + 1))
        }
        break
      case 11:
        event =
          o.a % 4 === 0
            ? { _tag: "HistoryCleared", id, scope: o.flag ? "conversation" : "history" }
            : o.a % 4 === 1
              ? { _tag: "ConversationContinued", id, into: "next" }
              : { _tag: "TurnCompleted", id }
        break
      case 12:
        event =
          o.a % 9 === 0
            ? { _tag: "ConversationReset", id }
            : { _tag: "PromptRendered", id, provider: "p", model: "m", tokens: ref.tokens, sha256: "x" }
        break
      case 13:
      case 14: {
        const removedIds = o.flag
          ? history.slice(o.c % 3, (o.c % 3) + (o.a % (history.length + 1)))
          : some(history, o.a, o.b)
        event = {
          _tag: "Compacted",
          id,
          tier: o.b % 2 === 0 ? "hard" : "soft",
          summary: o.c % 5 === 0 ? null : msg("assistant", "summary", o.tokens, "summary"),
          removedIds,
          carryOver: o.flag ? "carry" : null,
          throughVersion: ref.version,
          cooldownTurns: o.b % 3
        }
        break
      }
      case 15: {
        event = {
          _tag: "CompactionReverted",
          id,
          compactionEventId: "x",
          removedIds: some(history, o.a, o.b).slice(0, 2),
          restored: Array.from({ length: 1 + (o.c % 3) }, () => msg("user", "back", o.tokens)),
          carryOver: null,
          watermark: null
        }
        break
      }
      case 16:
      case 17:
        event = {
          _tag: o.kind === 16 ? "SeamProduced" : "SeamsRecompacted",
          id,
          level: 1 + (o.a % 3),
          message: msg("system", "seam", o.tokens, "seam"),
          replacedIds: o.flag ? history.slice(0, o.b % (history.length + 1)) : some(history, o.b, o.c)
        }
        break
      case 18:
        event = { _tag: "BriefingProduced", id, message: msg("system", "brief", o.tokens, "briefing") }
        break
      case 19:
        event = { _tag: "CycleAdvanced", id, cycle: o.a % 4, removedIds: some(history, o.a, o.c) }
        break
      case 20: {
        const targets = toolMessages()
        event = {
          _tag: "ToolOutputPruned",
          id,
          outputs: some(targets, o.a, o.b).map((m) => ({
            messageId: m.id,
            toolCallId: Message.toolResultsOf(m)[0]?.toolCallId ?? "",
            content: "[pruned]",
            tokens: o.tokens
          }))
        }
        break
      }
      case 21: {
        const target = pick(toolMessages(), o.a)
        const call = target === undefined ? "nowhere" : (Message.toolResultsOf(target)[0]?.toolCallId ?? "")
        event =
          o.b % 3 === 0
            ? { _tag: "ToolPairsQueued", id, toolCallIds: [call, `c${o.c}`] }
            : {
                _tag: "ToolPairSummaryDeferred",
                id,
                toolCallId: call,
                resultMessageId: target?.id ?? "none",
                summary: "short",
                tokens: o.tokens
              }
        break
      }
      case 22:
        event =
          o.a % 3 === 0
            ? { _tag: "DeferredSummariesFlushed", id }
            : {
                _tag: "DeferredSummariesApplied",
                id,
                toolCallIds: some(ref.deferredSummaries, o.b, o.c).map((d) => d.toolCallId)
              }
        break
      case 23:
        event = { _tag: "SystemPromptSet", id, messages: [msg("system", "rules", o.tokens)] }
        break
      case 24:
        event = {
          _tag: "KnowledgeSet",
          id,
          messages: Array.from({ length: o.a % 3 }, () => msg("system", "k", o.tokens))
        }
        break
      case 25:
        event = o.flag
          ? { _tag: "TaskGoalSet", id, goal: o.a % 4 === 0 ? null : `goal${o.b}`, tokens: o.tokens }
          : { _tag: "SubgoalsSet", id, subgoals: [`s${o.b}`], tokens: o.tokens }
        break
      case 26:
        event = { _tag: "SignalRaised", id, signal: { id: next("s"), text: "note", tokens: o.tokens } }
        break
      case 27: {
        // A cut of a history message's first part (the fold rewrites text parts only).
        const target = pick(ref.history, o.a)
        event = {
          _tag: "UserAskCut",
          id,
          messageId: target?.id ?? "nowhere",
          parts: [{ partIndex: 0, text: `head [cut ${o.b}] tail` }],
          tokens: o.tokens,
          stored: o.flag ? null : "f".repeat(64)
        }
        break
      }
      default:
        event = o.flag
          ? { _tag: "SeamsReset", id }
          : {
              _tag: "UsageReported",
              id,
              provider: "p",
              model: "m",
              estimatedInputTokens: o.a,
              inputTokens: o.b,
              outputTokens: 1,
              cacheReadTokens: 0,
              cacheWriteTokens: 0
            }
    }
    ref = referenceEvolve(ref, event)
    events.push(event)
  }
  return events
}

// Leaves of 3 messages: every sequence spans many leaves, so splits, spines and shared tails are exercised.
const defaultLeafSize = leafSize
beforeAll(() => setLeafSize(3))
afterAll(() => setLeafSize(defaultLeafSize))

describe("the O(change) projection", () => {
  it("folds every event sequence to the reference model's window, after every event", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const events = eventsFor(ops)
        let ref: Window.Window = referenceEmpty
        let live = Window.empty
        for (const event of events) {
          ref = referenceEvolve(ref, event)
          live = Window.evolve(live, event)
          expect(live).toEqual(ref)
          // The latest ask the fold keeps is the one a search of history finds (issue 39).
          expect(Window.latestUserAsk(live)).toBe(Message.latestUserAsk(ref.history)?.id)
        }
        // Folding all at once (no window per event) and from a plain copy (state rebuilt) agree too.
        expect(Window.replay(events)).toEqual(ref)
        expect(Window.latestUserAsk(Window.replay(events))).toBe(Message.latestUserAsk(ref.history)?.id)
        const plain: Window.Window = JSON.parse(JSON.stringify(live))
        const extra = events.slice(-3)
        expect(Window.replay(extra, plain)).toEqual(extra.reduce(referenceEvolve, ref))
      }),
      { numRuns: runs }
    )
  })

  it("older windows never see what later events added (versions share storage)", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.array(op, { maxLength: 20 }), fc.nat(59), (ops, other, at) => {
        const events = eventsFor(ops)
        const cut = Math.min(at, events.length)
        const before = Window.replay(events.slice(0, cut))
        const frozen = JSON.stringify(before)
        // Two branches from one version: another tail first (it grows the shared storage), then the log's.
        const detour = eventsFor([...ops.slice(0, cut), ...other]).slice(cut)
        const branch = Window.replay(detour, before)
        const rest = Window.replay(events.slice(cut), before)
        expect(JSON.stringify(before)).toBe(frozen)
        expect(rest).toEqual(events.reduce(referenceEvolve, referenceEmpty))
        expect(branch).toEqual([...events.slice(0, cut), ...detour].reduce(referenceEvolve, referenceEmpty))
      }),
      { numRuns: runs }
    )
  })
})

describe("trimPlan", () => {
  /** A valid conversation: tool results follow their calls, sometimes with a user message between. */
  const conversation = fc.array(
    fc.record({ calls: fc.nat(3), between: fc.boolean(), tokens: fc.integer({ min: 1, max: 50 }), pin: fc.nat(12) }),
    { maxLength: 60 }
  )
  it("drops exactly what the whole-history plan drops", () => {
    fc.assert(
      fc.property(conversation, fc.integer({ min: -5, max: 800 }), (turns, budget) => {
        let window = Window.empty
        let n = 0
        const append = (message: Message.Message) => {
          window = Window.evolve(window, { _tag: "MessageAppended", id: `e${n++}`, message })
        }
        for (const [t, turn] of turns.entries()) {
          const pinned = turn.pin === 0 ? { pinned: true } : {}
          if (turn.calls === 0) {
            append({
              id: `u${t}`,
              role: "user",
              kind: "chat",
              parts: [Message.text("hi")],
              tokens: turn.tokens,
              ...pinned
            })
            continue
          }
          const calls = Array.from({ length: turn.calls }, (_, i) => Message.toolCall(`c${t}-${i}`, "run", null))
          append({ id: `a${t}`, role: "assistant", kind: "chat", parts: calls, tokens: turn.tokens, ...pinned })
          if (turn.between)
            append({ id: `b${t}`, role: "user", kind: "chat", parts: [Message.text("wait")], tokens: 3 })
          for (const call of calls) {
            append({
              id: `r${call.id}`,
              role: "tool",
              kind: "chat",
              parts: [Message.toolResult(call.id, "ok")],
              tokens: turn.tokens
            })
          }
        }
        expect(Decide.trimPlan(window, budget)).toEqual(referenceTrimPlan(JSON.parse(JSON.stringify(window)), budget))
      }),
      { numRuns: runs }
    )
  })
})
