// LogReader, the read-only door the inspector uses (issue 22, items 2 and 3), on SQLite and PostgreSQL:
// opening writes nothing (a missing file stays missing); reads are verified by default and fail with
// TamperDetected at the first bad version; a truncated tail that core's `EventHash.verify` alone calls
// ok is caught by the `streams` row, and with the row fixed, by a head kept elsewhere; `unverified`
// reads serve the log as stored; `verify` reports every problem instead of failing.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { EventHash, EventLog, Window } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { LogReader, PostgresEventLog, SnapshotRepository, SnapshotStore, SqliteEventLog } from "../src/index.js"
import { disableTriggers, forgeEvent, quote } from "./support/forge.js"
import { freshDatabase } from "./support/postgres.js"
import { postgresRawLayer, RawSql, sqliteRawLayer, tempFile } from "./support/stores.js"

interface Target {
  readonly write: Effect.Effect<Context.Context<SqliteEventLog.Services>, unknown, Scope.Scope>
  readonly read: (options: LogReader.Options) => Effect.Effect<LogReader.LogReader.Service, unknown, Scope.Scope>
  readonly raw: Effect.Effect<RawSql["Type"], unknown, Scope.Scope>
}

const sqliteTarget = Effect.sync((): Target => {
  const filename = tempFile()
  return {
    write: SqliteEventLog.make({ filename }),
    read: (options) => LogReader.makeSqlite({ filename, ...options }),
    raw: Effect.map(Layer.build(sqliteRawLayer(filename)), Context.get(RawSql))
  }
})

const postgresTarget = Effect.map(
  freshDatabase("reader"),
  (url): Target => ({
    write: PostgresEventLog.make({ url, maxConnections: 2 }),
    read: (options) => LogReader.makePostgres({ url, ...options }),
    raw: Effect.map(Layer.build(postgresRawLayer(url)), Context.get(RawSql))
  })
)

/** Write 6 events to a fresh stream. */
const seed = (target: Target) =>
  Effect.scoped(
    Effect.gen(function* () {
      const log = Context.get(yield* target.write, EventLog.EventLog)
      const stream = freshStream("reader")
      yield* log.append(stream, sampleEvents(6), "no_stream")
      return stream
    })
  )

const failure = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) =>
  Effect.map(Effect.either(effect), (result) => (Either.isLeft(result) ? result.left : undefined))

for (const [label, target] of [
  ["SQLite", sqliteTarget],
  ["PostgreSQL", postgresTarget]
] as const) {
  describe(`LogReader on ${label}`, () => {
    it.scoped("an intact stream reads, verified, with its head", () =>
      Effect.gen(function* () {
        const db = yield* target
        const stream = yield* seed(db)
        const reader = yield* db.read({})
        assert.strictEqual(reader.integrity, "verified")
        assert.strictEqual(yield* reader.version(stream), 6)
        assert.lengthOf(yield* reader.events(stream, { from: 2, to: 4 }), 3)
        const checked = yield* reader.verify(stream)
        assert.deepStrictEqual(checked.integrity.problems, [])
        assert.strictEqual(checked.integrity.head?.version, 6)
        assert.strictEqual(checked.integrity.head?.hash, checked.events[5]?.hash)
        assert.deepStrictEqual(
          (yield* reader.streams()).map((info) => info.stream),
          [stream]
        )
      })
    )

    it.scoped(
      "windowAt: from the snapshot at or before the version, else from the first event; a full replay's window",
      () =>
        Effect.gen(function* () {
          const db = yield* target
          const stream = freshStream("reader")
          const events = sampleEvents(6)
          yield* Effect.scoped(
            Effect.gen(function* () {
              const context = yield* db.write
              const log = Context.get(context, EventLog.EventLog)
              yield* log.append(stream, events.slice(0, 3), "no_stream")
              yield* Context.get(context, SnapshotStore.SnapshotStore).save({
                stream,
                projection: SnapshotRepository.projection,
                projectionVersion: SnapshotRepository.projectionVersion,
                version: 3,
                state: JSON.stringify(Window.replay(events.slice(0, 3)))
              })
              yield* log.append(stream, events.slice(3), 3)
            })
          )
          for (const integrity of ["verified", "unverified"] as const) {
            const reader = yield* db.read({ integrity })
            for (const at of [0, 2, 3, 5, 6]) {
              const { window, from } = yield* LogReader.windowAt(reader, stream, at)
              assert.deepStrictEqual(window, Window.replay(events.slice(0, at)))
              assert.strictEqual(from, at >= 3 ? 3 : 0)
            }
            assert.strictEqual((yield* LogReader.snapshotWindow(reader, stream))?.version, 3)
          }
        })
    )

    it.scoped("a truncated tail: EventHash.verify alone says ok; the row, then a kept head, catch it", () =>
      Effect.gen(function* () {
        const db = yield* target
        const stream = yield* seed(db)
        const kept = (yield* (yield* db.read({})).verify(stream)).integrity.head
        assert.isDefined(kept)
        const raw = yield* db.raw
        yield* disableTriggers(raw)
        yield* raw.exec(`delete from events where stream_id = ${quote(stream)} and stream_version > 4`)
        const reader = yield* db.read({})
        const events = yield* (yield* db.read({ integrity: "unverified" })).events(stream)
        // The library's chain check over what is left: a prefix of a chain is a valid chain.
        assert.isTrue(EventHash.verify(events).ok)
        const rowLeft = yield* failure(reader.events(stream))
        assert.strictEqual(rowLeft?._tag, "TamperDetected")
        assert.include(rowLeft?.message ?? "", `stream "${stream}" version 5: stream-row`)
        // The row rewritten to match: unkeyed, only the head kept elsewhere tells.
        const [last] = yield* raw.rows(
          `select hash from events where stream_id = ${quote(stream)} and stream_version = 4`
        )
        yield* raw.exec(
          `update streams set version = 4, head_hash = ${quote(String(last?.hash))} where stream_id = ${quote(stream)}`
        )
        assert.strictEqual(yield* (yield* db.read({})).version(stream), 4)
        const anchored = yield* db.read({ expectedHeads: new Map([[stream, kept ?? { version: 0, hash: "" }]]) })
        const caught = yield* failure(anchored.version(stream))
        assert.include(caught?.message ?? "", `stream "${stream}" version 5: expected-head`)
        const report = yield* anchored.verify(stream, kept === undefined ? {} : { expectedHead: kept })
        assert.deepStrictEqual(
          report.integrity.problems.map((problem) => problem.check),
          ["expected-head"]
        )
      })
    )

    it.scoped("an edited event: verified reads fail at its version, unverified reads serve it", () =>
      Effect.gen(function* () {
        const db = yield* target
        const stream = yield* seed(db)
        const raw = yield* db.raw
        yield* disableTriggers(raw)
        yield* forgeEvent(raw, stream, 3, "hello", "none")
        const damaged = yield* failure((yield* db.read({})).events(stream, { from: 1, to: 2 }))
        assert.include(damaged?.message ?? "", `stream "${stream}" version 3: hash-chain`)
        const stored = yield* (yield* db.read({ integrity: "unverified" })).events(stream)
        assert.include(stored[2]?.data ?? "", "FORGED")
      })
    )
  })
}

describe("LogReader on a missing SQLite file", () => {
  it.scoped("is DatabaseNotFound and creates nothing", () =>
    Effect.gen(function* () {
      const filename = join(tempFile(), "..", "missing.db")
      const error = yield* failure(LogReader.makeSqlite({ filename }))
      assert.strictEqual(error?._tag, "DatabaseNotFound")
      assert.isFalse(existsSync(filename))
    })
  )
})
