import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import { type Kysely, sql } from "kysely"
import { Caches, EventLog } from "@ctxlog/core"
import { describe } from "./backend.js"
import { migrations } from "./migrations.js"
import { add, counters } from "./workCounters.js"

// The SQLite migration runner: the check every open makes, and the one transaction that applies what is
// pending (the migrations themselves are in `migrations.ts`).

/** What the SQLite runner needs of a connection (better-sqlite3's `Database`). */
export interface SqliteConnection {
  readonly exec: (source: string) => unknown
  readonly prepare: (source: string) => { readonly all: () => ReadonlyArray<unknown> }
  readonly inTransaction: boolean
}

/** The names of the SQLite migrations, in order (made once: the open path reads them). */
const sqliteNames = Caches.slot<ReadonlySet<string>>("memory.sqliteMigrate.sqliteNames")
const sqliteMigrationNames = (): ReadonlySet<string> =>
  sqliteNames.get(() => new Set(Object.keys(migrations("sqlite"))))

/** The names recorded in `kysely_migration`, or undefined when the table does not exist (a new file). */
const appliedNames = (connection: SqliteConnection): Set<string> | undefined => {
  let rows: ReadonlyArray<unknown>
  try {
    add(counters.migrationReads)
    rows = connection.prepare(`select "name" from "kysely_migration"`).all()
  } catch (cause) {
    if (cause instanceof Error && cause.message.startsWith("no such table")) return undefined
    throw cause
  }
  const names = new Set<string>()
  for (const row of rows) {
    if (typeof row === "object" && row !== null && "name" in row && typeof row.name === "string") names.add(row.name)
  }
  return names
}

/**
 * Whether a SQLite database has migrations to apply (or was migrated by a newer ctxlog): ONE read of
 * `kysely_migration`, synchronous, and nothing written. An up-to-date file, which is every open but the
 * first, costs that statement and no transaction, promise or retry (ADR 0085).
 */
export const sqlitePending = (connection: SqliteConnection): boolean => {
  const applied = appliedNames(connection)
  if (applied === undefined) return true
  const all = sqliteMigrationNames()
  if (applied.size !== all.size) return true
  for (const name of applied) if (!all.has(name)) return true
  return false
}

/**
 * Apply the pending SQLite migrations all in ONE transaction (`BEGIN IMMEDIATE` … `COMMIT`): SQLite DDL
 * is transactional, so a process killed at any point of the first open leaves either the old schema or
 * the new one, never half of it (kysely's `Migrator` runs each migration on its own, without a
 * transaction on SQLite). The bookkeeping tables are kysely's, so files migrated before still open.
 * `BEGIN IMMEDIATE` also serialises processes opening a new file at once: the second one finds the
 * migrations applied. `db` must run its queries on `connection`. Callers check {@link sqlitePending}
 * first; this checks again under the write lock.
 */
export const migrateSqlite = async <DB>(connection: SqliteConnection, db: Kysely<DB>): Promise<void> => {
  // Reading first: a database already up to date is not written at all (a read-only open works, and
  // opens do not queue behind each other's write lock).
  if (!sqlitePending(connection)) return
  const all = migrations("sqlite")
  connection.exec("BEGIN IMMEDIATE")
  try {
    connection.exec(
      `create table if not exists "kysely_migration" ("name" varchar(255) not null primary key, "timestamp" varchar(255) not null)`
    )
    connection.exec(
      `create table if not exists "kysely_migration_lock" ("id" varchar(255) not null primary key, "is_locked" integer default 0 not null)`
    )
    connection.exec(`insert or ignore into "kysely_migration_lock" ("id", "is_locked") values ('migration_lock', 0)`)
    const applied = appliedNames(connection) ?? new Set<string>()
    const unknown = [...applied].filter((name) => !(name in all))
    if (unknown.length > 0) {
      throw new Error(`the database was migrated by a newer ctxlog (unknown migrations: ${unknown.join(", ")})`)
    }
    for (const [name, migration] of Object.entries(all).sort(([a], [b]) => a.localeCompare(b))) {
      if (applied.has(name)) continue
      await migration.up(db)
      await sql`insert into "kysely_migration" ("name", "timestamp") values (${name}, ${new Date().toISOString()})`.execute(
        db
      )
    }
    connection.exec("COMMIT")
  } catch (cause) {
    if (connection.inTransaction) connection.exec("ROLLBACK")
    throw cause
  }
}

/**
 * Bring an opened SQLite database up to date. An up-to-date file (every open but the first) is checked
 * with one synchronous read: no transaction, promise or retry (ADR 0085). Otherwise all pending
 * migrations run in one transaction ({@link migrateSqlite}); another process opening the same new file
 * waits on BEGIN IMMEDIATE, and switching the file to WAL can still collide (SQLITE_BUSY): trying again
 * is safe.
 */
export const ensureMigrated = <DB>(
  connection: SqliteConnection,
  db: Kysely<DB>,
  filename: string
): Effect.Effect<void, EventLog.StoreError> => {
  try {
    if (!sqlitePending(connection)) return Effect.void
  } catch {
    // Busy, say: the migration path reads again, under its retries.
  }
  return Effect.tryPromise({
    try: () => migrateSqlite(connection, db),
    catch: (cause) => new EventLog.StoreError({ operation: `migrate ${filename}`, detail: describe(cause) })
  }).pipe(
    Effect.retry({
      schedule: Schedule.intersect(Schedule.spaced("100 millis"), Schedule.recurs(4)),
      while: (error) => error.detail.includes("SQLITE_BUSY")
    })
  )
}
