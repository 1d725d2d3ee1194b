/**
 * `Validation.messagesProblem` passes an input of the commonest shape without the generic walk
 * (`knownMessageInput`, ADR 0166). That is sound only if every input it passes is one the walk accepts:
 * checked on message inputs generated from the schema, valid and broken (a value replaced by a bad one,
 * a key removed or added, keys in another order); and it must pass the valid inputs of the shapes it
 * knows, or it saves nothing. The mutations are those of `EventCodec.fastEncode.property.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as fc from "effect/FastCheck"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import { knownMessageInput } from "../src/internal/fastEncode.js"
import { type Message, Validation, WindowEvent } from "../src/index.js"

const knownPart = (part: Message.Part): boolean =>
  (part.type === "text" && part.citations === undefined && part.providerOptions === undefined) ||
  (part.type === "tool_call" && part.providerOptions === undefined) ||
  (part.type === "tool_result" && part.parts === undefined && part.providerOptions === undefined)

/** A message as a caller passes it: no tokens and no origin (the service adds them). */
const inputs = Arbitrary.make(WindowEvent.MessageAppended).chain((event) => {
  const { tokens: _tokens, origin: _origin, ...input } = event.message
  return fc.constantFrom<Record<string, unknown>>(input, {
    ...input,
    parts: input.parts.filter(knownPart),
    providerOptions: undefined
  })
})

const badValues: ReadonlyArray<unknown> = [
  undefined,
  null,
  "",
  "a\u0000b",
  "x\ud800",
  Number.NaN,
  Number.POSITIVE_INFINITY,
  1.5,
  true,
  [],
  // biome-ignore lint/suspicious/noSparseArray: a hole is what this checks.
  [1, , 3],
  {},
  new Date(0),
  new Map(),
  Object.create(null),
  10n,
  "text",
  JSON.parse('{"__proto__": 1}'),
  { [Symbol("s")]: 1 }
]

const containers = (value: unknown): Array<Record<string | number, unknown>> => {
  const out: Array<Record<string | number, unknown>> = []
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const item = stack.pop()
    if (typeof item !== "object" || item === null) continue
    out.push(item as Record<string | number, unknown>)
    for (const child of Object.values(item)) stack.push(child)
  }
  return out
}

/** An input for a failure message (a BigInt printed as such). */
const show = (value: unknown): string =>
  String(JSON.stringify(value, (_key, item: unknown) => (typeof item === "bigint" ? `${item}n` : item)))

/** A deep copy that keeps `undefined` values out (as JSON does). */
const copy = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const mutated = fc
  .tuple(inputs, fc.nat(), fc.nat(), fc.nat(), fc.nat({ max: 2 }))
  .map(([input, where, which, pick, times]) => {
    const out = copy(input)
    for (let round = 0; round <= times; round++) {
      const all = containers(out)
      const target = all[(where + round * 7) % all.length] as Record<string | number, unknown>
      const keys = Object.keys(target)
      const key = keys.length === 0 ? undefined : keys[(pick + round) % keys.length]
      const at = Array.isArray(target) && key !== undefined ? Number(key) : key
      switch ((which + round) % 4) {
        case 0:
          if (at !== undefined) target[at] = badValues[(pick + round) % badValues.length]
          break
        case 1:
          if (at !== undefined && !Array.isArray(target)) delete target[at]
          break
        case 2: {
          const names = ["extra", "text", "parts", "pinned", "id", "type", "input", "kind", "name", "tokens"]
          target[names[(pick + round) % names.length] as string] = (pick + round) % 2 === 0 ? "x" : true
          break
        }
        default: {
          if (Array.isArray(target)) break
          const entries = Object.entries(target)
          for (const [name] of entries) delete target[name]
          for (const [name, value] of entries.reverse()) target[name] = value
        }
      }
    }
    return out
  })

describe("Validation.messagesProblem's fast check", () => {
  it("passes only inputs the walk accepts, and passes the valid inputs of the shapes it knows", async () => {
    let passed = 0
    let refused = 0
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          inputs.map((input) => ({ input: copy(input), generated: true })),
          mutated.map((input) => ({ input, generated: false }))
        ),
        async ({ input, generated }) => {
          await yieldToEventLoop()
          const walked = Validation.valueProblem(input, "messages.0")
          if (walked !== undefined) refused++
          if (knownMessageInput(input)) {
            passed++
            assert.isUndefined(walked, `passed ${show(input)}`)
            assert.isUndefined(Validation.messagesProblem([input]))
            return
          }
          // A generated input (not mutated) of the shapes it knows must pass, or the check saves nothing.
          const record = input as Record<string, unknown>
          const known =
            generated &&
            walked === undefined &&
            Object.keys(record).every((key) => ["role", "parts", "kind", "pinned", "id", "name"].includes(key)) &&
            Array.isArray(record.parts) &&
            (record.parts as ReadonlyArray<Message.Part>).every(knownPart)
          assert.isFalse(known, `fell back on ${show(input)}`)
        }
      ),
      { numRuns: propertyRuns(1500) }
    )
    console.log(`message inputs: fast check passed ${passed}, walk refused ${refused}`)
    assert.isAbove(passed, 0)
    assert.isAbove(refused, 0)
  })
})
