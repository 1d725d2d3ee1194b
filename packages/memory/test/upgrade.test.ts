import { EventLog, type WindowEvent } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import { Kysely, type Migration, Migrator, SqliteDialect } from "kysely"
import { Erasure, RecallIndex, SqliteEventLog } from "../src/index.js"
import { migrations } from "../src/internal/migrations.js"
import { tempFile } from "./support/stores.js"
import { registerRecallText } from "../src/internal/indexing.js"

// A file created by an earlier release (kysely's Migrator, migrations 0001–0004, the recall index written
// inside each append) opens with today's runner: the new migrations apply in place, the recall
// checkpoint starts after the events the old index already holds (nothing indexed twice), and new
// appends are indexed by the projection.

const olderRelease = async (filename: string) => {
  const raw = new BetterSqlite3(filename)
  registerRecallText(raw)
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) })
  const all = migrations("sqlite")
  const released: Record<string, Migration> = {}
  for (const name of ["0001_events", "0002_snapshots", "0003_recall", "0004_facts"]) {
    const migration = all[name]
    if (migration !== undefined) released[name] = migration
  }
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(released) }
  }).migrateToLatest()
  if (error !== undefined) throw error
  // One event and the index row the old append wrote with it.
  raw.exec(`insert into streams values ('old', 1, 'h', 1, 1)`)
  raw
    .prepare(
      `insert into events (event_id, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, hash)
       values ('e-old', 'old', 1, 'MessageAppended', 2, ?, '{}', 1, 'h')`
    )
    .run(
      JSON.stringify({
        _tag: "MessageAppended",
        id: "e-old",
        message: { id: "m-old", role: "user", kind: "chat", parts: [{ type: "text", text: "zeppelin" }], tokens: 1 }
      })
    )
  raw.exec(`insert into recall_entries (source, stream_id, owner, ref, document_id, kind, role, text, tokens,
    global_position, created_at) values ('message', 'old', null, 'm-old', null, 'chat', 'user', 'zeppelin', 1, 1, 1)`)
  raw.exec(`insert into recall_fts (rowid, text) values (last_insert_rowid(), 'zeppelin')`)
  await db.destroy()
}

const newMessage: WindowEvent.WindowEvent = {
  _tag: "MessageAppended",
  id: "e-new",
  message: { id: "m-new", role: "user", kind: "chat", parts: [{ type: "text", text: "zeppelin again" }], tokens: 2 }
}

describe("opening a file of an earlier release", () => {
  it.effect("applies the new migrations and starts the recall projection after the old index", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      yield* Effect.promise(() => olderRelease(filename))
      const hits = yield* Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        const index = yield* RecallIndex.RecallIndex
        // Migrated: the checkpoint starts at the old index's last event, not at 0.
        const checkpoint = yield* Effect.sync(() => {
          const raw = new BetterSqlite3(filename)
          registerRecallText(raw)
          try {
            return raw.prepare<[], { position: number }>("select position from projection_checkpoints").all()
          } finally {
            raw.close()
          }
        })
        assert.deepStrictEqual(checkpoint, [{ position: 1 }])
        yield* log.append("new", [newMessage], "no_stream")
        return yield* index
          .search({ scope: { _tag: "Stream", stream: "old" }, query: "zeppelin" })
          .pipe(Effect.zip(index.search({ scope: { _tag: "Stream", stream: "new" }, query: "zeppelin" })))
      }).pipe(Effect.provide(SqliteEventLog.layer({ filename })))
      assert.deepStrictEqual(
        hits.map((found) => found.map((hit) => hit.ref)),
        [["m-old"], ["m-new"]]
      )
      const raw = new BetterSqlite3(filename)
      registerRecallText(raw)
      try {
        const applied = raw.prepare<[], { name: string }>("select name from kysely_migration order by name").all()
        assert.deepStrictEqual(
          applied.map((row) => row.name),
          Object.keys(migrations("sqlite")).sort()
        )
        const entries = raw.prepare<[], { n: number }>("select count(*) as n from recall_entries").get()
        assert.strictEqual(entries?.n, 2, "the old event is not indexed a second time")
      } finally {
        raw.close()
      }
    })
  )
})

describe("tenancy and erasure on a file of an earlier release", () => {
  it.effect(
    "its ownerless streams are not taken over by a tenant, erase them whole, and the trigger still guards the rest",
    () =>
      Effect.gen(function* () {
        const filename = tempFile()
        yield* Effect.promise(() => olderRelease(filename))
        // A tenant store cannot take over the stream written before owners existed.
        const taken = yield* Effect.flip(
          Effect.flatMap(EventLog.EventLog, (log) => log.append("old", [newMessage], "any")).pipe(
            Effect.provide(SqliteEventLog.layer({ filename, owner: "alice" }))
          )
        )
        assert.strictEqual(taken._tag, "OwnerMismatch")
        const record = yield* Effect.gen(function* () {
          const log = yield* EventLog.EventLog
          yield* log.append("kept", [newMessage], "no_stream")
          return yield* Erasure.erase("old", { actor: "ops", reason: "upgrade cleanup" })
        }).pipe(Effect.provide(SqliteEventLog.layer({ filename })))
        assert.deepInclude(record, { stream: "old", owner: undefined, events: 1, lastVersion: 1, headHash: "h" })
        const raw = new BetterSqlite3(filename)
        registerRecallText(raw)
        try {
          const count = (statement: string) => Number(raw.prepare<[], { n: number }>(statement).get()?.n)
          // The old inline index rows (entry and FTS text) went with the stream.
          assert.strictEqual(count("select count(*) as n from events where stream_id = 'old'"), 0)
          assert.strictEqual(count("select count(*) as n from recall_entries where stream_id = 'old'"), 0)
          assert.strictEqual(
            count("select count(*) as n from recall_fts"),
            count("select count(*) as n from recall_entries")
          )
          assert.strictEqual(count("select count(*) as n from erasures"), 1)
          assert.throws(() => raw.exec("delete from events where stream_id = 'kept'"), /append-only/)
          assert.strictEqual(count("select count(*) as n from events where stream_id = 'kept'"), 1)
        } finally {
          raw.close()
        }
      })
  )
})

describe("opening a file of a later release", () => {
  it.live("fails with a StoreError saying a newer ctxlog migrated it", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      yield* Effect.flatMap(EventLog.EventLog, (log) => log.append("s", [newMessage], "no_stream")).pipe(
        Effect.provide(SqliteEventLog.layer({ filename }))
      )
      const raw = new BetterSqlite3(filename)
      registerRecallText(raw)
      raw.exec(`insert into kysely_migration (name, timestamp) values ('9999_future', 'x')`)
      raw.close()
      const opened = yield* Effect.either(
        Effect.flatMap(EventLog.EventLog, (log) => log.version("s")).pipe(
          Effect.provide(SqliteEventLog.layer({ filename }))
        )
      )
      assert.isTrue(opened._tag === "Left")
      if (opened._tag === "Left") {
        assert.strictEqual(opened.left._tag, "StoreError")
        assert.include(opened.left.message, "newer ctxlog")
        assert.include(opened.left.message, "9999_future")
      }
    })
  )
})
