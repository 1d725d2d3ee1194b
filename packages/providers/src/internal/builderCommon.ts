/** What every builder shares: budgets, compression planning, tool output limits, tool schema sizes. */
import { Budget, CompressionPlan as Planner, type LanguageModel, Message, Window } from "@ctxlog/core"
import * as Truncation from "../Truncation.js"
import type { BuildOptions, BuildStats, CommonConfig, CompressionPlan, CtxBuilder } from "../CtxBuilder.js"
import { charsPerToken, mediaStub, roughTokens } from "./sections.js"

/** The effective context window: the configured one, never below `floor`, never above `ceiling`. */
export const clampBudget = (
  configured: number | undefined,
  fallback: number,
  floor: number,
  ceiling: number | undefined
): number => {
  // NaN or ±Infinity is no window at all (Math.max(floor, NaN) is NaN, and a NaN or infinite window made a
  // budget of 0 or ∞): take the builder's default, as when nothing was configured (issue 20, behaviour 5).
  const given = configured === undefined || !Number.isFinite(configured) ? fallback : Math.floor(configured)
  return Math.max(floor, ceiling === undefined ? given : Math.min(given, ceiling))
}

/** Render messages as a plain transcript, for a summarizer to read. */
export const transcriptOf = (messages: ReadonlyArray<Message.Message>): string =>
  messages
    .flatMap((message) => {
      const lines: Array<string> = []
      const label = message.kind === "chat" ? message.role : `${message.role}/${message.kind}`
      // Reasoning is offered to the summarizer (which may keep or drop it); media are named, not inlined.
      for (const part of Message.reasoningOf(message)) {
        if (part.text.length > 0) lines.push(`[${label} reasoning] ${part.text}`)
      }
      const text = Message.textOf(message)
      if (text.length > 0) lines.push(`[${label}] ${text}`)
      for (const part of Message.mediaOf(message)) lines.push(`[${label}] ${mediaStub(part)}`)
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
 * The compaction package's planner (whole tool rounds, oversized tails drained, pinned rounds, open
 * calls and unseen tool results kept), with the removed messages as a transcript.
 */
export const compressionPlan = (window: Window.Window, keepCeiling: number): CompressionPlan => {
  const plan = Planner.compressionPlan(window, keepCeiling)
  const removed = new Set(plan.removeIds)
  return {
    ...plan,
    content: transcriptOf(window.history.filter((message) => removed.has(message.id))),
    tokens: plan.removedTokens
  }
}

/** A rough token count of tool schemas (the log does not count them). */
export const toolTokens = (tools: ReadonlyArray<LanguageModel.ToolSpec> | undefined): number =>
  tools === undefined || tools.length === 0 ? 0 : roughTokens(JSON.stringify(tools))

/** How a builder sizes its budget. */
export interface Sizing {
  /** The context window after clamps. */
  readonly ctxWindow: number
  /** The output reserve when neither the render nor the config sets an output limit. */
  readonly defaultOutputReserve: number
  /** Default share of the budget one tool output may take. */
  readonly toolOutputShare: number
  /** The tools as this provider sends them (Ollama trims their schemas). */
  readonly toolsOf?:
    | ((tools: ReadonlyArray<LanguageModel.ToolSpec> | undefined) => ReadonlyArray<LanguageModel.ToolSpec> | undefined)
    | undefined
}

/**
 * The output limit of a render: the render's, else the config's, else the provider default capped at a
 * quarter of the window (a 4,096-token default answer cannot fit a 4K window; an explicit limit is
 * taken as given).
 */
export const outputLimitOf = (sizing: Sizing, config: CommonConfig, options: BuildOptions = {}): number =>
  options.maxOutputTokens ??
  config.maxOutputTokens ??
  Math.min(sizing.defaultOutputReserve, Math.floor(sizing.ctxWindow / 4))

/** The budget of one render: context window − output reserve − tool schemas − reminder. */
export const budgetOf = (sizing: Sizing, config: CommonConfig, options: BuildOptions = {}): Budget.Budget =>
  Budget.make({
    contextWindow: sizing.ctxWindow,
    outputReserve: outputLimitOf(sizing, config, options),
    toolTokens: toolTokens((sizing.toolsOf ?? ((tools) => tools))(options.tools)),
    reminderTokens: options.turnReminder === undefined ? 0 : roughTokens(options.turnReminder)
  })

/**
 * The window's tokens as this render sends them: an overriding `systemPrompt` (rough count, as the
 * render counts it) in place of the identity partition; everything else as the log counted it.
 */
export const promptTokens = (window: Window.Window, options: BuildOptions = {}): number =>
  options.systemPrompt === undefined
    ? window.tokens.total
    : window.tokens.total - window.tokens.system + roughTokens(options.systemPrompt)

/** The shared members of a builder: budget, needsCompression, compressionPlan, truncateToolOutput. */
export const shared = <R>(
  sizing: Sizing,
  config: CommonConfig
): Pick<
  CtxBuilder<R>,
  "ctxWindow" | "defaultOutputReserve" | "budget" | "needsCompression" | "compressionPlan" | "truncateToolOutput"
> => {
  const threshold = config.compressionThreshold ?? 0.8
  const budget = (options?: BuildOptions) => budgetOf(sizing, config, options)
  // The default limit follows the window: a share of the budget with no tools or reminder.
  const limits: Truncation.Limits = config.toolOutputLimits ?? {
    defaultChars: Math.max(
      256,
      Math.floor(Budget.available(budget()) * (config.toolOutputShare ?? sizing.toolOutputShare)) * charsPerToken
    )
  }
  return {
    ctxWindow: sizing.ctxWindow,
    defaultOutputReserve: Math.min(sizing.defaultOutputReserve, Math.floor(sizing.ctxWindow / 4)),
    budget,
    // The budget already holds the output reserve, tool schemas and reminder; the window's total holds
    // the rendered task state and signals; an overriding system prompt replaces the identity's tokens.
    // An exact count of the prompt (ExactTokenCounter), when the caller has one, wins over the estimate.
    needsCompression: (window, options, exactTokens) =>
      (exactTokens ?? promptTokens(window, options) * Window.calibrationRatio(window)) >=
      Budget.available(budget(options)) * threshold,
    compressionPlan,
    truncateToolOutput: (result, toolName) => Truncation.truncateToolOutput(result, toolName, limits)
  }
}

/** The stats of a render. */
export const statsOf = (
  window: Window.Window | undefined,
  budget: Budget.Budget,
  cacheBreakpoints: number,
  unsentTokens = 0
): BuildStats => {
  const tokens = window?.tokens ?? { system: 0, knowledge: 0, taskState: 0, signals: 0, history: 0, total: 0 }
  return {
    tokens,
    toolTokens: budget.toolTokens,
    reminderTokens: budget.reminderTokens,
    unsentTokens,
    total: Math.max(0, tokens.total - unsentTokens) + budget.toolTokens,
    budget: Budget.available(budget),
    contextWindow: budget.contextWindow,
    outputReserve: budget.outputReserve,
    cacheBreakpoints
  }
}
