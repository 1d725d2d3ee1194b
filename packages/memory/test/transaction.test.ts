// A SQLite write transaction holds the store's one connection for its body (ADR 0158): the body is an
// ordinary effect in the caller's fiber (no nested `runSyncExit`), BEGIN IMMEDIATE its acquire and
// ROLLBACK its release. These tests pin what that must keep: a failed body, a failed COMMIT's caller and an
// interrupted body write nothing; no other fiber's statement runs inside the open transaction (a read
// waits and sees what committed, an append waits and is not rolled back with it); the body's own reads
// join it; a nested transaction or an append inside one is refused with a StoreError.
import { EventCodec, EventLog, type WindowEvent } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type { Backend } from "../src/internal/backend.js"
import * as SqliteBackend from "../src/internal/sqliteBackend.js"
import type { NewEntry } from "../src/internal/statements.js"
import { tempFile } from "./support/stores.js"

const open = Effect.suspend(() =>
  SqliteBackend.make({ filename: tempFile(), durability: "normal", busyTimeoutMs: 5000 })
)

const entry = (ref: string): NewEntry => ({
  source: "document",
  stream_id: null,
  owner: "o",
  ref,
  document_id: "doc",
  kind: "document_rag",
  role: "system",
  text: `chunk ${ref} about the zeppelin`,
  tokens: 5,
  global_position: null,
  created_at: 1
})

const entries = (backend: Backend) =>
  backend.query("count entries", (db) =>
    db
      .selectFrom("recall_entries")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n))
  )

const events = (backend: Backend, stream: string) =>
  backend.query("count events", (db) =>
    db
      .selectFrom("events")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("stream_id", "=", stream)
      .executeTakeFirstOrThrow()
      .then((row) => Number(row.n))
  )

const message: WindowEvent.WindowEvent = {
  _tag: "MessageAppended",
  id: "tx-e1",
  message: { id: "tx-m1", role: "user", kind: "chat", parts: [{ type: "text", text: "hello" }], tokens: 1 }
}

const appendOne = (backend: Backend, stream: string) => {
  const stored = EventCodec.encodeAllEither([message])
  if (Either.isLeft(stored)) return Effect.die(stored.left)
  return backend.append({
    stream,
    expected: "no_stream",
    ids: [message.id],
    stored: stored.right,
    metadata: "{}",
    now: 1
  })
}

/** Let pending promise callbacks and other fibers run (an ungated statement would run here). */
const settle = Effect.zipRight(
  Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve))),
  Effect.yieldNow()
)

describe("SQLite write transactions", () => {
  it.scoped("a body that fails rolls back: nothing it wrote is kept, and the caller gets its error", () =>
    Effect.gen(function* () {
      const backend = yield* open
      const exit = yield* Effect.exit(
        backend.transact("test", (tx) =>
          Effect.zipRight(tx.indexEntries([entry("0"), entry("1")]), Effect.fail("body failed" as const))
        )
      )
      assert.deepStrictEqual(exit, Exit.fail("body failed" as const))
      assert.strictEqual(yield* entries(backend), 0)
      // The connection is usable again: the next transaction commits.
      yield* backend.transact("test", (tx) => tx.indexEntry(entry("2")))
      assert.strictEqual(yield* entries(backend), 1)
    })
  )

  it.scoped("an interrupted body rolls back, and the connection is free afterwards", () =>
    Effect.gen(function* () {
      const backend = yield* open
      const written = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(
        backend.transact("test", (tx) =>
          Effect.zipRight(
            Effect.zipRight(tx.indexEntry(entry("0")), Deferred.succeed(written, undefined)),
            Effect.never
          )
        )
      )
      yield* Deferred.await(written)
      const exit = yield* Fiber.interrupt(fiber)
      assert.isTrue(Exit.isInterrupted(exit))
      assert.strictEqual(yield* entries(backend), 0)
      yield* backend.transact("test", (tx) => tx.indexEntry(entry("1")))
      assert.strictEqual(yield* entries(backend), 1)
    })
  )

  it.scoped("the body's reads join it; another fiber's read waits for the end and sees only what committed", () =>
    Effect.gen(function* () {
      const backend = yield* open
      const written = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      const transaction = yield* Effect.fork(
        Effect.exit(
          backend.transact("test", (tx) =>
            Effect.gen(function* () {
              yield* tx.indexEntry(entry("0"))
              // Joined: the body reads its own uncommitted row (waiting for the permit would never end).
              const own = yield* entries(backend)
              yield* Deferred.succeed(written, undefined)
              yield* Deferred.await(go)
              return yield* Effect.fail(own)
            })
          )
        )
      )
      yield* Deferred.await(written)
      const reader = yield* Effect.fork(entries(backend))
      yield* settle
      // Still waiting: had it run now, on the shared connection, it would have read the uncommitted row.
      assert.isTrue((yield* Fiber.poll(reader))._tag === "None")
      yield* Deferred.succeed(go, undefined)
      assert.deepStrictEqual(yield* Fiber.join(transaction), Exit.fail(1))
      assert.strictEqual(yield* Fiber.join(reader), 0)
    })
  )

  it.scoped("an append from another fiber waits for the transaction and is not rolled back with it", () =>
    Effect.gen(function* () {
      const backend = yield* open
      const written = yield* Deferred.make<void>()
      const go = yield* Deferred.make<void>()
      const transaction = yield* Effect.fork(
        Effect.exit(
          backend.transact("test", (tx) =>
            Effect.gen(function* () {
              yield* tx.indexEntry(entry("0"))
              yield* Deferred.succeed(written, undefined)
              yield* Deferred.await(go)
              return yield* Effect.fail("rolled back" as const)
            })
          )
        )
      )
      yield* Deferred.await(written)
      const appender = yield* Effect.fork(appendOne(backend, "s"))
      yield* settle
      yield* Deferred.succeed(go, undefined)
      assert.deepStrictEqual(yield* Fiber.join(transaction), Exit.fail("rolled back" as const))
      const result = yield* Fiber.join(appender)
      assert.strictEqual(result.written, 1)
      assert.strictEqual(yield* events(backend, "s"), 1)
      assert.strictEqual(yield* entries(backend), 0)
    })
  )

  it.scoped(
    "a transaction or an append inside a transaction is refused with a StoreError, and nothing is written",
    () =>
      Effect.gen(function* () {
        const backend = yield* open
        const nested = yield* Effect.flip(
          backend.transact("outer", (tx) =>
            Effect.zipRight(
              tx.indexEntry(entry("0")),
              backend.transact("inner", (inner) => inner.indexEntry(entry("1")))
            )
          )
        )
        assert.instanceOf(nested, EventLog.StoreError)
        assert.strictEqual(nested.operation, "inner")
        assert.include(nested.detail, "refused inside a write transaction")
        const appended = yield* Effect.flip(
          backend.transact("outer", (tx) => Effect.zipRight(tx.indexEntry(entry("2")), appendOne(backend, "s")))
        )
        assert.strictEqual(appended._tag, "StoreError")
        assert.include(appended._tag === "StoreError" ? appended.detail : "", "refused inside a write transaction")
        assert.strictEqual(yield* entries(backend), 0)
        assert.strictEqual(yield* events(backend, "s"), 0)
      })
  )
})
