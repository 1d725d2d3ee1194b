// The stores a scenario runs against: ctxlog through its public packages, and the raw references on
// the same rows. Nothing here imports a package's internals, so the bench keeps working when they change.
import { createHash, randomUUID } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Message, TokenCounter, type WindowEvent } from "@ctxlog/core"
import { Ctxlog, type PostgresEventLog, type SqliteEventLog } from "@ctxlog/memory"
import BetterSqlite3 from "better-sqlite3"
import * as ManagedRuntime from "effect/ManagedRuntime"
import pg from "pg"

/** A fresh temporary directory. */
export const tempDir = (label: string): string => mkdtempSync(join(tmpdir(), `ctxlog-bench-${label}-`))

/**
 * ctxlog's services on one SQLite file (WAL, synchronous=NORMAL unless said; the recall index is always
 * on): the documented stack, `Ctxlog.sqlite` (ContextService with full-text recall, gpt token counts and
 * UUIDv7 ids).
 */
export const sqliteLayer = (filename: string, options: Partial<SqliteEventLog.Options> = {}) =>
  Ctxlog.sqlite({ durability: "normal", ...options, filename })

/** ctxlog on one SQLite file, as a runtime. */
export const sqliteRuntime = (filename: string, options: Partial<SqliteEventLog.Options> = {}) =>
  ManagedRuntime.make(sqliteLayer(filename, options))

/** ctxlog on one PostgreSQL database. */
export const postgresRuntime = (url: string, options: Partial<PostgresEventLog.Options> = {}) =>
  ManagedRuntime.make(Ctxlog.postgres({ ...options, url }))

/** `n` characters of prose-like filler (the recall index gets real words to index). */
export const prose = (n: number, seed: number): string => {
  const words = ["context", "window", "agent", "tool", "result", "summary", "token", "budget", "stream", "event"]
  const out: Array<string> = []
  let length = 0
  for (let k = 0; length < n; k++) {
    const word = `${words[(seed + k * 7) % words.length]}${(seed * 31 + k) % 97}`
    out.push(word)
    length += word.length + 1
  }
  return out.join(" ").slice(0, n)
}

/** The i-th benchmark message input: a user or assistant text of ~`chars` characters. */
export const messageInput = (i: number, chars = 300): Message.MessageInput =>
  i % 2 === 0 ? Message.user(prose(chars, i)) : Message.assistant(prose(chars, i))

/** The i-th benchmark event: a `MessageAppended` with a message of ~`chars` characters. */
export const messageEvent = (i: number, chars = 300): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: randomUUID(),
  message: {
    id: randomUUID(),
    role: i % 2 === 0 ? "user" : "assistant",
    kind: "chat",
    parts: [{ type: "text", text: prose(chars, i) }],
    tokens: Math.ceil(chars / TokenCounter.estimateCharsPerToken)
  }
})

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

/** The text of an event's message parts (what a full-text index over the events would hold). */
const textOf = (event: WindowEvent.WindowEvent): string =>
  event._tag === "MessageAppended" ? Message.textOf(event.message) : ""

/**
 * The raw SQLite reference: one table of the same rows (id, stream, version, type, data JSON, hash),
 * written with prepared better-sqlite3 statements in `BEGIN IMMEDIATE` transactions that read the
 * stream's version first (the optimistic check every event store makes). With `fullText`, each event's
 * message text also goes into an FTS5 table (the tokenizer ctxlog's recall index uses) in the same
 * transaction: the least a store with full-text recall writes per event.
 */
export const rawSqlite = (
  filename: string,
  synchronous: "NORMAL" | "FULL" = "NORMAL",
  options: { readonly fullText?: boolean } = {}
) => {
  const db = new BetterSqlite3(filename)
  db.pragma("journal_mode = WAL")
  db.pragma(`synchronous = ${synchronous}`)
  db.pragma("busy_timeout = 5000")
  db.exec(`create table if not exists events (
    position integer primary key autoincrement,
    id text not null unique,
    stream text not null,
    version integer not null,
    type text not null,
    data text not null,
    hash text not null,
    unique (stream, version)
  )`)
  const head = db.prepare<[string], { v: number | null }>("select max(version) as v from events where stream = ?")
  const insert = db.prepare("insert into events (id, stream, version, type, data, hash) values (?, ?, ?, ?, ?, ?)")
  const rows = db.prepare<[string], { data: string }>("select data from events where stream = ? order by version")
  if (options.fullText === true) {
    db.exec("create virtual table if not exists recall using fts5(text, tokenize = 'porter unicode61')")
  }
  const index = options.fullText === true ? db.prepare("insert into recall (rowid, text) values (?, ?)") : undefined
  return {
    db,
    /** Append events at the stream's end in one transaction. */
    append: (stream: string, events: ReadonlyArray<WindowEvent.WindowEvent>): void => {
      db.exec("BEGIN IMMEDIATE")
      try {
        let version = head.get(stream)?.v ?? 0
        for (const event of events) {
          const data = JSON.stringify(event)
          const { lastInsertRowid } = insert.run(event.id, stream, ++version, event._tag, data, sha256(data))
          index?.run(lastInsertRowid, textOf(event))
        }
        db.exec("COMMIT")
      } catch (error) {
        db.exec("ROLLBACK")
        throw error
      }
    },
    /** SELECT + JSON.parse of a stream's rows. */
    load: (stream: string): ReadonlyArray<unknown> => rows.all(stream).map((row) => JSON.parse(row.data)),
    close: () => db.close()
  }
}

/** The raw PostgreSQL reference: the same rows through one `pg` client, one transaction per append. */
export const rawPostgres = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.query(`create table if not exists raw_events (
    position bigserial primary key,
    id text not null unique,
    stream text not null,
    version integer not null,
    type text not null,
    data jsonb not null,
    hash text not null,
    unique (stream, version)
  )`)
  return {
    append: async (stream: string, events: ReadonlyArray<{ readonly _tag: string; readonly id: string }>) => {
      await client.query("begin")
      try {
        const result = await client.query<{ v: number | null }>(
          "select max(version) as v from raw_events where stream = $1",
          [stream]
        )
        let version = result.rows[0]?.v ?? 0
        const values: Array<unknown> = []
        const tuples: Array<string> = []
        for (const event of events) {
          const data = JSON.stringify(event)
          const k = values.length
          tuples.push(`($${k + 1}, $${k + 2}, $${k + 3}, $${k + 4}, $${k + 5}, $${k + 6})`)
          values.push(event.id, stream, ++version, event._tag, data, sha256(data))
        }
        await client.query(
          `insert into raw_events (id, stream, version, type, data, hash) values ${tuples.join(", ")}`,
          values
        )
        await client.query("commit")
      } catch (error) {
        await client.query("rollback")
        throw error
      }
    },
    close: () => client.end()
  }
}
