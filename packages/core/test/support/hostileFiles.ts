// Generators of event files, valid and hostile, each with its expected outcome (so the oracle is not the
// code under test). Used by the JSON-lines properties here and by the inspector's import/export ones.
import fc from "fast-check"
import type { WindowEvent } from "../../src/index.js"
import { schemaVersions } from "../../src/WindowEvent.js"
import { storableKeys } from "../../../../vitest.property.js"

/** Characters real files hold and hostile ones add: controls, CR/LF, escapes, separators, BOM, emoji. */
const oddCharacters = [
  "\t",
  "\n",
  "\r",
  "\r\n",
  "\u0001",
  "\u001b[31m",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\ufffd",
  "\u{1f600}",
  "\\",
  '"',
  "é",
  "ß"
]

/** Text every store accepts: every grapheme and the odd characters above (no NUL, no lone surrogate). */
export const storableText = fc.string({
  unit: fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 1 }) },
    fc.constantFrom(...oddCharacters)
  ),
  maxLength: 40
})

/** Text no store accepts: storable text with a NUL or a lone surrogate inside. */
export const unstorableText = fc
  .tuple(storableText, fc.constantFrom("\u0000", "\ud800", "\udfff", "\udbff"), storableText)
  .map(([before, bad, after]) => `${before}${bad}${after}`)

/** A JSON value as a tool's arguments (finite numbers, any depth up to 4, no reserved `__proto__` key). */
const argumentsValue = fc.jsonValue({ maxDepth: 4 }).filter(storableKeys)

/** One event without its id (assigned by position so ids never repeat). */
type Shape =
  | { readonly kind: "user"; readonly text: string }
  | { readonly kind: "call"; readonly name: string; readonly input: unknown; readonly output: string }
  | { readonly kind: "goal"; readonly goal: string | null; readonly tokens: number }
  | { readonly kind: "system"; readonly text: string }
  | { readonly kind: "turn" }

const shape: fc.Arbitrary<Shape> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("user" as const), text: storableText }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("call" as const),
      name: fc.constantFrom("bash", "read", "grep"),
      input: argumentsValue,
      output: storableText
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("goal" as const),
      goal: fc.option(storableText, { nil: null }),
      tokens: fc.nat(10_000)
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("system" as const), text: storableText }) },
  { weight: 1, arbitrary: fc.constant({ kind: "turn" as const }) }
)

/** The events of one shape (a tool call is two: the call and its result). */
const eventsOf = (item: Shape, n: number): ReadonlyArray<WindowEvent.WindowEvent> => {
  switch (item.kind) {
    case "user":
      return [
        {
          _tag: "MessageAppended",
          id: `e${n}`,
          message: { id: `m${n}`, role: "user", kind: "chat", parts: [{ type: "text", text: item.text }], tokens: 3 }
        }
      ]
    case "call":
      return [
        {
          _tag: "MessageAppended",
          id: `e${n}`,
          message: {
            id: `m${n}`,
            role: "assistant",
            kind: "chat",
            parts: [
              { type: "tool_call", id: `call-${n}`, name: item.name, input: JSON.parse(JSON.stringify(item.input)) }
            ],
            tokens: 9
          }
        },
        {
          _tag: "MessageAppended",
          id: `e${n}r`,
          message: {
            id: `m${n}r`,
            role: "tool",
            kind: "chat",
            parts: [{ type: "tool_result", toolCallId: `call-${n}`, content: item.output, isError: false }],
            tokens: 5
          }
        }
      ]
    case "goal":
      return [{ _tag: "TaskGoalSet", id: `e${n}`, goal: item.goal, tokens: item.tokens }]
    case "system":
      return [
        {
          _tag: "SystemPromptSet",
          id: `e${n}`,
          messages: [
            { id: `m${n}`, role: "system", kind: "chat", parts: [{ type: "text", text: item.text }], tokens: 4 }
          ]
        }
      ]
    case "turn":
      return [{ _tag: "TurnCompleted", id: `e${n}` }]
  }
}

/** A list of 1–12 valid events with distinct ids. */
export const events: fc.Arbitrary<ReadonlyArray<WindowEvent.WindowEvent>> = fc
  .array(shape, { minLength: 1, maxLength: 8 })
  .map((shapes) => shapes.flatMap((item, n) => eventsOf(item, n)))

/** How lines are laid out in a file: line ends, a byte order mark, blank lines, a final newline. */
export interface Layout {
  readonly crlf: boolean
  readonly bom: boolean
  /** Blank (or whitespace-only) lines inserted before each line, by line index. */
  readonly blanks: ReadonlyArray<number>
  readonly finalNewline: boolean
}

/** A layout for `lines` lines. */
export const layout = (lines: number): fc.Arbitrary<Layout> =>
  fc.record({
    crlf: fc.boolean(),
    bom: fc.boolean(),
    blanks: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: lines, maxLength: lines }),
    finalNewline: fc.boolean()
  })

/** Lay `lines` out; returns the text and each line's 1-based line number in it. */
export const render = (
  lines: ReadonlyArray<string>,
  shape: Layout
): { readonly text: string; readonly lineNumbers: ReadonlyArray<number> } => {
  const out: Array<string> = []
  const lineNumbers: Array<number> = []
  lines.forEach((line, index) => {
    for (let blank = 0; blank < (shape.blanks[index] ?? 0); blank++) out.push(blank % 2 === 0 ? "" : "  \t")
    lineNumbers.push(out.length + 1)
    out.push(line)
  })
  const eol = shape.crlf ? "\r\n" : "\n"
  return { text: `${shape.bom ? "\ufeff" : ""}${out.join(eol)}${shape.finalNewline ? eol : ""}`, lineNumbers }
}

/** The ways one line of an event file is broken. */
export type Corruption =
  | "truncated"
  | "notJson"
  | "notObject"
  | "typeNotString"
  | "versionNotNumber"
  | "dataWrongField"
  | "unknownType"
  | "futureVersion"
  | "hugeVersion"
  | "hugeTokens"
  | "tooDeep"
  | "reservedKey"
  | "tagMismatch"

/** Every corruption. */
export const corruptions: ReadonlyArray<Corruption> = [
  "truncated",
  "notJson",
  "notObject",
  "typeNotString",
  "versionNotNumber",
  "dataWrongField",
  "unknownType",
  "futureVersion",
  "hugeVersion",
  "hugeTokens",
  "tooDeep",
  "reservedKey",
  "tagMismatch"
]

/** A corruption with the random choices it needs. */
export interface Break {
  readonly corruption: Corruption
  /** Where a truncation cuts (a share of the line), and which garbage or depth is used. */
  readonly at: number
  readonly pick: number
}

/** A random break. */
export const breakOf: fc.Arbitrary<Break> = fc.record({
  corruption: fc.constantFrom(...corruptions),
  at: fc.double({ min: 0, max: 1, noNaN: true }),
  pick: fc.nat(1_000_000)
})

const garbage = ["{", "}", "{'type':1}", "NaN", "[1,]", '{"a":1,}', "tru", '{"type":"TurnCompleted"', "\u0000"]
const nonObjects = ["[]", "42", '"MessageAppended"', "null", "true"]

const deepValue = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`

/**
 * Break the line holding `record` (an object with `type`, `schemaVersion` and `data` of `event`), given
 * as its JSON text: every result is a line that decoding must refuse.
 */
export const breakLine = (
  record: Readonly<Record<string, unknown>>,
  event: WindowEvent.WindowEvent,
  how: Break
): string => {
  const line = JSON.stringify(record)
  const data = JSON.parse(JSON.stringify(event)) as Record<string, unknown>
  const withData = (changed: unknown) => JSON.stringify({ ...record, data: changed })
  switch (how.corruption) {
    case "truncated":
      // A strict prefix of a JSON object is never valid JSON.
      return line.slice(0, Math.max(1, Math.min(line.length - 1, Math.floor(how.at * line.length))))
    case "notJson":
      return garbage[how.pick % garbage.length] ?? "{"
    case "notObject":
      return nonObjects[how.pick % nonObjects.length] ?? "[]"
    case "typeNotString":
      return JSON.stringify({ ...record, type: how.pick % 2 === 0 ? 7 : null })
    case "versionNotNumber":
      return JSON.stringify({ ...record, schemaVersion: String(record.schemaVersion) })
    case "dataWrongField":
      return event._tag === "MessageAppended"
        ? withData({ ...data, message: { ...event.message, tokens: "many" } })
        : event._tag === "TaskGoalSet"
          ? withData({ ...data, goal: 42 })
          : event._tag === "SystemPromptSet"
            ? withData({ ...data, messages: "none" })
            : withData({ ...data, id: 5 })
    case "unknownType":
      return JSON.stringify({ ...record, type: "NoSuchEvent", data: { ...data, _tag: "NoSuchEvent" } })
    case "futureVersion":
      return JSON.stringify({ ...record, schemaVersion: schemaVersions[event._tag] + 1 + (how.pick % 50) })
    case "hugeVersion":
      return line.replace(/"schemaVersion":\d+/, `"schemaVersion":1e${400 + (how.pick % 100)}`)
    case "hugeTokens":
      if (event._tag === "TurnCompleted") return line.replace(/"schemaVersion":\d+/, '"schemaVersion":-1e999')
      // Inside `data`, whether it is JSON text or an object.
      return typeof record.data === "string"
        ? JSON.stringify({ ...record, data: record.data.replace(/"tokens":\d+/, '"tokens":1e999') })
        : line.replace(/"tokens":\d+/, '"tokens":1e999')
    case "tooDeep": {
      // A well-formed MessageAppended whose tool input is nested 129–20,128 levels deep.
      const depth = 129 + (how.pick % 20_000)
      const deep = `{"_tag":"MessageAppended","id":"deep","message":{"id":"deep","role":"assistant","kind":"chat","tokens":1,"parts":[{"type":"tool_call","id":"c","name":"x","input":${deepValue(depth)}}]}}`
      return JSON.stringify({
        ...record,
        type: "MessageAppended",
        schemaVersion: schemaVersions.MessageAppended,
        data: "__deep__"
      }).replace('"__deep__"', deep)
    }
    case "reservedKey": {
      // A well-formed MessageAppended whose tool input has a "__proto__" key: decoding would drop it.
      const input = `{"a":1,"__proto__":${how.pick % 2 === 0 ? "null" : '{"polluted":true}'}}`
      const reserved = `{"_tag":"MessageAppended","id":"proto","message":{"id":"proto","role":"assistant","kind":"chat","tokens":1,"parts":[{"type":"tool_call","id":"c","name":"x","input":${input}}]}}`
      return JSON.stringify({
        ...record,
        type: "MessageAppended",
        schemaVersion: schemaVersions.MessageAppended,
        data: "__reserved__"
      }).replace('"__reserved__"', reserved)
    }
    case "tagMismatch":
      return withData({ ...data, _tag: event._tag === "TurnCompleted" ? "TaskGoalSet" : "TurnCompleted" })
  }
}
