/**
 * Hostile event files and transcripts: generated valid files and files with one broken line (truncated,
 * not JSON, wrong types, unknown event types, future or huge versions, nesting 20,000 deep, a tag that
 * contradicts the type), laid out with CRLF, a byte order mark and blank lines. Each file is generated
 * with its expected outcome: a valid one decodes to exactly the events it was made from; a broken one
 * fails with a typed `EventDecodeError` naming the broken line. Nothing ends in a defect.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import fc from "fast-check"
import { EventCodec, type Message, Transcript } from "../src/index.js"
import { propertyRuns, storableKeys, yieldToEventLoop } from "../../../vitest.property.js"
import { breakLine, breakOf, events, layout, render, storableText, unstorableText } from "./support/hostileFiles.js"

/** The stored-event lines of `events`, with `data` as JSON text or as a JSON object. */
const linesOf = (stored: ReadonlyArray<EventCodec.StoredEvent>, dataAsText: boolean) =>
  stored.map((event) => ({
    type: event.type,
    schemaVersion: event.schemaVersion,
    data: dataAsText ? event.data : (JSON.parse(event.data) as unknown)
  }))

/** What JSON keeps of a value (JSON has no negative zero). */
const asJson = (value: unknown): string => JSON.stringify(value)

describe("EventCodec.decodeJsonLines on generated files", () => {
  it.effect(`a valid file decodes to exactly its events (${propertyRuns(150)} runs)`, () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          events.chain((list) => fc.tuple(fc.constant(list), layout(list.length), fc.boolean())),
          async ([list, shape, dataAsText]) => {
            await yieldToEventLoop()
            const stored = Effect.runSync(EventCodec.encodeAll(list))
            const { text } = render(
              linesOf(stored, dataAsText).map((line) => JSON.stringify(line)),
              shape
            )
            const exit = Effect.runSyncExit(EventCodec.decodeJsonLines(text))
            assert.isTrue(Exit.isSuccess(exit), `${Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""}`)
            if (Exit.isSuccess(exit)) assert.strictEqual(asJson(exit.value), asJson(list))
          }
        ),
        { numRuns: propertyRuns(150) }
      )
    )
  )

  it.effect(`a file with one broken line fails naming that line, never a defect (${propertyRuns(300)} runs)`, () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          events.chain((list) =>
            fc.tuple(fc.constant(list), layout(list.length), fc.boolean(), fc.nat(list.length - 1), breakOf)
          ),
          async ([list, shape, dataAsText, broken, how]) => {
            await yieldToEventLoop()
            const stored = Effect.runSync(EventCodec.encodeAll(list))
            const records = linesOf(stored, dataAsText)
            const lines = records.map((record, index) => {
              const event = list[index]
              return index === broken && event !== undefined ? breakLine(record, event, how) : JSON.stringify(record)
            })
            const { text, lineNumbers } = render(lines, shape)
            const exit = Effect.runSyncExit(EventCodec.decodeJsonLines(text))
            if (Exit.isSuccess(exit)) return assert.fail(`${how.corruption} on line ${broken + 1} was accepted`)
            const failure = Cause.failureOption(exit.cause)
            assert.isTrue(
              failure._tag === "Some",
              `${how.corruption}: not a typed failure: ${Cause.pretty(exit.cause)}`
            )
            if (failure._tag === "Some") {
              assert.strictEqual(failure.value._tag, "EventDecodeError")
              assert.strictEqual(failure.value.line, lineNumbers[broken], `${how.corruption}: ${failure.value.message}`)
              assert.include(failure.value.message, `line ${lineNumbers[broken]}`)
            }
          }
        ),
        { numRuns: propertyRuns(300) }
      )
    )
  )
})

// Transcripts --------------------------------------------------------------------------------------

/** One OpenAI-chat message and the message input it must become (or the error it must raise). */
type Generated =
  | { readonly ok: true; readonly raw: unknown; readonly expected: Message.MessageInput }
  | { readonly ok: false; readonly raw: unknown }

const anyText = fc.oneof({ weight: 3, arbitrary: storableText }, { weight: 1, arbitrary: unstorableText })

const validMessage: fc.Arbitrary<Generated> = fc.oneof(
  fc
    .record({ role: fc.constantFrom("system", "developer", "user"), content: anyText, asParts: fc.boolean() })
    .map(({ role, content, asParts }) => ({
      ok: true as const,
      raw: { role, content: asParts ? [{ type: "text", text: content }] : content, reasoning_content: "ignored" },
      expected: {
        role: role === "user" ? ("user" as const) : ("system" as const),
        parts: [{ type: "text" as const, text: content }]
      }
    })),
  fc
    .record({
      content: fc.option(anyText, { nil: null }),
      calls: fc.array(
        fc.record({
          id: fc.string({ minLength: 1, maxLength: 8 }),
          name: fc.string({ minLength: 1, maxLength: 8 }),
          // Arguments that are JSON, and arguments a model mangled (kept verbatim).
          args: fc.oneof(
            fc
              .jsonValue({ maxDepth: 3 })
              .filter(storableKeys)
              .map((value) => ({ text: JSON.stringify(value), value: JSON.parse(JSON.stringify(value)) as unknown })),
            fc.constantFrom("{", "{'a':1}", "not json", "").map((text) => ({ text, value: text as unknown }))
          )
        }),
        { maxLength: 3 }
      )
    })
    .map(({ content, calls }) => {
      const parts: Array<Message.Part> = content !== null && content.length > 0 ? [{ type: "text", text: content }] : []
      for (const call of calls) {
        parts.push({ type: "tool_call", id: call.id, name: call.name, input: call.args.value as Message.JsonValue })
      }
      return {
        ok: true as const,
        raw: {
          role: "assistant",
          content,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: call.args.text }
          }))
        },
        expected: {
          role: "assistant" as const,
          parts: parts.length > 0 ? parts : [{ type: "text" as const, text: "" }]
        }
      }
    }),
  fc.record({ id: fc.string({ minLength: 1, maxLength: 8 }), content: anyText }).map(({ id, content }) => ({
    ok: true as const,
    raw: { role: "tool", tool_call_id: id, content },
    expected: {
      role: "tool" as const,
      parts: [{ type: "tool_result" as const, toolCallId: id, content, isError: false }]
    }
  }))
)

const invalidMessage: fc.Arbitrary<Generated> = fc
  .constantFrom<unknown>(
    null,
    42,
    "user: hi",
    [],
    { role: "wizard", content: "x" },
    { content: "no role" },
    { role: "user", content: 42 },
    { role: "user", content: [{ text: "part without type" }] },
    { role: "tool", content: "no call id" },
    { role: "assistant", tool_calls: [{ id: "c" }] },
    { role: "assistant", tool_calls: [{ id: 1, function: { name: "f", arguments: "{}" } }] },
    { role: "assistant", tool_calls: "none" }
  )
  .map((raw) => ({ ok: false as const, raw }))

describe("Transcript.fromTranscriptJson on generated transcripts", () => {
  it.effect(
    `a transcript converts message by message, or fails naming the first bad message (${propertyRuns(300)} runs)`,
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(fc.oneof({ weight: 6, arbitrary: validMessage }, { weight: 1, arbitrary: invalidMessage }), {
              maxLength: 10
            }),
            async (generated) => {
              await yieldToEventLoop()
              // Through JSON text, as a file is read (CR/LF, controls and lone surrogates survive it).
              const json: unknown = JSON.parse(JSON.stringify({ messages: generated.map((item) => item.raw) }))
              const exit = Effect.runSyncExit(Transcript.fromTranscriptJson(json))
              const firstBad = generated.findIndex((item) => !item.ok)
              if (firstBad >= 0) {
                if (Exit.isSuccess(exit)) return assert.fail(`message #${firstBad} was accepted`)
                const failure = Cause.failureOption(exit.cause)
                assert.isTrue(failure._tag === "Some", `not a typed failure: ${Cause.pretty(exit.cause)}`)
                if (failure._tag === "Some") {
                  assert.strictEqual(failure.value.index, firstBad)
                  assert.include(failure.value.message, `#${firstBad}`)
                }
                return
              }
              assert.isTrue(Exit.isSuccess(exit), Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "")
              if (Exit.isSuccess(exit)) {
                assert.strictEqual(
                  asJson(exit.value),
                  asJson(generated.flatMap((item) => (item.ok ? [item.expected] : [])))
                )
              }
            }
          ),
          { numRuns: propertyRuns(300) }
        )
      )
  )

  it.effect("a value that is not a transcript, and arguments nested 100,000 deep, end in no defect", () =>
    Effect.gen(function* () {
      // A bare array is a transcript (some logs store one): the empty one converts to nothing.
      assert.deepStrictEqual(yield* Transcript.fromTranscriptJson([]), [])
      for (const json of [null, 7, "x", {}, { messages: "none" }, { messages: {} }]) {
        const failure = yield* Effect.flip(Transcript.fromTranscriptJson(json))
        assert.strictEqual(failure._tag, "TranscriptError")
        assert.strictEqual(failure.index, -1)
      }
      const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`
      const [input] = yield* Transcript.fromTranscriptJson({
        messages: [{ role: "assistant", tool_calls: [{ id: "c", function: { name: "f", arguments: deep } }] }]
      })
      // Too deep to be a stored JSON value: kept verbatim as text.
      const part = input?.parts[0]
      assert.strictEqual(part?.type, "tool_call")
      if (part?.type === "tool_call") assert.strictEqual(part.input, deep)
      // Stored already parsed, the same nesting is a typed error naming the message.
      const parsed = yield* Effect.flip(
        Transcript.fromTranscriptJson({
          messages: [
            { role: "assistant", tool_calls: [{ id: "c", function: { name: "f", arguments: JSON.parse(deep) } }] }
          ]
        })
      )
      assert.strictEqual(parsed._tag, "TranscriptError")
      assert.strictEqual(parsed.index, 0)
      assert.include(parsed.detail, "nested deeper than 128 levels")
    })
  )
})
