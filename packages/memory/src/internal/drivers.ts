import type BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import { DriverMissing, type Package } from "../Driver.js"

// Imported once per process: opening a store again (a reload) does not go back to the module loader. A
// failed import is not kept, so a driver installed later is found by the next open.
const load = <A>(driver: Package, backend: string, importer: () => Promise<A>): Effect.Effect<A, DriverMissing> => {
  let loaded: A | undefined
  return Effect.suspend(() =>
    loaded !== undefined
      ? Effect.succeed(loaded)
      : Effect.tryPromise({
          try: async () => {
            const module = await importer()
            loaded = module
            return module
          },
          catch: (cause) =>
            new DriverMissing({ driver, backend, detail: cause instanceof Error ? cause.message : String(cause) })
        })
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
