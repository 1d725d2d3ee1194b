import type { ColumnType, Generated, Insertable, Selectable } from "kysely"

/** Both dialects store epoch milliseconds in BIGINT/INTEGER columns; `pg` is told to parse int8 as number. */
export interface StreamsTable {
  readonly stream_id: string
  readonly version: number
  readonly head_hash: string
  readonly created_at: number
  readonly updated_at: number
}

export interface EventsTable {
  readonly global_position: Generated<number>
  readonly event_id: string
  readonly stream_id: string
  readonly stream_version: number
  readonly type: string
  readonly schema_version: number
  /** The exact bytes that were hashed. */
  readonly data: string
  /** TEXT on SQLite, JSONB on PostgreSQL (which returns it parsed). */
  readonly metadata: ColumnType<unknown, string, never>
  readonly recorded_at: number
  readonly hash: string
}

/** An events row as a read returns it (derived from {@link EventsTable}: the one declaration of the table). */
export type EventRow = Selectable<EventsTable>

/** An events row as the append path writes it (the generated position left to the database). */
export type NewEventRow = Omit<Insertable<EventsTable>, "global_position">

export interface SnapshotsTable {
  readonly stream_id: string
  readonly projection: string
  readonly projection_version: number
  readonly stream_version: number
  /** The window's JSON: TEXT, or on SQLite a BLOB of it deflated (`snapshotState.ts`). */
  readonly state: string | Uint8Array
  /** SHA-256 of `state` (hex); NULL on rows written before migration 0005. */
  readonly state_hash: ColumnType<string | null, string | null | undefined, string | null>
  /**
   * SQLite only (migration 0013): SHA-256 (hex) of the stored `state` bytes, written with the seal; NULL on
   * rows saved before it. PostgreSQL has no such column.
   */
  readonly stored_hash: ColumnType<string | null, string | null | undefined, string | null>
  readonly created_at: number
}

/** Where each projection of the log (the recall index) has caught up to, by global position. */
export interface ProjectionCheckpointsTable {
  readonly name: string
  readonly position: number
}

export interface StreamOwnersTable {
  readonly stream_id: string
  readonly owner: string
}

/** The audit trail of erasures (append-only). */
export interface ErasuresTable {
  readonly erasure_id: Generated<number>
  readonly stream_id: string
  readonly owner: string | null
  /** Events removed. */
  readonly events: number
  /** The stream's version and head hash when it was erased. */
  readonly last_version: number
  readonly head_hash: string
  readonly erased_at: number
  readonly actor: string
  readonly reason: string
}

/** The streams an erasure transaction is deleting (empty outside one): the trigger lets only these go. */
export interface ErasurePendingTable {
  readonly stream_id: string
}

export interface RecallEntriesTable {
  readonly entry_id: Generated<number>
  /** `message` (from a stream's events) or `document` (ingested text). */
  readonly source: string
  readonly stream_id: string | null
  /** Documents carry their owner; messages take it from `stream_owners` at query time. */
  readonly owner: string | null
  /** Message id, or the chunk number of a document. */
  readonly ref: string
  readonly document_id: string | null
  readonly kind: string
  readonly role: string
  readonly text: string
  readonly tokens: number
  readonly global_position: number | null
  readonly created_at: number
}

export interface FactsTable {
  readonly fact_id: Generated<number>
  readonly stream_id: string
  readonly event_id: string
  readonly subject: string
  readonly predicate: string
  readonly object: string
  readonly source_message_id: string | null
  readonly global_position: number
}

/** SQLite only: the FTS5 table over `recall_entries.text`, keyed by `entry_id`. */
export interface RecallFtsTable {
  readonly rowid: number
  readonly text: string
}

/** Large tool outputs, once per stream by content hash (see `FileStore`). */
export interface FilesTable {
  readonly stream_id: string
  readonly sha256: string
  readonly owner: string | null
  readonly content: string
  readonly bytes: number
  readonly lines: number
  readonly created_at: number
}

/** One signed batch (migration 0014): see `Signing`. */
export interface BatchSignaturesTable {
  readonly stream_id: string
  readonly first_version: number
  readonly last_version: number
  readonly writer: string
  readonly key_id: string
  readonly signature: string
}

/** A subject's data key, wrapped under the master key (migration 0015): see `SubjectKeys`. */
export interface SubjectKeysTable {
  readonly subject: string
  readonly key_id: string
  readonly master_key_id: string
  readonly wrapped: string
  readonly created_at: number
}

/** The signed receipt of each subject erasure (migration 0015, append-only): see `SubjectErasure`. */
export interface SubjectErasuresTable {
  readonly erasure_id: Generated<number>
  readonly subject: string
  readonly erased_at: number
  readonly receipt: string
}

export interface Database {
  readonly streams: StreamsTable
  readonly events: EventsTable
  readonly snapshots: SnapshotsTable
  readonly stream_owners: StreamOwnersTable
  readonly recall_entries: RecallEntriesTable
  readonly facts: FactsTable
  readonly recall_fts: RecallFtsTable
  readonly projection_checkpoints: ProjectionCheckpointsTable
  readonly erasures: ErasuresTable
  readonly erasure_pending: ErasurePendingTable
  readonly files: FilesTable
  readonly batch_signatures: BatchSignaturesTable
  readonly subject_keys: SubjectKeysTable
  readonly subject_erasures: SubjectErasuresTable
}

export type Dialect = "sqlite" | "postgres"
