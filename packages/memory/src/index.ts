/**
 * @ctxlog/memory — durable event logs (SQLite, PostgreSQL), snapshots, recall index and memory policies.
 *
 * @since 0.1.0
 */

/** Heads written to a sink outside the database on a schedule, and read back to verify against. @since 0.8.0 */
export * as Anchor from "./Anchor.js"
/** One-line layers: `ContextService` over SQLite, PostgreSQL or memory. @since 0.1.0 */
export * as Ctxlog from "./Ctxlog.js"
/** Database drivers loaded on first use, and the error when one is missing. @since 0.1.0 */
export * as Driver from "./Driver.js"
/** Audited erasure of whole conversations (the right to erasure). @since 0.1.0 */
export * as Erasure from "./Erasure.js"
/** Large tool outputs stored once by content hash beside the log; the window holds a handle. @since 0.4.0 */
export * as FileStore from "./FileStore.js"
/** Vector-search extension point. @since 0.1.0 */
export * as Embedder from "./Embedder.js"
/** Read-only, verified access to a log: streams, stored events, snapshots, integrity. @since 0.2.0 */
export * as LogReader from "./LogReader.js"
/** A RecallSource over the recall index. @since 0.1.0 */
export * as FullTextRecall from "./FullTextRecall.js"
/** The durable log on PostgreSQL. @since 0.1.0 */
export * as PostgresEventLog from "./PostgresEventLog.js"
/** The recall index kept inline with appends. @since 0.1.0 */
export * as RecallIndex from "./RecallIndex.js"
/** Secret redaction before write. @since 0.1.0 */
export * as Redaction from "./Redaction.js"
/** Per-writer Ed25519 signatures of append batches, keyrings of public keys. @since 0.8.0 */
export * as Signing from "./Signing.js"
/** Per-subject sealing of content under data keys, and lineage of derived content. @since 0.8.0 */
export * as Sealing from "./Sealing.js"
/** Per-subject erasure that keeps every chain, with signed receipts checked offline. @since 0.8.0 */
export * as SubjectErasure from "./SubjectErasure.js"
/** Per-subject data keys (envelope encryption): a key table or the caller's key service. @since 0.8.0 */
export * as SubjectKeys from "./SubjectKeys.js"
/** The snapshot-backed window repository. @since 0.1.0 */
export * as SnapshotRepository from "./SnapshotRepository.js"
/** Snapshot storage. @since 0.1.0 */
export * as SnapshotStore from "./SnapshotStore.js"
/** The durable log on SQLite. @since 0.1.0 */
export * as SqliteEventLog from "./SqliteEventLog.js"
/** Per-turn context assembly: concurrent recall and graph-fact lookup, retrieval policy, skill disambiguation. @since 0.1.0 */
export * as ContextAssembly from "./ContextAssembly.js"
/** Conversation memory over the log, shaped by a policy. @since 0.1.0 */
export * as ConversationMemoryPolicy from "./ConversationMemoryPolicy.js"
/** Conversation memory that hands what its policy evicts to a demotion hook (e.g. into recall). @since 0.1.0 */
export * as DemotingPolicyMemory from "./DemotingPolicyMemory.js"
/** Conversation memory keeping the last n messages, tool-pair safe. @since 0.1.0 */
export * as SlidingWindowMemory from "./SlidingWindowMemory.js"
/** Conversation memory keeping the newest history within a token budget, tool-pair safe. @since 0.1.0 */
export * as TokenWindowMemory from "./TokenWindowMemory.js"
