/**
 * @ctxlog/compaction — compactors, tiered compaction, deferred tool-pair summaries, tool-output
 * pruning and a compacting conversation memory, all recorded as window events.
 *
 * @since 0.1.0
 */

/**
 * The token budget every decision uses.
 * @since 0.1.0
 * @deprecated Moved to `@ctxlog/core` (`Budget`); this alias stays for one minor version.
 */
export * as Budget from "./Budget.js"
/** Optional progress reports of compaction. @since 0.1.0 */
export * as CompactionStatus from "./CompactionStatus.js"
/** A conversation memory that compacts, with its state in events. @since 0.1.0 */
export * as CompactingMemory from "./CompactingMemory.js"
/**
 * What a compaction removes and summarizes.
 * @since 0.1.0
 * @deprecated Moved to `@ctxlog/core` (`CompressionPlan`); this alias stays for one minor version.
 */
export * as CompressionPlan from "./CompressionPlan.js"
/** Deferred tool-pair summaries. @since 0.1.0 */
export * as DeferredSummaries from "./DeferredSummaries.js"
/** Summaries by a language model. @since 0.1.0 */
export * as LlmCompactor from "./LlmCompactor.js"
/** Guards a summary passes before it is written (issue 39). @since 0.8.0 */
export * as SummaryGuard from "./SummaryGuard.js"
/** Deterministic summaries, no model. @since 0.1.0 */
export * as TemplateCompactor from "./TemplateCompactor.js"
/** Task goal and subgoals, refreshed in the background. @since 0.1.0 */
export * as TaskGoalRefresh from "./TaskGoalRefresh.js"
/** None / Soft / Hard compaction tiers. @since 0.1.0 */
export * as TieredCompaction from "./TieredCompaction.js"
/** Old tool outputs replaced by stubs. @since 0.1.0 */
export * as ToolOutputPruning from "./ToolOutputPruning.js"
/** Undoing a compaction. @since 0.1.0 */
export * as UndoCompaction from "./UndoCompaction.js"
