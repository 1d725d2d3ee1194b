/**
 * The embedded durable log: SQLite through kysely and better-sqlite3, one file (or `":memory:"`).
 *
 * - WAL journal; `durability: "full"` (the default) sets `synchronous=FULL`, so an acknowledged append
 *   survives a power cut; `"normal"` trades the last commits on power loss for speed.
 * - Appends run in `BEGIN IMMEDIATE` transactions: several processes may share the file, and global
 *   positions follow commit order. The hot path runs statements prepared once.
 * - The schema is created and migrated on open (kysely `Migrator`, migrations shipped in code); triggers
 *   reject UPDATE and DELETE on `events`.
 * - Besides the `EventLog`, the layer provides a snapshot-backed `WindowRepository`, the `SnapshotStore`
 *   and the `RecallIndex` (FTS5 with BM25, kept in the append's transaction).
 *
 * @since 0.1.0
 */
import { existsSync } from "node:fs"
import type { EventLog, WindowRepository } from "@ctxlog/core"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { DriverMissing } from "./Driver.js"
import type { Erasure } from "./Erasure.js"
import type { FileStore } from "./FileStore.js"
import type { SubjectErasure } from "./SubjectErasure.js"
import { build, type CommonOptions } from "./internal/layer.js"
import * as backend from "./internal/sqliteBackend.js"
import type { RecallIndex } from "./RecallIndex.js"
import type { SnapshotStore } from "./SnapshotStore.js"

/**
 * What a durable layer provides (this one and `PostgresEventLog`'s): `EventLog`, `WindowRepository`,
 * `SnapshotStore`, `RecallIndex`, `Erasure`, `FileStore`, `SubjectErasure` (since 0.8.0).
 * @since 0.1.0
 */
export type Services =
  | EventLog.EventLog
  | WindowRepository.WindowRepository
  | SnapshotStore
  | RecallIndex
  | Erasure
  | FileStore
  | SubjectErasure

/** Options of the SQLite log. @since 0.1.0 */
export interface Options extends CommonOptions {
  /** Database file path, or `":memory:"` for a private in-memory database. */
  readonly filename: string
  /** `"full"` (default): `synchronous=FULL`; `"normal"`: `synchronous=NORMAL`. */
  readonly durability?: "full" | "normal" | undefined
  /**
   * How long a writer waits for another process's transaction (default 5,000 ms). A write transaction
   * tries again after short pauses (at most 2 ms) meanwhile, not in SQLite's busy handler (ADR 0074).
   */
  readonly busyTimeoutMs?: number | undefined
  /** Open the file read-only: loads work, appends fail with a `StoreError` (default `false`). */
  readonly readonly?: boolean | undefined
  /**
   * `false`: the file must exist, and a missing one is a `DatabaseNotFound` instead of a new, empty
   * database (a mistyped path otherwise starts an empty log silently). Default `true`.
   */
  readonly create?: boolean | undefined
}

/** `create: false` (or `readonly`) and the database file does not exist. @since 0.1.0 */
export class DatabaseNotFound extends Schema.TaggedError<DatabaseNotFound>()("DatabaseNotFound", {
  filename: Schema.String
}) {
  override get message(): string {
    return `SQLite database ${this.filename} does not exist (opened with create: false or readonly; pass create: true to start a new one)`
  }
}

/** The errors opening the SQLite log can fail with. @since 0.1.0 */
export type OpenError = EventLog.StoreError | DriverMissing | DatabaseNotFound

/** Open the database and build the services; closed with the scope. @since 0.1.0 */
export const make = (options: Options): Effect.Effect<Context.Context<Services>, OpenError, Scope.Scope> => {
  const mustExist = options.create === false || options.readonly === true
  const open = build(
    backend.make({
      filename: options.filename,
      durability: options.durability ?? "full",
      busyTimeoutMs: options.busyTimeoutMs ?? 5000,
      readonly: options.readonly,
      ...(mustExist ? { create: false } : {})
    }),
    options
  )
  const present: Effect.Effect<void, DatabaseNotFound> =
    mustExist && options.filename !== ":memory:"
      ? Effect.suspend(() =>
          existsSync(options.filename) ? Effect.void : Effect.fail(new DatabaseNotFound({ filename: options.filename }))
        )
      : Effect.void
  return Effect.zipRight(present, open)
}

/** The SQLite log and its companions (`EventLog`, `WindowRepository`, `SnapshotStore`, `RecallIndex`). @since 0.1.0 */
export const layer = (options: Options): Layer.Layer<Services, OpenError> => Layer.scopedContext(make(options))
