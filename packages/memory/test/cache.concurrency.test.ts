/**
 * The ContextService window cache under concurrent writers: two services (two connections, two caches) on
 * one SQLite file, two processes on one SQLite file, and two pools on one PostgreSQL database. Every
 * decision must run on the stream's current window: a stale cached window is caught by the append's
 * version check (a write) or by a version read (a decision that writes nothing or is refused).
 */
import { ContextService, Ids, Message, RecallSource, TokenCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { PostgresEventLog, SqliteEventLog } from "../src/index.js"
import { appendAfterLast, brokenLinks } from "./support/chain.js"
import { runChild } from "./support/child.js"
import { freshDatabase } from "./support/postgres.js"
import { tempFile } from "./support/stores.js"

const serviceOver = <E>(log: Layer.Layer<SqliteEventLog.Services, E>) =>
  ContextService.layer().pipe(
    Layer.provideMerge(log),
    Layer.provide(Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerUuidV7, RecallSource.layerEmpty))
  )

/** Two services over two logs of one store: build both, run `body` with them. */
const twoWriters = <E>(
  a: Layer.Layer<SqliteEventLog.Services, E>,
  b: Layer.Layer<SqliteEventLog.Services, E>,
  body: (
    first: ContextService.ContextService.Service,
    second: ContextService.ContextService.Service
  ) => Effect.Effect<void, unknown>
) =>
  Effect.gen(function* () {
    // Built in the caller's scope: the connections stay open while `body` runs.
    const first = Context.get(yield* Layer.build(serviceOver(a)), ContextService.ContextService)
    const second = Context.get(yield* Layer.build(serviceOver(b)), ContextService.ContextService)
    yield* body(first, second)
  })

const interleaved = (
  first: ContextService.ContextService.Service,
  second: ContextService.ContextService.Service,
  stream: string
) =>
  Effect.gen(function* () {
    // A deterministic case first: the second writer's cached window predates the tool call its result answers.
    yield* first.appendMessages(stream, [Message.user("start")])
    yield* second.load(stream)
    yield* first.appendMessages(stream, [Message.assistant("", [Message.toolCall("c1", "read", { path: "a" })])])
    const answered = yield* second.appendMessages(stream, [Message.tool("c1", "contents")])
    assert.strictEqual(answered.window.history.length, 3)
    // A no-op decision on a stale window must not answer stale: the window has 3 messages now.
    const trimmed = yield* second.trimToBudget(stream, 1_000_000)
    assert.strictEqual(trimmed.window.version, 3)
    // Then both write concurrently, each decision naming the message it saw last.
    yield* Effect.all(
      [
        Effect.forEach(
          Array.from({ length: 30 }, (_, i) => `a-${i}`),
          (id) => appendAfterLast(first, stream, id)
        ),
        Effect.forEach(
          Array.from({ length: 30 }, (_, i) => `b-${i}`),
          (id) => appendAfterLast(second, stream, id)
        )
      ],
      { concurrency: 2 }
    )
  })

describe("the window cache under concurrent writers", () => {
  it.live(
    "SQLite, two connections in one process: every decision sees the current window",
    () =>
      Effect.gen(function* () {
        const filename = tempFile()
        const options = { filename, durability: "normal" as const, busyTimeoutMs: 30_000 }
        yield* twoWriters(SqliteEventLog.layer(options), SqliteEventLog.layer(options), (first, second) =>
          interleaved(first, second, "shared")
        )
        const { broken, count } = yield* Effect.provide(brokenLinks("shared"), SqliteEventLog.layer(options))
        assert.deepStrictEqual(broken, [])
        assert.strictEqual(count, 63)
      }).pipe(Effect.scoped),
    120_000
  )

  const fourWriters = <E>(open: () => Layer.Layer<SqliteEventLog.Services, E>) =>
    Effect.gen(function* () {
      const writers = yield* Effect.forEach(["w", "x", "y", "z"], () =>
        Effect.map(Layer.build(serviceOver(open())), (context) => Context.get(context, ContextService.ContextService))
      )
      const outcomes = yield* Effect.all(
        writers.map((writer, w) =>
          Effect.forEach(
            Array.from({ length: 25 }, (_, i) => `w${w}-${i}`),
            (id) => Effect.either(appendAfterLast(writer, "contended", id))
          )
        ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        outcomes.flat().filter((outcome) => outcome._tag === "Left"),
        []
      )
      const { broken, count } = yield* Effect.provide(brokenLinks("contended"), open())
      assert.deepStrictEqual(broken, [])
      assert.strictEqual(count, 100)
    }).pipe(Effect.scoped)

  it.live(
    "SQLite, four writers on one stream: conflicts are retried with backoff until every operation lands",
    () => {
      const options = { filename: tempFile(), durability: "normal" as const, busyTimeoutMs: 30_000 }
      return fourWriters(() => SqliteEventLog.layer(options))
    },
    120_000
  )

  it.live(
    "PostgreSQL, four pools on one stream: conflicts are retried with backoff until every operation lands",
    () => Effect.flatMap(freshDatabase("contended"), (url) => fourWriters(() => PostgresEventLog.layer({ url }))),
    120_000
  )

  it.live(
    "SQLite, two processes: every decision sees the current window",
    () =>
      Effect.gen(function* () {
        const filename = tempFile()
        const child = (label: string) => runChild("chainAppend.ts", [filename, "chain", label, "25"])
        const outputs = yield* Effect.all([child("p"), child("q")], { concurrency: 2 })
        for (const { stdout } of outputs) assert.include(stdout, '"done":25')
        const { broken, count } = yield* Effect.provide(brokenLinks("chain"), SqliteEventLog.layer({ filename }))
        assert.deepStrictEqual(broken, [])
        assert.strictEqual(count, 50)
      }),
    180_000
  )

  it.live(
    "PostgreSQL, two pools: every decision sees the current window",
    () =>
      Effect.gen(function* () {
        const url = yield* freshDatabase("cache")
        yield* twoWriters(PostgresEventLog.layer({ url }), PostgresEventLog.layer({ url }), (first, second) =>
          interleaved(first, second, "shared")
        )
        const { broken, count } = yield* Effect.provide(brokenLinks("shared"), PostgresEventLog.layer({ url }))
        assert.deepStrictEqual(broken, [])
        assert.strictEqual(count, 63)
      }).pipe(Effect.scoped),
    120_000
  )
})
