/**
 * @ctxlog/turn — one turn of an agent's context pipeline as a module: the policy as data, and the
 * steps prepare, render and complete, each one load and one append.
 *
 * @since 0.4.0
 */

/** A turn's policy, as data (recorded as `TurnPolicySet`). @since 0.4.0 */
export * as Policy from "./Policy.js"
/** The steps of a turn: `prepare`, `render`, `complete`. @since 0.4.0 */
export * as Turn from "./Turn.js"
/** The span of a turn's model call: conversation, provenance, parameters (OpenTelemetry GenAI). @since 0.8.0 */
export * as ModelCallTrace from "./ModelCallTrace.js"
/** Progress reports of the compaction tiers a turn runs (provide a `CompactionStatus` to show them). @since 0.4.0 */
export { CompactionStatus } from "@ctxlog/compaction"
/** The deterministic summarizer (no model call) the sample agent, the what-if and the Promise API default to. @since 0.4.0 */
export { TemplateCompactor } from "@ctxlog/compaction"
/** Undoing a compaction as an event (`CompactionReverted`): what `ctxlog restore` runs. @since 0.8.0 */
export { UndoCompaction } from "@ctxlog/compaction"
