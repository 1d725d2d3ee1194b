/**
 * The context window: a projection of a stream of {@link WindowEvent}s.
 *
 * Four partitions line up with the slots of an LLM API: `system` (identity and rules), `knowledge`
 * (stable knowledge first, then injected context such as recall), `taskState` + `signals` (goal,
 * subgoals; ephemeral notes cleared after each render), and `history` (turns, tool calls and results:
 * the compression target).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as evolveInternal from "./internal/evolve.js"
import * as HashMap from "effect/HashMap"
import { isUserAsk, Message, textOf, toolResultsOf } from "./Message.js"
import type { WindowEvent } from "./WindowEvent.js"

/** Goal and subgoals, with their token shares of the rendered block (`Window.taskStateShares`). @since 0.1.0 */
export const TaskState = Schema.Struct({
  goal: Schema.NullOr(Schema.String),
  goalTokens: Schema.Int,
  subgoals: Schema.Array(Schema.String),
  subgoalTokens: Schema.Int
})
/** @since 0.1.0 */
export type TaskState = typeof TaskState.Type

/** An ephemeral runtime note for the next render only. @since 0.1.0 */
export const Signal = Schema.Struct({
  id: Schema.String,
  text: Schema.String,
  tokens: Schema.Int
})
/** @since 0.1.0 */
export type Signal = typeof Signal.Type

/** A summary recorded for a tool call/result pair, applied later under pressure. @since 0.1.0 */
export const DeferredSummary = Schema.Struct({
  toolCallId: Schema.String,
  resultMessageId: Schema.String,
  summary: Schema.String,
  tokens: Schema.Int
})
/** @since 0.1.0 */
export type DeferredSummary = typeof DeferredSummary.Type

/** A seam message in the window and its level. @since 0.1.0 */
export const SeamRef = Schema.Struct({
  messageId: Schema.String,
  level: Schema.Int
})
/** @since 0.1.0 */
export type SeamRef = typeof SeamRef.Type

/** Compaction bookkeeping. @since 0.1.0 */
export const CompactionState = Schema.Struct({
  /** Turns completed in this stream. */
  turn: Schema.Int,
  /** Turns since the last hard compaction (every turn counts). */
  turnsSinceHard: Schema.Int,
  /** Turns left in the cooldown after a hard compaction. */
  cooldownRemaining: Schema.Int,
  /** Guard: a compaction already ran this turn. */
  compactedThisTurn: Schema.Boolean
})
/** @since 0.1.0 */
export type CompactionState = typeof CompactionState.Type

/** Cached token totals per partition. @since 0.1.0 */
export const Tokens = Schema.Struct({
  system: Schema.Int,
  knowledge: Schema.Int,
  taskState: Schema.Int,
  signals: Schema.Int,
  history: Schema.Int,
  total: Schema.Int
})
/** @since 0.1.0 */
export type Tokens = typeof Tokens.Type

/** Estimated against provider-reported prompt tokens, summed over renders. @since 0.1.0 */
export const Calibration = Schema.Struct({
  estimatedInputTokens: Schema.Int,
  reportedInputTokens: Schema.Int,
  observations: Schema.Int
})
/** @since 0.1.0 */
export type Calibration = typeof Calibration.Type

/** The projected window. Plain data: it encodes to JSON for snapshots. @since 0.1.0 */
export const Window = Schema.Struct({
  /** Number of events folded in: equals the stream version. */
  version: Schema.Int,
  system: Schema.Array(Message),
  knowledge: Schema.Array(Message),
  taskState: TaskState,
  signals: Schema.Array(Signal),
  history: Schema.Array(Message),
  tokens: Tokens,
  completedToolIds: Schema.Array(Schema.String),
  compaction: CompactionState,
  /** Tool call ids whose pairs wait for a deferred summary. */
  pendingToolPairs: Schema.Array(Schema.String),
  deferredSummaries: Schema.Array(DeferredSummary),
  seams: Schema.Array(SeamRef),
  cycle: Schema.Int,
  /** The rolling summary carried into the next compaction. */
  carryOver: Schema.NullOr(Schema.String),
  /** Stream version through which history has been compacted. */
  watermark: Schema.NullOr(Schema.Int),
  calibration: Calibration
})
/** @since 0.1.0 */
export type Window = typeof Window.Type

/** The partitions that hold messages. @since 0.1.0 */
export type MessagePartition = "system" | "knowledge" | "history"

/** The window before any event. @since 0.1.0 */
export const empty: Window = evolveInternal.empty

/**
 * Fold one event into the window. Pure and total: no clock, no randomness, no I/O.
 * @since 0.1.0
 */
export const evolve: (window: Window, event: WindowEvent) => Window = evolveInternal.evolve

/** Fold events, in order, from `from` (the empty window by default). @since 0.1.0 */
export const replay = (events: Iterable<WindowEvent>, from: Window = empty): Window =>
  evolveInternal.replay(events, from)

/** Every message in render order: system, knowledge, history. @since 0.1.0 */
export const messages = (window: Window): ReadonlyArray<Message> => [
  ...window.system,
  ...window.knowledge,
  ...window.history
]

/** Find a message anywhere in the window (history by its index: O(log n)). @since 0.1.0 */
export const findMessage = (window: Window, id: string): Message | undefined =>
  window.system.find((message) => message.id === id) ??
  window.knowledge.find((message) => message.id === id) ??
  evolveInternal.stateOf(window).history.get(id)

/**
 * Ids of the history messages holding tool results the model has not seen yet, oldest first: appended
 * after the last `PromptRendered` and after the last assistant message (an answer proves the model read
 * them, for streams that record no renders). A window that did not come from `evolve` (a decoded
 * snapshot, a hand-built window) counts every result after the last assistant message. O(those results).
 * @since 0.3.0
 */
export const unseenToolResults = (window: Window): ReadonlyArray<string> => {
  const state = evolveInternal.stateOf(window)
  return state.unseen.filter((id) => state.history.has(id))
}

/**
 * Whether a result for the tool call `toolCallId` has been appended (it is in `completedToolIds`, also
 * after compaction folded it). O(1): the fold keeps the set.
 * @since 0.8.0
 */
export const hasToolResult = (window: Window, toolCallId: string): boolean =>
  evolveInternal.stateOf(window).completed.has(toolCallId)

/** Tool call ids answered by the results of {@link unseenToolResults}. @since 0.3.0 */
export const unseenToolCallIds = (window: Window): ReadonlySet<string> => {
  const state = evolveInternal.stateOf(window)
  const ids = new Set<string>()
  for (const id of unseenToolResults(window)) {
    const message = state.history.get(id)
    if (message !== undefined) for (const result of toolResultsOf(message)) ids.add(result.toolCallId)
  }
  return ids
}

/**
 * The messages no removal path may drop: every unseen tool result ({@link unseenToolResults}) and the
 * history message that makes each call it answers (a result without its call could not be sent), and
 * since issue 39 every message making a call still waiting for its result ({@link pendingToolCalls}: its
 * result could never be appended). A path that cannot fit them may truncate a result's content (head
 * and tail), never drop it; the turn's fit, as its last resort when they alone do not fit, cuts the
 * longest text among them (a result's content or the calling message's text) to its head and tail with
 * the whole text in the file store, readable with `read_output` (`UnseenCut`, ADR 0147): every one of
 * them is still sent. O(those messages).
 * @since 0.3.0
 */
export const unseenToolPairs = (window: Window): ReadonlySet<string> => {
  const state = evolveInternal.stateOf(window)
  const ids = new Set<string>()
  for (const callId of state.open) {
    const maker = HashMap.get(state.calls, callId)
    if (maker._tag === "Some") ids.add(maker.value)
  }
  for (const id of unseenToolResults(window)) {
    ids.add(id)
    const message = state.history.get(id)
    if (message === undefined) continue
    for (const result of toolResultsOf(message)) {
      const maker = HashMap.get(state.calls, result.toolCallId)
      if (maker._tag === "Some") ids.add(maker.value)
    }
  }
  return ids
}

/**
 * Tool call ids made in history that have no result yet, oldest first: the calls waiting for their
 * results. O(those calls).
 * @since 0.8.0
 */
export const pendingToolCalls = (window: Window): ReadonlyArray<string> => evolveInternal.stateOf(window).open

/**
 * The id of the user's latest ask: the newest user chat message in history that is not a tool result
 * (issue 39). No compaction plan folds it and no trim drops it, as for a pinned message, so every render
 * of the turn holds what the user asked (an input too long for the turn is cut to its head and tail
 * before it is appended). O(1): the fold keeps it; history is searched only after that ask left it.
 * @since 0.8.0
 */
export const latestUserAsk = (window: Window): string | undefined => {
  const state = evolveInternal.stateOf(window)
  // Kept by the fold in O(the change); searched for only after the ask it knew left history.
  if (state.latestAsk !== null) return state.latestAsk
  for (const message of state.history.reversed()) {
    if (isUserAsk(message)) return message.id
  }
  return undefined
}

/** The highest seam level present, if any. @since 0.1.0 */
export const highestSeamLevel = (window: Window): number | undefined =>
  window.seams.length === 0 ? undefined : Math.max(...window.seams.map((seam) => seam.level))

/**
 * The ratio reported/estimated prompt tokens observed so far (1 before any usage was reported).
 * Multiply a local estimate by it to correct for a model with no local tokenizer.
 * @since 0.1.0
 */
export const calibrationRatio = (window: Window): number =>
  window.calibration.estimatedInputTokens > 0 && window.calibration.reportedInputTokens > 0
    ? window.calibration.reportedInputTokens / window.calibration.estimatedInputTokens
    : 1

/** Decode an unknown value (for example a stored snapshot) into a Window. @since 0.1.0 */
export const decodeUnknown = Schema.decodeUnknown(Window)
/** Encode a window to its JSON shape. @since 0.1.0 */
export const encode = Schema.encode(Window)

/**
 * The task state as every provider builder renders it: `<task_state>`, `goal: …`, `subgoals:` with
 * numbered lines, `</task_state>`, one per line; `undefined` when there is neither goal nor subgoal.
 * @since 0.1.0
 */
export const renderTaskState = (goal: string | null, subgoals: ReadonlyArray<string>): string | undefined => {
  if (goal === null && subgoals.length === 0) return undefined
  const lines = ["<task_state>"]
  if (goal !== null) lines.push(`goal: ${goal}`)
  if (subgoals.length > 0) {
    lines.push("subgoals:")
    subgoals.forEach((subgoal, index) => {
      lines.push(`${index + 1}. ${subgoal}`)
    })
  }
  lines.push("</task_state>")
  return lines.join("\n")
}

/** The signals as every provider builder renders them (`<signals>`, one `- …` line each); `undefined` when none. @since 0.1.0 */
export const renderSignals = (signals: ReadonlyArray<{ readonly text: string }>): string | undefined =>
  signals.length === 0
    ? undefined
    : ["<signals>", ...signals.map((signal) => `- ${signal.text}`), "</signals>"].join("\n")

/**
 * Task state then signals, one newline between them: the text of the first user turn; `undefined` when
 * both are empty. (The bytes of the first release, so renders recorded before stay rebuildable.)
 * @since 0.1.0
 */
export const renderState = (window: Pick<Window, "taskState" | "signals">): string | undefined => {
  const state = renderTaskState(window.taskState.goal, window.taskState.subgoals)
  const signals = renderSignals(window.signals)
  return state === undefined ? signals : signals === undefined ? state : `${state}\n${signals}`
}

/**
 * Token shares of the rendered task state: the goal's share is the tokens of the block with the goal alone;
 * the subgoals' share is the rest of the block with both. Their sum is the count of
 * {@link renderTaskState} followed by the newline that separates it from the signals, so
 * `tokens.taskState + tokens.signals` is what a builder sends (exact with BPE encodings, where the
 * closing `>` and the newline are one token; never short with a character count). Setting the goal
 * changes the subgoals' share too, so callers write both.
 * @since 0.1.0
 */
export const taskStateShares = (
  count: (text: string) => number,
  goal: string | null,
  subgoals: ReadonlyArray<string>
): { readonly goalTokens: number; readonly subgoalTokens: number } => {
  const block = (goal: string | null, subgoals: ReadonlyArray<string>) => {
    const text = renderTaskState(goal, subgoals)
    return text === undefined ? 0 : count(`${text}\n`)
  }
  const goalTokens = goal === null ? 0 : block(goal, [])
  return { goalTokens, subgoalTokens: subgoals.length === 0 ? 0 : Math.max(0, block(goal, subgoals) - goalTokens) }
}

/**
 * The token share of a new signal: what it adds to the rendered signals block (the first one carries
 * the `<signals>` wrapper). Signals only grow until a render clears them all, so the shares sum to the
 * count of {@link renderSignals}.
 * @since 0.1.0
 */
export const signalShare = (count: (text: string) => number, signals: ReadonlyArray<Signal>, text: string): number => {
  let before = 0
  for (const signal of signals) before += signal.tokens
  return Math.max(0, count(renderSignals([...signals, { text }]) ?? "") - before)
}

/**
 * Context as every provider builder sends it, so the model can tell what it is:
 * `<context kind="…">`, the text, `</context>`, one per line. `kind` is the message's injected kind (a
 * system message of kind `chat` found in history is labelled by its role, `system`).
 * @since 0.1.0
 */
export const renderContext = (kind: string, text: string): string => `<context kind="${kind}">\n${text}\n</context>`

/**
 * The tokens a message takes when a builder sends it wrapped by {@link renderContext} under `label`:
 * its own count (`countMessage`, the per-message overhead and media included) plus what the wrapper
 * adds to its text. Exact for a text-only message (the count of the wrapped text plus the overhead);
 * a message with no text is sent with no wrapper, so nothing is added.
 * @since 0.1.0
 */
export const wrappedTokens = (
  counter: { readonly count: (text: string) => number },
  label: string,
  message: Pick<Message, "parts">,
  ownTokens: number
): number => {
  const text = textOf(message)
  if (text.length === 0) return ownTokens
  return ownTokens + Math.max(0, counter.count(renderContext(label, text)) - counter.count(text))
}
