/**
 * Work the stores do, for tests that count it (never read on a hot path): effect `Metric` counters
 * (`ctxlog.memory.*`), incremented through their synchronous hook with {@link add} and read with
 * `WorkCounter.since(counters)` (ADR 0160).
 */
import { WorkCounter } from "@ctxlog/core"

const counter = (name: string, description: string) => WorkCounter.make(`ctxlog.memory.${name}`, description)

export const counters = {
  /** Backend appends (one transaction each). */
  appends: counter("appends", "Backend appends (one transaction each)."),
  /** Statements the SQLite append transaction ran (prepared ones). */
  appendStatements: counter("append_statements", "Statements the SQLite append transaction ran (prepared ones)."),
  /** Event rows written by appends. */
  rowsWritten: counter("rows_written", "Event rows written by appends."),
  /** Batches an append signed (`Signing`): one Ed25519 signature each. */
  batchesSigned: counter("batches_signed", "Batches an append signed: one Ed25519 signature each."),
  /** Heads written to an anchor sink (`Anchor`), and the sink writes that carried them. */
  headsAnchored: counter("heads_anchored", "Heads written to an anchor sink."),
  anchorWrites: counter("anchor_writes", "Anchor sink writes (each carries one or more heads)."),
  /** Characters of event data hashed into the chain by appends. */
  charsHashed: counter("chars_hashed", "Characters of event data hashed into the chain by appends."),
  /** Queries run through kysely (reads, snapshots, recall), on either backend. */
  queries: counter("queries", "Queries run through kysely (reads, snapshots, recall), on either backend."),
  /** Event rows read and decoded with a Schema pass (`EventCodec.decode`). */
  rowsDecoded: counter("rows_decoded", "Event rows read and decoded with a Schema pass."),
  /** Event rows read for a caller that checks their chain links (`EventCodec.decodeVerified`: no Schema pass at the current version). */
  rowsVerifiedByChain: counter(
    "rows_verified_by_chain",
    "Event rows read for a caller that checks their chain links (no Schema pass at the current version)."
  ),
  /** Round trips PostgreSQL appends made (head reads and `ctxlog_append` calls). */
  postgresRoundTrips: counter(
    "postgres_round_trips",
    "Round trips PostgreSQL appends made (head reads and ctxlog_append calls)."
  ),
  /** Bounds of a PostgreSQL global read taken under the gate (one round trip each, the gate held only while it runs). */
  globalBounds: counter("global_bounds", "Bounds of a PostgreSQL global read taken under the gate."),
  /** Claims a PostgreSQL store tried (`unlessRunningElsewhere`: the background recall catch-up). */
  claimsTried: counter("claims_tried", "Claims a PostgreSQL store tried (the background recall catch-up)."),
  /** Event rows the recall projection read to index (a batch another process indexed first is read again). */
  rowsReadToIndex: counter("rows_read_to_index", "Event rows the recall projection read to index."),
  /** Statements that indexed recall entries: SQLite an entry row, and its FTS row when new; PostgreSQL one per batch. */
  indexStatements: counter("index_statements", "Statements that indexed recall entries."),
  /** Tries of a SQLite write transaction that found the write lock held elsewhere (`writeLock.ts`). */
  lockWaits: counter("lock_waits", "Tries of a SQLite write transaction that found the write lock held elsewhere."),
  /** SQL texts kysely's SQLite connection prepared (a statement kept is not prepared again). */
  statementsPrepared: counter("statements_prepared", "SQL texts kysely's SQLite connection prepared."),
  /** Events an append encoded and validated with the Schema pass and the validation walk (not `EventCodec.encodeKnown`). */
  eventsEncodedBySchema: counter(
    "events_encoded_by_schema",
    "Events an append encoded and validated with the Schema pass and the validation walk."
  ),
  /** Statements opening a SQLite store ran to see whether migrations are pending (up to date: one per open). */
  migrationReads: counter(
    "migration_reads",
    "Statements opening a SQLite store ran to see whether migrations are pending."
  ),
  /** Bytes an unkeyed snapshot's check hashed on load: its stored bytes when it has their digest, else its text (characters). */
  snapshotBytesHashed: counter("snapshot_bytes_hashed", "Bytes an unkeyed snapshot's check hashed on load."),
  /** Pages of a stream read run as a `Stream` (`EventLog.read` consumed as a stream). */
  streamPages: counter("stream_pages", "Pages of a stream read run as a Stream."),
  /** Pages of a stream read run as plain effects (a fold through `EventLog.withPages`, ADR 0087). */
  effectPages: counter("effect_pages", "Pages of a stream read run as plain effects."),
  /** Driver imports done (`drivers.ts`; a driver is imported once, then kept). */
  imports: counter("driver_imports", "Driver modules imported (once each, then kept)."),
  /** Messages whose text context assembly normalized (`assembly.ts`: once per message object). */
  textsNormalized: counter("texts_normalized", "Messages whose text context assembly normalized."),
  /** History messages context assembly indexed (`assembly.ts`). */
  messagesIndexed: counter("messages_indexed", "History messages context assembly indexed."),
  /** Full-text statements run (one per `searchEach` on SQLite, one per filter on PostgreSQL; `search.ts`). */
  searchStatements: counter("search_statements", "Full-text statements run by recall searches."),
  /** Recall entries read to check what a caller holds (`search.ts`'s `entriesAfter`). */
  entriesChecked: counter("entries_checked", "Recall entries read to check what a caller holds.")
}

export const { add } = WorkCounter
