/**
 * @ctxlog/compaction — compactors, tiered compaction, deferred tool-pair summaries, tool-output
 * pruning and a compacting conversation memory, all recorded as window events.
 *
 * @since 0.1.0
 */

/** Summaries by a language model. @since 0.1.0 */
export * as LlmCompactor from "./LlmCompactor.js"
/** Deterministic summaries, no model. @since 0.1.0 */
export * as TemplateCompactor from "./TemplateCompactor.js"
