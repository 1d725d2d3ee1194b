/**
 * SQLite keeps, beside a snapshot's seal over its JSON text, the SHA-256 of the bytes it stores (the
 * deflated BLOB): an unkeyed load checks those bytes, about a tenth of the text, instead of hashing the
 * text again (ADR 0086). Counted, not timed. What an edit of the row does to the load is checked here for
 * the edits that separate the two checks; the seal itself, keyed seals and PostgreSQL: `tamper.test.ts`.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib"
import { EventHash, EventLog, Message, Window, type WindowEvent, WindowRepository, WorkCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { SqliteEventLog } from "../src/index.js"
import { counters as metrics } from "../src/internal/workCounters.js"
import { tempFile } from "./support/stores.js"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

const events = 400

const event = (n: number): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `0190a000-0000-7000-8000-${String(n).padStart(12, "0")}`,
  message: {
    id: `m-${n}`,
    role: n % 2 === 0 ? "user" : "assistant",
    kind: "chat",
    parts: [Message.text(`message ${n}: ${"context window agent tool result summary ".repeat(6)}`)],
    tokens: 40
  }
})

/** A file holding one stream of `events` events and a snapshot at its last version. */
const snapshotted = () =>
  Effect.gen(function* () {
    const filename = tempFile()
    const layer = SqliteEventLog.layer({ filename, durability: "normal", snapshotEvery: events })
    yield* Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      const repository = yield* WindowRepository.WindowRepository
      yield* log.append(
        "s",
        Array.from({ length: events }, (_, k) => event(k + 1)),
        "no_stream"
      )
      yield* repository.committed("s", yield* repository.load("s"))
    }).pipe(Effect.provide(Layer.fresh(layer)))
    return { filename, layer }
  })

/** A load of "s" by a store opened afresh (nothing cached). */
const loadFresh = (layer: Layer.Layer<SqliteEventLog.Services, SqliteEventLog.OpenError>) =>
  Effect.either(
    Effect.flatMap(WindowRepository.WindowRepository, (repository) => repository.load("s")).pipe(
      Effect.provide(Layer.fresh(layer))
    )
  )

/** Run `edit` on the snapshot row through a connection of its own. */
const editRow = (filename: string, edit: (db: BetterSqlite3.Database) => void) =>
  Effect.sync(() => {
    const db = new BetterSqlite3(filename)
    try {
      edit(db)
    } finally {
      db.close()
    }
  })

const row = (db: BetterSqlite3.Database) =>
  db.prepare("select state, state_hash, stored_hash from snapshots where stream_id = 's'").get() as {
    readonly state: Uint8Array
    readonly state_hash: string
    readonly stored_hash: string | null
  }

describe("the digest of a snapshot's stored bytes", () => {
  it.effect("a load hashes the deflated bytes, not the text, and restores the window a replay folds", () =>
    Effect.gen(function* () {
      const { filename, layer } = yield* snapshotted()
      const stored = yield* Effect.sync(() => {
        const db = new BetterSqlite3(filename, { readonly: true })
        try {
          return row(db)
        } finally {
          db.close()
        }
      })
      assert.instanceOf(stored.state, Uint8Array)
      assert.isString(stored.stored_hash)
      const text = inflateRawSync(stored.state).toString("utf8")
      reset()
      const loaded = yield* loadFresh(layer)
      const hashed = counters.snapshotBytesHashed
      console.log(
        `snapshot of ${events} messages: text ${text.length} chars, stored ${stored.state.length} bytes; a load hashed ${hashed}`
      )
      assert.isTrue(Either.isRight(loaded))
      if (Either.isRight(loaded)) {
        assert.strictEqual(loaded.right.version, events)
        assert.deepStrictEqual(loaded.right, Window.replay(Array.from({ length: events }, (_, k) => event(k + 1))))
      }
      assert.strictEqual(hashed, stored.state.length)
      assert.isBelow(hashed, text.length / 4)
    })
  )

  it.effect("stored bytes re-deflated from edited text fail the load, even with the text's seal recomputed", () =>
    Effect.gen(function* () {
      const { filename, layer } = yield* snapshotted()
      yield* editRow(filename, (db) => {
        const text = inflateRawSync(row(db).state).toString("utf8")
        const edited = text.replace("message 1:", "message X:")
        assert.notStrictEqual(edited, text)
        db.prepare("update snapshots set state = ?, state_hash = ? where stream_id = 's'").run(
          deflateRawSync(edited),
          EventHash.sha256(edited)
        )
      })
      const loaded = yield* loadFresh(layer)
      assert.isTrue(Either.isLeft(loaded))
      if (Either.isLeft(loaded)) {
        assert.strictEqual(loaded.left._tag, "TamperDetected")
        assert.include(loaded.left.message, "does not match its hash")
      }
    })
  )

  it.effect("a flipped byte of the BLOB fails the load; a wrong digest fails it too", () =>
    Effect.gen(function* () {
      const flipped = yield* snapshotted()
      yield* editRow(flipped.filename, (db) => {
        const bytes = Buffer.from(row(db).state)
        bytes[Math.floor(bytes.length / 2)] = (bytes[Math.floor(bytes.length / 2)] ?? 0) ^ 0x01
        db.prepare("update snapshots set state = ? where stream_id = 's'").run(bytes)
      })
      const wrong = yield* snapshotted()
      yield* editRow(wrong.filename, (db) => {
        db.prepare("update snapshots set stored_hash = ? where stream_id = 's'").run("0".repeat(64))
      })
      for (const { layer } of [flipped, wrong]) {
        const loaded = yield* loadFresh(layer)
        assert.isTrue(Either.isLeft(loaded))
        if (Either.isLeft(loaded)) assert.strictEqual(loaded.left._tag, "TamperDetected")
      }
    })
  )

  it.effect("a row saved before the digest was kept is checked by its seal: intact it loads, edited it fails", () =>
    Effect.gen(function* () {
      const intact = yield* snapshotted()
      yield* editRow(intact.filename, (db) => {
        db.prepare("update snapshots set stored_hash = null where stream_id = 's'").run()
      })
      reset()
      const loaded = yield* loadFresh(intact.layer)
      assert.isTrue(Either.isRight(loaded))
      // Without the digest the text is hashed, as before.
      assert.isAbove(counters.snapshotBytesHashed, 0)
      const edited = yield* snapshotted()
      yield* editRow(edited.filename, (db) => {
        const text = inflateRawSync(row(db).state).toString("utf8")
        db.prepare("update snapshots set state = ?, stored_hash = null where stream_id = 's'").run(
          deflateRawSync(text.replace("message 1:", "message X:"))
        )
      })
      const refused = yield* loadFresh(edited.layer)
      assert.isTrue(Either.isLeft(refused))
      if (Either.isLeft(refused)) assert.strictEqual(refused.left._tag, "TamperDetected")
    })
  )
})
