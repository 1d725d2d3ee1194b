import { readFileSync } from "node:fs"
import { EventHash, EventLog, type WindowEvent } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { Kysely, type Migration, Migrator, SqliteDialect } from "kysely"
import { Erasure, LogReader, RecallIndex, SqliteEventLog } from "../src/index.js"
import { registerRecallText } from "../src/internal/indexing.js"
import { migrations } from "../src/internal/migrations.js"
import { tempFile } from "./support/stores.js"

// Migration 0016 (issue 42, ADR 0132): SQLite `events` without AUTOINCREMENT. A store written before it
// opens and verifies, keeps its positions, ids and hashes, and never hands out a position an erased tail
// held; an append no longer writes `sqlite_sequence` (counted in WAL pages per commit, at 1k and 10k).

const message = (id: string, text: string): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `e-${id}`,
  message: { id, role: "user", kind: "chat", parts: [{ type: "text", text }], tokens: 1 }
})

/** A file as the release before migration 0016 left it: streams "a" (3 events) and "b" (1), then "b" erased. */
const beforeMigration16 = async (filename: string) => {
  const raw = new BetterSqlite3(filename)
  registerRecallText(raw)
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) })
  const released: Record<string, Migration> = {}
  for (const [name, migration] of Object.entries(migrations("sqlite"))) if (name < "0016") released[name] = migration
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(released) }
  }).migrateToLatest()
  if (error !== undefined) throw error
  const insert = raw.prepare(
    `insert into events (event_id, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, hash)
     values (?, ?, ?, 'MessageAppended', 2, ?, '{}', 1, ?)`
  )
  const write = (stream: string, texts: ReadonlyArray<string>) => {
    let head = EventHash.genesis
    texts.forEach((text, index) => {
      const event = message(`${stream}${index + 1}`, text)
      const data = JSON.stringify(event)
      const record = {
        stream,
        version: index + 1,
        eventId: event.id,
        type: "MessageAppended",
        schemaVersion: 2,
        data
      }
      head = EventHash.chain(head, record)
      if (index === 0) raw.prepare("insert into streams values (?, 0, '', 1, 1)").run(stream)
      insert.run(event.id, stream, index + 1, data, head)
    })
    raw.prepare("update streams set version = ?, head_hash = ? where stream_id = ?").run(texts.length, head, stream)
  }
  write("a", ["zeppelin one", "zeppelin two", "zeppelin three"])
  write("b", ["balloon"])
  // The erasure of that release: the rows go (position 4 with them), AUTOINCREMENT's counter stays at 4.
  raw.exec(`insert into erasure_pending values ('b'); delete from events where stream_id = 'b';
    delete from streams where stream_id = 'b'; delete from erasure_pending where stream_id = 'b'`)
  await db.destroy()
}

const tableSql = (filename: string): string => {
  const raw = new BetterSqlite3(filename, { readonly: true })
  try {
    return String(raw.prepare<[], { sql: string }>("select sql from sqlite_master where name = 'events'").get()?.sql)
  } finally {
    raw.close()
  }
}

describe("migration 0016: events without AUTOINCREMENT", () => {
  it.scoped("a store written before opens, verifies, and numbers new events after the erased tail", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      yield* Effect.promise(() => beforeMigration16(filename))
      assert.match(tableSql(filename), /autoincrement/)
      const services = yield* SqliteEventLog.make({ filename })
      const log = Effect.runSync(Effect.provide(EventLog.EventLog, services))
      const read = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("a")))
      assert.deepStrictEqual(
        read.map((envelope) => [envelope.version, envelope.position, envelope.event.id]),
        [
          [1, 1, "e-a1"],
          [2, 2, "e-a2"],
          [3, 3, "e-a3"]
        ]
      )
      assert.notMatch(tableSql(filename), /autoincrement/)
      const reader = yield* LogReader.makeSqlite({ filename })
      const verified = yield* reader.verify("a")
      assert.deepStrictEqual(verified.integrity.problems, [])
      assert.strictEqual(verified.integrity.events, 3)
      // Position 4 was handed out before and erased: the next is 5.
      const appended = yield* log.append("c", [message("c1", "zeppelin four")], "no_stream")
      assert.strictEqual(appended.lastPosition, 5)
      // The recall view and the append-only triggers were made again over the new table.
      const index = Effect.runSync(Effect.provide(RecallIndex.RecallIndex, services))
      const hits = yield* index.search({ scope: { _tag: "Stream", stream: "a" }, query: "zeppelin" })
      assert.strictEqual(hits.length, 3)
      const raw = new BetterSqlite3(filename)
      try {
        assert.throws(() => raw.exec("delete from events where stream_id = 'a'"), /append-only/)
        assert.throws(() => raw.exec("update events set data = 'x' where stream_id = 'a'"), /append-only/)
      } finally {
        raw.close()
      }
    })
  )

  it.scoped("a position an erasure freed is never handed out again", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      const services = yield* SqliteEventLog.make({ filename })
      const log = Effect.runSync(Effect.provide(EventLog.EventLog, services))
      yield* log.append("kept", [message("k1", "one")], "no_stream")
      const gone = yield* log.append("gone", [message("g1", "two"), message("g2", "three")], "no_stream")
      assert.strictEqual(gone.lastPosition, 3)
      yield* Effect.flatMap(RecallIndex.RecallIndex, (index) => index.catchUp()).pipe(Effect.provide(services))
      yield* Erasure.erase("gone", { actor: "test", reason: "positions" }).pipe(Effect.provide(services))
      const next = yield* log.append("kept", [message("k2", "four")], 1)
      assert.strictEqual(next.lastPosition, 4)
      // Erased again at the top, and a new store on the file (another process) numbers after it too.
      const again = yield* log.append("gone2", [message("x1", "five")], "no_stream")
      assert.strictEqual(again.lastPosition, 5)
      yield* Effect.flatMap(RecallIndex.RecallIndex, (index) => index.catchUp()).pipe(Effect.provide(services))
      yield* Erasure.erase("gone2", { actor: "test", reason: "positions" }).pipe(Effect.provide(services))
      const other = yield* SqliteEventLog.make({ filename })
      const otherLog = Effect.runSync(Effect.provide(EventLog.EventLog, other))
      const after = yield* otherLog.append("kept", [message("k3", "six")], 2)
      assert.strictEqual(after.lastPosition, 6)
    })
  )
})

/** Per commit in the WAL, the b-trees its pages belong to (page 1 is the database header). */
const commits = (filename: string): ReadonlyArray<ReadonlyArray<string>> => {
  const wal = readFileSync(`${filename}-wal`)
  const pageSize = wal.readUInt32BE(8)
  const raw = new BetterSqlite3(filename, { readonly: true })
  const owner = new Map<number, string>()
  try {
    for (const row of raw.prepare<[], { name: string; pageno: number }>("select name, pageno from dbstat").all())
      owner.set(row.pageno, row.name)
  } finally {
    raw.close()
  }
  const out: Array<Array<string>> = []
  let current: Array<string> = []
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    const page = wal.readUInt32BE(at)
    current.push(page === 1 ? "page1" : (owner.get(page) ?? "new"))
    if (wal.readUInt32BE(at + 4) !== 0) {
      out.push(current)
      current = []
    }
  }
  return out
}

describe("WAL pages an append commits", () => {
  it.scoped("the same b-trees at 1k and at 10k events, and no sqlite_sequence", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      const services = yield* SqliteEventLog.make({ filename, durability: "normal" })
      const log = Effect.runSync(Effect.provide(EventLog.EventLog, services))
      const text = "word ".repeat(60)
      let version = 0
      const fill = (count: number) =>
        Effect.gen(function* () {
          for (let done = 0; done < count; done += 100) {
            const batch = Array.from({ length: 100 }, (_, k) => message(`f${version + k}`, text))
            yield* log.append("s", batch, version === 0 ? "no_stream" : version)
            version += 100
          }
        })
      const measure = Effect.gen(function* () {
        const raw = new BetterSqlite3(filename)
        raw.pragma("wal_checkpoint(TRUNCATE)")
        raw.close()
        for (let turn = 0; turn < 20; turn++) {
          yield* log.append("s", [message(`t${version}`, text)], version)
          version += 1
        }
        return commits(filename)
      })
      yield* fill(1000)
      const at1k = yield* measure
      yield* fill(9000)
      const at10k = yield* measure
      for (const seen of [at1k, at10k]) {
        assert.strictEqual(seen.length, 20, "one commit per append")
        const trees = new Set(seen.flat())
        assert.isFalse(trees.has("sqlite_sequence"), "no AUTOINCREMENT counter is written")
        for (const tree of trees) {
          assert.include(
            ["page1", "new", "streams", "events", "sqlite_autoindex_events_1", "sqlite_autoindex_events_2"],
            tree
          )
        }
      }
      const mean = (seen: ReadonlyArray<ReadonlyArray<string>>) => seen.flat().length / seen.length
      // The events' row, its two index leaves, the head row, and now and then page 1 or a new page:
      // nothing grows with the log.
      assert.isAtMost(mean(at1k), 6)
      assert.isAtMost(mean(at10k), mean(at1k) + 0.5)
    })
  )
})
