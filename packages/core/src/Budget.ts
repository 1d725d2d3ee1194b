/**
 * The token budget every compaction, pruning and render decision uses: what is left of the model's
 * context window once the answer, the tool schemas and the turn reminder have their room.
 *
 * `available = contextWindow − outputReserve − toolTokens − reminderTokens`
 *
 * The output reserve is the request's output limit (`max_tokens`): a prompt that fills the whole
 * window leaves the model no room to answer, and providers reject prompt + `max_tokens` above the
 * window. The provider builders derive a `Budget` from their settings (`CtxBuilder.budget`).
 *
 * @since 0.1.0
 */

/** A model's context window and what is reserved out of it. @since 0.1.0 */
export interface Budget {
  /** The model's context window in tokens. */
  readonly contextWindow: number
  /** Tokens reserved for the answer: the request's output limit. */
  readonly outputReserve: number
  /** Tokens of the tool schemas sent with every request. */
  readonly toolTokens: number
  /** Tokens of the turn reminder added to the last user message. */
  readonly reminderTokens: number
}

/** What `make` takes: the window, and the reserves (0 when not given). @since 0.1.0 */
export interface Input {
  readonly contextWindow: number
  readonly outputReserve?: number
  readonly toolTokens?: number
  readonly reminderTokens?: number
}

const whole = (value: number | undefined): number =>
  value === undefined || !Number.isFinite(value) ? 0 : Math.max(0, Math.floor(value))

/** A budget from a context window and its reserves (negative or missing reserves count as 0). @since 0.1.0 */
export const make = (input: Input): Budget => ({
  contextWindow: whole(input.contextWindow),
  outputReserve: whole(input.outputReserve),
  toolTokens: whole(input.toolTokens),
  reminderTokens: whole(input.reminderTokens)
})

/** The prompt tokens the window may hold: the context window minus every reserve (never negative). @since 0.1.0 */
export const available = (budget: Budget): number =>
  Math.max(0, budget.contextWindow - budget.outputReserve - budget.toolTokens - budget.reminderTokens)

/**
 * A budget as the compaction settings take it: either a `Budget` (its `available` tokens are used), or
 * a number of prompt tokens that is already net of every reserve.
 * @since 0.1.0
 */
export type Spec = number | Budget

/** The prompt tokens a spec allows: the one number every decision compares against. @since 0.1.0 */
export const tokensOf = (spec: Spec): number => (typeof spec === "number" ? spec : available(spec))

/** The context window a spec stands for (a bare number has no reserves: it is its own window). @since 0.1.0 */
export const contextWindowOf = (spec: Spec): number => (typeof spec === "number" ? spec : spec.contextWindow)

/** The output reserve of a spec (0 for a bare number). @since 0.1.0 */
export const outputReserveOf = (spec: Spec): number => (typeof spec === "number" ? 0 : spec.outputReserve)

/**
 * Whether a prompt of `promptTokens` (tool schemas and reminder included) plus the output reserve fits
 * the context window: the property every render must keep.
 * @since 0.1.0
 */
export const fits = (budget: Budget, promptTokens: number): boolean =>
  promptTokens + budget.outputReserve <= budget.contextWindow
