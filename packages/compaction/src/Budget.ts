/**
 * Deprecated: the budget moved to `@ctxlog/core` (`import { Budget } from "@ctxlog/core"`), since it is
 * about the window and the provider builders need it without depending on compaction (ADR 0056). Every
 * name below is the core one under its old path, kept for one minor version.
 *
 * @since 0.1.0
 * @deprecated Use `Budget` from `@ctxlog/core`.
 */
import { Budget as CoreBudget } from "@ctxlog/core"

/** @since 0.1.0 @deprecated Use `Budget.Budget` from `@ctxlog/core`. */
export type Budget = CoreBudget.Budget
/** @since 0.1.0 @deprecated Use `Budget.Input` from `@ctxlog/core`. */
export type Input = CoreBudget.Input
/** @since 0.1.0 @deprecated Use `Budget.Spec` from `@ctxlog/core`. */
export type Spec = CoreBudget.Spec
/** @since 0.1.0 @deprecated Use `Budget.make` from `@ctxlog/core`. */
export const make: typeof CoreBudget.make = CoreBudget.make
/** @since 0.1.0 @deprecated Use `Budget.available` from `@ctxlog/core`. */
export const available: typeof CoreBudget.available = CoreBudget.available
/** @since 0.1.0 @deprecated Use `Budget.tokensOf` from `@ctxlog/core`. */
export const tokensOf: typeof CoreBudget.tokensOf = CoreBudget.tokensOf
/** @since 0.1.0 @deprecated Use `Budget.contextWindowOf` from `@ctxlog/core`. */
export const contextWindowOf: typeof CoreBudget.contextWindowOf = CoreBudget.contextWindowOf
/** @since 0.1.0 @deprecated Use `Budget.outputReserveOf` from `@ctxlog/core`. */
export const outputReserveOf: typeof CoreBudget.outputReserveOf = CoreBudget.outputReserveOf
/** @since 0.1.0 @deprecated Use `Budget.fits` from `@ctxlog/core`. */
export const fits: typeof CoreBudget.fits = CoreBudget.fits
