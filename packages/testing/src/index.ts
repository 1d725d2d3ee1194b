/**
 * The conformance suite every `EventLog` backend must pass, plus test helpers.
 *
 * ```ts
 * import { eventLogConformance } from "@ctxlog/testing"
 * eventLogConformance("sqlite file", SqliteEventLog.layer({ filename }))
 * ```
 *
 * Needs `vitest` (a peer: 3.2 and later majors; the suite uses only `describe`, `it`, `beforeAll`,
 * `afterAll` and `assert`, and runs each test's effect on a runtime built once from the layer).
 * Was `@ctxlog/core/testing` before 0.4.0: the test runner peer now lives here, not in the library.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { EventHash, EventLog as EventLogModule, type WindowEvent as WindowEventModule } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import { v7 as uuidv7 } from "uuid"
import { afterAll, assert, beforeAll, describe, it as vitestIt } from "vitest"

const EventLog = EventLogModule.EventLog
type EventLog = EventLogModule.EventLog
type StreamId = EventLogModule.StreamId
type ExpectedVersion = EventLogModule.ExpectedVersion
type WindowEvent = WindowEventModule.WindowEvent
type EventLogService = EventLogModule.EventLog.Service

/** A stream id no other test uses (durable backends may reuse a database). @since 0.1.0 */
export const freshStream = (label = "stream"): StreamId => `${label}-${randomUUID()}`

/** `count` MessageAppended events with fresh UUIDv7 ids. @since 0.1.0 */
export const sampleEvents = (count: number, note = "hello"): ReadonlyArray<WindowEvent> =>
  Array.from({ length: count }, (_, index) => {
    const id = uuidv7()
    return {
      _tag: "MessageAppended",
      id,
      message: {
        id: `m-${id}`,
        role: index % 2 === 0 ? "user" : "assistant",
        kind: "chat",
        parts: [{ type: "text", text: `${note} ${index}` }],
        tokens: 3
      }
    }
  })

/** The transcripts folder and its files (`@ctxlog/core/transcripts`, honouring `CTXLOG_TRANSCRIPTS`). @since 0.4.0 */
export { readTranscript, transcriptFiles, transcriptsDir } from "@ctxlog/core/transcripts"

/** Checks of ctxlog's OpenTelemetry GenAI spans (chat, compaction, provenance). @since 0.8.0 */
export * as GenAiSpans from "./GenAiSpans.js"

const readStream = (log: EventLogService, stream: StreamId) =>
  Stream.runCollect(log.read(stream)).pipe(Effect.map(Chunk.toReadonlyArray))

const countAll = (log: EventLogService) => Stream.runCount(log.readAll()).pipe(Effect.map((count) => count))

/** What must not change when an append fails. */
const observe = (log: EventLogService, stream: StreamId) =>
  Effect.all({ version: log.version(stream), events: readStream(log, stream), total: countAll(log) })

const expectConflict = (
  log: EventLogService,
  stream: StreamId,
  events: ReadonlyArray<WindowEvent>,
  expected: ExpectedVersion,
  actual: number
) =>
  Effect.gen(function* () {
    const before = yield* observe(log, stream)
    const result = yield* Effect.either(log.append(stream, events, expected))
    assert.isTrue(Either.isLeft(result), `append with expected ${expected} should fail`)
    if (Either.isLeft(result)) {
      assert.strictEqual(result.left._tag, "ConcurrencyConflict")
      if (result.left._tag === "ConcurrencyConflict") {
        assert.strictEqual(result.left.stream, stream)
        assert.deepStrictEqual(result.left.expected, expected)
        assert.strictEqual(result.left.actual, actual)
      }
    }
    const after = yield* observe(log, stream)
    assert.strictEqual(after.version, before.version)
    assert.strictEqual(after.total, before.total)
    assert.deepStrictEqual(
      after.events.map((envelope) => envelope.eventId),
      before.events.map((envelope) => envelope.eventId)
    )
  })

/**
 * Register the conformance suite for one backend. The layer is built once for the suite; every test
 * uses its own stream.
 * @since 0.1.0
 */
export const eventLogConformance = <E>(label: string, live: Layer.Layer<EventLog, E>): void => {
  describe(`EventLog conformance: ${label}`, { timeout: 120_000 }, () => {
    let runtime: ManagedRuntime.ManagedRuntime<EventLog, E> | undefined
    beforeAll(async () => {
      runtime = ManagedRuntime.make(live)
      await runtime.runtime()
    }, 120_000)
    afterAll(async () => {
      await runtime?.dispose()
    })
    // The shape of @effect/vitest's `it.effect`, on plain vitest (so every vitest major works).
    const it = {
      effect: (name: string, test: () => Effect.Effect<unknown, unknown, EventLog>) =>
        vitestIt(name, async () => {
          if (runtime === undefined) throw new Error("the conformance runtime was not built")
          await runtime.runPromise(test())
        })
    }
    it.effect("appends and reads back a stream in order, with a valid hash chain", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        const events = sampleEvents(3)
        const result = yield* log.append(stream, events, "no_stream", { actor: "conformance", turn: 1 })
        assert.strictEqual(result.nextExpectedVersion, 3)
        assert.strictEqual(result.written, 3)
        const read = yield* readStream(log, stream)
        assert.deepStrictEqual(
          read.map((envelope) => envelope.version),
          [1, 2, 3]
        )
        assert.deepStrictEqual(
          read.map((envelope) => envelope.event),
          events
        )
        assert.deepStrictEqual(
          read.map((envelope) => envelope.eventId),
          events.map((event) => event.id)
        )
        for (const envelope of read) {
          assert.strictEqual(envelope.stream, stream)
          assert.strictEqual(envelope.type, "MessageAppended")
          assert.strictEqual(envelope.metadata.actor, "conformance")
        }
        const positions = read.map((envelope) => envelope.position)
        assert.isTrue(positions.every((position, index) => index === 0 || position > (positions[index - 1] ?? 0)))
        assert.strictEqual(result.lastPosition, positions[2])
        const verified = EventHash.verify(
          read.map((envelope) => ({
            stream: envelope.stream,
            version: envelope.version,
            eventId: envelope.eventId,
            type: envelope.type,
            schemaVersion: envelope.schemaVersion,
            data: envelope.data,
            hash: envelope.hash
          }))
        )
        assert.isTrue(verified.ok, "hash chain must verify")
        assert.strictEqual(yield* log.version(stream), 3)
        // The append reports the stored hash of its last event: a cached window's catch-up links from it.
        assert.strictEqual(result.lastHash, read[2]?.hash)
      })
    )

    it.effect("continues a stream at its exact version and reads from a version", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(2), "no_stream")
        const next = yield* log.append(stream, sampleEvents(2), 2)
        assert.strictEqual(next.nextExpectedVersion, 4)
        const tail = yield* Stream.runCollect(log.read(stream, { from: 3 })).pipe(Effect.map(Chunk.toReadonlyArray))
        assert.deepStrictEqual(
          tail.map((envelope) => envelope.version),
          [3, 4]
        )
        const middle = yield* Stream.runCollect(log.read(stream, { from: 2, to: 3 })).pipe(
          Effect.map(Chunk.toReadonlyArray)
        )
        assert.deepStrictEqual(
          middle.map((envelope) => envelope.version),
          [2, 3]
        )
      })
    )

    it.effect("rejects a stale expected version and writes nothing", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(3), "no_stream")
        yield* expectConflict(log, stream, sampleEvents(1), 1, 3)
      })
    )

    it.effect("rejects a future expected version and writes nothing", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(2), "no_stream")
        yield* expectConflict(log, stream, sampleEvents(1), 7, 2)
      })
    )

    it.effect("an exact expected version 0 on an existing stream conflicts", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(1), 0)
        yield* expectConflict(log, stream, sampleEvents(1), 0, 1)
      })
    )

    it.effect("no_stream twice: the second append conflicts", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(1), "no_stream")
        yield* expectConflict(log, stream, sampleEvents(1), "no_stream", 1)
      })
    )

    it.effect("stream_exists fails on a missing stream and succeeds on an existing one", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* expectConflict(log, stream, sampleEvents(1), "stream_exists", 0)
        yield* log.append(stream, sampleEvents(1), "no_stream")
        const result = yield* log.append(stream, sampleEvents(1), "stream_exists")
        assert.strictEqual(result.nextExpectedVersion, 2)
      })
    )

    it.effect("any appends without a check", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(1), "any")
        const result = yield* log.append(stream, sampleEvents(2), "any")
        assert.strictEqual(result.nextExpectedVersion, 3)
      })
    )

    it.effect("an empty batch writes nothing and does not create the stream", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        const before = yield* countAll(log)
        const result = yield* log.append(stream, [], "no_stream")
        assert.strictEqual(result.written, 0)
        assert.strictEqual(result.nextExpectedVersion, 0)
        assert.strictEqual(yield* log.version(stream), 0)
        assert.strictEqual(yield* countAll(log), before)
        assert.isFalse((yield* log.streams()).some((info) => info.stream === stream))
        yield* log.append(stream, sampleEvents(1), "no_stream")
        const empty = yield* log.append(stream, [], 1)
        assert.strictEqual(empty.nextExpectedVersion, 1)
        yield* expectConflict(log, stream, [], 5, 1)
      })
    )

    it.effect("retrying an append whose ids are all present succeeds and writes nothing", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        const first = sampleEvents(2)
        yield* log.append(stream, first, "no_stream")
        yield* log.append(stream, sampleEvents(1), 2)
        const before = yield* observe(log, stream)
        // The retry carries the expected version of the original call, now stale.
        const retried = yield* log.append(stream, first, "no_stream")
        assert.strictEqual(retried.written, 0)
        assert.strictEqual(retried.nextExpectedVersion, 2)
        const after = yield* observe(log, stream)
        assert.strictEqual(after.version, before.version)
        assert.strictEqual(after.total, before.total)
      })
    )

    it.effect("ids partly present fail with DuplicateEventIds and write nothing", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        const first = sampleEvents(2)
        yield* log.append(stream, first, "no_stream")
        const before = yield* observe(log, stream)
        const mixed = [...first.slice(1), ...sampleEvents(1)]
        const result = yield* Effect.either(log.append(stream, mixed, 2))
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) assert.strictEqual(result.left._tag, "DuplicateEventIds")
        const after = yield* observe(log, stream)
        assert.strictEqual(after.version, before.version)
        assert.strictEqual(after.total, before.total)
      })
    )

    it.effect("ids of another stream, or repeated within a batch, are rejected", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const a = freshStream()
        const b = freshStream()
        const events = sampleEvents(1)
        yield* log.append(a, events, "no_stream")
        const before = yield* countAll(log)
        const foreign = yield* Effect.either(log.append(b, events, "no_stream"))
        assert.isTrue(Either.isLeft(foreign) && foreign.left._tag === "DuplicateEventIds")
        const [event] = sampleEvents(1)
        if (event === undefined) return assert.fail("no sample event")
        const repeated = yield* Effect.either(log.append(b, [event, event], "no_stream"))
        assert.isTrue(Either.isLeft(repeated) && repeated.left._tag === "DuplicateEventIds")
        assert.strictEqual(yield* countAll(log), before)
        assert.strictEqual(yield* log.version(b), 0)
      })
    )

    it.effect("hostile input is refused with a typed error and writes nothing (Validation)", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const [good] = sampleEvents(1)
        if (good === undefined || good._tag !== "MessageAppended") return assert.fail("no sample event")
        const withPart = (part: unknown): WindowEvent =>
          // The port is typed; hostile values reach it from untyped callers (JSON imports, plain JS).
          ({ ...good, message: { ...good.message, parts: [part] } }) as unknown as WindowEvent
        const circular: { [key: string]: unknown } = {}
        circular.self = circular
        const cases: ReadonlyArray<readonly [string, StreamId, WindowEvent, string]> = [
          ["empty id", "", good, "InvalidInput"],
          ["1 MB id", "x".repeat(1024 * 1024), good, "InvalidInput"],
          ["id with NUL", "a\u0000b", good, "InvalidInput"],
          ["NUL in text", freshStream(), withPart({ type: "text", text: "a\u0000b" }), "EventEncodeError"],
          ["lone surrogate", freshStream(), withPart({ type: "text", text: "a\ud800b" }), "EventEncodeError"],
          [
            "BigInt argument",
            freshStream(),
            withPart({ type: "tool_call", id: "c", name: "n", input: { n: 1n } }),
            "EventEncodeError"
          ],
          [
            "Date argument",
            freshStream(),
            withPart({ type: "tool_call", id: "c", name: "n", input: { d: new Date(0) } }),
            "EventEncodeError"
          ],
          [
            "circular argument",
            freshStream(),
            withPart({ type: "tool_call", id: "c", name: "n", input: circular }),
            "EventEncodeError"
          ]
        ]
        const before = yield* countAll(log)
        for (const [label, stream, event, tag] of cases) {
          const result = yield* Effect.either(log.append(stream, [event], "any"))
          assert.isTrue(Either.isLeft(result), `${label} was accepted`)
          if (Either.isLeft(result)) assert.strictEqual(result.left._tag, tag, label)
        }
        assert.strictEqual(yield* countAll(log), before)
        // Every other control character round-trips.
        const stream = freshStream()
        const text = "\u001b[31mred\u001b[0m\r\n\t\u0007\u007f\u0085\u2028 😀"
        const event = withPart({ type: "text", text })
        yield* log.append(stream, [event], "no_stream")
        assert.deepStrictEqual(
          (yield* readStream(log, stream)).map((envelope) => envelope.event),
          [event]
        )
      })
    )

    it.effect("a malformed event fails with EventEncodeError and writes nothing", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(1), "no_stream")
        const before = yield* observe(log, stream)
        const [good] = sampleEvents(1)
        if (good === undefined) return assert.fail("no sample event")
        const bad: unknown = { ...good, id: uuidv7(), message: { ...good, parts: [{ type: "picture" }] } }
        const result = yield* Effect.either(
          // The port is typed; a malformed value can still arrive from untyped callers (JSON imports).
          log.append(stream, [good, bad] as ReadonlyArray<WindowEvent>, 1)
        )
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "EventEncodeError")
          if (result.left._tag === "EventEncodeError") assert.strictEqual(result.left.index, 1)
        }
        const after = yield* observe(log, stream)
        assert.strictEqual(after.version, before.version)
        assert.strictEqual(after.total, before.total)
      })
    )

    it.effect("concurrent appends at one expected version: exactly one wins, the rest conflict", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(1), "no_stream")
        const before = yield* countAll(log)
        const results = yield* Effect.all(
          Array.from({ length: 10 }, (_, index) => Effect.either(log.append(stream, sampleEvents(2, `w${index}`), 1))),
          { concurrency: "unbounded" }
        )
        const wins = results.filter(Either.isRight)
        const conflicts = results.filter(
          (result) => Either.isLeft(result) && result.left._tag === "ConcurrencyConflict"
        )
        assert.strictEqual(wins.length, 1)
        assert.strictEqual(conflicts.length, 9)
        assert.strictEqual(yield* log.version(stream), 3)
        assert.strictEqual(yield* countAll(log), before + 2)
      })
    )

    it.effect("readAll returns events in global order after a position", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const a = freshStream()
        const b = freshStream()
        const first = yield* log.append(a, sampleEvents(2), "no_stream")
        yield* log.append(b, sampleEvents(1), "no_stream")
        yield* log.append(a, sampleEvents(1), 2)
        const after = yield* Stream.runCollect(log.readAll({ after: (first.lastPosition ?? 0) - 2 })).pipe(
          Effect.map(Chunk.toReadonlyArray)
        )
        const mine = after.filter((envelope) => envelope.stream === a || envelope.stream === b)
        assert.deepStrictEqual(
          mine.map((envelope) => [envelope.stream, envelope.version]),
          [
            [a, 1],
            [a, 2],
            [b, 1],
            [a, 3]
          ]
        )
        const positions = after.map((envelope) => envelope.position)
        assert.isTrue(positions.every((position, index) => index === 0 || position > (positions[index - 1] ?? 0)))
        const limited = yield* Stream.runCollect(log.readAll({ after: first.lastPosition ?? 0, limit: 1 })).pipe(
          Effect.map(Chunk.toReadonlyArray)
        )
        assert.strictEqual(limited.length, 1)
        assert.isTrue((limited[0]?.position ?? 0) > (first.lastPosition ?? 0))
      })
    )

    it.effect("lists streams with their versions", () =>
      Effect.gen(function* () {
        const log = yield* EventLog
        const stream = freshStream()
        yield* log.append(stream, sampleEvents(4), "no_stream")
        const info = (yield* log.streams()).find((candidate) => candidate.stream === stream)
        assert.isDefined(info)
        assert.strictEqual(info?.version, 4)
        assert.isTrue((info?.updatedAt ?? 0) >= (info?.createdAt ?? 0))
      })
    )
  })
}
