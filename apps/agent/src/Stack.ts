/**
 * The wiring, in one place: the durable log (SQLite file or PostgreSQL), the window service over it,
 * the token counter, ids, full-text recall across sessions, the compactor and the seam host.
 *
 * This is the only module that knows how the ctxlog layers fit together: the one-line stacks
 * (`Ctxlog.sqlite({ filename })`, `Ctxlog.postgres({ url })`) with the template compactor on top.
 *
 * @since 0.1.0
 */
import { mkdirSync } from "node:fs"
import * as path from "node:path"
import type { Compactor, ContextService, Ids, RecallSource, TokenCounter } from "@ctxlog/core"
import { Ctxlog, PostgresEventLog, SqliteEventLog } from "@ctxlog/memory"
import { TemplateCompactor, Turn } from "@ctxlog/turn"
import * as Layer from "effect/Layer"

/** Where the log lives. @since 0.1.0 */
export type Storage =
  | {
      readonly _tag: "sqlite"
      readonly filename: string
      /** `normal` trades the last commits on a power cut for speed (the demo uses it). Default `full`. */
      readonly durability?: "full" | "normal"
    }
  | { readonly _tag: "postgres"; readonly url: string }

/** The default database file, relative to the current directory. @since 0.1.0 */
export const defaultDb = path.join(".ctxlog", "ctxlog.db")

/** Pick the storage from the `--db` / `--pg` options. @since 0.1.0 */
export const storageOf = (options: { readonly db?: string | undefined; readonly pg?: string | undefined }): Storage =>
  options.pg !== undefined
    ? { _tag: "postgres", url: options.pg }
    : { _tag: "sqlite", filename: options.db ?? defaultDb }

/** How to print a storage for a person (no password). @since 0.1.0 */
export const describeStorage = (storage: Storage): string =>
  storage._tag === "sqlite" ? storage.filename : storage.url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@")

/** The log and its companions (`EventLog`, `WindowRepository`, `SnapshotStore`, `RecallIndex`). @since 0.1.0 */
export const storageLayer = (storage: Storage): Layer.Layer<SqliteEventLog.Services, SqliteEventLog.OpenError> => {
  if (storage._tag === "postgres") return PostgresEventLog.layer({ url: storage.url })
  return SqliteEventLog.layer({ filename: preparedPath(storage.filename), durability: storage.durability ?? "full" })
}

/** A SQLite file's path, its folder made first (`:memory:` as it is). */
const preparedPath = (filename: string): string => {
  if (filename !== ":memory:") mkdirSync(path.dirname(path.resolve(filename)), { recursive: true })
  return filename
}

/** Everything the agent's context pipeline runs on. @since 0.1.0 */
export type Services =
  | SqliteEventLog.Services
  | ContextService.ContextService
  | TokenCounter.TokenCounter
  | Ids.Ids
  | RecallSource.RecallSource
  | Compactor.Compactor
  | Turn.Records

/**
 * The whole stack over a storage, for a compaction budget of `budget` tokens. Compaction and seams
 * (run by the turn module, `@ctxlog/turn`) summarize with the deterministic template compactor: no
 * model call, so they cost nothing and replay the same everywhere.
 * @since 0.1.0
 */
export const layer = (storage: Storage, budget: number): Layer.Layer<Services, unknown> => {
  // The documented stack (full-text recall, gpt token counts, UUIDv7 ids), made in one layer.
  const context: Layer.Layer<Ctxlog.Services, unknown> =
    storage._tag === "postgres"
      ? Ctxlog.postgres({ url: storage.url })
      : Ctxlog.sqlite({ filename: preparedPath(storage.filename), durability: storage.durability ?? "full" })
  return Layer.mergeAll(TemplateCompactor.layer({ maxBytes: Math.max(512, budget) }), Turn.layer).pipe(
    Layer.provideMerge(context)
  )
}
