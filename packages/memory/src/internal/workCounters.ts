/** Work the stores do, for tests that count it (never read on a hot path). */
export interface Counters {
  /** Backend appends (one transaction each). */
  appends: number
  /** Statements the SQLite append transaction ran (prepared ones). */
  appendStatements: number
  /** Event rows written by appends. */
  rowsWritten: number
  /** Batches an append signed (`Signing`): one Ed25519 signature each. */
  batchesSigned: number
  /** Heads written to an anchor sink (`Anchor`), and the sink writes that carried them. */
  headsAnchored: number
  anchorWrites: number
  /** Characters of event data hashed into the chain by appends. */
  charsHashed: number
  /** Queries run through kysely (reads, snapshots, recall), on either backend. */
  queries: number
  /** Event rows read and decoded with a Schema pass (`EventCodec.decode`). */
  rowsDecoded: number
  /** Event rows read for a caller that checks their chain links (`EventCodec.decodeVerified`: no Schema pass at the current version). */
  rowsVerifiedByChain: number
  /** Round trips PostgreSQL appends made (head reads and `ctxlog_append` calls). */
  postgresRoundTrips: number
  /** Bounds of a PostgreSQL global read taken under the gate (one round trip each, the gate held only while it runs). */
  globalBounds: number
  /** Claims a PostgreSQL store tried (`unlessRunningElsewhere`: the background recall catch-up). */
  claimsTried: number
  /** Event rows the recall projection read to index (a batch another process indexed first is read again). */
  rowsReadToIndex: number
  /** Statements that indexed recall entries: SQLite an entry row, and its FTS row when new; PostgreSQL one per batch. */
  indexStatements: number
  /** Tries of a SQLite write transaction that found the write lock held elsewhere (`writeLock.ts`). */
  lockWaits: number
  /** SQL texts kysely's SQLite connection prepared (a statement kept is not prepared again). */
  statementsPrepared: number
  /** Events an append encoded and validated with the Schema pass and the validation walk (not `EventCodec.encodeKnown`). */
  eventsEncodedBySchema: number
  /** Statements opening a SQLite store ran to see whether migrations are pending (up to date: one per open). */
  migrationReads: number
  /** Bytes an unkeyed snapshot's check hashed on load: its stored bytes when it has their digest, else its text (characters). */
  snapshotBytesHashed: number
  /** Pages of a stream read run as a `Stream` (`EventLog.read` consumed as a stream). */
  streamPages: number
  /** Pages of a stream read run as plain effects (a fold through `EventLog.withPages`, ADR 0087). */
  effectPages: number
}

export const counters: Counters = {
  appends: 0,
  appendStatements: 0,
  rowsWritten: 0,
  batchesSigned: 0,
  headsAnchored: 0,
  anchorWrites: 0,
  charsHashed: 0,
  queries: 0,
  rowsDecoded: 0,
  rowsVerifiedByChain: 0,
  postgresRoundTrips: 0,
  globalBounds: 0,
  claimsTried: 0,
  rowsReadToIndex: 0,
  indexStatements: 0,
  lockWaits: 0,
  statementsPrepared: 0,
  eventsEncodedBySchema: 0,
  migrationReads: 0,
  snapshotBytesHashed: 0,
  streamPages: 0,
  effectPages: 0
}

/** Zero the counters. */
export const reset = (): void => {
  counters.appends = 0
  counters.appendStatements = 0
  counters.rowsWritten = 0
  counters.charsHashed = 0
  counters.batchesSigned = 0
  counters.headsAnchored = 0
  counters.anchorWrites = 0
  counters.queries = 0
  counters.rowsDecoded = 0
  counters.rowsVerifiedByChain = 0
  counters.postgresRoundTrips = 0
  counters.globalBounds = 0
  counters.claimsTried = 0
  counters.rowsReadToIndex = 0
  counters.indexStatements = 0
  counters.lockWaits = 0
  counters.statementsPrepared = 0
  counters.eventsEncodedBySchema = 0
  counters.migrationReads = 0
  counters.snapshotBytesHashed = 0
  counters.streamPages = 0
  counters.effectPages = 0
}
