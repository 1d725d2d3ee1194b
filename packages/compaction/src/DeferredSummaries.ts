/**
 * Deferred tool-pair summaries. Large tool outputs are summarized soon after they arrive, but the
 * summary is only recorded (`ToolPairSummaryDeferred`); it replaces the output later, under pressure
 * (`DeferredSummariesApplied`), so the rendered prefix does not change every turn.
 *
 * @since 0.1.0
 */
import {
  Budget,
  Compactor,
  ContextService,
  type EventLog,
  Message,
  TokenCounter,
  Tracing,
  Window,
  type WindowEvent
} from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { by } from "./internal/metadata.js"
import { unseenToolCallIds } from "./internal/unseen.js"

/** Options of tool-pair summarization. @since 0.1.0 */
export interface Options {
  /** A tool result message above this many tokens gets a deferred summary (default 1000). */
  readonly cutoffTokens?: number
  /** Upper bound of each pair summary in tokens (default a quarter of the cutoff, at most 256). */
  readonly maxSummaryTokens?: number
}

/** What `maybeSummarizeToolPair` did. @since 0.1.0 */
export interface SummarizeResult {
  /** Tool call ids newly queued. */
  readonly queued: ReadonlyArray<string>
  /** Tool call ids whose summary was recorded. */
  readonly deferred: ReadonlyArray<string>
}

/** When to apply the deferred summaries. @since 0.1.0 */
export interface ApplyPolicy {
  /** The token budget: a `Budget` (its available tokens) or a number already net of the reserves. */
  readonly budget: Budget.Spec
  /** Share of the budget above which summaries are applied (default 0.7). */
  readonly softThreshold?: number
  /** Apply as soon as this many summaries wait (default 8). */
  readonly countCutoff?: number
}

// A pair summary needs no document title (the template compactor starts with one).
const withoutTitle = (summary: string): string =>
  summary
    .trim()
    .replace(/^# [^\n]*\n+/, "")
    .trim()

const cutoffOf = (options: Options): number => options.cutoffTokens ?? 1000

interface Pair {
  readonly call: Message.ToolCallPart
  readonly callMessage: Message.Message
  readonly result: Message.ToolResultPart
  readonly resultMessage: Message.Message
}

const pairsOf = (window: Window.Window): ReadonlyMap<string, Pair> => {
  const calls = new Map<string, { call: Message.ToolCallPart; message: Message.Message }>()
  const pairs = new Map<string, Pair>()
  for (const message of window.history) {
    for (const call of Message.toolCallsOf(message)) calls.set(call.id, { call, message })
    for (const result of Message.toolResultsOf(message)) {
      const call = calls.get(result.toolCallId)
      if (call !== undefined) {
        pairs.set(result.toolCallId, { call: call.call, callMessage: call.message, result, resultMessage: message })
      }
    }
  }
  return pairs
}

/** Completed pairs over the cutoff that are neither queued nor summarized yet, oldest first. @since 0.1.0 */
export const candidates = (window: Window.Window, options: Options = {}): ReadonlyArray<string> => {
  const cutoff = cutoffOf(options)
  // A candidate's result message is over the cutoff: without one, no pair needs pairing up (a turn's
  // window usually has none, and pairing walks every part of the history).
  if (!window.history.some((message) => message.tokens > cutoff && Message.toolResultsOf(message).length > 0)) return []
  const taken = new Set([...window.pendingToolPairs, ...window.deferredSummaries.map((summary) => summary.toolCallId)])
  return [...pairsOf(window).values()]
    .filter((pair) => pair.resultMessage.tokens > cutoff && !taken.has(pair.result.toolCallId))
    .map((pair) => pair.result.toolCallId)
}

/**
 * Queue every tool pair over the size cutoff, then drain the backlog: summarize each queued pair
 * with the `Compactor` and record a deferred summary for it. A pair that left the window stays
 * queued until the queues are flushed. A compactor failure stops the drain; what is left stays
 * queued, so the next call retries.
 * @since 0.1.0
 */
export const maybeSummarizeToolPair: (
  stream: EventLog.StreamId,
  options?: Options
) => Effect.Effect<
  SummarizeResult,
  ContextService.LogError | Compactor.CompactionError,
  ContextService.ContextService | Compactor.Compactor | TokenCounter.TokenCounter
> = Effect.fn("DeferredSummaries.maybeSummarizeToolPair")(function* (stream: EventLog.StreamId, options: Options = {}) {
  yield* Tracing.annotate("stream", stream)
  const ctx = yield* ContextService.ContextService
  const compactor = yield* Compactor.Compactor
  const counter = yield* TokenCounter.TokenCounter
  const cutoff = cutoffOf(options)
  const maxSummaryTokens = options.maxSummaryTokens ?? Math.max(16, Math.min(256, Math.floor(cutoff / 4)))
  const queuedOutcome = yield* ctx.run(
    stream,
    (window) => {
      const ids = candidates(window, options)
      return Either.right<ReadonlyArray<WindowEvent.Draft>>(
        ids.length === 0 ? [] : [{ _tag: "ToolPairsQueued", toolCallIds: ids }]
      )
    },
    by("maybeSummarizeToolPair")
  )
  const queued = queuedOutcome.events.flatMap((event) => (event._tag === "ToolPairsQueued" ? event.toolCallIds : []))
  const deferred: Array<string> = []
  for (const toolCallId of queuedOutcome.window.pendingToolPairs) {
    const pair = pairsOf(yield* ctx.load(stream)).get(toolCallId)
    if (pair === undefined) continue
    // Only this pair goes to the compactor: the call (with the assistant's text) and its result.
    const callMessage: Message.Message = {
      ...pair.callMessage,
      parts: pair.callMessage.parts.filter((part) => part.type !== "tool_call" || part.id === toolCallId)
    }
    const resultMessage: Message.Message = { ...pair.resultMessage, parts: [pair.result] }
    const output = yield* compactor.compact({
      messages: [callMessage, resultMessage],
      previousSummary: null,
      maxSummaryTokens
    })
    const summary = `[summary of ${pair.call.name} output, ${pair.result.content.length} chars] ${withoutTitle(output.summary)}`
    const outcome = yield* ctx.run(
      stream,
      (window) => {
        const current = pairsOf(window).get(toolCallId)
        if (current === undefined || !window.pendingToolPairs.includes(toolCallId)) {
          return Either.right<ReadonlyArray<WindowEvent.Draft>>([])
        }
        const parts = current.resultMessage.parts.map((part) =>
          part.type === "tool_result" && part.toolCallId === toolCallId ? { ...part, content: summary } : part
        )
        return Either.right<ReadonlyArray<WindowEvent.Draft>>([
          {
            _tag: "ToolPairSummaryDeferred",
            toolCallId,
            resultMessageId: current.resultMessage.id,
            summary,
            tokens: counter.countMessage({ parts })
          }
        ])
      },
      by("maybeSummarizeToolPair")
    )
    if (outcome.events.length > 0) deferred.push(toolCallId)
  }
  return { queued, deferred }
})

/**
 * The draft applying every deferred summary (newest first, as evolve applies them), if any. A summary
 * whose output the model has not seen yet (a result after the last assistant message) waits: an
 * unseen output is never replaced by its summary.
 * @since 0.1.0
 */
export const decideApply = (window: Window.Window): ReadonlyArray<WindowEvent.Draft> => {
  const unseen = unseenToolCallIds(window)
  const ids = [...window.deferredSummaries]
    .reverse()
    .map((summary) => summary.toolCallId)
    .filter((toolCallId) => !unseen.has(toolCallId))
  return ids.length === 0 ? [] : [{ _tag: "DeferredSummariesApplied", toolCallIds: ids }]
}

/** Apply every deferred summary now, in reverse order; returns how many were applied. @since 0.1.0 */
export const applyDeferredSummaries = (
  stream: EventLog.StreamId
): Effect.Effect<number, ContextService.LogError, ContextService.ContextService> =>
  Effect.flatMap(ContextService.ContextService, (ctx) =>
    Effect.map(
      ctx.run(stream, (window) => Either.right(decideApply(window)), by("applyDeferredSummaries")),
      (outcome) =>
        outcome.events.reduce(
          (total, event) => total + (event._tag === "DeferredSummariesApplied" ? event.toolCallIds.length : 0),
          0
        )
    )
  )

/** Whether deferred summaries are due: pressure above the soft threshold, or enough of them waiting. @since 0.1.0 */
export const due = (window: Window.Window, policy: ApplyPolicy): boolean =>
  window.deferredSummaries.length > 0 &&
  (window.tokens.total * Window.calibrationRatio(window) >
    Budget.tokensOf(policy.budget) * (policy.softThreshold ?? 0.7) ||
    window.deferredSummaries.length >= (policy.countCutoff ?? 8))

/** Apply the deferred summaries when they are due; returns how many were applied (0 if not due). @since 0.1.0 */
export const maybeApplyDeferredSummaries = (
  stream: EventLog.StreamId,
  policy: ApplyPolicy
): Effect.Effect<number, ContextService.LogError, ContextService.ContextService> =>
  Effect.flatMap(ContextService.ContextService, (ctx) =>
    Effect.map(
      ctx.run(
        stream,
        (window) => Either.right(due(window, policy) ? decideApply(window) : []),
        by("maybeApplyDeferredSummaries")
      ),
      (outcome) =>
        outcome.events.reduce(
          (total, event) => total + (event._tag === "DeferredSummariesApplied" ? event.toolCallIds.length : 0),
          0
        )
    )
  )

/** What a flush did. @since 0.1.0 */
export interface FlushResult {
  /** Queued pairs that had no summary yet: dropped from the queue (they may be queued again). */
  readonly pending: number
  /** Recorded summaries when the flush began. */
  readonly deferred: number
  /** Recorded summaries applied: their outputs were replaced (the originals stay in the log). */
  readonly applied: number
}

/**
 * Flush both queues: apply every recorded summary (each pair's output is replaced by its summary,
 * `DeferredSummariesApplied`; the original stays in the log), then clear what is left
 * (`DeferredSummariesFlushed`): pairs still waiting for a summary, and summaries of outputs the model
 * has not seen yet, which are never applied. Both queues end empty. One append, so a concurrent
 * writer sees all of it or none.
 * @since 0.1.0
 */
export const flushDeferredSummaries = (
  stream: EventLog.StreamId
): Effect.Effect<FlushResult, ContextService.LogError, ContextService.ContextService> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    let result: FlushResult = { pending: 0, deferred: 0, applied: 0 }
    yield* ctx.run(
      stream,
      (window) => {
        const apply = decideApply(window)
        const applied = apply.reduce(
          (total, draft) => total + (draft._tag === "DeferredSummariesApplied" ? draft.toolCallIds.length : 0),
          0
        )
        result = { pending: window.pendingToolPairs.length, deferred: window.deferredSummaries.length, applied }
        const leftOver = result.pending + result.deferred - applied > 0
        return Either.right<ReadonlyArray<WindowEvent.Draft>>([
          ...apply,
          ...(leftOver ? [{ _tag: "DeferredSummariesFlushed" } as const] : [])
        ])
      },
      by("flushDeferredSummaries")
    )
    return result
  })
