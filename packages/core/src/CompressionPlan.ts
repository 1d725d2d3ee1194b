/**
 * What a compaction removes and what it summarizes. Pure: a plan is computed from a window and a
 * token ceiling for the history that stays verbatim.
 *
 * @since 0.1.0
 */
import type * as Message from "./Message.js"
import * as ToolPairs from "./ToolPairs.js"
import * as Window from "./Window.js"

/** A compaction plan. @since 0.1.0 */
export interface Plan {
  /** Messages whose content goes to the compactor, oldest first (previous summaries excluded). */
  readonly toSummarize: ReadonlyArray<Message.Message>
  /** Every message id the compaction removes from the window, previous summaries included. */
  readonly removeIds: ReadonlyArray<string>
  /** Previous compaction summaries in history: rolled forward through the carry-over. */
  readonly previousSummaryIds: ReadonlyArray<string>
  /** Tokens of the history that stays verbatim. */
  readonly keptTokens: number
  /** Tokens of the history that leaves. */
  readonly removedTokens: number
}

const tokensOf = (messages: ReadonlyArray<Message.Message>): number =>
  messages.reduce((total, message) => total + message.tokens, 0)

/** Whether the plan would change nothing. @since 0.1.0 */
export const isEmpty = (plan: Plan): boolean => plan.toSummarize.length === 0

/**
 * Plan a compaction of `window.history` that keeps at most `keepCeiling` tokens verbatim.
 *
 * History is cut into tool-pair groups (`ToolPairs.groups`), so a call and its results always stay
 * or leave together. The newest groups stay while they fit under the ceiling; everything older
 * leaves. A tail that does not fit (say a long reasoning message and a large tool output) is drained
 * into the summary too: a ceiling of 1,000 tokens never keeps a 5,000-token newest round. Groups that
 * hold a pinned message, a call still waiting for its result, or a tool result the model has not seen
 * yet always stay (an unseen result that cannot fit is truncated by compaction, never summarized), and
 * so does the group of the user's latest ask (`Window.latestUserAsk`, issue 39): an agent's long turn
 * after one ask is still summarized, the ask kept verbatim before its summary.
 * Previous summaries (kind `summary`) always leave: their text rolls forward.
 *
 * This is the one planner: compaction uses it, and the provider builders' `compressionPlan` is this
 * function too.
 * @since 0.1.0
 */
export const compressionPlan = (window: Window.Window, keepCeiling: number): Plan => {
  const pending = new Set(ToolPairs.pendingCalls(window.history))
  const unseen = new Set(Window.unseenToolResults(window))
  const ask = Window.latestUserAsk(window)
  const groups = ToolPairs.groups(window.history)
  const forced = (group: ReadonlyArray<Message.Message>): boolean =>
    group.some(
      (message) =>
        message.pinned === true ||
        message.id === ask ||
        unseen.has(message.id) ||
        message.parts.some((part) => part.type === "tool_call" && pending.has(part.id))
    )
  const keep = new Set<ReadonlyArray<Message.Message>>()
  let kept = 0
  let open = true
  for (let index = groups.length - 1; index >= 0; index--) {
    const group = groups[index]
    if (group === undefined) continue
    const size = tokensOf(group.filter((message) => message.kind !== "summary"))
    if (forced(group)) {
      keep.add(group)
      kept += size
    } else if (open && kept + size <= keepCeiling) {
      keep.add(group)
      kept += size
    } else {
      // The kept tail is contiguous: once a group does not fit, everything older leaves.
      open = false
    }
  }
  const toSummarize: Array<Message.Message> = []
  const removeIds: Array<string> = []
  const previousSummaryIds: Array<string> = []
  let removedTokens = 0
  for (const group of groups) {
    for (const message of group) {
      if (message.kind === "summary") {
        previousSummaryIds.push(message.id)
        removeIds.push(message.id)
        removedTokens += message.tokens
      } else if (!keep.has(group)) {
        toSummarize.push(message)
        removeIds.push(message.id)
        removedTokens += message.tokens
      }
    }
  }
  // Groups are ordered by their first message; restore history order for the compactor.
  const order = new Map(window.history.map((message, index) => [message.id, index]))
  toSummarize.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0))
  return { toSummarize, removeIds, previousSummaryIds, keptTokens: kept, removedTokens }
}
