/**
 * The window invariants, over random operation sequences run through the real ContextService on the
 * in-memory log: (a) replaying the written events from empty equals the live window, (b) cached token
 * totals equal the sums of what the partitions hold, (c) no tool result without its call and no call
 * whose result was dropped — checked after every step.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { ContextService, Message, ToolPairs, Window } from "../src/index.js"
import { checkTokens, live, stream, written } from "./Scenario.js"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"

const encodeWindow = Schema.encodeSync(Window.Window)
const decodeWindow = Schema.decodeUnknownSync(Window.Window)

const kinds = ["recall", "lsp", "summary", "cross_session"] as const

type Op =
  | { readonly _tag: "user"; readonly text: string; readonly id: string | undefined }
  | { readonly _tag: "call"; readonly calls: number; readonly reuse: boolean; readonly answer: number }
  | { readonly _tag: "answer"; readonly picks: ReadonlyArray<number>; readonly role: "tool" | "user" }
  | { readonly _tag: "orphan"; readonly callId: string }
  | { readonly _tag: "trim"; readonly budget: number }
  | { readonly _tag: "inject"; readonly kind: (typeof kinds)[number]; readonly texts: ReadonlyArray<string> }
  | { readonly _tag: "remove"; readonly kind: (typeof kinds)[number] }
  | { readonly _tag: "pin"; readonly pick: number; readonly pinned: boolean }
  | { readonly _tag: "system"; readonly text: string }
  | { readonly _tag: "knowledge"; readonly texts: ReadonlyArray<string> }
  | { readonly _tag: "goal"; readonly text: string | null }
  | { readonly _tag: "subgoals"; readonly texts: ReadonlyArray<string> }
  | { readonly _tag: "signal"; readonly text: string }
  | { readonly _tag: "render" }
  | { readonly _tag: "turn" }
  | { readonly _tag: "clear" }
  | { readonly _tag: "reset" }
  | { readonly _tag: "summaries"; readonly budget: number }
  | { readonly _tag: "fork"; readonly at: number }

const words = fc.string({ minLength: 0, maxLength: 24 })

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      _tag: fc.constant("user"),
      text: words,
      id: fc.option(fc.constantFrom("m1", "m2"), { nil: undefined })
    })
  },
  {
    weight: 4,
    arbitrary: fc.record({
      _tag: fc.constant("call"),
      calls: fc.integer({ min: 1, max: 2 }),
      reuse: fc.boolean(),
      answer: fc.integer({ min: 0, max: 2 })
    })
  },
  {
    weight: 5,
    arbitrary: fc.record({
      _tag: fc.constant("answer"),
      picks: fc.array(fc.nat(5), { minLength: 1, maxLength: 2 }),
      role: fc.constantFrom("tool", "user")
    })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("orphan"), callId: fc.constantFrom("c1", "c2", "zz") }) },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("trim"), budget: fc.integer({ min: 0, max: 90 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      _tag: fc.constant("inject"),
      kind: fc.constantFrom(...kinds),
      texts: fc.array(words, { maxLength: 2 })
    })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("remove"), kind: fc.constantFrom(...kinds) }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("pin"), pick: fc.nat(20), pinned: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("system"), text: words }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("knowledge"), texts: fc.array(words, { maxLength: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("goal"), text: fc.option(words, { nil: null }) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("subgoals"), texts: fc.array(words, { maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("signal"), text: words }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "render" } as const) },
  { weight: 1, arbitrary: fc.constant({ _tag: "turn" } as const) },
  { weight: 1, arbitrary: fc.constant({ _tag: "clear" } as const) },
  { weight: 1, arbitrary: fc.constant({ _tag: "reset" } as const) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("summaries"), budget: fc.integer({ min: 0, max: 80 }) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("fork"), at: fc.nat(30) }) }
)

/** Run one operation; a rejected command (InvalidCommand) is an allowed outcome, any other failure is not. */
const step = (ctx: ContextService.ContextService.Service, operation: Op, fresh: () => string) =>
  Effect.gen(function* () {
    const window = yield* ctx.load(stream)
    switch (operation._tag) {
      case "user":
        return yield* ctx.appendMessages(stream, [
          operation.id === undefined
            ? Message.user(operation.text)
            : { ...Message.user(operation.text), id: operation.id }
        ])
      case "call": {
        const ids = Array.from({ length: operation.calls }, (_, index) =>
          operation.reuse && index === 0 ? "c1" : fresh()
        )
        // Answer none, the first, or all of the calls in the same batch.
        const answered = operation.answer === 0 ? [] : operation.answer === 1 ? ids.slice(0, 1) : ids
        return yield* ctx.appendMessages(stream, [
          Message.assistant(
            "",
            ids.map((id) => Message.toolCall(id, "run", { id }))
          ),
          ...answered.map((id) => Message.tool(id, `output of ${id}`))
        ])
      }
      case "answer": {
        // One message answering one or two calls that are still waiting (possibly the same one twice).
        const pending = ToolPairs.pendingCalls(window.history)
        const picked = operation.picks.map((pick) => pending[pick % Math.max(1, pending.length)] ?? "none")
        return yield* ctx.appendMessages(stream, [
          { role: operation.role, parts: picked.map((id) => Message.toolResult(id, `answer to ${id}`)) }
        ])
      }
      case "orphan":
        return yield* ctx.appendMessages(stream, [Message.tool(operation.callId, "stray")])
      case "trim":
        return yield* ctx.trimToBudget(stream, operation.budget)
      case "inject":
        return yield* ctx.inject(stream, operation.kind, operation.texts)
      case "remove":
        return yield* ctx.removeKind(stream, operation.kind)
      case "pin": {
        const all = Window.messages(window)
        const target = all[operation.pick % Math.max(1, all.length)]
        return yield* ctx.pin(stream, target?.id ?? "missing", operation.pinned)
      }
      case "system":
        return yield* ctx.setSystemPrompt(stream, operation.text)
      case "knowledge":
        return yield* ctx.setKnowledge(stream, operation.texts)
      case "goal":
        return yield* ctx.setTaskGoal(stream, operation.text)
      case "subgoals":
        return yield* ctx.setSubgoals(stream, operation.texts)
      case "signal":
        return yield* ctx.raiseSignal(stream, operation.text)
      case "render":
        return yield* ctx.run(stream, (current) =>
          Either.right([
            { _tag: "PromptRendered", provider: "test", model: "m", tokens: current.tokens, sha256: "0" }
          ] as const)
        )
      case "turn":
        return yield* ctx.completeTurn(stream)
      case "clear":
        return yield* ctx.clearHistory(stream)
      case "reset": {
        // The conversation goes on in a new stream that replays to what the reset returned; this one only
        // gains the pointer to it.
        const reset = yield* ctx.resetConversation(stream)
        assert.deepStrictEqual(Window.replay(yield* written(reset.stream)), reset.window)
        return { window: yield* ctx.load(stream), events: [] }
      }
      case "summaries":
        return yield* ctx.injectSummaries(stream, operation.budget)
      case "fork": {
        // Forking at any version equals replaying that prefix (event ids renamed to the fork's own).
        const version = operation.at % (window.version + 1)
        const into = `fork-${fresh()}`
        const fork = yield* ctx.forkAt(stream, version, into)
        const prefix = (yield* written()).slice(0, version)
        const renamed = prefix.map((event, index) => ({ ...event, id: fork.events[index]?.id ?? "missing" }))
        assert.deepStrictEqual(fork.window, Window.replay(renamed))
        assert.deepStrictEqual(yield* ctx.load(into), fork.window)
        return { window, events: [] }
      }
    }
  })

const program = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    let next = 0
    const fresh = () => {
      next += 1
      return `call-${next}`
    }
    let previous = Window.empty
    for (const operation of ops) {
      const result = yield* Effect.either(step(ctx, operation, fresh))
      const events = yield* written()
      const replayed = Window.replay(events)
      if (Either.isLeft(result)) {
        // A rejected command writes nothing.
        assert.strictEqual(result.left._tag, "InvalidCommand", `${operation._tag}: ${result.left.message}`)
        assert.deepStrictEqual(replayed, previous)
      } else {
        // (a) replay from empty equals the live window, and what a fresh load returns.
        assert.deepStrictEqual(replayed, result.right.window)
        assert.deepStrictEqual(yield* ctx.load(stream), result.right.window)
      }
      // (b) cached totals are the sums; (c) tool calls and results stay paired.
      checkTokens(replayed)
      assert.deepStrictEqual(ToolPairs.problems(replayed.history, replayed.completedToolIds), [])
      previous = replayed
    }
    // The final window survives its JSON snapshot form unchanged.
    assert.deepStrictEqual(decodeWindow(JSON.parse(JSON.stringify(encodeWindow(previous)))), previous)
  }).pipe(Effect.provide(live()))

/** Sequences that broke earlier versions: always run, before the random ones. */
const regressions: Array<[Array<Op>]> = [
  // One result message answering calls made by two messages: trimming split the calls.
  [
    [
      { _tag: "call", calls: 1, reuse: false, answer: 0 },
      { _tag: "call", calls: 2, reuse: false, answer: 0 },
      { _tag: "answer", picks: [1], role: "tool" },
      { _tag: "answer", picks: [3, 0], role: "tool" },
      { _tag: "trim", budget: 1 }
    ]
  ],
  // A completed call id reused after its pair was trimmed: its result could never arrive.
  [
    [
      { _tag: "call", calls: 1, reuse: true, answer: 1 },
      { _tag: "user", text: "next", id: undefined },
      { _tag: "trim", budget: 1 },
      { _tag: "call", calls: 1, reuse: true, answer: 0 }
    ]
  ]
]

/** CI-sized by default; CTXLOG_PROPERTY_RUNS=1000 is the nightly strength (see README, Development). */
const runs = propertyRuns(200)

describe("ContextService properties", () => {
  it.effect(
    `replay equals live, token totals equal the sums, tool pairs are never split, forks equal prefixes (${runs} sequences)`,
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
            await yieldToEventLoop()
            await Effect.runPromise(program(ops))
          }),
          { numRuns: runs, examples: regressions }
        )
      ),
    120_000
  )
})
