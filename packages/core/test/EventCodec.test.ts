import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import {
  ContextService,
  EventCodec,
  EventHash,
  EventLog,
  Message,
  ToolPairs,
  Window,
  WindowEvent
} from "../src/index.js"
import { appended, checkTokens, given, live, logState, message, stream } from "./Scenario.js"

/** The failure of `effect`; a success fails the test. */
const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.either(effect), (result) =>
    Either.isLeft(result) ? Effect.succeed(result.left) : Effect.sync(() => assert.fail("expected a failure"))
  )

const storedAppend = (data: unknown, schemaVersion = 2): EventCodec.StoredEvent => ({
  type: "MessageAppended",
  schemaVersion,
  data: JSON.stringify(data)
})

const goodMessage: Message.Message = message("m1", "user", "hi", { tokens: 3 })

describe("EventCodec.decode", () => {
  it.effect("round-trips a valid event", () =>
    Effect.gen(function* () {
      const event = yield* EventCodec.decode(storedAppend({ _tag: "MessageAppended", id: "e1", message: goodMessage }))
      assert.deepStrictEqual(event, { _tag: "MessageAppended", id: "e1", message: goodMessage })
    })
  )

  it.effect("a malformed part fails with a typed error naming the field path and the location", () =>
    Effect.gen(function* () {
      const bad = { ...goodMessage, parts: [{ type: "picture", text: "hi" }] }
      const error = yield* failureOf(
        EventCodec.decode(storedAppend({ _tag: "MessageAppended", id: "e1", message: bad }), {
          stream: "conv-7",
          version: 12
        })
      )
      assert.instanceOf(error, EventCodec.EventDecodeError)
      assert.strictEqual(error.path, "message.parts.0.type")
      assert.strictEqual(error.stream, "conv-7")
      assert.strictEqual(error.version, 12)
      assert.strictEqual(error.type, "MessageAppended")
      assert.include(error.message, 'at "message.parts.0.type"')
      assert.include(error.message, "stream conv-7, version 12")
    })
  )

  it.effect("names the path of a wrong value, a missing field and an unexpected field", () =>
    Effect.gen(function* () {
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ _tag: "MessageAppended", id: "e1", message: { ...goodMessage, tokens: -1 } }, "message.tokens"],
        [{ _tag: "MessageAppended", id: "e1", message: { ...goodMessage, role: "robot" } }, "message.role"],
        [{ _tag: "MessageAppended", id: "e1" }, "message"],
        [{ _tag: "MessageAppended", id: "e1", message: goodMessage, extra: 1 }, "extra"],
        [{ _tag: "MessageAppended", id: "", message: goodMessage }, "id"]
      ]
      for (const [data, path] of cases) {
        const error = yield* failureOf(EventCodec.decode(storedAppend(data)))
        assert.strictEqual(error.path, path, JSON.stringify(data))
      }
    })
  )

  it.effect("rejects an unknown type, an unknown schema version, text that is not JSON, and a mismatched tag", () =>
    Effect.gen(function* () {
      const unknownType = yield* failureOf(EventCodec.decode({ type: "MessageExploded", schemaVersion: 1, data: "{}" }))
      assert.strictEqual(unknownType.path, "_tag")
      assert.match(unknownType.detail, /unknown event type "MessageExploded"/)
      const current = WindowEvent.schemaVersions.MessageAppended
      const future = yield* failureOf(
        EventCodec.decode(storedAppend({ _tag: "MessageAppended", id: "e1", message: goodMessage }, current + 1))
      )
      assert.include(future.detail, `schema version ${current + 1} is not between 1 and ${current}`)
      const notJson = yield* failureOf(EventCodec.decode({ type: "TurnCompleted", schemaVersion: 1, data: "{oops" }))
      assert.match(notJson.detail, /not JSON/)
      const mismatch = yield* failureOf(
        EventCodec.decode({ type: "TurnCompleted", schemaVersion: 1, data: '{"_tag":"HistoryCleared","id":"e"}' })
      )
      assert.strictEqual(mismatch.path, "_tag")
    })
  )
})

describe("EventCodec.decodeJsonLines", () => {
  it.effect("reports the line number of a malformed event, counting blank lines", () =>
    Effect.gen(function* () {
      const good = JSON.stringify({
        type: "TurnCompleted",
        schemaVersion: 1,
        data: { _tag: "TurnCompleted", id: "t1" }
      })
      const bad = JSON.stringify({
        type: "MessageAppended",
        schemaVersion: 2,
        data: { _tag: "MessageAppended", id: "e1", message: { ...goodMessage, parts: [{ type: "text" }] } }
      })
      const error = yield* failureOf(EventCodec.decodeJsonLines([good, "", bad].join("\n")))
      assert.strictEqual(error.line, 3)
      assert.strictEqual(error.path, "message.parts.0.text")
      assert.include(error.message, "line 3")
      const notJson = yield* failureOf(EventCodec.decodeJsonLines(`${good}\n{nope`))
      assert.strictEqual(notJson.line, 2)
      const notRecord = yield* failureOf(EventCodec.decodeJsonLines(`${good}\n${good}\n[1]`))
      assert.strictEqual(notRecord.line, 3)
      assert.strictEqual(notRecord.path, "type")
      assert.deepStrictEqual(yield* EventCodec.decodeJsonLines(`${good}\n\n${good}\n`), [
        { _tag: "TurnCompleted", id: "t1" },
        { _tag: "TurnCompleted", id: "t1" }
      ])
    })
  )
})

describe("EventCodec.encodeAllEither", () => {
  it("an event whose tag is a null-prototype object is a typed error naming _tag, not a thrown TypeError", () => {
    // The Schema's union cannot print such a tag and threw; the validation walk accepts it (a plain object).
    const event = { _tag: Object.create(null), id: "x1", message: goodMessage }
    const encoded = EventCodec.encodeAllEither([event])
    assert.isTrue(Either.isLeft(encoded))
    if (Either.isRight(encoded)) return
    assert.strictEqual(encoded.left._tag, "EventEncodeError")
    assert.strictEqual(encoded.left.path, "_tag")
    assert.strictEqual(encoded.left.index, 0)
  })
})

describe("EventCodec.encodeAll through EventLog", () => {
  // Each is a well-typed object that breaks a schema refinement.
  const malformed: ReadonlyArray<readonly [string, WindowEvent.WindowEvent, string]> = [
    [
      "fractional tokens",
      { _tag: "MessageAppended", id: "x1", message: { ...message("m9", "user", "x"), tokens: 1.5 } },
      "message.tokens"
    ],
    ["an empty message id", { _tag: "MessageAppended", id: "x1", message: message("", "user", "x") }, "message.id"],
    [
      "a non-finite number in a tool input",
      {
        _tag: "MessageAppended",
        id: "x1",
        message: message("m9", "assistant", [Message.toolCall("c9", "calc", { value: Number.NaN })])
      },
      "message.parts.0.input"
    ]
  ]

  for (const [label, event, path] of malformed) {
    it.effect(`appending an event with ${label} fails with EventEncodeError and appends nothing`, () =>
      Effect.gen(function* () {
        yield* given([appended(message("u1", "user", "hi"))])
        const log = yield* EventLog.EventLog
        const before = yield* logState
        const valid = WindowEvent.stamp({ _tag: "TurnCompleted" }, "ok-1")
        const error = yield* failureOf(log.append(stream, [valid, event], before.version))
        assert.strictEqual(error._tag, "EventEncodeError")
        if (error._tag !== "EventEncodeError") return
        assert.strictEqual(error.index, 1)
        assert.strictEqual(error.type, "MessageAppended")
        assert.isTrue(error.path.startsWith(path), `${error.path} starts with ${path}`)
        assert.deepStrictEqual(yield* logState, before)
      }).pipe(Effect.provide(live()))
    )
  }

  it.effect("a tool call with a non-finite input is refused by the service too, and nothing is written", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const before = yield* logState
      const error = yield* failureOf(
        ctx.appendMessages(stream, [Message.assistant("", [Message.toolCall("c1", "calc", Number.POSITIVE_INFINITY)])])
      )
      assert.strictEqual(error._tag, "EventEncodeError")
      assert.deepStrictEqual(yield* logState, before)
    }).pipe(Effect.provide(live()))
  )

  it.effect("every stored event is hash-chained; a tampered byte is detected", () =>
    Effect.gen(function* () {
      yield* given([appended(message("u1", "user", "hi")), appended(message("u2", "user", "there"))])
      const log = yield* EventLog.EventLog
      const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
      const intact = EventHash.verify(envelopes)
      assert.isTrue(intact.ok)
      const tampered = envelopes.map((record, index) =>
        index === 0 ? { ...record, data: record.data.replace('"hi"', '"ho"') } : record
      )
      const broken = EventHash.verify(tampered)
      assert.isFalse(broken.ok)
      if (!broken.ok) assert.strictEqual(broken.version, 1)
    }).pipe(Effect.provide(live()))
  )
})

describe("upcasting", () => {
  const fixture = readFileSync(new URL("./fixtures/v1-log.jsonl", import.meta.url), "utf8")

  it.effect("a log with v1 MessageAppended events decodes and replays to the expected window", () =>
    Effect.gen(function* () {
      const events = yield* EventCodec.decodeJsonLines(fixture)
      assert.strictEqual(events.length, 11)
      const window = Window.replay(events)
      const at = (version: number, eventId: string) => ({ origin: { version, eventId } })
      assert.deepStrictEqual(window.system, [
        { ...message("sys", "system", "You are a careful coding agent.", { tokens: 12 }), ...at(1, "e01") }
      ])
      assert.deepStrictEqual(window.knowledge, [
        {
          ...message("r1", "system", "Earlier: the repo is not under git.", { kind: "recall", tokens: 12 }),
          ...at(8, "e08")
        }
      ])
      assert.deepStrictEqual(window.history, [
        {
          ...message(
            "m2",
            "assistant",
            [
              Message.text("Let me look."),
              Message.toolCall("call_1", "ls", { path: "." }),
              Message.toolCall("call_2", "git_status", null)
            ],
            { tokens: 20 }
          ),
          ...at(3, "e03")
        },
        {
          ...message("m3", "tool", [Message.toolResult("call_1", "README.md\nsrc")], { tokens: 9 }),
          ...at(4, "e04")
        },
        {
          ...message("m4", "tool", [Message.toolResult("call_2", "fatal: not a git repository", true)], {
            tokens: 10,
            pinned: true
          }),
          ...at(5, "e05")
        },
        {
          ...message("m5", "assistant", [Message.toolCall("call_3", "cat", { file: "README.md" })], { tokens: 8 }),
          ...at(6, "e06")
        },
        { ...message("m6", "tool", [Message.toolResult("call_3", "# demo")], { tokens: 6 }), ...at(7, "e07") },
        { ...message("m7", "assistant", "Two entries, and no git.", { tokens: 10 }), ...at(9, "e09") }
      ])
      assert.deepStrictEqual(window.completedToolIds, ["call_1", "call_2", "call_3"])
      assert.strictEqual(window.version, 11)
      assert.strictEqual(window.compaction.turn, 1)
      assert.deepStrictEqual(window.tokens, {
        system: 12,
        knowledge: 12,
        taskState: 0,
        signals: 0,
        history: 63,
        total: 87
      })
      checkTokens(window)
      assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [])
    })
  )

  it.effect("upcast events are re-stored in the current shape and replay the same through a log", () =>
    Effect.gen(function* () {
      const events = yield* EventCodec.decodeJsonLines(fixture)
      const stored = yield* EventCodec.encodeAll(events)
      assert.deepStrictEqual(
        stored.filter((record) => record.type === "MessageAppended").map((record) => record.schemaVersion),
        Array.from({ length: 7 }, () => WindowEvent.schemaVersions.MessageAppended)
      )
      const log = yield* EventLog.EventLog
      yield* log.append("imported", events, "no_stream")
      const ctx = yield* ContextService.ContextService
      assert.deepStrictEqual(yield* ctx.load("imported"), Window.replay(events))
    }).pipe(Effect.provide(live()))
  )

  it.effect("a malformed v1 event fails after upcasting with the path in the current shape and its line", () =>
    Effect.gen(function* () {
      const line = JSON.stringify({
        type: "MessageAppended",
        schemaVersion: 1,
        data: {
          _tag: "MessageAppended",
          id: "e1",
          message: { id: "m1", role: "assistant", content: "x", toolCalls: [{ id: "c1" }], tokens: 1 }
        }
      })
      const error = yield* failureOf(EventCodec.decodeJsonLines(`${fixture.trimEnd()}\n${line}`))
      assert.strictEqual(error.line, 13)
      assert.strictEqual(error.schemaVersion, 1)
      assert.strictEqual(error.path, "message.parts.1.name")
    })
  )
})

describe("upcasting the version-1 MessagesInjected and HistoryCleared", () => {
  it.effect(
    "v1 events decode with the behaviour they had: injections replaced history too, clears were history-only",
    () =>
      Effect.gen(function* () {
        const injected = yield* EventCodec.decode({
          type: "MessagesInjected",
          schemaVersion: 1,
          data: '{"_tag":"MessagesInjected","id":"e1","kind":"recall","messages":[]}'
        })
        assert.deepStrictEqual(injected, {
          _tag: "MessagesInjected",
          id: "e1",
          kind: "recall",
          messages: [],
          replacesInHistory: true
        })
        const cleared = yield* EventCodec.decode({
          type: "HistoryCleared",
          schemaVersion: 1,
          data: '{"_tag":"HistoryCleared","id":"e2"}'
        })
        assert.deepStrictEqual(cleared, { _tag: "HistoryCleared", id: "e2", scope: "history" })
        // A v2 event without its new field is malformed, and the error names it.
        const missing = yield* Effect.flip(
          EventCodec.decode({ type: "HistoryCleared", schemaVersion: 2, data: '{"_tag":"HistoryCleared","id":"e3"}' })
        )
        assert.strictEqual(missing.path, "scope")
      })
  )
})
