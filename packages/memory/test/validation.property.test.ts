/**
 * Hostile inputs at the append boundary, generated, against every backend (in-memory, SQLite,
 * PostgreSQL): stream ids, tool-call argument values, and text with control characters and lone
 * surrogates. Each append ends in a typed error that wrote nothing, or in a faithful round trip; never
 * a defect. Inputs are generated with their expected class (valid or not), so the oracle is not the
 * implementation.
 *
 * Runs per backend: `CTXLOG_PROPERTY_RUNS` (CI default below; nightly: 2000).
 */
import { EventLog, type WindowEvent } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { assert, describe, layer } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import fc from "fast-check"
import { storableKeys } from "../../../vitest.property.js"
import { SqliteEventLog } from "../src/index.js"
import * as Postgres from "./support/postgres.js"

const runs = (ciDefault: number): number => {
  const configured = Number(process.env.CTXLOG_PROPERTY_RUNS)
  return Number.isInteger(configured) && configured > 0 ? configured : ciDefault
}

/** An input and whether the rules must accept it (`undefined`: either outcome, but typed or faithful). */
interface Case<A> {
  readonly value: A
  readonly valid: boolean | undefined
}

const oddBits = ["'", '"', ";", "--", " ", "中文", "é", "😀", "\\", "%", "_", "/", ":", "DROP TABLE events"]

const validId: fc.Arbitrary<Case<string>> = fc
  .array(fc.constantFrom(...oddBits), { maxLength: 4 })
  .map((bits) => ({ value: freshStream(`p${bits.join("")}`), valid: true }))

const invalidId: fc.Arbitrary<Case<string>> = fc
  .oneof(
    fc.constantFrom("", " ", "\t", "\n"),
    fc.string().map((s) => ` ${s}x`),
    fc.string().map((s) => `x${s} `),
    fc.integer({ min: 257, max: 5000 }).map((n) => "x".repeat(n)),
    fc
      .tuple(fc.string({ maxLength: 5 }), fc.constantFrom("\u0000", "\u0001", "\u001b", "\u007f", "\u0085", "\u2028"))
      .map(([s, bad]) => `x${s}${bad}y`),
    fc.constantFrom("x\ud800y", "x\udfff", "\udc00x")
  )
  .map((value) => ({ value, valid: false }))

const anyId: fc.Arbitrary<Case<string>> = fc
  .string({ unit: "binary", maxLength: 20 })
  .map((value) => ({ value: `${value}`, valid: undefined }))

/** Text made of pieces that are all storable: other control characters, pairs, separators. */
const storableText: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.string(),
      fc.constantFrom("\u001b[31m", "\r\n", "\t", "\u0007", "\u0001", "\u007f", "\u0085", "\u2028", "😀", "é", "\ufffe")
    ),
    { maxLength: 8 }
  )
  .map((pieces) => pieces.join(""))

const text: fc.Arbitrary<Case<string>> = fc.oneof(
  storableText.map((value) => ({ value, valid: true })),
  fc
    .tuple(storableText, fc.constantFrom("\u0000", "x\ud800x", "x\udbffx", "x\udc00x", "x\udfffx"), storableText)
    .map(([before, bad, after]) => ({ value: `${before}${bad}${after}`, valid: false }))
)

const circular = (): unknown => {
  const value: { [key: string]: unknown } = {}
  value.loop = [value]
  return value
}

const nested = (levels: number): unknown => {
  let value: unknown = 1
  for (let level = 0; level < levels; level += 1) value = { d: value }
  return value
}

const hostileLeaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.bigInt().map((n) => n),
  fc.date({ noInvalidDate: false }),
  fc.constant(new Map([["a", 1]])),
  fc.constant(new Set(["a"])),
  fc.constant(() => "f"),
  fc.constant(undefined),
  fc.constant(Symbol("s")),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.constant(new Uint8Array([1, 2])),
  fc.constant(null).map(circular),
  fc.integer({ min: 130, max: 3000 }).map(nested),
  fc.constant("a\u0000b"),
  // An own "__proto__" key (as JSON.parse makes one): decoding would drop it.
  fc.constant(null).map(() => JSON.parse('{"__proto__":{"polluted":true}}'))
)

/** Put `leaf` at `path` inside a small JSON container. */
const placeAt = (path: ReadonlyArray<string | number>, leaf: unknown): unknown =>
  path.reduceRight<unknown>((inner, key) => (typeof key === "number" ? [inner] : { ok: "fine", [key]: inner }), leaf)

const argument: fc.Arbitrary<Case<unknown>> = fc.oneof(
  fc
    .jsonValue({ maxDepth: 4 })
    .filter(storableKeys)
    .map((value) => ({ value, valid: true })),
  fc
    .tuple(
      fc.array(fc.oneof(fc.constantFrom("a", "b", "key with space"), fc.constant(0)), { maxLength: 4 }),
      hostileLeaf
    )
    .map(([path, leaf]) => ({ value: placeAt(path, leaf), valid: false }))
)

/** A MessageAppended carrying `words` as text and `input` as a tool call's arguments (untyped on purpose). */
const eventWith = (words: string, input: unknown): WindowEvent.WindowEvent => {
  const [base] = sampleEvents(1)
  if (base === undefined || base._tag !== "MessageAppended") throw new Error("no sample event")
  const parts = [
    { type: "text", text: words },
    { type: "tool_call", id: "call_1", name: "run", input }
  ]
  // The port is typed; hostile values reach it from untyped callers (JSON imports, plain JS).
  return { ...base, message: { ...base.message, role: "assistant", parts } } as unknown as WindowEvent.WindowEvent
}

const totals = (log: EventLog.EventLog.Service) =>
  Effect.map(log.streams(), (streams) => ({
    streams: streams.length,
    events: streams.reduce((sum, info) => sum + info.version, 0)
  }))

const property = (numRuns: number) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<EventLog.EventLog>()
    const log = yield* EventLog.EventLog
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.oneof(validId, validId, invalidId, anyId), argument, text, (id, input, words) =>
          Runtime.runPromise(runtime)(
            Effect.gen(function* () {
              const event = eventWith(words.value, input.value)
              const before = yield* totals(log)
              const exit = yield* Effect.exit(log.append(id.value, [event], "any"))
              if (Exit.isFailure(exit)) {
                // A failure must be a typed error, never a defect, and must write nothing.
                const failure = Cause.failureOption(exit.cause)
                if (failure._tag === "None") return assert.fail(`a defect: ${Cause.pretty(exit.cause)}`)
                const error = failure.value
                assert.oneOf(error._tag, ["InvalidInput", "EventEncodeError"], error.message)
                assert.deepStrictEqual(yield* totals(log), before)
                assert.notStrictEqual(
                  id.valid && input.valid && words.valid,
                  true,
                  `refused valid input: ${error.message}`
                )
                if (id.valid === false) assert.strictEqual(error._tag, "InvalidInput")
                return
              }
              assert.notStrictEqual(id.valid, false, "accepted an invalid stream id")
              assert.notStrictEqual(input.valid, false, "accepted a non-JSON argument")
              assert.notStrictEqual(words.valid, false, "accepted NUL or a lone surrogate")
              const read = Chunk.toReadonlyArray(
                yield* Stream.runCollect(log.read(id.value, { from: exit.value.nextExpectedVersion }))
              )
              // Faithful: what was appended is what is read, exactly, except that JSON has no -0
              // (documented in Validation: -0 is stored as 0), hence the comparison with the JSON form.
              assert.deepStrictEqual(
                read.map((envelope) => envelope.event),
                [JSON.parse(JSON.stringify(event))]
              )
            })
          )
        ),
        { numRuns }
      )
    )
  })

describe("hostile append inputs: a typed error that wrote nothing, or a faithful round trip", () => {
  layer(EventLog.layerMemory(), { timeout: "300 seconds" })("in-memory", (it) => {
    it.effect("ids, arguments and text", () => property(runs(200)), { timeout: 300_000 })
  })
  layer(SqliteEventLog.layer({ filename: ":memory:" }), { timeout: "300 seconds" })("SQLite", (it) => {
    it.effect("ids, arguments and text", () => property(runs(150)), { timeout: 300_000 })
  })
  layer(Postgres.layer("validation"), { timeout: "300 seconds" })("PostgreSQL", (it) => {
    it.effect("ids, arguments and text", () => property(runs(60)), { timeout: 300_000 })
  })
})
