// Append throughput on SQLite: kysely building and compiling each statement per call, against the same
// statements compiled once and run as better-sqlite3 prepared statements (what the log's hot path
// does), and the whole `EventLog.append` (validation, redaction, hash chain, recall index). Printed,
// not asserted: numbers depend on the machine. Run: pnpm --filter @ctxlog/memory bench
import { randomUUID } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventLog, type WindowEvent } from "@ctxlog/core"
import BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import { Kysely, Migrator, SqliteDialect } from "kysely"
import { provider } from "../src/internal/migrations.js"
import type { Database } from "../src/internal/schema.js"
import { appendStatements, bind } from "../src/internal/statements.js"
import { SqliteEventLog } from "../src/index.js"

const appends = Number(process.env.BENCH_APPENDS ?? 3000)
const file = (name: string) => join(mkdtempSync(join(tmpdir(), "ctxlog-bench-")), name)

const open = async (filename: string) => {
  const raw = new BetterSqlite3(filename)
  raw.pragma("journal_mode = WAL")
  raw.pragma("synchronous = NORMAL")
  raw.pragma("foreign_keys = ON")
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: raw }) })
  const { error } = await new Migrator({ db, provider: provider("sqlite") }).migrateToLatest()
  if (error !== undefined) throw error
  return { raw, db }
}

const row = (stream: string, version: number) => ({
  event_id: randomUUID(),
  stream_id: stream,
  stream_version: version,
  type: "TurnCompleted",
  schema_version: 1,
  data: JSON.stringify({ _tag: "TurnCompleted", id: "x" }),
  metadata: "{}",
  recorded_at: Date.now(),
  hash: "0".repeat(64)
})

const perSecond = (count: number, started: number) => Math.round((count / (performance.now() - started)) * 1000)

const kyselyPerCall = async () => {
  const { db } = await open(file("kysely.db"))
  const started = performance.now()
  for (let version = 1; version <= appends; version++) {
    await db.transaction().execute(async (trx) => {
      await trx.selectFrom("streams").select(["version", "head_hash"]).where("stream_id", "=", "s").executeTakeFirst()
      await trx
        .insertInto("streams")
        .values({ stream_id: "s", version, head_hash: "h", created_at: 0, updated_at: 0 })
        .onConflict((conflict) => conflict.column("stream_id").doUpdateSet({ version, head_hash: "h", updated_at: 0 }))
        .execute()
      await trx.insertInto("events").values(row("s", version)).returning("global_position").executeTakeFirst()
    })
  }
  const result = perSecond(appends, started)
  await db.destroy()
  return result
}

const preparedOnce = async () => {
  const { raw, db } = await open(file("prepared.db"))
  const compiled = appendStatements(db)
  const select = raw.prepare(compiled.selectStream.sql)
  const upsert = raw.prepare(compiled.upsertStream.sql)
  const insert = raw.prepare(compiled.insertEvent.sql)
  const started = performance.now()
  for (let version = 1; version <= appends; version++) {
    raw.exec("BEGIN IMMEDIATE")
    select.get(...bind(compiled.selectStream, { stream: "s" }))
    upsert.run(...bind(compiled.upsertStream, { stream: "s", version, head: "h", now: 0 }))
    insert.get(...bind(compiled.insertEvent, row("s", version)))
    raw.exec("COMMIT")
  }
  const result = perSecond(appends, started)
  await db.destroy()
  return result
}

const eventLog = (durability: "full" | "normal") =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    const started = performance.now()
    for (let version = 0; version < appends; version++) {
      const event: WindowEvent.WindowEvent = {
        _tag: "MessageAppended",
        id: randomUUID(),
        message: {
          id: `m${version}`,
          role: "user",
          kind: "chat",
          parts: [{ type: "text", text: `message ${version}` }],
          tokens: 4
        }
      }
      yield* log.append("s", [event], version)
    }
    return perSecond(appends, started)
  }).pipe(Effect.provide(SqliteEventLog.layer({ filename: file(`log-${durability}.db`), durability })))

const main = async () => {
  console.log(`SQLite appends/s, ${appends} single-event appends, WAL (higher is better)`)
  console.log(`  kysely, built and compiled per call (synchronous=NORMAL): ${await kyselyPerCall()}`)
  console.log(`  same statements compiled once, prepared (synchronous=NORMAL): ${await preparedOnce()}`)
  console.log(`  SqliteEventLog.append, durability "normal": ${await Effect.runPromise(eventLog("normal"))}`)
  console.log(`  SqliteEventLog.append, durability "full": ${await Effect.runPromise(eventLog("full"))}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
