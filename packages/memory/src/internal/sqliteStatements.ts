import type * as BetterSqlite3 from "better-sqlite3"

// Pieces of the SQLite backend (`sqliteBackend.ts`): statements made on first use, and those of an erasure.

/**
 * An object whose members are made on first use: a store prepares a statement the first time it runs it,
 * so opening one (and loading a small conversation) does not prepare every statement it might need.
 */
export const lazily = <T extends Record<string, () => unknown>>(
  makers: T
): { readonly [K in keyof T]: ReturnType<T[K]> } => {
  const out = {}
  for (const [key, make] of Object.entries(makers)) {
    Object.defineProperty(out, key, {
      enumerable: true,
      configurable: true,
      // Made once, then a plain property: the hot path reads it like any field.
      get: () => {
        const value = make()
        Object.defineProperty(out, key, { enumerable: true, value })
        return value
      }
    })
  }
  return out as { readonly [K in keyof T]: ReturnType<T[K]> }
}

type Run<P extends Array<unknown>> = BetterSqlite3.Statement<P>

/** The statements of `eraseStream`. */
export interface Erasing {
  readonly recallCheckpoint: BetterSqlite3.Statement<[], { position: number }>
  readonly lastPosition: BetterSqlite3.Statement<[string], { events: number; last: number | null }>
  readonly markPending: Run<[string]>
  readonly deleteFts: Run<[string]>
  readonly deleteEntries: Run<[string]>
  readonly deleteFacts: Run<[string]>
  readonly deleteSnapshots: Run<[string]>
  readonly raiseHighWater: Run<[]>
  readonly deleteEvents: Run<[string]>
  readonly deleteStream: Run<[string]>
  readonly deleteOwner: Run<[string]>
  readonly deleteFiles: Run<[string]>
  readonly deleteSignatures: Run<[string]>
  readonly clearPending: Run<[string]>
  readonly audit: Run<[string, string | null, number, number, string, number, string, string]>
}

/** The statements of `eraseStream`, prepared on first use (an erasure is rare). */
export const erasingStatements = (raw: BetterSqlite3.Database): Erasing =>
  lazily({
    recallCheckpoint: () =>
      raw.prepare<[], { position: number }>("select position from projection_checkpoints where name = 'recall'"),
    lastPosition: () =>
      raw.prepare<[string], { events: number; last: number | null }>(
        "select count(*) as events, max(global_position) as last from events where stream_id = ?"
      ),
    markPending: () => raw.prepare<[string]>("insert into erasure_pending (stream_id) values (?)"),
    deleteFts: () =>
      raw.prepare<[string]>(
        "delete from recall_fts where rowid in (select entry_id from recall_entries where source = 'message' and stream_id = ?)"
      ),
    deleteEntries: () => raw.prepare<[string]>("delete from recall_entries where source = 'message' and stream_id = ?"),
    deleteFacts: () => raw.prepare<[string]>("delete from facts where stream_id = ?"),
    deleteSnapshots: () => raw.prepare<[string]>("delete from snapshots where stream_id = ?"),
    // Before the rows go: the mark new positions follow (the erased rows may hold the last ones).
    raiseHighWater: () =>
      raw.prepare<[]>(
        "update event_positions set high_water = max(high_water, coalesce((select max(global_position) from events), 0))"
      ),
    deleteEvents: () => raw.prepare<[string]>("delete from events where stream_id = ?"),
    deleteStream: () => raw.prepare<[string]>("delete from streams where stream_id = ?"),
    deleteOwner: () => raw.prepare<[string]>("delete from stream_owners where stream_id = ?"),
    deleteFiles: () => raw.prepare<[string]>("delete from files where stream_id = ?"),
    deleteSignatures: () => raw.prepare<[string]>("delete from batch_signatures where stream_id = ?"),
    clearPending: () => raw.prepare<[string]>("delete from erasure_pending where stream_id = ?"),
    audit: () =>
      raw.prepare<[string, string | null, number, number, string, number, string, string]>(
        `insert into erasures (stream_id, owner, events, last_version, head_hash, erased_at, actor, reason)
       values (?, ?, ?, ?, ?, ?, ?, ?)`
      )
  })
