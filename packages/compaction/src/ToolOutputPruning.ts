/**
 * Tool-output pruning: the newest tool results stay whole; older outputs are replaced by a short
 * stub that keeps the call/result structure valid (the tool_result part stays, only its content
 * shrinks). Per-tool limits override the defaults. Recorded as `ToolOutputPruned`.
 *
 * @since 0.1.0
 */
import { ContextService, type EventLog, Message, TokenCounter, type Window, type WindowEvent } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { by } from "./internal/metadata.js"

/** Limits for one tool. @since 0.1.0 */
export interface ToolLimit {
  /** Newest results of this tool kept whole (overrides the global `keepRecent` for this tool). */
  readonly keepRecent?: number
  /** A kept result longer than this many characters is cut to its head and tail. */
  readonly maxChars?: number
}

/** Pruning options. @since 0.1.0 */
export interface Options {
  /** Newest tool results kept whole (default 3). */
  readonly keepRecent?: number
  /** Outputs shorter than this many characters are never pruned (default 200). */
  readonly minChars?: number
  /** Per-tool limits, by tool name. */
  readonly perTool?: { readonly [toolName: string]: ToolLimit }
  /**
   * Prune only when at least this many outputs would change (default 1). A larger batch changes the
   * rendered prefix less often, so provider prompt caches keep hitting.
   */
  readonly batch?: number
  /**
   * Prune only when it frees at least this many tokens (default 0), like Anthropic's
   * `clear_at_least`: a prefix break must be worth it.
   */
  readonly clearAtLeast?: number
}

/** The prefix of every stub: a stub is never pruned again. @since 0.1.0 */
export const stubPrefix = "[tool output pruned"

const firstLine = (value: string): string => {
  const line = value.split("\n").find((candidate) => candidate.trim().length > 0) ?? ""
  const flat = line.trim()
  return flat.length <= 100 ? flat : `${flat.slice(0, 99)}…`
}

/** The stub that replaces a pruned output. @since 0.1.0 */
export const stub = (toolName: string, content: string, isError: boolean): string =>
  `${stubPrefix}: ${toolName}, ${content.length} chars${isError ? ", error" : ""}] ${firstLine(content)}`

const marker = (cut: number): string => `\n… [${cut} characters pruned] …\n`

/** Cut `content` to at most `maxChars` characters, keeping its head and tail. */
const headAndTail = (content: string, maxChars: number): string => {
  const room = maxChars - marker(content.length).length
  if (room < 40) return content.slice(0, maxChars)
  const head = Math.floor(room * 0.7)
  const tail = room - head
  return `${content.slice(0, head)}${marker(content.length - head - tail)}${content.slice(content.length - tail)}`
}

/**
 * The pruning decision for a window, or `undefined` when nothing would change. `countMessage` gives
 * a rewritten message its new token count.
 * @since 0.1.0
 */
export const plan = (
  window: Window.Window,
  options: Options,
  countMessage: (message: { readonly parts: ReadonlyArray<Message.Part> }) => number
): WindowEvent.EventOf<"ToolOutputPruned">["outputs"] | undefined => {
  const keepRecent = options.keepRecent ?? 3
  const minChars = options.minChars ?? 200
  const perTool = options.perTool ?? {}
  const deferred = new Set(window.deferredSummaries.map((summary) => summary.toolCallId))
  const names = new Map<string, string>()
  for (const message of window.history) {
    for (const call of Message.toolCallsOf(message)) names.set(call.id, call.name)
  }
  // Rank every result, newest first: globally and within its tool.
  const replacements = new Map<string, Map<string, string>>()
  let rank = 0
  const rankByTool = new Map<string, number>()
  for (let index = window.history.length - 1; index >= 0; index--) {
    const message = window.history[index]
    if (message === undefined) continue
    const results = Message.toolResultsOf(message)
    for (let r = results.length - 1; r >= 0; r--) {
      const result = results[r]
      if (result === undefined) continue
      const name = names.get(result.toolCallId) ?? "tool"
      const toolRank = rankByTool.get(name) ?? 0
      rankByTool.set(name, toolRank + 1)
      const globalRank = rank
      rank += 1
      if (result.content.startsWith(stubPrefix) || deferred.has(result.toolCallId)) continue
      const limit = perTool[name]
      const keptWhole = limit?.keepRecent === undefined ? globalRank < keepRecent : toolRank < limit.keepRecent
      let content = result.content
      if (keptWhole) {
        if (limit?.maxChars !== undefined && content.length > limit.maxChars)
          content = headAndTail(content, limit.maxChars)
      } else if (content.length >= minChars) {
        content = stub(name, content, result.isError)
      }
      if (content === result.content || content.length >= result.content.length) continue
      const forMessage = replacements.get(message.id) ?? new Map<string, string>()
      forMessage.set(result.toolCallId, content)
      replacements.set(message.id, forMessage)
    }
  }
  const changed = [...replacements.values()].reduce((total, forMessage) => total + forMessage.size, 0)
  if (changed === 0 || changed < (options.batch ?? 1)) return undefined
  const outputs: Array<WindowEvent.EventOf<"ToolOutputPruned">["outputs"][number]> = []
  for (const message of window.history) {
    const forMessage = replacements.get(message.id)
    if (forMessage === undefined) continue
    // Several results may share a message: each output records the message's tokens after the
    // rewrites so far, so the last one leaves the right total.
    let parts = message.parts
    for (const [toolCallId, content] of forMessage) {
      parts = parts.map((part) =>
        part.type === "tool_result" && part.toolCallId === toolCallId ? { ...part, content } : part
      )
      outputs.push({ messageId: message.id, toolCallId, content, tokens: countMessage({ parts }) })
    }
  }
  const before = new Map(window.history.map((message) => [message.id, message.tokens]))
  const after = new Map(outputs.map((output) => [output.messageId, output.tokens]))
  let freed = 0
  for (const [messageId, tokens] of after) freed += (before.get(messageId) ?? tokens) - tokens
  return freed < (options.clearAtLeast ?? 0) ? undefined : outputs
}

/** The draft to append for a pruning decision, if any. @since 0.1.0 */
export const decide = (
  window: Window.Window,
  options: Options,
  countMessage: (message: { readonly parts: ReadonlyArray<Message.Part> }) => number
): ReadonlyArray<WindowEvent.Draft> => {
  const outputs = plan(window, options, countMessage)
  return outputs === undefined ? [] : [{ _tag: "ToolOutputPruned", outputs }]
}

/** Prune the tool outputs of a stream now (no pressure check). @since 0.1.0 */
export const pruneToolOutputs = (
  stream: EventLog.StreamId,
  options: Options = {}
): Effect.Effect<
  ContextService.Outcome,
  ContextService.LogError,
  ContextService.ContextService | TokenCounter.TokenCounter
> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const counter = yield* TokenCounter.TokenCounter
    return yield* ctx.run(
      stream,
      (window) => Either.right(decide(window, options, counter.countMessage)),
      by("pruneToolOutputs")
    )
  })
