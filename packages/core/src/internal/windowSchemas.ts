/**
 * The schemas of the window's parts, below `Window.ts`, `WindowEvent.ts` and the projection so none of
 * them imports another's types (no import cycle). `Window.ts` re-exports every name.
 */
import * as Schema from "effect/Schema"
import { Message } from "../Message.js"

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
