import { ContextService, ConversationMemory, Ids, Message, ToolPairs, Transcript } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import type { ConversationMemoryPolicy } from "../src/ConversationMemoryPolicy.js"
import * as SlidingWindowMemory from "../src/SlidingWindowMemory.js"
import * as TokenWindowMemory from "../src/TokenWindowMemory.js"
import { propertyRuns } from "../../../vitest.property.js"
import { readTranscript, transcriptFiles } from "@ctxlog/testing"

const context = ContextService.layerMemory({ ids: Ids.layerSequential("m") })

const memoryWith = <E>(memory: Layer.Layer<ConversationMemory.ConversationMemory, E, ContextService.ContextService>) =>
  memory.pipe(Layer.provideMerge(context))

const policy = (result: Either.Either<ConversationMemoryPolicy, unknown>): ConversationMemoryPolicy =>
  Either.getOrThrowWith(result, (error) => new Error(`unexpected invalid policy: ${String(error)}`))

// ---- an independent oracle: which messages must travel together -----------------------------------

/** The messages linked to `seeds` through tool call ids, transitively. */
const closure = (history: ReadonlyArray<Message.Message>, seeds: ReadonlyArray<Message.Message>) => {
  const ids = new Set(seeds.map((message) => message.id))
  const keys = (message: Message.Message) => [
    ...Message.toolCallsOf(message).map((call) => call.id),
    ...Message.toolResultsOf(message).map((result) => result.toolCallId)
  ]
  let grew = true
  while (grew) {
    grew = false
    const linked = new Set(history.filter((message) => ids.has(message.id)).flatMap(keys))
    for (const message of history) {
      if (!ids.has(message.id) && keys(message).some((key) => linked.has(key))) {
        ids.add(message.id)
        grew = true
      }
    }
  }
  return history.filter((message) => ids.has(message.id))
}

/** No orphan or duplicate result, and no call whose result exists in `history` is missing it. */
const assertPairsIntact = (history: ReadonlyArray<Message.Message>, selected: ReadonlyArray<Message.Message>) => {
  assert.deepStrictEqual(ToolPairs.problems(selected), [])
  const resultOwner = new Map<string, string>()
  for (const message of history) {
    for (const result of Message.toolResultsOf(message)) resultOwner.set(result.toolCallId, message.id)
  }
  const kept = new Set(selected.map((message) => message.id))
  for (const message of selected) {
    for (const call of Message.toolCallsOf(message)) {
      const owner = resultOwner.get(call.id)
      if (owner !== undefined) assert.isTrue(kept.has(owner), `call ${call.id} kept without its result ${owner}`)
    }
  }
}

const assertSubsequence = (history: ReadonlyArray<Message.Message>, selected: ReadonlyArray<Message.Message>) => {
  const order = new Map(history.map((message, index) => [message.id, index]))
  const indices = selected.map((message) => order.get(message.id) ?? -1)
  assert.isTrue(indices.every((index, at) => index >= 0 && (at === 0 || index > (indices[at - 1] ?? -1))))
}

// ---- histories ----------------------------------------------------------------------------------------

const msg = (id: string, input: Message.MessageInput, tokens: number, pinned = false): Message.Message => ({
  id,
  role: input.role,
  kind: "chat",
  parts: input.parts,
  tokens,
  ...(pinned ? { pinned: true } : {})
})

type Step =
  | { readonly _tag: "user" | "assistant"; readonly tokens: number; readonly pinned: boolean }
  | { readonly _tag: "call"; readonly calls: number; readonly tokens: number; readonly pinned: boolean }
  | {
      readonly _tag: "answer"
      readonly picks: ReadonlyArray<number>
      readonly tokens: number
      readonly pinned: boolean
    }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    _tag: fc.constantFrom("user" as const, "assistant" as const),
    tokens: fc.integer({ min: 1, max: 60 }),
    pinned: fc.boolean()
  }),
  fc.record({
    _tag: fc.constant("call" as const),
    calls: fc.integer({ min: 1, max: 4 }),
    tokens: fc.integer({ min: 1, max: 60 }),
    pinned: fc.boolean()
  }),
  fc.record({
    _tag: fc.constant("answer" as const),
    // A tool message may answer calls of two different assistant messages: picks index pending calls.
    picks: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
    tokens: fc.integer({ min: 1, max: 60 }),
    pinned: fc.boolean()
  })
)

/** Build a valid history (every result answers an earlier, unanswered call), pinning rarely. */
const build = (steps: ReadonlyArray<Step>, pinRate: number): ReadonlyArray<Message.Message> => {
  const history: Array<Message.Message> = []
  const pending: Array<string> = []
  let calls = 0
  steps.forEach((step, index) => {
    const id = `m${index}`
    const pinned = step.pinned && index % pinRate === 0
    switch (step._tag) {
      case "user":
        history.push(msg(id, Message.user(`u${index}`), step.tokens, pinned))
        return
      case "assistant":
        history.push(msg(id, Message.assistant(`a${index}`), step.tokens, pinned))
        return
      case "call": {
        const parts = Array.from({ length: step.calls }, () => Message.toolCall(`c${++calls}`, "run", {}))
        pending.push(...parts.map((part) => part.id))
        history.push(msg(id, Message.assistant("", parts), step.tokens, pinned))
        return
      }
      case "answer": {
        const answered = new Set<string>()
        for (const pick of step.picks) {
          if (pending.length === 0) break
          const [callId] = pending.splice(pick % pending.length, 1)
          if (callId !== undefined) answered.add(callId)
        }
        if (answered.size === 0) return
        history.push({
          ...msg(id, Message.user(""), step.tokens, pinned),
          role: "tool",
          parts: [...answered].map((callId) => Message.toolResult(callId, `out ${callId}`))
        })
        return
      }
    }
  })
  return history
}

/** The invariants of a "keep the newest within a limit" policy. */
const checkPolicy = (
  history: ReadonlyArray<Message.Message>,
  selected: ReadonlyArray<Message.Message>,
  limit: number,
  cost: (messages: ReadonlyArray<Message.Message>) => number
) => {
  assertSubsequence(history, selected)
  assertPairsIntact(history, selected)
  const last = history[history.length - 1]
  if (last === undefined) return assert.deepStrictEqual(selected, [])
  const kept = new Set(selected.map((message) => message.id))
  assert.isTrue(kept.has(last.id), "the newest message is always kept")
  for (const pinned of history.filter((message) => message.pinned === true)) assert.isTrue(kept.has(pinned.id))
  // Over the limit only when the newest round and the pinned rounds alone are.
  if (cost(selected) > limit) {
    const forced = closure(history, [last, ...history.filter((message) => message.pinned === true)])
    assert.deepStrictEqual(
      selected.map((message) => message.id),
      forced.map((message) => message.id)
    )
  }
  // Greedy and contiguous: the newest message left out would not have fitted with its round.
  const left = history.filter((message) => !kept.has(message.id))
  const newestLeft = left[left.length - 1]
  if (newestLeft !== undefined) {
    const round = closure(history, [newestLeft]).filter((message) => !kept.has(message.id))
    assert.isAbove(cost(selected) + cost(round), limit, `message ${newestLeft.id} would have fitted`)
    // ...and nothing older than that round was kept past it (no best-fit gaps), pinned rounds aside.
    const order = new Map(history.map((message, index) => [message.id, index]))
    const lastOf = (messages: ReadonlyArray<Message.Message>) =>
      order.get(messages[messages.length - 1]?.id ?? "") ?? -1
    const pinnedRounds = new Set(
      closure(
        history,
        history.filter((message) => message.pinned === true)
      ).map((message) => message.id)
    )
    for (const message of selected.filter((message) => !pinnedRounds.has(message.id))) {
      assert.isAbove(lastOf(closure(history, [message])), lastOf(round), `message ${message.id} kept past a gap`)
    }
  }
}

const count = (messages: ReadonlyArray<Message.Message>) => messages.length
const tokens = (messages: ReadonlyArray<Message.Message>) =>
  messages.reduce((total, message) => total + message.tokens, 0)

// ---- tests --------------------------------------------------------------------------------------------

describe("policy parameters", () => {
  it("lastMessages rejects n < 1 and non-integers with a typed error naming the parameter", () => {
    for (const n of [0, -3, 1.5, Number.NaN]) {
      const result = SlidingWindowMemory.lastMessages(n)
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left._tag, "InvalidMemoryPolicy")
        assert.strictEqual(result.left.parameter, "n")
        assert.include(result.left.message, "SlidingWindowMemory.lastMessages")
      }
    }
  })

  it("budget rejects negative and fractional token counts", () => {
    for (const value of [-1, 0.5, Number.POSITIVE_INFINITY]) {
      const result = TokenWindowMemory.budget(value)
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) assert.strictEqual(result.left.parameter, "tokens")
    }
    assert.isTrue(Either.isRight(TokenWindowMemory.budget(0)))
  })

  it.effect("a layer built with a bad parameter fails with InvalidMemoryPolicy", () =>
    Effect.gen(function* () {
      const error = yield* ConversationMemory.ConversationMemory.pipe(
        Effect.provide(memoryWith(SlidingWindowMemory.layer(0))),
        Effect.flip
      )
      assert.strictEqual(error._tag, "InvalidMemoryPolicy")
    })
  )
})

describe("ConversationMemory over the log", () => {
  it.effect("load applies the policy; the log keeps everything", () =>
    Effect.gen(function* () {
      const memory = yield* ConversationMemory.ConversationMemory
      const context = yield* ContextService.ContextService
      const appended = yield* memory.append("conv", [
        Message.user("list the files"),
        Message.assistant("", [Message.toolCall("c1", "ls", {}), Message.toolCall("c2", "pwd", {})]),
        Message.tool("c1", "a.ts b.ts"),
        Message.tool("c2", "/repo"),
        Message.assistant("two files in /repo"),
        Message.user("thanks")
      ])
      assert.strictEqual(appended.length, 6)
      assert.isTrue(appended.every((message) => message.origin !== undefined && message.tokens > 0))
      const loaded = yield* memory.load("conv")
      // 3 fits "two files", "thanks" and nothing of the 3-message round before them.
      assert.deepStrictEqual(
        loaded.map((message) => Message.textOf(message)),
        ["two files in /repo", "thanks"]
      )
      assert.strictEqual((yield* context.load("conv")).history.length, 6)
      yield* memory.clear("conv")
      assert.deepStrictEqual(yield* memory.load("conv"), [])
    }).pipe(Effect.provide(memoryWith(SlidingWindowMemory.layer(3))))
  )

  it.effect("a parallel tool round travels whole", () =>
    Effect.gen(function* () {
      const memory = yield* ConversationMemory.ConversationMemory
      yield* memory.append("p", [
        Message.user("check"),
        Message.assistant("", [Message.toolCall("a", "x", {}), Message.toolCall("b", "y", {})]),
        Message.tool("a", "A"),
        Message.tool("b", "B")
      ])
      // The newest round alone is 3 messages, more than n = 2: it is kept whole, not split.
      const loaded = yield* memory.load("p")
      assert.deepStrictEqual(
        loaded.map((message) => message.role),
        ["assistant", "tool", "tool"]
      )
    }).pipe(Effect.provide(memoryWith(SlidingWindowMemory.layer(2))))
  )

  it.effect("errors of the log become MemoryError naming the conversation and operation", () =>
    Effect.gen(function* () {
      const memory = yield* ConversationMemory.ConversationMemory
      const orphan = yield* Effect.flip(memory.append("bad", [Message.tool("nope", "x")]))
      assert.strictEqual(orphan._tag, "MemoryError")
      assert.strictEqual(orphan.conversationId, "bad")
      assert.strictEqual(orphan.operation, "append")
      assert.include(orphan.message, "unknown tool call")
      const blank = yield* Effect.flip(memory.load("  "))
      assert.include(blank.message, "non-empty")
    }).pipe(Effect.provide(memoryWith(TokenWindowMemory.layer(100))))
  )
})

describe("real transcripts", () => {
  const files = transcriptFiles()

  /** Fuse each run of `width` consecutive call→result pairs into one parallel round. */
  const parallelize = (inputs: ReadonlyArray<Message.MessageInput>, width: number) => {
    const out: Array<Message.MessageInput> = []
    let index = 0
    while (index < inputs.length) {
      const calls: Array<Message.ToolCallPart> = []
      const results: Array<Message.MessageInput> = []
      while (calls.length < width) {
        const call = inputs[index]
        const result = inputs[index + 1]
        if (call === undefined || result === undefined) break
        const made = Message.toolCallsOf(call)
        const answered = Message.toolResultsOf(result)
        if (made.length !== 1 || answered.length !== 1 || answered[0]?.toolCallId !== made[0]?.id) break
        calls.push(...made)
        results.push(result)
        index += 2
      }
      if (calls.length > 0) out.push(Message.assistant("", calls), ...results)
      else out.push(inputs[index++] ?? Message.user(""))
    }
    return out
  }

  it.effect("lastMessages and budget never split a pair, sequential or parallel rounds", () =>
    Effect.gen(function* () {
      const context = yield* ContextService.ContextService
      let parallelRounds = 0
      for (const file of files) {
        const inputs = yield* Transcript.fromTranscriptJson(readTranscript(file))
        const parallel = parallelize(inputs, 3)
        parallelRounds += parallel.filter((input) => Message.toolCallsOf(input).length > 1).length
        for (const [stream, messages] of [
          [file, inputs],
          [`${file}#parallel`, parallel]
        ] as const) {
          const { window } = yield* context.appendMessages(stream, messages)
          for (const n of [1, 2, 3, 4, 7, 10, 25, 1000]) {
            const selected = policy(SlidingWindowMemory.lastMessages(n)).select(window.history)
            checkPolicy(window.history, selected, n, count)
          }
          for (const budget of [0, 50, 500, 2000, 8000, 1_000_000]) {
            const selected = policy(TokenWindowMemory.budget(budget)).select(window.history)
            checkPolicy(window.history, selected, budget, tokens)
          }
        }
      }
      assert.isAbove(parallelRounds, 20)
    }).pipe(Effect.provide(context))
  )
})

describe("properties", () => {
  it.prop(
    "lastMessages(n) keeps pairs, the newest round and pinned rounds, and is greedy",
    [fc.array(stepArb, { maxLength: 40 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 2, max: 9 })],
    ([steps, n, pinRate]) => {
      const history = build(steps, pinRate)
      checkPolicy(history, policy(SlidingWindowMemory.lastMessages(n)).select(history), n, count)
    },
    { fastCheck: { numRuns: propertyRuns(200) } }
  )

  it.prop(
    "budget(tokens) keeps pairs, the newest round and pinned rounds, and is greedy",
    [fc.array(stepArb, { maxLength: 40 }), fc.integer({ min: 0, max: 600 }), fc.integer({ min: 2, max: 9 })],
    ([steps, budget, pinRate]) => {
      const history = build(steps, pinRate)
      checkPolicy(history, policy(TokenWindowMemory.budget(budget)).select(history), budget, tokens)
    },
    { fastCheck: { numRuns: propertyRuns(200) } }
  )
})
