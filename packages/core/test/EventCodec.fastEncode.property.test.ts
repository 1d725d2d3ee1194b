/**
 * `EventCodec.encodeKnown`, the append's fast path (ADR 0079), lets a store skip the validation walk and
 * the Schema encode of an event. That is sound only if, whenever it answers, the full path (the
 * validation walk, then the Schema encode) accepts the event and stores exactly the same bytes. Checked
 * on events generated from the schema, valid and broken in every way a mutation can break them (a value
 * replaced by one of another type or an invalid one, a key added or removed, keys in another order); and
 * it must answer for every valid event of the shapes it knows, or it saves nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import { work as counters } from "../src/internal/work.js"
import { EventCodec, type Message, Validation, WindowEvent, WorkCounter } from "../src/index.js"

/** The projection's work counters, read as their change since the last `work.reset()`. */
const work = WorkCounter.since(counters)

/** What the full path stores for `event`, or undefined when it refuses it. */
const fullPath = (event: unknown): EventCodec.StoredEvent | undefined => {
  if (Validation.valueProblem(event, "") !== undefined) return undefined
  const encoded = EventCodec.encodeAllEither([event])
  return Either.isRight(encoded) ? encoded.right[0] : undefined
}

/** Whether the fast path knows the shape of this part. */
const knownPart = (part: Message.Part): boolean =>
  (part.type === "text" && part.citations === undefined && part.providerOptions === undefined) ||
  (part.type === "tool_call" && part.providerOptions === undefined) ||
  (part.type === "tool_result" && part.parts === undefined && part.providerOptions === undefined)

/** Whether the fast path knows the shape of this (valid) event. */
const knownShape = (event: WindowEvent.WindowEvent): boolean =>
  event._tag === "MessageAppended" &&
  event.message.name === undefined &&
  event.message.providerOptions === undefined &&
  event.message.parts.every(knownPart)

/** Events of every type, and as many messages whose parts are all of the shapes the fast path knows. */
const events = fc.oneof(
  Arbitrary.make(WindowEvent.WindowEvent),
  Arbitrary.make(WindowEvent.MessageAppended).map((event): WindowEvent.WindowEvent => {
    const { name: _name, providerOptions: _providerOptions, ...message } = event.message
    return { ...event, message: { ...message, parts: message.parts.filter(knownPart) } }
  })
)

const badValues: ReadonlyArray<unknown> = [
  undefined,
  null,
  "",
  "a\u0000b",
  "x\ud800",
  "\udc00y",
  "ok \ud83d\ude00",
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -0,
  -1,
  0,
  1.5,
  2 ** 60,
  true,
  [],
  // biome-ignore lint/suspicious/noSparseArray: a hole is what this checks.
  [1, , 3],
  {},
  { type: "text" },
  new Date(0),
  new Map(),
  Object.create(null),
  "user",
  "chat",
  "text",
  "tool_call",
  "tool_result",
  "MessageAppended",
  { __proto__: null, a: 1 },
  JSON.parse('{"__proto__": 1}'),
  { [Symbol("s")]: 1 }
]

/** Every container of `value` with the path to it (the root first). */
const containers = (value: unknown): Array<object> => {
  const out: Array<object> = []
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item !== "object" || item === null) continue
    out.push(item)
    for (const child of Object.values(item)) stack.push(child)
  }
  return out
}

/** A deep copy (plain objects and arrays, keys in order). */
const copy = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)))

type Mutation = (target: Record<string | number, unknown>, key: string | number | undefined, pick: number) => void

const mutations: ReadonlyArray<Mutation> = [
  // Replace a value.
  (target, key, pick) => {
    if (key !== undefined) target[key] = badValues[pick % badValues.length]
  },
  // Remove a key.
  (target, key) => {
    if (key !== undefined && !Array.isArray(target)) delete target[key]
  },
  // Add a key (a known one of another object, or a new one).
  (target, _key, pick) => {
    const names = ["extra", "text", "citations", "parts", "pinned", "origin", "id", "type", "input", "kind"]
    target[names[pick % names.length] as string] = pick % 2 === 0 ? "x" : true
  },
  // Reverse the key order.
  (target) => {
    if (Array.isArray(target)) return
    const entries = Object.entries(target)
    for (const [name] of entries) delete target[name]
    for (const [name, value] of entries.reverse()) target[name] = value
  }
]

const mutated = fc
  .tuple(Arbitrary.make(WindowEvent.MessageAppended), fc.nat(), fc.nat(), fc.nat(), fc.nat({ max: 2 }))
  .map(([event, where, which, pick, times]) => {
    const out = copy(event)
    for (let round = 0; round <= times; round++) {
      const all = containers(out)
      const target = all[(where + round * 7) % all.length] as Record<string | number, unknown>
      const keys = Object.keys(target)
      const key = keys.length === 0 ? undefined : keys[(pick + round) % keys.length]
      const mutation = mutations[(which + round) % mutations.length] as Mutation
      mutation(target, Array.isArray(target) && key !== undefined ? Number(key) : key, pick + round)
    }
    return out
  })

describe("EventCodec.encodeKnown", () => {
  it("stores what the full path stores, and answers for every valid event of a shape it knows", async () => {
    let known = 0
    await fc.assert(
      fc.asyncProperty(events, async (event) => {
        await yieldToEventLoop()
        const fast = EventCodec.encodeKnown(event)
        const full = fullPath(event)
        if (fast !== undefined) {
          known++
          assert.deepStrictEqual(fast, full)
        } else {
          // Valid events the fast path knows must not fall back: it would save nothing.
          assert.isFalse(full !== undefined && knownShape(event), `fell back on ${JSON.stringify(event)}`)
        }
      }),
      { numRuns: propertyRuns(400) }
    )
    console.log(`generated events: fast path answered ${known}`)
    assert.isAbove(known, 0)
  })

  it("never answers for an event the full path refuses, and stores the same bytes when it answers", async () => {
    let answered = 0
    let refused = 0
    await fc.assert(
      fc.asyncProperty(mutated, async (event) => {
        await yieldToEventLoop()
        const fast = EventCodec.encodeKnown(event)
        const full = fullPath(event)
        if (full === undefined) refused++
        if (fast === undefined) return
        answered++
        assert.deepStrictEqual(fast, full, `fast path answered for ${String(JSON.stringify(event))}`)
      }),
      { numRuns: propertyRuns(1500) }
    )
    console.log(`mutated events: fast path answered ${answered}, full path refused ${refused}`)
    assert.isAbove(answered, 0)
    assert.isAbove(refused, 0)
  })

  it("every single value replaced by every bad value, every key removed, in sampled events: never a wrong answer", async () => {
    const samples = fc.sample(Arbitrary.make(WindowEvent.MessageAppended), { numRuns: propertyRuns(40), seed: 24 })
    let tried = 0
    let answered = 0
    for (const sample of samples) {
      const base = copy(sample)
      const places = containers(base).length
      for (let place = 0; place < places; place++) {
        // One turn of the event loop per container: the whole loop is a minute of work on a loaded machine.
        await yieldToEventLoop()
        const keys = Object.keys(containers(base)[place] as object)
        for (const key of keys) {
          for (let pick = -1; pick < badValues.length; pick++) {
            const event = copy(base)
            const target = containers(event)[place] as Record<string, unknown>
            if (pick < 0) delete target[key]
            else target[key] = badValues[pick]
            tried++
            const fast = EventCodec.encodeKnown(event)
            if (fast === undefined) continue
            answered++
            assert.deepStrictEqual(fast, fullPath(event), `fast path answered for ${String(JSON.stringify(event))}`)
          }
        }
      }
    }
    console.log(`single replacements: ${tried} tried, fast path answered ${answered}`)
    assert.isAbove(answered, 0)
  })

  it("keys in any order, surrogate pairs and an origin: the same bytes as the Schema's order", () => {
    const event = {
      message: {
        origin: { eventId: "e0", version: 3 },
        pinned: true,
        tokens: 7,
        parts: [
          { text: "smile \ud83d\ude00", type: "text" },
          { input: { b: [1, { c: null }], a: "x" }, name: "search", id: "c1", type: "tool_call" },
          { isError: false, content: "done", toolCallId: "c1", type: "tool_result" }
        ],
        kind: "chat",
        role: "assistant",
        id: "m1"
      },
      id: "e1",
      _tag: "MessageAppended"
    }
    const fast = EventCodec.encodeKnown(event)
    assert.isDefined(fast)
    assert.deepStrictEqual(fast, fullPath(event))
  })

  it("an append-sized batch of messages goes through no Schema encode", () => {
    const events = [0, 1, 2].map((index) => ({
      _tag: "MessageAppended",
      id: `e${index}`,
      message: { id: `m${index}`, role: "user", kind: "chat", parts: [{ type: "text", text: "hi" }], tokens: 1 }
    }))
    const known = events.map(EventCodec.encodeKnown)
    work.reset()
    const encoded = EventCodec.encodeAllEither(events, known)
    console.log(`Schema encodes for 3 known messages: ${work.schemaEncodes}; without known: 3 expected`)
    assert.strictEqual(work.schemaEncodes, 0)
    work.reset()
    const again = EventCodec.encodeAllEither(events)
    assert.strictEqual(work.schemaEncodes, 3)
    assert.deepStrictEqual(encoded, again)
  })
})
