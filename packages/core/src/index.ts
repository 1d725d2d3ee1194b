/**
 * @ctxlog/core — the context window as a projection of an append-only event log.
 *
 * @since 0.1.0
 */

/** The token budget every compaction, pruning and render decision uses. @since 0.1.0 */
export * as Budget from "./Budget.js"
/** What a summary, seam or cycle replaced, read back from the log (`recall_archived`, issue 39). @since 0.8.0 */
export * as ArchiveRecall from "./ArchiveRecall.js"
/** The cache layer: every process-wide memo and LRU, by name, with a layer that scopes them (ADR 0162). @since 0.8.0 */
export * as Caches from "./Caches.js"
/** Compactor port. @since 0.1.0 */
export * as Compactor from "./Compactor.js"
/** What a compaction removes and summarizes: the one planner. @since 0.1.0 */
export * as CompressionPlan from "./CompressionPlan.js"
/** The window operations façade. @since 0.1.0 */
export * as ContextService from "./ContextService.js"
/** Conversation memory port. @since 0.1.0 */
export * as ConversationMemory from "./ConversationMemory.js"
/** Pure command side. @since 0.1.0 */
export * as Decide from "./Decide.js"
/** Stored event form and upcasters. @since 0.1.0 */
export * as EventCodec from "./EventCodec.js"
/** The per-stream hash chain. @since 0.1.0 */
export * as EventHash from "./EventHash.js"
/** The event log port and its in-memory layer. @since 0.1.0 */
export * as EventLog from "./EventLog.js"
/** Id generation. @since 0.1.0 */
export * as Ids from "./Ids.js"
/** Language model port. @since 0.1.0 */
export * as LanguageModel from "./LanguageModel.js"
/** The one bounded LRU map every cache uses. @since 0.8.0 */
export * as Lru from "./Lru.js"
/** Token costs of images and documents by provider formula. @since 0.3.0 */
export * as MediaTokens from "./MediaTokens.js"
/** Messages and parts. @since 0.1.0 */
export * as Message from "./Message.js"
/** What an event that replaced or removed messages gave up (issue 39). @since 0.8.0 */
export * as Receipt from "./Receipt.js"
/** Recall source port. @since 0.1.0 */
export * as RecallSource from "./RecallSource.js"
/** Token counting. @since 0.1.0 */
export * as TokenCounter from "./TokenCounter.js"
/** Tool call / result pairing. @since 0.1.0 */
export * as ToolPairs from "./ToolPairs.js"
/** OpenAI-format transcript import. @since 0.1.0 */
export * as Transcript from "./Transcript.js"
/** Spans for window operations and model calls (off by default). @since 0.2.0 */
export * as Tracing from "./Tracing.js"
/** OpenTelemetry GenAI conventions: span attributes, content capture, context provenance. @since 0.8.0 */
export * as GenAi from "./GenAi.js"
/** Input rules at the append boundary (stream ids, JSON values, text). @since 0.1.0 */
export * as Validation from "./Validation.js"
/** Work counters as effect `Metric`s: what tests count work with (ADR 0160). @since 0.8.0 */
export * as WorkCounter from "./WorkCounter.js"
/** The window projection. @since 0.1.0 */
export * as Window from "./Window.js"
/** Window events. @since 0.1.0 */
export * as WindowEvent from "./WindowEvent.js"
/** Window loading. @since 0.1.0 */
export * as WindowRepository from "./WindowRepository.js"
