/**
 * The boundary rules, one by one, through the in-memory EventLog: each bad input is refused with a
 * typed error naming where it is, and nothing is written. (The same inputs against SQLite and
 * PostgreSQL, and generated ones, are in packages/memory/test/validation.property.test.ts.)
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { ContextService, EventLog, Message, Validation } from "../src/index.js"
import type { WindowEvent } from "../src/WindowEvent.js"
import { sampleEvents } from "./support/sampleEvents.js"
import { live } from "./Scenario.js"

/**
 * One MessageAppended whose assistant message carries `text` and a tool call with `input`. The port is
 * typed; hostile values still arrive from untyped callers (JSON imports, JS code), hence the cast.
 */
const eventWith = (text: string, input: unknown): WindowEvent => {
  const [base] = sampleEvents(1)
  if (base === undefined || base._tag !== "MessageAppended") throw new Error("no sample event")
  const parts = [
    { type: "text", text },
    { type: "tool_call", id: "call_1", name: "run", input }
  ]
  return { ...base, message: { ...base.message, role: "assistant", parts } } as unknown as WindowEvent
}

const appendResult = (stream: string, events: ReadonlyArray<WindowEvent>, metadata: EventLog.EventMetadata = {}) =>
  Effect.gen(function* () {
    const log = yield* EventLog.makeMemory()
    const result = yield* Effect.either(log.append(stream, events, "any", metadata))
    const written = (yield* log.streams()).length
    return { result, written }
  })

const circular = (): unknown => {
  const value: { [key: string]: unknown } = { a: 1 }
  value.self = { back: value }
  return value
}

const deep = (levels: number): unknown => {
  let value: unknown = "bottom"
  for (let level = 0; level < levels; level += 1) value = [value]
  return value
}

const sparse = (): ReadonlyArray<unknown> => {
  const holes: Array<unknown> = new Array(3)
  holes[0] = 1
  holes[2] = 3
  return holes
}

class Point {
  constructor(readonly x: number) {}
}

describe("stream ids", () => {
  const refused: ReadonlyArray<readonly [string, string, string]> = [
    ["empty", "", "must not be empty"],
    ["blank", "   ", "whitespace"],
    ["leading space", " conv-1", "whitespace"],
    ["trailing newline", "conv-1\n", "whitespace"],
    ["1 MB", "x".repeat(1024 * 1024), "at most 256"],
    ["257 characters", "x".repeat(257), "at most 256"],
    ["NUL", "conv\u00001", "U+0000"],
    ["escape", "conv\u001b[31m", "U+001B"],
    ["DEL", "conv\u007f", "U+007F"],
    ["C1 control", "conv\u0085", "U+0085"],
    ["line separator", "conv\u2028x", "U+2028"],
    ["lone high surrogate", "conv\ud800x", "lone surrogate U+D800"],
    ["lone low surrogate", "conv\udfff", "lone surrogate U+DFFF"]
  ]
  for (const [label, stream, detail] of refused) {
    it.effect(`refuses ${label} with InvalidInput and writes nothing`, () =>
      Effect.gen(function* () {
        const { result, written } = yield* appendResult(stream, sampleEvents(1))
        if (Either.isRight(result)) return assert.fail(`accepted ${JSON.stringify(stream.slice(0, 20))}`)
        assert.strictEqual(result.left._tag, "InvalidInput")
        assert.include(result.left.message, detail)
        assert.isBelow(result.left.message.length, 300)
        assert.strictEqual(written, 0)
      })
    )
  }

  it.effect("accepts 256 characters, inner spaces, quotes, SQL and non-Latin letters", () =>
    Effect.gen(function* () {
      const log = yield* EventLog.makeMemory()
      for (const stream of [
        "x".repeat(256),
        "my conversation",
        "o'brien; DROP TABLE events; --",
        "対話-1",
        "😀 chat"
      ]) {
        yield* log.append(stream, sampleEvents(1), "no_stream")
        assert.strictEqual(yield* log.version(stream), 1)
      }
    })
  )
})

describe("tool-call arguments and text", () => {
  const refused: ReadonlyArray<readonly [string, unknown, string, string]> = [
    ["BigInt", { n: 10n }, "message.parts.1.input.n", "BigInt"],
    ["Date", { when: new Date(0) }, "message.parts.1.input.when", "a Date"],
    ["Map", { m: new Map([["a", 1]]) }, "message.parts.1.input.m", "a Map"],
    ["Set", [1, new Set([1])], "message.parts.1.input.1", "a Set"],
    ["class instance", { p: new Point(1) }, "message.parts.1.input.p", "a Point"],
    ["function", { f: () => 1 }, "message.parts.1.input.f", "a function"],
    ["undefined", { u: undefined }, "message.parts.1.input.u", "undefined"],
    ["undefined in an array", [undefined], "message.parts.1.input.0", "undefined"],
    ["symbol", { s: Symbol("s") }, "message.parts.1.input.s", "a symbol"],
    ["NaN", { x: Number.NaN }, "message.parts.1.input.x", "NaN"],
    ["Infinity", { x: [Number.POSITIVE_INFINITY] }, "message.parts.1.input.x.0", "Infinity"],
    ["sparse array", { a: sparse() }, "message.parts.1.input.a.1", "hole"],
    ["circular object", circular(), "message.parts.1.input.self.back", "circular"],
    ["2,000-deep nesting", deep(2000), "message.parts.1.input", "deeper than 128"],
    ["NUL in an argument", { cmd: "a\u0000b" }, "message.parts.1.input.cmd", "NUL"],
    ["odd key", { "key with\u0000nul": 1 }, 'message.parts.1.input."key with\\u0000nul"', "key"],
    // An own "__proto__" key (JSON.parse makes one): decoding drops it, so it could not round-trip.
    ["a __proto__ key", { a: JSON.parse('{"__proto__":{"x":1}}') }, "message.parts.1.input.a.__proto__", "__proto__"]
  ]
  for (const [label, input, path, detail] of refused) {
    it.effect(`refuses ${label} with EventEncodeError naming ${path}`, () =>
      Effect.gen(function* () {
        const { result, written } = yield* appendResult("conv-1", [...sampleEvents(1), eventWith("ok", input)])
        if (Either.isRight(result)) return assert.fail(`accepted ${label}`)
        if (result.left._tag !== "EventEncodeError") return assert.fail(`got ${result.left._tag}`)
        assert.strictEqual(result.left.index, 1)
        assert.strictEqual(result.left.type, "MessageAppended")
        assert.isTrue(result.left.path.startsWith(path), `${result.left.path} does not start with ${path}`)
        assert.include(result.left.detail, detail)
        assert.strictEqual(written, 0)
      })
    )
  }

  it.effect("refuses NUL and lone surrogates in message text; metadata gets the same rules", () =>
    Effect.gen(function* () {
      for (const text of ["a\u0000b", "\ud83d", "x\ude00y", "\ude00\ud83d"]) {
        const { result, written } = yield* appendResult("conv-1", [eventWith(text, {})])
        if (Either.isRight(result) || result.left._tag !== "EventEncodeError") return assert.fail("accepted")
        assert.strictEqual(result.left.path, "message.parts.0.text")
        assert.strictEqual(written, 0)
      }
      const { result } = yield* appendResult("conv-1", sampleEvents(1), { actor: "bot\u0000" })
      if (Either.isRight(result) || result.left._tag !== "InvalidInput") return assert.fail("accepted")
      assert.strictEqual(result.left.path, "metadata.actor")
    })
  )

  it.effect("accepts and round-trips other control characters, surrogate pairs, shared references, 128 levels", () =>
    Effect.gen(function* () {
      const log = yield* EventLog.makeMemory()
      const shared = { k: "v" }
      const text = "\u001b[31mred\u001b[0m\r\n\t\u0007\u007f\u0085\u2028 😀 é \ufffe"
      const input = { a: shared, b: shared, deep: deep(120), n: [0, -1.5, 1e300], "weird key \u001b": null }
      const event = eventWith(text, input)
      yield* log.append("conv-ok", [event], "no_stream")
      const read = yield* Stream.runCollect(log.read("conv-ok"))
      assert.deepStrictEqual(
        Chunk.toReadonlyArray(read).map((envelope) => envelope.event),
        [event]
      )
      assert.strictEqual(yield* log.version("conv-ok"), 1)
    })
  )
})

describe("sanitizeText", () => {
  it("makes any text storable and leaves storable text alone", () => {
    const storable = "plain \u001b text 😀"
    assert.strictEqual(Validation.sanitizeText(storable), storable)
    const fixed = Validation.sanitizeText("a\u0000b\ud800c\udfff😀")
    assert.strictEqual(fixed, "a\u2400b\ufffdc\ufffd😀")
    assert.isUndefined(Validation.textProblem(fixed))
  })
})

/**
 * The entries that take messages validate before any other work: token counting stringifies tool inputs,
 * so before this a BigInt, a cycle and a 10,000-deep array each ended in an untyped defect.
 */
describe("hostile tool-call arguments through ContextService", () => {
  const hostile: ReadonlyArray<readonly [string, () => unknown, string, string]> = [
    ["a BigInt", () => ({ n: 10n }), "messages.1.parts.1.input.n", "a BigInt is not a JSON value"],
    ["a circular object", circular, "messages.1.parts.1.input.self.back", "circular reference"],
    ["a 10,000-deep array", () => deep(10_000), "messages.1.parts.1.input", "nested deeper than 128 levels"]
  ]
  const inputs = (input: unknown): ReadonlyArray<Message.MessageInput> => [
    Message.user("run it"),
    // Typed port, untyped callers (plain JS, JSON imports): hence the cast.
    {
      role: "assistant",
      parts: [Message.text("running"), { type: "tool_call", id: "call_1", name: "run", input }]
    } as unknown as Message.MessageInput
  ]
  for (const [label, make, path, detail] of hostile) {
    it.effect(`appendMessages refuses ${label} with EventEncodeError at ${path} and writes nothing`, () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const log = yield* EventLog.EventLog
        const result = yield* Effect.either(ctx.appendMessages("hostile", inputs(make())))
        assert.isTrue(Either.isLeft(result), `${label} was accepted`)
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "EventEncodeError")
          if (result.left._tag === "EventEncodeError") {
            assert.strictEqual(result.left.index, 1)
            assert.isTrue(result.left.path.startsWith(path), `${result.left.path} should start with ${path}`)
            assert.include(result.left.detail, detail)
          }
        }
        // Every command that takes messages checks them the same way.
        const system = yield* Effect.either(ctx.setSystemPrompt("hostile", inputs(make())))
        assert.isTrue(Either.isLeft(system) && system.left._tag === "EventEncodeError")
        const injected = yield* Effect.either(ctx.inject("hostile", "recall", inputs(make())))
        assert.isTrue(Either.isLeft(injected) && injected.left._tag === "EventEncodeError")
        assert.strictEqual(yield* log.version("hostile"), 0)
        assert.strictEqual((yield* log.streams()).length, 0)
      }).pipe(Effect.provide(live()))
    )
  }

  it("a message that is not an object, or has no parts array, is refused with its path", () => {
    assert.strictEqual(Validation.messagesProblem([null])?.path, "messages.0")
    assert.strictEqual(Validation.messagesProblem([{ role: "user", parts: "hi" }])?.path, "messages.0.parts")
    assert.strictEqual(Validation.messagesProblem([{ role: "user", parts: [7] }])?.path, "messages.0.parts.0")
    assert.isUndefined(Validation.messagesProblem(inputs({ a: [1, { b: null }] })))
  })

  it("names the offender's whole path: nested keys, array indexes, odd keys escaped, the root itself", () => {
    const deep = { a: [1, { b: [true, { "odd key": { c: Number.NaN } }] }], z: "fine" }
    assert.deepStrictEqual(Validation.valueProblem(deep, "root"), {
      path: 'root.a.1.b.1."odd key".c',
      detail: "NaN is not a JSON number"
    })
    const holed = [0, 1, 2]
    delete holed[1]
    assert.deepStrictEqual(Validation.valueProblem({ a: holed }, ""), {
      path: "a.1",
      detail: "array hole (sparse array)"
    })
    assert.deepStrictEqual(Validation.valueProblem({ list: [{ x: 1n }] }, "metadata"), {
      path: "metadata.list.0.x",
      detail: "a BigInt is not a JSON value"
    })
    assert.deepStrictEqual(Validation.valueProblem("a\u0000b", "text"), {
      path: "text",
      detail: "text contains NUL (U+0000) at offset 1"
    })
    const cycle: { self?: unknown; list: Array<unknown> } = { list: [] }
    cycle.list.push({ back: cycle })
    assert.strictEqual(Validation.valueProblem(cycle, "")?.path, "list.0.back")
    assert.isUndefined(Validation.valueProblem(deep.z, ""))
  })
})
