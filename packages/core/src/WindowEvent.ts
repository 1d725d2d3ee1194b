/**
 * Window events: every change to what an agent sends its model, as an immutable fact.
 *
 * An event records the decision, not the inputs to re-decide it: `HistoryTrimmed` carries the ids it
 * removed, so replay never re-runs a policy and never needs a tokenizer or a model. Every event carries
 * its own `id` (a client-made UUIDv7): re-appending the same ids is idempotent.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { InjectedKind, JsonValue, Message } from "./Message.js"
import { Calibration, SeamRef, Signal, Tokens } from "./Window.js"

/** An event id. @since 0.1.0 */
export const EventId = Schema.String.pipe(Schema.minLength(1))

const base = { id: EventId }

/**
 * What an event that replaced or removed window messages gave up, checkably (issue 39, ADR 0102): the
 * window's tokens before and after it, the tokens the replaced messages held, the events that had put
 * them in the window (their origins: the lineage of a summary or seam), and why. The replaced ids are the
 * event's own list (`removedIds`, `replacedIds`, `messageIds`, the pruned outputs' messages), never a
 * range; `messageIds` is set only where that list does not name them (a memory's demotion, whose
 * messages live outside the window). `ContextService` fills the receipt of every such draft that has
 * none, on the window it decided on, so every path that writes through it gets one.
 * @since 0.8.0
 */
export const Receipt = Schema.Struct({
  /** The window's total tokens (every partition) before the event. */
  tokensBefore: Schema.Int,
  /** The window's total tokens after the event. */
  tokensAfter: Schema.Int,
  /** What the replaced or removed messages held (before the event). */
  replacedTokens: Schema.Int,
  /** Ids of the events that put the replaced messages in the window, first seen first, no repeats. */
  sources: Schema.Array(Schema.String),
  /** Why, as the deciding code put it (a threshold crossed, a budget, a manual call). */
  reason: Schema.optional(Schema.String),
  /** The replaced message ids, only when the event's own list does not name them. */
  messageIds: Schema.optional(Schema.Array(Schema.String)),
  /** Pinned identifiers present in what was replaced and absent from what replaced it. */
  dropped: Schema.optional(Schema.Array(Schema.String))
})
/** @since 0.8.0 */
export type Receipt = typeof Receipt.Type

/** Since the receipts (issue 39): an optional receipt on every event that replaces or removes messages. */
const receipted = { receipt: Schema.optional(Receipt) }

/** The system partition was replaced. @since 0.1.0 */
export const SystemPromptSet = Schema.TaggedStruct("SystemPromptSet", { ...base, messages: Schema.Array(Message) })
/** The stable knowledge was replaced (injected context is kept). @since 0.1.0 */
export const KnowledgeSet = Schema.TaggedStruct("KnowledgeSet", { ...base, messages: Schema.Array(Message) })
/** The task goal was set (or cleared with `null`). @since 0.1.0 */
export const TaskGoalSet = Schema.TaggedStruct("TaskGoalSet", {
  ...base,
  goal: Schema.NullOr(Schema.String),
  tokens: Schema.Int
})
/** The subgoals were replaced. @since 0.1.0 */
export const SubgoalsSet = Schema.TaggedStruct("SubgoalsSet", {
  ...base,
  subgoals: Schema.Array(Schema.String),
  tokens: Schema.Int
})
/** An ephemeral signal was raised for the next render. @since 0.1.0 */
export const SignalRaised = Schema.TaggedStruct("SignalRaised", { ...base, signal: Signal })
/** A message was appended to history. @since 0.1.0 */
export const MessageAppended = Schema.TaggedStruct("MessageAppended", { ...base, message: Message })
/**
 * Injected context of one kind replaced what of that kind knowledge held. `replacesInHistory` is true only
 * in events of schema version 1, which also removed that kind from history (a compaction summary there
 * included); since version 2 an injection never touches history.
 * @since 0.1.0
 */
export const MessagesInjected = Schema.TaggedStruct("MessagesInjected", {
  ...base,
  kind: InjectedKind,
  messages: Schema.Array(Message),
  replacesInHistory: Schema.Boolean
})
/** Messages were removed from the window (they stay in the log). @since 0.1.0 */
export const MessagesRemoved = Schema.TaggedStruct("MessagesRemoved", {
  ...base,
  messageIds: Schema.Array(Schema.String),
  reason: Schema.String,
  ...receipted
})
/** A message was pinned or unpinned (pinned messages survive trimming and compaction). @since 0.1.0 */
export const MessagePinned = Schema.TaggedStruct("MessagePinned", {
  ...base,
  messageId: Schema.String,
  pinned: Schema.Boolean
})
/** The oldest history was dropped to fit a token budget. @since 0.1.0 */
export const HistoryTrimmed = Schema.TaggedStruct("HistoryTrimmed", {
  ...base,
  budget: Schema.Int,
  removedIds: Schema.Array(Schema.String),
  ...receipted
})
/**
 * The conversation was cleared. `scope: "conversation"` (schema version 2): history, injected context,
 * signals and the task state go; the system prompt and stable knowledge stay. `scope: "history"` (what
 * version 1 events did): only history and its bookkeeping went.
 * @since 0.1.0
 */
export const HistoryCleared = Schema.TaggedStruct("HistoryCleared", {
  ...base,
  scope: Schema.Literal("history", "conversation")
})
/** Everything but the system prompt was reset (in place). @since 0.1.0 */
export const ConversationReset = Schema.TaggedStruct("ConversationReset", { ...base })
/**
 * The conversation goes on in a new stream (`resetConversation`): the last event of this one. The window
 * is unchanged; readers follow `into`.
 * @since 0.1.0
 */
export const ConversationContinued = Schema.TaggedStruct("ConversationContinued", {
  ...base,
  into: Schema.String.pipe(Schema.minLength(1))
})
/**
 * The usage calibration of the stream this one continues (`from`), carried over by `resetConversation`
 * so estimates stay corrected in the new stream (issue 20, behaviour 7). Replaces the calibration.
 * @since 0.3.0
 */
export const CalibrationCarried = Schema.TaggedStruct("CalibrationCarried", {
  ...base,
  from: Schema.String.pipe(Schema.minLength(1)),
  calibration: Calibration
})
/** A turn ended (drives compaction cooldowns and counters). @since 0.1.0 */
export const TurnCompleted = Schema.TaggedStruct("TurnCompleted", { ...base })
/**
 * A large, repeated part of a render (tool schemas), stored once per stream and referenced by the
 * SHA-256 (hex) of `content`.
 * @since 0.2.0
 */
export const RenderBlob = Schema.Struct({ sha256: Schema.String, content: Schema.String })
/** @since 0.2.0 */
export type RenderBlob = typeof RenderBlob.Type

/**
 * A prompt-cache breakpoint the caller set (AI SDK `providerOptions.anthropic.cacheControl`, or the
 * `cacheHints` render option): the render marks the last block window message `messageId` renders to,
 * with the cache lifetime `ttl` (absent: the API default, 5 minutes). A hint on a message the rendered
 * window does not hold (compacted, trimmed) marks nothing.
 * @since 0.4.0
 */
export const CacheHint = Schema.Struct({
  messageId: Schema.String.pipe(Schema.minLength(1)),
  ttl: Schema.optional(Schema.Literal("5m", "1h"))
})
/** @since 0.4.0 */
export type CacheHint = typeof CacheHint.Type

/**
 * What a re-render needs besides the window at the version before the render: the builder, its
 * configuration, and the per-render options. Tools are referenced by the hash of a {@link RenderBlob}.
 * @since 0.2.0
 */
export const RenderSpec = Schema.Struct({
  /** The builder's provider config tag (`anthropic`, `openai`, `ollama`, `default`). */
  builder: Schema.String,
  /** The builder's configuration as JSON (the provider package decodes it). */
  config: Schema.Record({ key: Schema.String, value: JsonValue }),
  systemPrompt: Schema.optional(Schema.String),
  turnReminder: Schema.optional(Schema.String),
  /** SHA-256 of the blob holding the tool specs (JSON array), when tools were sent. */
  toolsSha256: Schema.optional(Schema.String),
  maxOutputTokens: Schema.optional(Schema.Int),
  temperature: Schema.optional(Schema.JsonNumber),
  /**
   * Since PromptRendered v5: the caller's cache breakpoints, in the order given. When present the
   * Anthropic builder places these instead of its own; other builders send none (their providers cache
   * on their own).
   */
  cacheHints: Schema.optional(Schema.Array(CacheHint))
})
/** @since 0.2.0 */
export type RenderSpec = typeof RenderSpec.Type

/**
 * Anthropic context editing (`clear_tool_uses_20250919`): when the prompt passes `triggerInputTokens`,
 * the API clears the oldest tool results, keeping the newest `keepToolUses`, clearing at least
 * `clearAtLeastInputTokens`, never the results of `excludeTools`, and the calls' inputs too with
 * `clearToolInputs`. Absent fields take the API's defaults.
 * @since 0.2.0
 */
export const ClearToolUses = Schema.Struct({
  triggerInputTokens: Schema.optional(Schema.Int),
  keepToolUses: Schema.optional(Schema.Int),
  clearAtLeastInputTokens: Schema.optional(Schema.Int),
  excludeTools: Schema.optional(Schema.Array(Schema.String)),
  clearToolInputs: Schema.optional(Schema.Boolean)
})
/** @since 0.2.0 */
export type ClearToolUses = typeof ClearToolUses.Type

/**
 * Anthropic thinking-block clearing (`clear_thinking_20251015`): the API keeps the thinking blocks of
 * the newest `keepThinkingTurns` assistant turns (`"all"`: every one, the best for cache hits) and
 * clears older ones. Absent: the API's default (the last turn's).
 * @since 0.3.0
 */
export const ClearThinking = Schema.Struct({
  keepThinkingTurns: Schema.optional(Schema.Union(Schema.Int.pipe(Schema.positive()), Schema.Literal("all")))
})
/** @since 0.3.0 */
export type ClearThinking = typeof ClearThinking.Type

/**
 * Context management the provider does on its side, as a render asked for it: Anthropic context
 * editing (tool uses, and since PromptRendered v4 thinking blocks) and the memory tool; OpenAI
 * Responses `previous_response_id` chains, `store` and server compaction (`compactThreshold`).
 * Recorded so the log still explains the prompt the model saw.
 * @since 0.2.0
 */
export const ServerContext = Schema.Struct({
  clearToolUses: Schema.optional(ClearToolUses),
  clearThinking: Schema.optional(ClearThinking),
  memoryTool: Schema.optional(Schema.Boolean),
  previousResponseId: Schema.optional(Schema.String),
  store: Schema.optional(Schema.Boolean),
  compactThreshold: Schema.optional(Schema.Int)
})
/** @since 0.2.0 */
export type ServerContext = typeof ServerContext.Type

/**
 * A request was rendered for a provider. Clears signals. Since schema v2 it may carry the `render`
 * spec that rebuilds the request from the window before it, and the `blobs` that spec references
 * which this stream does not hold yet. A v1 event (no spec) is not rebuildable.
 * @since 0.1.0
 */
export const PromptRendered = Schema.TaggedStruct("PromptRendered", {
  ...base,
  provider: Schema.String,
  model: Schema.String,
  tokens: Tokens,
  sha256: Schema.String,
  render: Schema.optional(RenderSpec),
  blobs: Schema.optional(Schema.Array(RenderBlob)),
  /** Since v3: the server-side context management the request asked for (v4: `clearThinking`). */
  serverContext: Schema.optional(ServerContext)
})
/**
 * What the provider reported for a call. `inputTokens` is the whole prompt, cached tokens included;
 * `cacheReadTokens` and `cacheWriteTokens` are parts of it.
 * @since 0.1.0
 */
export const UsageReported = Schema.TaggedStruct("UsageReported", {
  ...base,
  provider: Schema.String,
  model: Schema.String,
  estimatedInputTokens: Schema.Int,
  inputTokens: Schema.Int,
  outputTokens: Schema.Int,
  cacheReadTokens: Schema.Int,
  cacheWriteTokens: Schema.Int,
  /**
   * Since v3: the part of `cacheWriteTokens` written with a 1-hour TTL (Anthropic's
   * `cache_creation.ephemeral_1h_input_tokens`); the rest was written with the 5-minute TTL. Absent: the
   * provider did not split it (all 5-minute, or no TTL at all).
   */
  cacheWrite1hTokens: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  /** Since v2: what the provider cleared or compacted on its side; `inputTokens` is after it. */
  contextEdits: Schema.optional(
    Schema.Struct({ clearedInputTokens: Schema.Int, clearedToolUses: Schema.Int, compactions: Schema.Int })
  )
})

/** One pruned tool output. @since 0.1.0 */
export const PrunedOutput = Schema.Struct({
  messageId: Schema.String,
  toolCallId: Schema.String,
  content: Schema.String,
  tokens: Schema.Int
})
/** Older tool outputs were replaced by short stubs (call/result structure kept). @since 0.1.0 */
export const ToolOutputPruned = Schema.TaggedStruct("ToolOutputPruned", {
  ...base,
  outputs: Schema.Array(PrunedOutput),
  ...receipted
})
/**
 * One pruned image or document: the part at `partIndex` of history message `messageId` became the
 * text `stub`; `tokens` is the message's count after the change.
 * @since 0.3.0
 */
export const PrunedMedia = Schema.Struct({
  messageId: Schema.String,
  partIndex: Schema.Int.pipe(Schema.nonNegative()),
  stub: Schema.String,
  tokens: Schema.Int
})
/** Older images and documents were replaced by short text stubs (as tool outputs are pruned). @since 0.3.0 */
export const MediaPruned = Schema.TaggedStruct("MediaPruned", {
  ...base,
  parts: Schema.Array(PrunedMedia),
  ...receipted
})
/**
 * One text part of a cut message: the part at `partIndex` became `text` (its head and tail, and a marker
 * saying where the rest is).
 * @since 0.8.0
 */
export const CutPart = Schema.Struct({
  partIndex: Schema.Int.pipe(Schema.nonNegative()),
  text: Schema.String
})
/** The fields of a message cut to fit (`UserAskCut`, `UnseenCut`): which parts, to what, where the whole is. */
const cutFields = {
  messageId: Schema.String,
  parts: Schema.Array(CutPart),
  tokens: Schema.Int,
  stored: Schema.NullOr(Schema.String),
  ...receipted
}
/**
 * The user's latest ask was too large for the context window with the system prompt, the tools and the
 * output reserve: its text kept its head and tail verbatim, with a marker naming where the whole text is
 * (issue 39, ADR 0124). `tokens` is the message's count after the cut; `stored` the SHA-256 of the whole
 * text in the stream's file store, or `null` when no file store was there (the log still holds it, in
 * the event that appended the message). The message keeps its id: it is still the ask.
 * @since 0.8.0
 */
export const UserAskCut = Schema.TaggedStruct("UserAskCut", { ...base, ...cutFields })
/**
 * A message of the newest unseen tool round was too large for the context window with everything else
 * the fit could not remove (issue 39, ADR 0147): the tool result the model has not seen yet, or the text
 * of the message making its call, kept its head and tail verbatim with a marker naming where the whole
 * text is: the stream's file store (`read_output` returns it) when one is there, else the log. The fit's
 * last resort for the unseen round, as `UserAskCut` is for the ask: the message stays (with its call or
 * its result), only its longest part is cut. `parts` index the message's parts: a text part's text or a
 * tool result's content is replaced. `tokens` is the message's count after the cut; `stored` the SHA-256
 * of the whole text in the file store, or `null`.
 * @since 0.8.0
 */
export const UnseenCut = Schema.TaggedStruct("UnseenCut", { ...base, ...cutFields })
/** Tool pairs were queued for a deferred summary. @since 0.1.0 */
export const ToolPairsQueued = Schema.TaggedStruct("ToolPairsQueued", {
  ...base,
  toolCallIds: Schema.Array(Schema.String)
})
/** A summary for a tool pair was recorded, to be applied later. @since 0.1.0 */
export const ToolPairSummaryDeferred = Schema.TaggedStruct("ToolPairSummaryDeferred", {
  ...base,
  toolCallId: Schema.String,
  resultMessageId: Schema.String,
  summary: Schema.String,
  tokens: Schema.Int
})
/** Deferred summaries replaced their tool outputs. @since 0.1.0 */
export const DeferredSummariesApplied = Schema.TaggedStruct("DeferredSummariesApplied", {
  ...base,
  toolCallIds: Schema.Array(Schema.String)
})
/** Both deferred queues were cleared. @since 0.1.0 */
export const DeferredSummariesFlushed = Schema.TaggedStruct("DeferredSummariesFlushed", { ...base })

/**
 * How a compaction was triggered. `seam` (since `Compacted` v5 and `CompactionFailed` v2): the seam
 * pipeline, whose refused summaries are recorded as `CompactionFailed` like the tiers' (issue 39).
 * @since 0.1.0
 */
export const CompactionTier = Schema.Literal("soft", "hard", "manual", "proactive", "memory", "seam")
/** @since 0.1.0 */
export type CompactionTier = typeof CompactionTier.Type

/**
 * Old history was replaced by a summary. `removedIds` includes the previous summary when it rolled
 * forward; `summary` sits where the first removed message was.
 * @since 0.1.0
 */
export const Compacted = Schema.TaggedStruct("Compacted", {
  ...base,
  tier: CompactionTier,
  summary: Schema.NullOr(Message),
  removedIds: Schema.Array(Schema.String),
  carryOver: Schema.NullOr(Schema.String),
  throughVersion: Schema.Int,
  cooldownTurns: Schema.Int,
  ...receipted
})
/** A compaction was attempted and failed; the window is unchanged. @since 0.1.0 */
export const CompactionFailed = Schema.TaggedStruct("CompactionFailed", {
  ...base,
  tier: CompactionTier,
  reason: Schema.String
})
/**
 * A compaction was undone: its summary left, the messages it removed came back. Since v5 `seams` holds
 * the seam entries the restored messages had before the compaction (a compaction that rolled a seam in
 * carried its level on the summary; the undo gives it back to the seam). Absent in older events: the
 * restored messages get no seam entry.
 * @since 0.1.0
 */
export const CompactionReverted = Schema.TaggedStruct("CompactionReverted", {
  ...base,
  compactionEventId: Schema.String,
  removedIds: Schema.Array(Schema.String),
  restored: Schema.Array(Message),
  carryOver: Schema.NullOr(Schema.String),
  watermark: Schema.NullOr(Schema.Int),
  seams: Schema.optional(Schema.Array(SeamRef))
})

/** A range of history was folded into a seam message at a level. @since 0.1.0 */
export const SeamProduced = Schema.TaggedStruct("SeamProduced", {
  ...base,
  level: Schema.Int,
  message: Message,
  replacedIds: Schema.Array(Schema.String),
  ...receipted
})
/** Earlier seams and recent messages were fused into one seam. @since 0.1.0 */
export const SeamsRecompacted = Schema.TaggedStruct("SeamsRecompacted", {
  ...base,
  level: Schema.Int,
  message: Message,
  replacedIds: Schema.Array(Schema.String),
  ...receipted
})
/** A briefing was produced (it leads history). @since 0.1.0 */
export const BriefingProduced = Schema.TaggedStruct("BriefingProduced", { ...base, message: Message })
/** A new cycle started: the listed history left the window. @since 0.1.0 */
export const CycleAdvanced = Schema.TaggedStruct("CycleAdvanced", {
  ...base,
  cycle: Schema.Int,
  removedIds: Schema.Array(Schema.String),
  ...receipted
})
/** Seam bookkeeping was reset at a cycle boundary. @since 0.1.0 */
export const SeamsReset = Schema.TaggedStruct("SeamsReset", { ...base })

/** A subject–predicate–object fact. @since 0.1.0 */
export const Fact = Schema.Struct({
  subject: Schema.String,
  predicate: Schema.String,
  object: Schema.String,
  sourceMessageId: Schema.NullOr(Schema.String)
})
/** @since 0.1.0 */
export type Fact = typeof Fact.Type
/** Knowledge-graph facts were recorded (the window is unchanged; a graph index reads them). @since 0.1.0 */
export const FactsRecorded = Schema.TaggedStruct("FactsRecorded", { ...base, facts: Schema.Array(Fact) })

/**
 * The turn policy in force from here on (`@ctxlog/turn`): the builder, render options, compaction,
 * seams, recall and fit settings as data, so a replay under the recorded policy needs nothing outside
 * the log. The window is unchanged; core keeps the policy opaque (the turn module owns its schema).
 * @since 0.4.0
 */
export const TurnPolicySet = Schema.TaggedStruct("TurnPolicySet", {
  ...base,
  policy: Schema.Record({ key: Schema.String, value: JsonValue })
})

/**
 * Why a compaction tier evaluated a window and did not act (ADR 0128): `below-threshold` (the window is
 * under the tier's mark), `cooldown` (a hard compaction's cooldown holds), `compacted-this-turn` (one
 * model compaction a turn), `nothing-to-do` (the soft tier found no summary to apply and no output to
 * prune), `nothing-to-summarize` (the plan is empty), `cached-prefix` (cache-aware: the window still fits),
 * `provider-side` (the provider compacts server-side), `guard-refused` (a summary guard refused the summary).
 * @since 0.8.0
 */
export const DecisionReason = Schema.Literal(
  "below-threshold",
  "cooldown",
  "compacted-this-turn",
  "nothing-to-do",
  "nothing-to-summarize",
  "cached-prefix",
  "provider-side",
  "guard-refused"
)
/** @since 0.8.0 */
export type DecisionReason = typeof DecisionReason.Type

/**
 * One tier's evaluation that did not act: the tier, why, the sent tokens it measured and the tier's
 * threshold in tokens (the line it compared them with), and the guard's reason when one refused.
 * @since 0.8.0
 */
export const TierDecision = Schema.Struct({
  /** The threshold tiers (0128); since v2 (ADR 0148) also the seam pipeline, the fit's stages and a compacting memory. */
  tier: Schema.Literal("soft", "hard", "proactive", "seam", "fit", "memory"),
  reason: DecisionReason,
  usedTokens: Schema.Int,
  thresholdTokens: Schema.Int,
  detail: Schema.optional(Schema.String)
})
/** @since 0.8.0 */
export type TierDecision = typeof TierDecision.Type

/**
 * The compaction tiers a turn step evaluated and that decided not to act, folded into one event per step
 * (ADR 0128): written in the step's own append, only when a tier was evaluated and did nothing. The
 * window is unchanged (renders are not affected); `ctxlog events --decisions` and the viewer show them.
 * @since 0.8.0
 */
export const CompactionDecided = Schema.TaggedStruct("CompactionDecided", {
  ...base,
  /** The turn's step (0128), or (v2, ADR 0148) `load`: a compacting memory's load. */
  step: Schema.Literal("prepare", "render", "complete", "load"),
  budgetTokens: Schema.Int,
  decisions: Schema.Array(TierDecision)
})

/**
 * A value as LangGraph's serializer wrote it (`serde.dumpsTyped`): its type tag and its bytes, as UTF-8
 * text when they are text the log can hold, else base64. Decoded with `serde.loadsTyped(type, bytes)`.
 * @since 0.5.0
 */
export const SerializedValue = Schema.Struct({
  type: Schema.String,
  encoding: Schema.Literal("utf8", "base64"),
  data: Schema.String
})
/** @since 0.5.0 */
export type SerializedValue = typeof SerializedValue.Type

/** A LangGraph channel version (an integer, or a string such as `"00…05.0.123"`). @since 0.5.0 */
export const ChannelVersion = Schema.Union(Schema.JsonNumber, Schema.String)
/** @since 0.5.0 */
export type ChannelVersion = typeof ChannelVersion.Type

/**
 * One channel's value at a version, as a checkpoint wrote it: the whole value (`value`), or, for a list
 * (a `messages` channel), what changed against the list at version `base` of the same channel: the
 * positions of `base` that left (`removed`, ascending) and the items appended after what stayed.
 * @since 0.5.0
 */
export const ChannelValueWritten = Schema.Union(
  Schema.Struct({ channel: Schema.String, version: ChannelVersion, value: SerializedValue }),
  Schema.Struct({
    channel: Schema.String,
    version: ChannelVersion,
    base: ChannelVersion,
    removed: Schema.Array(Schema.Int.pipe(Schema.nonNegative())),
    appended: Schema.Array(SerializedValue)
  })
)
/** @since 0.5.0 */
export type ChannelValueWritten = typeof ChannelValueWritten.Type

/**
 * A LangGraph checkpoint was saved (`@ctxlog/langgraph`'s `CtxlogSaver.put`): the checkpoint without
 * its channel values and its metadata, both as LangGraph's serializer wrote them, and the values of the
 * channels whose version changed. `forkOf` names the newest checkpoint when this one continues an older
 * one (time travel). `windowOf` names the checkpoint whose messages list the window mirrors from here on,
 * when that changed. The window is unchanged: the saver writes the messages list's changes as
 * `MessageAppended` / `MessagesRemoved` beside it.
 * @since 0.5.0
 */
export const CheckpointSaved = Schema.TaggedStruct("CheckpointSaved", {
  ...base,
  checkpointId: Schema.String.pipe(Schema.minLength(1)),
  parentCheckpointId: Schema.NullOr(Schema.String),
  forkOf: Schema.optional(Schema.String),
  windowOf: Schema.optional(Schema.String),
  checkpoint: SerializedValue,
  metadata: SerializedValue,
  values: Schema.Array(ChannelValueWritten)
})

/** One pending write of a task (`idx` as LangGraph numbers it: negative for errors and interrupts). @since 0.5.0 */
export const PendingWriteSaved = Schema.Struct({
  idx: Schema.Int,
  channel: Schema.String,
  value: SerializedValue
})
/** @since 0.5.0 */
export type PendingWriteSaved = typeof PendingWriteSaved.Type

/** A task's pending writes against a checkpoint were saved (`CtxlogSaver.putWrites`). Window unchanged. @since 0.5.0 */
export const CheckpointWritesSaved = Schema.TaggedStruct("CheckpointWritesSaved", {
  ...base,
  checkpointId: Schema.String.pipe(Schema.minLength(1)),
  taskId: Schema.String,
  taskPath: Schema.String,
  writes: Schema.Array(PendingWriteSaved)
})

/**
 * The thread was deleted (`CtxlogSaver.deleteThread`): the checkpoints and writes before this event are
 * gone for the saver (they stay in the log, which is append-only). Window unchanged; the saver clears it
 * with a `HistoryCleared` beside it.
 * @since 0.5.0
 */
export const CheckpointsDeleted = Schema.TaggedStruct("CheckpointsDeleted", { ...base })

/** Every window event. @since 0.1.0 */
export const WindowEvent = Schema.Union(
  SystemPromptSet,
  KnowledgeSet,
  TaskGoalSet,
  SubgoalsSet,
  SignalRaised,
  MessageAppended,
  MessagesInjected,
  MessagesRemoved,
  MessagePinned,
  HistoryTrimmed,
  HistoryCleared,
  ConversationReset,
  ConversationContinued,
  CalibrationCarried,
  TurnCompleted,
  PromptRendered,
  UsageReported,
  ToolOutputPruned,
  MediaPruned,
  UserAskCut,
  UnseenCut,
  ToolPairsQueued,
  ToolPairSummaryDeferred,
  DeferredSummariesApplied,
  DeferredSummariesFlushed,
  Compacted,
  CompactionFailed,
  CompactionReverted,
  SeamProduced,
  SeamsRecompacted,
  BriefingProduced,
  CycleAdvanced,
  SeamsReset,
  FactsRecorded,
  TurnPolicySet,
  CheckpointSaved,
  CheckpointWritesSaved,
  CheckpointsDeleted,
  CompactionDecided
)
/** @since 0.1.0 */
export type WindowEvent = typeof WindowEvent.Type
/** The encoded (JSON) shape of an event. @since 0.1.0 */
export type WindowEventEncoded = typeof WindowEvent.Encoded

/** The tag of an event type. @since 0.1.0 */
export type EventType = WindowEvent["_tag"]

/** One event type by tag. @since 0.1.0 */
export type EventOf<T extends EventType> = Extract<WindowEvent, { readonly _tag: T }>

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/**
 * An event before an id is given to it: what `decide` returns. The service stamps ids from `Ids`.
 * @since 0.1.0
 */
export type Draft = DistributiveOmit<WindowEvent, "id">

/**
 * Give a draft its id. Copied onto a fresh object rather than spread: a spread that adds a key the draft
 * lacks takes V8's slow path (~0.4 µs an event); the own keys and their order are the same (`id` last).
 * @since 0.1.0
 */
export const stamp = (draft: Draft, id: string): WindowEvent => Object.assign({}, draft, { id }) as WindowEvent

/**
 * The current schema version of each event type. Bump it when a type's shape changes, and add an
 * upcaster from the previous version in `EventCodec`.
 * @since 0.1.0
 */
export const schemaVersions: { readonly [T in EventType]: number } = {
  SystemPromptSet: 5,
  KnowledgeSet: 5,
  TaskGoalSet: 1,
  SubgoalsSet: 1,
  SignalRaised: 1,
  MessageAppended: 6,
  MessagesInjected: 6,
  MessagesRemoved: 2,
  MessagePinned: 1,
  HistoryTrimmed: 2,
  HistoryCleared: 2,
  ConversationReset: 1,
  ConversationContinued: 1,
  CalibrationCarried: 1,
  TurnCompleted: 1,
  PromptRendered: 5,
  UsageReported: 3,
  ToolOutputPruned: 2,
  MediaPruned: 2,
  UserAskCut: 1,
  UnseenCut: 1,
  ToolPairsQueued: 1,
  ToolPairSummaryDeferred: 1,
  DeferredSummariesApplied: 1,
  DeferredSummariesFlushed: 1,
  Compacted: 6,
  CompactionFailed: 2,
  CompactionReverted: 6,
  SeamProduced: 6,
  SeamsRecompacted: 6,
  BriefingProduced: 5,
  CycleAdvanced: 2,
  SeamsReset: 1,
  FactsRecorded: 1,
  TurnPolicySet: 1,
  CheckpointSaved: 1,
  CheckpointWritesSaved: 1,
  CheckpointsDeleted: 1,
  CompactionDecided: 2
}

/** Every event type name. @since 0.1.0 */
export const eventTypes = Object.keys(schemaVersions) as ReadonlyArray<EventType>

/** Whether a string names a known event type. @since 0.1.0 */
export const isEventType = (value: string): value is EventType => Object.hasOwn(schemaVersions, value)
