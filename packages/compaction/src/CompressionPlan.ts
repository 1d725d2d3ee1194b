/**
 * Deprecated: the compaction planner moved to `@ctxlog/core` (`import { CompressionPlan } from
 * "@ctxlog/core"`), so the provider builders' `compressionPlan` uses it without depending on compaction
 * (ADR 0056). Every name below is the core one under its old path, kept for one minor version.
 *
 * @since 0.1.0
 * @deprecated Use `CompressionPlan` from `@ctxlog/core`.
 */
import { CompressionPlan as CorePlan } from "@ctxlog/core"

/** @since 0.1.0 @deprecated Use `CompressionPlan.Plan` from `@ctxlog/core`. */
export type Plan = CorePlan.Plan
/** @since 0.1.0 @deprecated Use `CompressionPlan.isEmpty` from `@ctxlog/core`. */
export const isEmpty: typeof CorePlan.isEmpty = CorePlan.isEmpty
/** @since 0.1.0 @deprecated Use `CompressionPlan.compressionPlan` from `@ctxlog/core`. */
export const compressionPlan: typeof CorePlan.compressionPlan = CorePlan.compressionPlan
