import type BetterSqlite3 from "better-sqlite3"
import type { SqliteDatabase, SqliteStatement } from "kysely"
import { Lru } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { DriverMissing, type Package } from "../Driver.js"
import { add, counters } from "./workCounters.js"

/**
 * The driver module, imported on first use and then kept: an `import()` per opened store goes through
 * the module loader every time (under a loader hook such as tsx's, a round trip to the hook's thread),
 * which was most of reopening a small store. A failed import is not kept (the next open tries again).
 */
const load = <A>(driver: Package, backend: string, importer: () => Promise<A>): Effect.Effect<A, DriverMissing> => {
  let loaded: A | undefined
  return Effect.suspend(() =>
    loaded !== undefined
      ? Effect.succeed(loaded)
      : Effect.tryPromise({
          try: () => {
            add(counters.imports)
            return importer()
          },
          catch: (cause) =>
            new DriverMissing({ driver, backend, detail: cause instanceof Error ? cause.message : String(cause) })
        }).pipe(
          Effect.tap((module) =>
            Effect.sync(() => {
              loaded = module
            })
          )
        )
  )
}

// A CommonJS module: Node's import() puts its exports on `default`, while the declarations say `export =`.
const constructorOf = (
  loaded: typeof BetterSqlite3 | { readonly default: typeof BetterSqlite3 }
): typeof BetterSqlite3 => (typeof loaded === "function" ? loaded : loaded.default)

/** The `better-sqlite3` constructor, imported on first use. */
export const betterSqlite3: Effect.Effect<typeof BetterSqlite3, DriverMissing> = load(
  "better-sqlite3",
  "SQLite",
  async () => constructorOf(await import("better-sqlite3"))
)

/** The `pg` module, imported on first use. */
export const pg = load("pg", "PostgreSQL", async () => (await import("pg")).default)

/** Statements kept per connection by {@link cachedStatements} (the most recently used). */
export const statementCacheSize = 256

/**
 * A SQLite connection for kysely whose statements are prepared once per SQL text and kept (the most
 * recently used {@link statementCacheSize}), instead of once per query as kysely's driver does: a turn
 * ran ~0.7 ms of `prepare` a step. Sound because kysely runs one query at a time on its one connection
 * (a streamed query holds it until the stream ends), and SQLite re-prepares a kept statement itself after
 * a schema change. A statement that returns rows reads them as arrays and makes the row objects here:
 * better-sqlite3 builds its own row objects at about twice the cost (10k rows of ten columns: 20 ms
 * against 13 ms), and every read of the store goes through here.
 */
export const cachedStatements = (raw: BetterSqlite3.Database): SqliteDatabase => {
  const kept = Lru.make<string, SqliteStatement>(statementCacheSize)
  return {
    close: () => raw.close(),
    prepare: (text) => {
      const known = kept.get(text)
      if (known !== undefined) return known
      add(counters.statementsPrepared)
      const statement = rowsAsObjects(raw.prepare(text))
      kept.set(text, statement)
      return statement
    }
  }
}

/** A statement whose rows are read as arrays and made into objects keyed by column name (the last of a repeated name wins, as in better-sqlite3). */
const rowsAsObjects = (statement: BetterSqlite3.Statement): SqliteStatement => {
  if (!statement.reader) return statement
  const names = statement.columns().map((column) => column.name)
  statement.raw(true)
  const objectOf = (row: unknown): unknown => {
    const values = row as ReadonlyArray<unknown>
    const out: Record<string, unknown> = {}
    for (let at = 0; at < names.length; at++) out[names[at] as string] = values[at]
    return out
  }
  return {
    reader: true,
    all: (parameters) => statement.all(parameters).map(objectOf),
    run: (parameters) => statement.run(parameters),
    iterate: function* (parameters) {
      for (const row of statement.iterate(parameters)) yield objectOf(row)
    }
  }
}
