/** What every builder shares: budgets, compression planning, tool schema sizes. */
import { type LanguageModel, Message, ToolPairs, Window } from "@ctxlog/core"
import type { BuildStats, CompressionPlan } from "../CtxBuilder.js"
import { roughTokens } from "./sections.js"

/** The effective budget: the configured window, never below `floor`, never above `ceiling`. */
export const clampBudget = (configured: number, floor: number, ceiling: number | undefined): number =>
  Math.max(floor, ceiling === undefined ? configured : Math.min(configured, ceiling))

/** Whether the calibrated estimate of the window passes `threshold` of the budget. */
export const needsCompression = (window: Window.Window, budget: number, threshold: number): boolean =>
  window.tokens.total * Window.calibrationRatio(window) >= budget * threshold

/** Render messages as a plain transcript, for a summarizer to read. */
export const transcriptOf = (messages: ReadonlyArray<Message.Message>): string =>
  messages
    .flatMap((message) => {
      const lines: Array<string> = []
      const label = message.kind === "chat" ? message.role : `${message.role}/${message.kind}`
      const text = Message.textOf(message)
      if (text.length > 0) lines.push(`[${label}] ${text}`)
      for (const call of Message.toolCallsOf(message)) {
        lines.push(`[${label} → tool_call ${call.id} ${call.name}] ${JSON.stringify(call.input)}`)
      }
      for (const result of Message.toolResultsOf(message)) {
        lines.push(`[tool_result ${result.toolCallId}${result.isError ? " error" : ""}] ${result.content}`)
      }
      return lines
    })
    .join("\n")

/**
 * Keep the newest history that fits `keepCeiling` tokens (always the newest tool round) plus every
 * pinned round; the rest is to be summarized. Works on whole tool rounds, so a call and its results
 * are kept or removed together.
 */
export const compressionPlan = (window: Window.Window, keepCeiling: number): CompressionPlan => {
  const groups = ToolPairs.groups(window.history)
  const kept = new Set<string>()
  let keptTokens = 0
  let open = true
  for (let index = groups.length - 1; index >= 0; index--) {
    const group = groups[index] ?? []
    const tokens = group.reduce((total, message) => total + message.tokens, 0)
    const pinned = group.some((message) => message.pinned === true)
    const newest = index === groups.length - 1
    if (newest || pinned || (open && keptTokens + tokens <= keepCeiling)) {
      for (const message of group) kept.add(message.id)
      keptTokens += tokens
    } else {
      open = false
    }
  }
  const removed = window.history.filter((message) => !kept.has(message.id))
  return {
    removeIds: removed.map((message) => message.id),
    content: transcriptOf(removed),
    tokens: removed.reduce((total, message) => total + message.tokens, 0),
    keptTokens
  }
}

/** A rough token count of tool schemas (the log does not count them). */
export const toolTokens = (tools: ReadonlyArray<LanguageModel.ToolSpec> | undefined): number =>
  tools === undefined || tools.length === 0 ? 0 : roughTokens(JSON.stringify(tools))

/** The stats of a render. */
export const statsOf = (
  window: Window.Window | undefined,
  tools: ReadonlyArray<LanguageModel.ToolSpec> | undefined,
  budget: number,
  cacheBreakpoints: number
): BuildStats => {
  const tokens = window?.tokens ?? { system: 0, knowledge: 0, taskState: 0, signals: 0, history: 0, total: 0 }
  const schemaTokens = toolTokens(tools)
  return { tokens, toolTokens: schemaTokens, total: tokens.total + schemaTokens, budget, cacheBreakpoints }
}
