/**
 * Tool-output pruning: the newest tool results stay whole; older outputs are replaced by a short
 * stub that keeps the call/result structure valid (the tool_result part stays, only its content
 * shrinks). Per-tool limits override the defaults. Recorded as `ToolOutputPruned`. A result the
 * model has not seen yet is never pruned; `truncateToFit` is the one way such a result shrinks.
 * Images and documents are pruned the same way (`pruneMedia`): older ones become text stubs,
 * recorded as `MediaPruned`.
 *
 * @since 0.1.0
 */
import {
  type ContextService,
  type EventLog,
  Message,
  type TokenCounter,
  type Window,
  type WindowEvent
} from "@ctxlog/core"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { runCounted } from "./internal/metadata.js"
import { relevance, similarity, termsOf } from "./internal/relevance.js"
import { unseenToolCallIds } from "./internal/unseen.js"

// Exact optionals where the type always had them (`?: T`), `?: T | undefined` where it took an explicit undefined.
const exact = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const Count = Schema.Int.pipe(Schema.nonNegative())

/**
 * Limits for one tool. A schema (ADR 0156): the turn policy's `compaction.prune.perTool` decodes with it.
 * @since 0.1.0
 */
export const ToolLimit = Schema.Struct({
  /** Newest results of this tool kept whole (overrides the global `keepRecent` for this tool). */
  keepRecent: exact(Count),
  /** A kept result longer than this many characters is cut to its head and tail. */
  maxChars: exact(Count)
})
/** @since 0.1.0 */
export type ToolLimit = typeof ToolLimit.Type

/**
 * Which tool outputs go first, as in the source API:
 * - `Default`: oldest first.
 * - `TaskAware`: least relevant to the task goal first.
 * - `Mig`: least marginal information gain first (relevance to the goal minus redundancy with newer outputs).
 * - `Subgoal`: oldest first, but outputs relevant to the active subgoal are never pruned.
 * - `SubgoalMig`: `Subgoal`'s protection with `Mig`'s order.
 * The order matters when pruning stops at `targetTokens`.
 * @since 0.1.0
 */
export const Strategy = Schema.Literal("Default", "TaskAware", "Mig", "Subgoal", "SubgoalMig")
/** @since 0.1.0 */
export type Strategy = typeof Strategy.Type

/** Every strategy. @since 0.1.0 */
export const strategies: ReadonlyArray<Strategy> = Strategy.literals

/**
 * Pruning options: one schema, the type derived from it (ADR 0156). The turn policy's `compaction.prune`
 * is its `strategy`, `keepRecent`, `minChars` and `perTool` (`Options.pick`).
 * @since 0.1.0
 */
export const Options = Schema.Struct({
  /** Which outputs go first (default `Default`). */
  strategy: Schema.optional(Strategy),
  /**
   * Stop pruning once the window's (uncalibrated) total is at or below this many tokens. Without it,
   * every output outside `keepRecent` is pruned.
   */
  targetTokens: Schema.optional(Schema.Number),
  /** Newest tool results kept whole (default 3). */
  keepRecent: Schema.optional(Count),
  /** Outputs shorter than this many characters are never pruned (default 200). */
  minChars: Schema.optional(Count),
  /** Per-tool limits, by tool name. */
  perTool: Schema.optional(Schema.Record({ key: Schema.String, value: ToolLimit })),
  /**
   * Prune only when at least this many outputs would change (default 1). A larger batch changes the
   * rendered prefix less often, so provider prompt caches keep hitting.
   */
  batch: Schema.optional(Schema.Number),
  /**
   * Prune only when it frees at least this many tokens (default 0), like Anthropic's
   * `clear_at_least`: a prefix break must be worth it.
   */
  clearAtLeast: Schema.optional(Schema.Number)
})
/** @since 0.1.0 */
export type Options = typeof Options.Type

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

interface Candidate {
  readonly message: Message.Message
  readonly result: Message.ToolResultPart
  readonly name: string
  /** 0 for the newest result. */
  readonly age: number
  readonly content: string
  /** Whether the replacement is a stub (optional under a target) or a head-and-tail cut (always made). */
  readonly stubbed: boolean
  readonly terms: ReadonlySet<string>
}

/** Whether a strategy reads the task goal (so the goal should be refreshed under it). @since 0.1.0 */
export const usesGoal = (strategy: Strategy): boolean =>
  strategy === "TaskAware" || strategy === "Mig" || strategy === "SubgoalMig"

/** Whether a strategy reads the subgoals (so they should be refreshed under it). @since 0.1.0 */
export const usesSubgoals = (strategy: Strategy): boolean => strategy === "Subgoal" || strategy === "SubgoalMig"

/** Relevance to the active subgoal from which a tool output is protected under `Subgoal` strategies. */
const subgoalProtection = 0.5

/**
 * Order stub candidates: the first is pruned first. `Default`: oldest first. `TaskAware`: least
 * relevant to the goal first. `Mig` / `SubgoalMig`: least marginal information gain first (relevance
 * to the goal minus the highest similarity to a newer output: a redundant output goes early).
 */
const ordered = (
  candidates: ReadonlyArray<Candidate>,
  strategy: Strategy,
  goal: ReadonlySet<string>
): ReadonlyArray<Candidate> => {
  const byAge = [...candidates].sort((a, b) => b.age - a.age)
  if (strategy === "Default" || strategy === "Subgoal") return byAge
  const score = new Map<Candidate, number>()
  for (const candidate of byAge) {
    const gain = relevance(candidate.terms, goal)
    if (strategy === "TaskAware") {
      score.set(candidate, gain)
      continue
    }
    let redundancy = 0
    for (const other of candidates) {
      if (other.age < candidate.age) redundancy = Math.max(redundancy, similarity(candidate.terms, other.terms))
    }
    score.set(candidate, gain - redundancy)
  }
  // Stable sort: equal scores keep the oldest first.
  return byAge.sort((a, b) => (score.get(a) ?? 0) - (score.get(b) ?? 0))
}

/**
 * The pruning decision for a window, or `undefined` when nothing would change. `countMessage` gives
 * a rewritten message its new token count.
 *
 * A tool result the model has not seen yet (after the last assistant message) is never pruned, stubbed
 * or cut here. With `targetTokens`, stubs are taken in the strategy's order only until the window's
 * total falls to the target.
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
  const strategy = options.strategy ?? "Default"
  const goal = usesGoal(strategy) ? termsOf(window.taskState.goal ?? "") : new Set<string>()
  const activeSubgoal = usesSubgoals(strategy) ? termsOf(window.taskState.subgoals[0] ?? "") : new Set<string>()
  const deferred = new Set(window.deferredSummaries.map((summary) => summary.toolCallId))
  const unseen = unseenToolCallIds(window)
  const calls = new Map<string, Message.ToolCallPart>()
  for (const message of window.history) {
    for (const call of Message.toolCallsOf(message)) calls.set(call.id, call)
  }
  // Rank every result, newest first: globally and within its tool.
  const candidates: Array<Candidate> = []
  let rank = 0
  const rankByTool = new Map<string, number>()
  for (let index = window.history.length - 1; index >= 0; index--) {
    const message = window.history[index]
    if (message === undefined) continue
    const results = Message.toolResultsOf(message)
    for (let r = results.length - 1; r >= 0; r--) {
      const result = results[r]
      if (result === undefined) continue
      const call = calls.get(result.toolCallId)
      const name = call?.name ?? "tool"
      const toolRank = rankByTool.get(name) ?? 0
      rankByTool.set(name, toolRank + 1)
      const globalRank = rank
      rank += 1
      if (result.content.startsWith(stubPrefix) || deferred.has(result.toolCallId) || unseen.has(result.toolCallId)) {
        continue
      }
      const terms = termsOf(`${JSON.stringify(call?.input ?? null)} ${result.content}`)
      const limit = perTool[name]
      const keptWhole = limit?.keepRecent === undefined ? globalRank < keepRecent : toolRank < limit.keepRecent
      const protectedBySubgoal = activeSubgoal.size > 0 && relevance(terms, activeSubgoal) >= subgoalProtection
      let content = result.content
      let stubbed = false
      if (keptWhole || protectedBySubgoal) {
        if (limit?.maxChars !== undefined && content.length > limit.maxChars)
          content = headAndTail(content, limit.maxChars)
      } else if (content.length >= minChars) {
        content = stub(name, content, result.isError)
        stubbed = true
      }
      if (content === result.content || content.length >= result.content.length) continue
      candidates.push({ message, result, name, age: globalRank, content, stubbed, terms })
    }
  }
  let chosen: ReadonlyArray<Candidate> = candidates
  if (options.targetTokens !== undefined) {
    let total = window.tokens.total
    const cuts = candidates.filter((candidate) => !candidate.stubbed)
    const taken: Array<Candidate> = [...cuts]
    const freedBy = (candidate: Candidate) =>
      candidate.message.tokens -
      countMessage({
        parts: candidate.message.parts.map((part) =>
          part.type === "tool_result" && part.toolCallId === candidate.result.toolCallId
            ? { ...part, content: candidate.content }
            : part
        )
      })
    for (const cut of cuts) total -= freedBy(cut)
    for (const candidate of ordered(
      candidates.filter((c) => c.stubbed),
      strategy,
      goal
    )) {
      if (total <= options.targetTokens) break
      taken.push(candidate)
      total -= freedBy(candidate)
    }
    chosen = taken
  }
  const replacements = new Map<string, Map<string, string>>()
  for (const candidate of chosen) {
    const forMessage = replacements.get(candidate.message.id) ?? new Map<string, string>()
    forMessage.set(candidate.result.toolCallId, candidate.content)
    replacements.set(candidate.message.id, forMessage)
  }
  const changed = chosen.length
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

/** What a result truncated to fit says where it was cut: how much, and how to get the rest. @since 0.1.0 */
export const fitMarker = (cut: number, total: number, toolCallId: string): string =>
  `\n[... ${cut} of ${total} characters cut to fit the context window. The full output of tool call ` +
  `${toolCallId} stays in the event log; re-run the tool on a narrower range, or page through its output, ` +
  `to read the rest ...]\n`

/** `content` cut to `keepChars` characters (60% head, 40% tail) around a {@link fitMarker}. @since 0.1.0 */
export const cutToFit = (content: string, keepChars: number, toolCallId: string): string => {
  if (content.length <= keepChars) return content
  const keep = Math.max(0, Math.floor(keepChars))
  const head = Math.floor(keep * 0.6)
  const tail = keep - head
  return `${content.slice(0, head)}${fitMarker(content.length - keep, content.length, toolCallId)}${
    tail === 0 ? "" : content.slice(content.length - tail)
  }`
}

/**
 * Truncate the tool results the model has not seen yet, largest first, until the window's
 * (uncalibrated) total is at most `budgetTokens`; `undefined` when it already fits or there is no
 * unseen result. Each result keeps its head and tail around a marker saying how much was cut and how
 * to read the rest. This is the only way an unseen result shrinks: it is never stubbed or summarized.
 * @since 0.1.0
 */
export const planFit = (
  window: Window.Window,
  budgetTokens: number,
  countMessage: (message: { readonly parts: ReadonlyArray<Message.Part> }) => number
): WindowEvent.EventOf<"ToolOutputPruned">["outputs"] | undefined => {
  let over = window.tokens.total - budgetTokens
  if (over <= 0) return undefined
  const unseen = unseenToolCallIds(window)
  const parts = new Map(window.history.map((message) => [message.id, message.parts]))
  const tokens = new Map(window.history.map((message) => [message.id, message.tokens]))
  const results = window.history
    .flatMap((message) =>
      Message.toolResultsOf(message)
        .filter((result) => unseen.has(result.toolCallId))
        .map((result) => ({ messageId: message.id, result }))
    )
    .sort((a, b) => b.result.content.length - a.result.content.length)
  const outputs: Array<WindowEvent.EventOf<"ToolOutputPruned">["outputs"][number]> = []
  for (const { messageId, result } of results) {
    if (over <= 0) break
    const current = tokens.get(messageId) ?? 0
    const currentParts = parts.get(messageId) ?? []
    const target = Math.max(0, current - over)
    const rewrite = (keepChars: number) => {
      const content = cutToFit(result.content, keepChars, result.toolCallId)
      const rewritten = currentParts.map((part) =>
        part.type === "tool_result" && part.toolCallId === result.toolCallId ? { ...part, content } : part
      )
      return { content, parts: rewritten, tokens: countMessage({ parts: rewritten }) }
    }
    // Shrink the kept share until the message fits its target (a few passes: counts are not linear).
    let keep = Math.floor((result.content.length * target) / Math.max(1, current))
    let attempt = rewrite(keep)
    for (let pass = 0; pass < 12 && attempt.tokens > target && keep > 0; pass++) {
      keep = Math.max(0, Math.floor((keep * target) / Math.max(1, attempt.tokens)) - 16)
      attempt = rewrite(keep)
    }
    if (attempt.content.length >= result.content.length) continue
    over -= current - attempt.tokens
    parts.set(messageId, attempt.parts)
    tokens.set(messageId, attempt.tokens)
    outputs.push({ messageId, toolCallId: result.toolCallId, content: attempt.content, tokens: attempt.tokens })
  }
  return outputs.length === 0 ? undefined : outputs
}

/** The draft truncating unseen tool results to fit `budgetTokens`, if any. @since 0.1.0 */
export const decideFit = (
  window: Window.Window,
  budgetTokens: number,
  countMessage: (message: { readonly parts: ReadonlyArray<Message.Part> }) => number
): ReadonlyArray<WindowEvent.Draft> => {
  const outputs = planFit(window, budgetTokens, countMessage)
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
> => runCounted(stream, "pruneToolOutputs", (window, countMessage) => decide(window, options, countMessage))

/** Image and document pruning options. @since 0.3.0 */
export interface MediaOptions {
  /** Newest images and documents kept whole (default 1). */
  readonly keepRecent?: number
  /** Stop once the window's (uncalibrated) total is at or below this many tokens (oldest go first). */
  readonly targetTokens?: number
}

/** The prefix of every media stub: a stub is text, so it is never pruned again. @since 0.3.0 */
export const mediaStubPrefix = "[pruned"

/** The text that replaces a pruned image or document: what it was and where it came from. @since 0.3.0 */
export const mediaStub = (part: Message.ImagePart | Message.DocumentPart): string => {
  const where = part.source.type === "url" ? part.source.url : part.source.mediaType
  const size = part.type === "image" && part.width !== undefined && part.height !== undefined
  return part.type === "image"
    ? `${mediaStubPrefix} image: ${where}${size ? `, ${part.width}×${part.height}` : ""}]`
    : `${mediaStubPrefix} document${part.title === undefined ? "" : ` "${part.title}"`}: ${where}]`
}

/**
 * The media pruning decision, or `undefined` when nothing would change: images and documents older
 * than the newest `keepRecent` become text stubs (oldest first, until `targetTokens` when given).
 * Media the model has not seen yet (after the last assistant message) are never pruned. Each entry
 * records its message's tokens after the rewrites so far, so the last one leaves the right total.
 * @since 0.3.0
 */
export const planMedia = (
  window: Window.Window,
  options: MediaOptions,
  countMessage: (message: { readonly parts: ReadonlyArray<Message.Part> }) => number
): WindowEvent.EventOf<"MediaPruned">["parts"] | undefined => {
  const keepRecent = options.keepRecent ?? 1
  let lastAssistant = -1
  window.history.forEach((message, index) => {
    if (message.role === "assistant") lastAssistant = index
  })
  // Every seen image or document, oldest first.
  const seen: Array<{ readonly message: Message.Message; readonly partIndex: number }> = []
  let unseenCount = 0
  window.history.forEach((message, index) => {
    message.parts.forEach((part, partIndex) => {
      if (part.type !== "image" && part.type !== "document") return
      if (index > lastAssistant) unseenCount += 1
      else seen.push({ message, partIndex })
    })
  })
  const prunable = seen.slice(0, Math.max(0, seen.length - Math.max(0, keepRecent - unseenCount)))
  if (prunable.length === 0) return undefined
  const out: Array<WindowEvent.EventOf<"MediaPruned">["parts"][number]> = []
  const partsOf = new Map<string, ReadonlyArray<Message.Part>>()
  const tokensOf = new Map<string, number>()
  let total = window.tokens.total
  for (const { message, partIndex } of prunable) {
    if (options.targetTokens !== undefined && total <= options.targetTokens) break
    const parts = partsOf.get(message.id) ?? message.parts
    const part = parts[partIndex]
    if (part === undefined || (part.type !== "image" && part.type !== "document")) continue
    const stub = mediaStub(part)
    const rewritten = parts.map((each, index) => (index === partIndex ? Message.text(stub) : each))
    const tokens = countMessage({ parts: rewritten })
    total -= (tokensOf.get(message.id) ?? message.tokens) - tokens
    partsOf.set(message.id, rewritten)
    tokensOf.set(message.id, tokens)
    out.push({ messageId: message.id, partIndex, stub, tokens })
  }
  return out.length === 0 ? undefined : out
}

/** The draft to append for a media pruning decision, if any. @since 0.3.0 */
export const decideMedia = (
  window: Window.Window,
  options: MediaOptions,
  countMessage: (message: { readonly parts: ReadonlyArray<Message.Part> }) => number
): ReadonlyArray<WindowEvent.Draft> => {
  const parts = planMedia(window, options, countMessage)
  return parts === undefined ? [] : [{ _tag: "MediaPruned", parts }]
}

/** Prune the older images and documents of a stream now, recorded as `MediaPruned`. @since 0.3.0 */
export const pruneMedia = (
  stream: EventLog.StreamId,
  options: MediaOptions = {}
): Effect.Effect<
  ContextService.Outcome,
  ContextService.LogError,
  ContextService.ContextService | TokenCounter.TokenCounter
> => runCounted(stream, "pruneMedia", (window, countMessage) => decideMedia(window, options, countMessage))
