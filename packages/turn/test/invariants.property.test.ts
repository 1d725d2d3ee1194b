// Issue 39, build item 4: the window's invariants under every operation. Random sequences of appends
// (user messages, tool calls, tool results, answers), injections, trims, every compaction tier (soft,
// hard, manual, proactive, mid-iteration, tool-output pruning), the seam pipeline (cycles and briefings
// included), undo of a compaction, clear, reset, the demoting and compacting memories, and the turn's
// fit (`Turn.render`). After every step:
//   (a) no tool result without its call, no call answered twice, no seen result lost (ToolPairs.problems);
//   (b) no call still waiting for its result has left the window;
//   (c) the newest tool results the model has not seen (appended after the last render and the last
//       answer) are in the window;
//   (d) the seam list names exactly the seams in the window: every entry's message is in history, once,
//       and every seam message has an entry (and the seam host counts the same);
//   (e) the budget arithmetic holds: each partition's cached total is the sum of its messages, the total
//       their sum, and the live window equals a replay of the log from the empty window;
//   (f) what the memories serve holds no result without its call, every call waiting for its result,
//       and every unseen result with its call (ToolPairs.unseenPairs of the whole conversation);
//   (g) a render the turn's fit made fits its context window;
//   (h) receipts (ADR 0102): every event that replaced or removed messages carries one, and its figures
//       are the replayed window's: total tokens before and after it, and the tokens the replaced
//       messages held; the memories' compaction streams' events carry one too;
//   (i) a summary refused by a guard (ADR 0103: a policy's guard on the tiers, the seam pipeline and the
//       compacting memory) changes nothing but the recorded refusal.
// Run count: CTXLOG_PROPERTY_RUNS (vitest.property.ts), CI-sized by default.
import { CompactingMemory, SummaryGuard, TieredCompaction, ToolOutputPruning, UndoCompaction } from "@ctxlog/compaction"
import {
  Compactor,
  ContextService,
  ConversationMemory,
  Decide,
  Message,
  Receipt,
  ToolPairs,
  Window
} from "@ctxlog/core"
import { DemotingPolicyMemory, SlidingWindowMemory } from "@ctxlog/memory"
import { RenderRecord } from "@ctxlog/providers"
import { SeamConfig, SeamHost } from "@ctxlog/seam"
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import fc from "fast-check"
import { assert } from "vitest"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import { type Policy, Turn } from "../src/index.js"
import { eventsOf, stack } from "./support.js"

type Op =
  | { readonly _tag: "user"; readonly size: number }
  | { readonly _tag: "call"; readonly count: number }
  | { readonly _tag: "result"; readonly pick: number; readonly size: number }
  | { readonly _tag: "answer" }
  | { readonly _tag: "inject"; readonly size: number }
  | { readonly _tag: "trim"; readonly share: number }
  | { readonly _tag: "soft" }
  | { readonly _tag: "hard" }
  | { readonly _tag: "manual"; readonly keep: number }
  | { readonly _tag: "proactive" }
  | { readonly _tag: "prune" }
  | { readonly _tag: "seams" }
  | { readonly _tag: "undo"; readonly pick: number }
  | { readonly _tag: "clear" }
  | { readonly _tag: "reset" }
  | { readonly _tag: "memories" }
  | { readonly _tag: "render"; readonly iteration: number }
  | { readonly _tag: "completeTurn" }
  | { readonly _tag: "refused"; readonly path: number }

const size = fc.integer({ min: 5, max: 300 })
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: size.map((s): Op => ({ _tag: "user", size: s })) },
  { weight: 5, arbitrary: fc.integer({ min: 1, max: 2 }).map((count): Op => ({ _tag: "call", count })) },
  {
    weight: 6,
    arbitrary: fc.record({ pick: fc.nat(5), size: fc.integer({ min: 5, max: 700 }) }).map(
      (r): Op => ({
        _tag: "result",
        ...r
      })
    )
  },
  { weight: 3, arbitrary: fc.constant<Op>({ _tag: "answer" }) },
  { weight: 1, arbitrary: size.map((s): Op => ({ _tag: "inject", size: s })) },
  {
    weight: 2,
    arbitrary: fc.double({ min: 0.05, max: 1, noNaN: true }).map((share): Op => ({ _tag: "trim", share }))
  },
  { weight: 1, arbitrary: fc.constant<Op>({ _tag: "soft" }) },
  { weight: 2, arbitrary: fc.constant<Op>({ _tag: "hard" }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 600 }).map((keep): Op => ({ _tag: "manual", keep })) },
  { weight: 1, arbitrary: fc.constant<Op>({ _tag: "proactive" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ _tag: "prune" }) },
  { weight: 3, arbitrary: fc.constant<Op>({ _tag: "seams" }) },
  { weight: 2, arbitrary: fc.nat(5).map((pick): Op => ({ _tag: "undo", pick })) },
  { weight: 1, arbitrary: fc.constant<Op>({ _tag: "clear" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ _tag: "reset" }) },
  { weight: 2, arbitrary: fc.constant<Op>({ _tag: "memories" }) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 2 }).map((iteration): Op => ({ _tag: "render", iteration })) },
  { weight: 1, arbitrary: fc.constant<Op>({ _tag: "completeTurn" }) },
  { weight: 2, arbitrary: fc.nat(3).map((path): Op => ({ _tag: "refused", path })) }
)

/** `tokens` tokens (about) of distinct words. */
const words = (tokens: number, seed: string): string =>
  Array.from({ length: Math.max(1, Math.ceil(tokens * 0.75)) }, (_, i) => `${seed}${i}`).join(" ")

const budget = 1500
const tiered: TieredCompaction.Config = {
  budget,
  softThreshold: 0.5,
  hardThreshold: 0.7,
  targetRatio: 0.35,
  cooldownTurns: 0,
  proactiveThreshold: 0.4
}
const policy: Policy.Policy = {
  builder: { provider: "default", model: "any", contextWindow: 2048, maxOutputTokens: 256 },
  render: { turnReminder: "Stay in the workspace." },
  compaction: { softThreshold: 0.5, hardThreshold: 0.7, targetRatio: 0.35, cooldownTurns: 0 },
  seams: { level1: 0.3, level2: 0.45, level3: 0.6, verbatimWindow: 4, advanceCycle: true }
}

const stream = "inv"
const base = "inv-base"

/** The memories' inner conversation: the history of its own stream, appended to only (what they need). */
const innerMemory = (ctx: ContextService.ContextService.Service): ConversationMemory.ConversationMemory.Service => {
  const fail = (conversationId: string, operation: string) => (error: { readonly message: string }) =>
    new ConversationMemory.MemoryError({ conversationId, operation, detail: error.message })
  return {
    load: (id) =>
      ctx.load(id).pipe(
        Effect.map((window) => window.history),
        Effect.mapError(fail(id, "load"))
      ),
    append: (id, messages) =>
      ctx.appendMessages(id, messages).pipe(
        Effect.map((outcome) =>
          outcome.events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message] : []))
        ),
        Effect.mapError(fail(id, "append"))
      ),
    clear: (id) => ctx.clearHistory(id).pipe(Effect.asVoid, Effect.mapError(fail(id, "clear")))
  }
}

/** The fields of a window a replay must reproduce. */
const projection = (window: Window.Window) => ({
  version: window.version,
  system: window.system,
  knowledge: window.knowledge,
  history: window.history,
  tokens: window.tokens,
  seams: window.seams,
  completedToolIds: window.completedToolIds,
  pendingToolPairs: window.pendingToolPairs,
  carryOver: window.carryOver,
  watermark: window.watermark,
  compaction: window.compaction
})

/** One of each operation, in an order where each has something to act on. */
const everyOperation: ReadonlyArray<Op> = [
  { _tag: "user", size: 200 },
  { _tag: "call", count: 2 },
  { _tag: "result", pick: 0, size: 400 },
  { _tag: "user", size: 150 },
  { _tag: "trim", share: 0.5 },
  { _tag: "result", pick: 0, size: 300 },
  { _tag: "answer" },
  { _tag: "inject", size: 50 },
  { _tag: "memories" },
  { _tag: "render", iteration: 0 },
  { _tag: "prune" },
  { _tag: "soft" },
  { _tag: "user", size: 300 },
  { _tag: "manual", keep: 100 },
  { _tag: "undo", pick: 0 },
  { _tag: "hard" },
  { _tag: "proactive" },
  { _tag: "user", size: 300 },
  { _tag: "refused", path: 0 },
  { _tag: "refused", path: 1 },
  { _tag: "user", size: 200 },
  { _tag: "answer" },
  { _tag: "user", size: 200 },
  { _tag: "answer" },
  { _tag: "user", size: 100 },
  { _tag: "refused", path: 2 },
  { _tag: "refused", path: 3 },
  { _tag: "seams" },
  { _tag: "completeTurn" },
  { _tag: "render", iteration: 1 },
  { _tag: "clear" },
  { _tag: "user", size: 20 },
  { _tag: "reset" }
]

/** A policy's guard that refuses every summary: whatever path summarizes, nothing but the refusal is written. */
const refuseAll = SummaryGuard.layer({
  guards: [{ name: "refuse-all", check: () => Option.some({ detail: "refused by the property" }) }]
})

const sum = (messages: ReadonlyArray<Message.Message>) => messages.reduce((total, m) => total + m.tokens, 0)

describe("window invariants under every operation (issue 39, property)", () => {
  it("random sequences of every window operation keep tool pairs, pending calls, unseen results, seams and budgets", async () => {
    // What the runs exercised, so a run that stopped exercising an operation shows in the report.
    const exercised = new Map<string, number>()
    const count = (name: string) => exercised.set(name, (exercised.get(name) ?? 0) + 1)
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 8, maxLength: 28 }), async (ops) => {
        await yieldToEventLoop()
        const program = Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const compactor = yield* Compactor.Compactor
          const host = yield* SeamHost.make(
            yield* SeamConfig.make({
              thresholds: { level1: 300, level2: 500, level3: 700 },
              verbatimWindow: 4,
              advanceCycle: true
            })
          )
          const inner = innerMemory(ctx)
          const sliding = Either.getOrThrowWith(SlidingWindowMemory.lastMessages(3), () => new Error("bad policy"))
          const demoting = yield* DemotingPolicyMemory.make(inner, sliding, {
            name: "collect",
            demote: () => Effect.void
          })
          const compacting = yield* CompactingMemory.make(inner, sliding, compactor, { maxSummaryTokens: 200 })
          yield* ctx.setSystemPrompt(stream, "You are a careful agent.")

          // The model the window is checked against, kept from the operations alone.
          let pending: Array<string> = []
          let unseen: Array<string> = []
          let calls = 0
          const append = (messages: ReadonlyArray<Message.MessageInput>) =>
            Effect.gen(function* () {
              const outcome = yield* ctx.appendMessages(stream, messages)
              yield* inner.append(base, messages)
              return outcome.events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message] : []))
            })

          for (const [index, op] of ops.entries()) {
            const where = `step ${index} (${JSON.stringify(op)}) of ${JSON.stringify(ops)}`
            switch (op._tag) {
              case "user":
                yield* append([Message.user(words(op.size, `u${index}w`))])
                break
              case "call": {
                const ids = Array.from({ length: op.count }, () => `call_${calls++}`)
                yield* append([
                  Message.assistant(
                    "",
                    ids.map((id) => Message.toolCall(id, "read_file", { path: `${id}.ts` }))
                  )
                ])
                pending = [...pending, ...ids]
                unseen = []
                break
              }
              case "result": {
                const id = pending[op.pick % Math.max(1, pending.length)]
                if (id === undefined) break
                const [message] = yield* append([Message.tool(id, words(op.size, `r${index}w`))])
                pending = pending.filter((each) => each !== id)
                if (message !== undefined) unseen = [...unseen, message.id]
                break
              }
              case "answer":
                yield* append([Message.assistant(words(20, `a${index}w`))])
                unseen = []
                break
              case "inject":
                yield* ctx.inject(stream, "recall", [words(op.size, `k${index}w`)])
                break
              case "trim": {
                const window = yield* ctx.load(stream)
                yield* ctx.trimToBudget(stream, Math.max(1, Math.floor(window.tokens.total * op.share)))
                break
              }
              case "soft":
                yield* Effect.either(TieredCompaction.maybeSoftCompactMidIteration(stream, tiered))
                break
              case "hard":
                yield* Effect.either(TieredCompaction.maybeCompact(stream, tiered))
                break
              case "manual":
                yield* Effect.either(TieredCompaction.compactContext(stream, 200, { keepTokens: op.keep }))
                break
              case "proactive":
                yield* Effect.either(TieredCompaction.maybeProactiveCompress(stream, tiered))
                break
              case "prune":
                yield* ToolOutputPruning.pruneToolOutputs(stream, { keepRecent: 0, targetTokens: budget / 3 })
                break
              case "seams": {
                const seams = yield* Effect.either(host.run(stream))
                if (Either.isLeft(seams)) count(`seam-refused:${seams.left._tag}`)
                if (Either.isRight(seams) && seams.right.action !== "none") count(`seam-${seams.right.action}`)
                if (Either.isRight(seams) && seams.right.cycleAdvanced) count("cycle")
                break
              }
              case "undo": {
                const compactions = (yield* eventsOf(stream)).filter((e) => e.event._tag === "Compacted")
                const target = compactions[op.pick % Math.max(1, compactions.length)]
                if (target === undefined) break
                const undone = yield* Effect.either(UndoCompaction.undoCompaction(stream, target.eventId))
                if (Either.isRight(undone)) count("undone")
                break
              }
              case "clear":
                yield* ctx.clearHistory(stream)
                pending = []
                unseen = []
                break
              case "reset":
                yield* ctx.run(stream, (window) => Decide.decide(window, { _tag: "ResetConversation" }))
                pending = []
                unseen = []
                break
              case "memories": {
                const conversation = yield* inner.load(base)
                const keep = ToolPairs.unseenPairs(conversation)
                const waiting = ToolPairs.pendingCalls(conversation)
                for (const [name, memory] of [
                  ["demoting", demoting],
                  ["compacting", compacting]
                ] as const) {
                  const served = (yield* memory.load(base)).filter((message) => message.kind !== "summary")
                  const ids = new Set(served.map((message) => message.id))
                  assert.deepStrictEqual(
                    ToolPairs.problems(served).filter((problem) => problem._tag !== "MissingResult"),
                    [],
                    `${where}: ${name} memory serves a result without its call`
                  )
                  for (const id of keep) assert.isTrue(ids.has(id), `${where}: ${name} memory dropped unseen ${id}`)
                  const servedCalls = new Set(served.flatMap((m) => Message.toolCallsOf(m).map((call) => call.id)))
                  for (const id of waiting) {
                    assert.isTrue(servedCalls.has(id), `${where}: ${name} memory dropped pending call ${id}`)
                  }
                }
                break
              }
              case "render": {
                if (pending.length > 0) break // a request cannot carry a call without its result
                const rendered = yield* Effect.either(Turn.render(stream, policy, { iteration: op.iteration }))
                if (Either.isLeft(rendered)) {
                  assert.fail(`${where}: render failed: ${rendered.left._tag}: ${rendered.left.message}`)
                } else {
                  // (g) the fit: the render plus its reserve fits the window.
                  assert.isTrue(RenderRecord.fits(rendered.right.built.stats), `${where}: the render does not fit`)
                  count("rendered")
                  for (const tier of rendered.right.tiers) count(`render:${tier}`)
                  unseen = []
                }
                break
              }
              case "completeTurn":
                yield* ctx.completeTurn(stream)
                break
              case "refused": {
                // (i) every summarizing path under a guard that refuses: the window keeps its messages.
                const before = yield* ctx.load(stream)
                // What each path failed with ("ok" when it did not fail), under the refusing policy guard.
                const outcomeOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
                  effect.pipe(
                    Effect.provide(refuseAll),
                    Effect.either,
                    Effect.map((result) => (Either.isLeft(result) ? result.left._tag : "ok"))
                  )
                const attempt =
                  op.path === 0
                    ? outcomeOf(TieredCompaction.compactContext(stream, 200, { keepTokens: 0 }))
                    : op.path === 1
                      ? outcomeOf(
                          TieredCompaction.maybeProactiveCompress(stream, { ...tiered, proactiveThreshold: 0.01 })
                        )
                      : op.path === 2
                        ? outcomeOf(host.run(stream))
                        : outcomeOf(compacting.load(base))
                const refusals = (events: ReadonlyArray<{ readonly event: { readonly _tag: string } }>) =>
                  events.filter(
                    ({ event }) =>
                      event._tag === "CompactionFailed" &&
                      "reason" in event &&
                      String(event.reason).startsWith("guard:policy: refuse-all")
                  ).length
                const recordedIn = op.path === 3 ? `${base}/compaction` : stream
                const refusedBefore = refusals(yield* eventsOf(recordedIn))
                const outcome = yield* attempt
                if (outcome !== "ok" && outcome !== "SummaryRefused") {
                  assert.fail(`${where}: refused path failed with ${outcome}`)
                }
                if (refusals(yield* eventsOf(recordedIn)) > refusedBefore) count(`refused:${op.path}`)
                const after = yield* ctx.load(stream)
                if (op.path !== 3 && op.path !== 1) {
                  assert.deepStrictEqual(
                    after.history.map((m) => m.id),
                    before.history.map((m) => m.id),
                    `${where}: a refused summary changed the window`
                  )
                }
                break
              }
            }
            count(op._tag)

            const window = yield* ctx.load(stream)
            const history = window.history
            const ids = new Set(history.map((message) => message.id))
            // (a) tool pairs.
            assert.deepStrictEqual(
              ToolPairs.problems(history, window.completedToolIds),
              [],
              `${where}: tool pairing broken`
            )
            // (b) no pending call dropped.
            const made = new Set(history.flatMap((m) => Message.toolCallsOf(m).map((call) => call.id)))
            for (const id of pending) assert.isTrue(made.has(id), `${where}: pending call ${id} left the window`)
            // (c) the newest unseen results are present.
            for (const id of unseen) assert.isTrue(ids.has(id), `${where}: unseen result ${id} left the window`)
            // (d) the seam list is the seams in the window.
            const entries = window.seams.map((seam) => seam.messageId)
            assert.strictEqual(new Set(entries).size, entries.length, `${where}: a seam is listed twice`)
            for (const id of entries) assert.isTrue(ids.has(id), `${where}: seam entry ${id} names no message`)
            for (const message of history) {
              if (message.kind === "seam") {
                assert.include(entries, message.id, `${where}: seam message ${message.id} has no entry`)
              }
            }
            assert.strictEqual(yield* host.seamCount(stream), entries.length)
            // (d') the latest ask the fold keeps is the one a search of history finds.
            assert.strictEqual(
              Window.latestUserAsk(window),
              Message.latestUserAsk(history)?.id,
              `${where}: the latest user ask`
            )
            // (e) budget arithmetic, and the live window is the replay of its log.
            assert.strictEqual(window.tokens.system, sum(window.system), `${where}: system tokens`)
            assert.strictEqual(window.tokens.knowledge, sum(window.knowledge), `${where}: knowledge tokens`)
            assert.strictEqual(window.tokens.history, sum(history), `${where}: history tokens`)
            assert.strictEqual(
              window.tokens.taskState,
              window.taskState.goalTokens + window.taskState.subgoalTokens,
              `${where}: task state tokens`
            )
            assert.strictEqual(
              window.tokens.signals,
              window.signals.reduce((total, signal) => total + signal.tokens, 0),
              `${where}: signal tokens`
            )
            assert.strictEqual(
              window.tokens.total,
              window.tokens.system +
                window.tokens.knowledge +
                window.tokens.taskState +
                window.tokens.signals +
                window.tokens.history,
              `${where}: total tokens`
            )
            const logged = (yield* eventsOf(stream)).map((envelope) => envelope.event)
            const replayed = Window.replay(logged)
            assert.deepStrictEqual(projection(replayed), projection(window), `${where}: replay differs`)
            // (h) receipts, taken on the replayed window before and after each event.
            let folded = Window.empty
            for (const event of logged) {
              const next = Window.evolve(folded, event)
              if (Receipt.isReceipted(event)) {
                const receipt = event.receipt
                if (receipt === undefined) return assert.fail(`${where}: ${event._tag} has no receipt`)
                assert.strictEqual(receipt.tokensBefore, folded.tokens.total, `${where}: ${event._tag} tokensBefore`)
                assert.strictEqual(receipt.tokensAfter, next.tokens.total, `${where}: ${event._tag} tokensAfter`)
                assert.strictEqual(
                  receipt.replacedTokens,
                  Receipt.replacedIds(event).reduce(
                    (total, id) => total + (Window.findMessage(folded, id)?.tokens ?? 0),
                    0
                  ),
                  `${where}: ${event._tag} replacedTokens`
                )
              }
              folded = next
            }
            for (const memoryStream of [`${base}/compaction`, `${base}/demotion`]) {
              for (const { event } of yield* eventsOf(memoryStream)) {
                if (Receipt.isReceipted(event)) assert.isDefined(event.receipt, `${where}: ${memoryStream} receipt`)
              }
            }
          }
        })
        await Effect.runPromise(program.pipe(Effect.provide(stack())))
      }),
      // The first case runs every operation once (so the coverage check below is not left to chance),
      // the rest are random.
      { numRuns: propertyRuns(10), endOnFailure: true, examples: [[everyOperation]] }
    )
    // Every operation ran at least once over the runs (a generator that stopped producing one would
    // leave it untested while the property still passed).
    for (const name of [
      "user",
      "call",
      "result",
      "answer",
      "inject",
      "trim",
      "soft",
      "hard",
      "manual",
      "proactive",
      "prune",
      "seams",
      "undo",
      "clear",
      "reset",
      "memories",
      "render",
      "completeTurn",
      "refused",
      "refused:0",
      "refused:2",
      "refused:3"
    ]) {
      assert.isAbove(exercised.get(name) ?? 0, 0, `operation ${name} never ran`)
    }
    console.log(`invariants property: ${JSON.stringify(Object.fromEntries([...exercised].sort()))}`)
  })
})
