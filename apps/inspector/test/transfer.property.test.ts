/**
 * `ctxlog import` / `ctxlog export` over generated files. A valid `ctxlog.events` file (hostile but storable
 * text, CRLF, a byte order mark, blank lines) imports, and its export holds exactly the events it was
 * made from. A file with one broken part (an event line broken as in core's JSONL property, versions out
 * of order, a repeated event id, NUL or a lone surrogate in text, a bad header) fails with a typed
 * `ImportError` naming that line, and the import writes nothing. Never a defect.
 */
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Validation, type WindowEvent } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import fc from "fast-check"
import {
  type Break,
  breakLine,
  breakOf,
  events,
  layout,
  render,
  storableText,
  unstorableText
} from "../../../packages/core/test/support/hostileFiles.js"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import { Transfer } from "../src/index.js"
import { ctxlogInProcess, tempDir } from "./support/cli.js"

const temp = tempDir("ctxlog-transfer-")
afterAll(() => temp.cleanup())
let counter = 0
const fresh = () => {
  counter += 1
  return { file: join(temp.dir, `in-${counter}.jsonl`), db: join(temp.dir, `db-${counter}`, "log.db") }
}

/** Stream ids an import accepts: plain, unicode, with inner spaces and punctuation. */
const streamId = fc.oneof(
  fc.constantFrom("s", "conv-1", "agent/run 7", "日本語", "a\u{1f600}b"),
  fc.string({ minLength: 1, maxLength: 12, unit: "grapheme-ascii" }).map((text) => `x${text.trim()}x`)
)

/** What JSON keeps of a value (JSON has no negative zero). */
const asJson = (value: unknown): string => JSON.stringify(value)

const header = (stream: string, count: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ format: Transfer.format, formatVersion: Transfer.formatVersion, stream, events: count, ...extra })

const recordOf = (event: WindowEvent.WindowEvent, version: number) => ({
  version,
  eventId: event.id,
  type: event._tag,
  schemaVersion: event._tag === "MessageAppended" ? 2 : 1,
  data: JSON.parse(JSON.stringify(event)) as unknown,
  recordedAt: 1_700_000_000_000 + version,
  metadata: {}
})

/** The events of the database `db` (0 when it does not exist). */
const eventCount = (db: string): number => {
  if (!existsSync(db)) return 0
  const connection = new BetterSqlite3(db, { readonly: true })
  try {
    const row = connection.prepare<[], { n: number }>("select count(*) as n from events").get()
    return row?.n ?? 0
  } finally {
    connection.close()
  }
}

/** A broken part of a file: an event line broken as in core's property, or one of the import's own rules. */
type Damage =
  | { readonly _tag: "line"; readonly how: Break }
  | { readonly _tag: "versionOrder"; readonly shift: number }
  | { readonly _tag: "repeatedId" }
  | { readonly _tag: "unstorableText"; readonly text: string }
  | { readonly _tag: "header"; readonly change: "format" | "formatVersion" | "noStream" | "badStream" | "count" }

const damage: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 6, arbitrary: breakOf.map((how) => ({ _tag: "line" as const, how })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((shift) => ({ _tag: "versionOrder" as const, shift })) },
  { weight: 1, arbitrary: fc.constant({ _tag: "repeatedId" as const }) },
  { weight: 1, arbitrary: unstorableText.map((text) => ({ _tag: "unstorableText" as const, text })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom("format", "formatVersion", "noStream", "badStream", "count")
      .map((change) => ({ _tag: "header" as const, change }))
  }
)

/** The file's lines with `damage` applied at event `at`, and the index (0: the header) of the line to blame. */
const damaged = (
  stream: string,
  list: ReadonlyArray<WindowEvent.WindowEvent>,
  at: number,
  what: Damage
): { readonly lines: ReadonlyArray<string>; readonly blame: number } => {
  const records = list.map((event, index) => recordOf(event, index + 1))
  const lines = [header(stream, list.length), ...records.map((record) => JSON.stringify(record))]
  const record = records[at]
  const event = list[at]
  if (record === undefined || event === undefined) return { lines, blame: 0 }
  const replace = (line: string) => lines.map((old, index) => (index === at + 1 ? line : old))
  switch (what._tag) {
    case "line":
      return { lines: replace(breakLine(record, event, what.how)), blame: at + 1 }
    case "versionOrder":
      return { lines: replace(JSON.stringify({ ...record, version: record.version + what.shift })), blame: at + 1 }
    case "repeatedId": {
      // The event at `at` takes the id of another one (the first, or the second when `at` is the first).
      const other = list[at === 0 ? 1 : 0]
      if (other === undefined) return damaged(stream, list, at, { _tag: "versionOrder", shift: 1 })
      const blame = at === 0 ? 2 : at + 1
      const twin = at === 0 ? records[1] : record
      const twinEvent = at === 0 ? other : event
      if (twin === undefined) return { lines, blame: 0 }
      const id = at === 0 ? event.id : other.id
      return {
        lines: lines.map((old, index) =>
          index === blame ? JSON.stringify({ ...twin, data: { ...JSON.parse(JSON.stringify(twinEvent)), id } }) : old
        ),
        blame
      }
    }
    case "unstorableText": {
      const data = {
        _tag: "MessageAppended",
        id: `hostile-${at}`,
        message: {
          id: `hostile-${at}`,
          role: "user",
          kind: "chat",
          parts: [{ type: "text", text: what.text }],
          tokens: 1
        }
      }
      return {
        lines: replace(JSON.stringify({ ...record, type: "MessageAppended", schemaVersion: 2, data })),
        blame: at + 1
      }
    }
    case "header": {
      const changed =
        what.change === "format"
          ? header(stream, list.length, { format: "ctxlog.other" })
          : what.change === "formatVersion"
            ? header(stream, list.length, { formatVersion: 2 })
            : what.change === "noStream"
              ? header("", list.length)
              : what.change === "badStream"
                ? header(` ${stream}\u0000`, list.length)
                : header(stream, list.length + 1)
      return { lines: lines.map((old, index) => (index === 0 ? changed : old)), blame: 0 }
    }
  }
}

describe("ctxlog import and export on generated files", () => {
  it.effect(`a valid file imports, and its export holds exactly its events (${propertyRuns(40, 0.2)} runs)`, () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          events.chain((list) => fc.tuple(fc.constant(list), streamId, layout(list.length + 1))),
          async ([list, stream, shape]) => {
            await yieldToEventLoop()
            const { file, db } = fresh()
            const lines = [
              header(stream, list.length),
              ...list.map((event, i) => JSON.stringify(recordOf(event, i + 1)))
            ]
            writeFileSync(file, render(lines, shape).text)
            const imported = await ctxlogInProcess(["import", "--db", db, file])
            assert.strictEqual(imported.code, 0, imported.stderr)
            assert.strictEqual(eventCount(db), list.length)
            const exported = await ctxlogInProcess(["export", "--db", db, stream])
            assert.strictEqual(exported.code, 0, exported.stderr)
            const parsed = Effect.runSync(Transfer.parseJsonl("export", exported.stdout))
            assert.strictEqual(parsed.stream, stream)
            assert.strictEqual(asJson(parsed.events), asJson(list))
          }
        ),
        { numRuns: propertyRuns(40, 0.2) }
      )
    )
  )

  it.effect(
    `a file with one broken part fails naming its line and writes nothing, never a defect (${propertyRuns(120, 0.5)} runs)`,
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            events.chain((list) =>
              fc.tuple(fc.constant(list), streamId, layout(list.length + 1), fc.nat(list.length - 1), damage)
            ),
            async ([list, stream, shape, at, what]) => {
              await yieldToEventLoop()
              const { file, db } = fresh()
              const { lines, blame } = damaged(stream, list, at, what)
              const { text, lineNumbers } = render(lines, shape)
              const expectedLine = lineNumbers[blame]
              const exit = Effect.runSyncExit(Transfer.parseJsonl(file, text))
              if (Exit.isSuccess(exit)) return assert.fail(`${JSON.stringify(what)} was accepted`)
              const failure = Cause.failureOption(exit.cause)
              assert.isTrue(failure._tag === "Some", `not a typed failure: ${Cause.pretty(exit.cause)}`)
              if (failure._tag === "Some") {
                assert.strictEqual(
                  failure.value.line,
                  expectedLine,
                  `${JSON.stringify(what)}: ${failure.value.message}`
                )
              }
              // The command: exit 1, the line named, nothing written.
              writeFileSync(file, text)
              const imported = await ctxlogInProcess(["import", "--db", db, file])
              assert.strictEqual(imported.code, 1)
              assert.include(imported.stderr, `line ${expectedLine}:`)
              assert.strictEqual(eventCount(db), 0)
            }
          ),
          { numRuns: propertyRuns(120, 0.5) }
        )
      )
  )
})

describe("ctxlog import --format openai-chat on generated transcripts", () => {
  it.effect(
    `storable text imports (BOM, CRLF and indentation too); NUL or a lone surrogate fails and writes nothing (${propertyRuns(12, 0.05)} runs)`,
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc
              .array(
                fc.record({
                  role: fc.constantFrom("user", "assistant"),
                  text: fc.oneof({ weight: 4, arbitrary: storableText }, { weight: 1, arbitrary: unstorableText })
                }),
                { minLength: 1, maxLength: 4 }
              )
              .map((messages) =>
                // A chat starts with the user: an empty assistant turn with nothing before it has nothing
                // to render, and the import refuses it naming turn 1 (a typed error, not this property's case).
                [{ role: "user" as const, text: "Start." }, ...messages]
              ),
            fc.boolean(),
            fc.boolean(),
            async (messages, bom, crlf) => {
              await yieldToEventLoop()
              const { file, db } = fresh()
              const json = JSON.stringify(
                { messages: messages.map(({ role, text }) => ({ role, content: text })) },
                null,
                2
              )
              writeFileSync(file, `${bom ? "\ufeff" : ""}${crlf ? json.replaceAll("\n", "\r\n") : json}`)
              const imported = await ctxlogInProcess(["import", "--format", "openai-chat", "--db", db, file])
              const storable = messages.every(({ text }) => Validation.textProblem(text) === undefined)
              if (storable) {
                assert.strictEqual(imported.code, 0, imported.stderr)
                assert.isAbove(eventCount(db), messages.length - 1)
              } else {
                assert.strictEqual(imported.code, 1)
                assert.match(
                  imported.stderr,
                  /ctxlog: [^\n]*\.jsonl: pipeline failed at turn \d+: .*(contains NUL|lone surrogate)/
                )
                assert.strictEqual(eventCount(db), 0)
              }
            }
          ),
          { numRuns: propertyRuns(12, 0.05) }
        )
      )
  )
})
