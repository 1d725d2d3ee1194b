/**
 * Pure queries over decoded events and windows: the one module both the CLI and the web viewer use.
 * Windows come only from core's projection (`Window.replay` / `Window.evolve`); these functions read
 * them and the events, and never fold a window another way.
 *
 * @since 0.1.0
 */
import { Message, Window, type WindowEvent } from "@ctxlog/core"

/** A decoded event with its place in the stream. @since 0.1.0 */
export interface Entry {
  readonly version: number
  readonly eventId: string
  readonly type: WindowEvent.EventType
  readonly schemaVersion: number
  readonly recordedAt: number
  readonly event: WindowEvent.WindowEvent
}

/** Fold the entries with `base.version < version <= at` onto `base`. @since 0.1.0 */
export const windowAt = (entries: ReadonlyArray<Entry>, at: number, base: Window.Window = Window.empty) =>
  Window.replay(
    entries.filter((entry) => entry.version > base.version && entry.version <= at).map((entry) => entry.event),
    base
  )

const previewLength = 80

/** One line of text for a message: its text, or its tool calls and results. @since 0.1.0 */
export const preview = (message: Message.Message, length = previewLength): string => {
  const text = Message.tokenTextOf(message).replace(/\s+/g, " ").trim()
  return text.length <= length ? text : `${text.slice(0, length - 1)}…`
}

/** A message as the views list it. @since 0.1.0 */
export interface MessageRow {
  readonly id: string
  readonly role: Message.Role
  readonly kind: Message.MessageKind
  readonly tokens: number
  readonly pinned: boolean
  readonly seamLevel: number | null
  readonly origin: Message.Origin | null
  readonly preview: string
}

/** The window by partition. @since 0.1.0 */
export interface PartitionView {
  readonly version: number
  readonly system: ReadonlyArray<MessageRow>
  readonly knowledge: ReadonlyArray<MessageRow>
  readonly taskState: {
    readonly goal: string | null
    readonly subgoals: ReadonlyArray<string>
    readonly tokens: number
  }
  readonly signals: ReadonlyArray<{ readonly id: string; readonly text: string; readonly tokens: number }>
  readonly history: ReadonlyArray<MessageRow>
  readonly tokens: Window.Tokens
}

/** List a window's partitions with the tokens of each message. @since 0.1.0 */
export const partitions = (window: Window.Window): PartitionView => {
  const seams = new Map(window.seams.map((seam) => [seam.messageId, seam.level]))
  const row = (message: Message.Message): MessageRow => ({
    id: message.id,
    role: message.role,
    kind: message.kind,
    tokens: message.tokens,
    pinned: message.pinned === true,
    seamLevel: seams.get(message.id) ?? null,
    origin: message.origin ?? null,
    preview: preview(message)
  })
  return {
    version: window.version,
    system: window.system.map(row),
    knowledge: window.knowledge.map(row),
    taskState: {
      goal: window.taskState.goal,
      subgoals: window.taskState.subgoals,
      tokens: window.taskState.goalTokens + window.taskState.subgoalTokens
    },
    signals: window.signals.map((signal) => ({ id: signal.id, text: signal.text, tokens: signal.tokens })),
    history: window.history.map(row),
    tokens: window.tokens
  }
}

/** One line of a `/context`-style breakdown. @since 0.1.0 */
export interface UsageLine {
  readonly name: string
  readonly tokens: number
  /** Share of the budget, in percent (one decimal). */
  readonly percent: number
}

/** Where the tokens of a window go, against a budget. @since 0.1.0 */
export interface Usage {
  readonly version: number
  readonly budget: number | null
  readonly lines: ReadonlyArray<UsageLine>
  /** Window tokens plus tool schemas. */
  readonly used: number
  readonly free: number | null
}

const percentOf = (tokens: number, budget: number | null) =>
  budget === null || budget <= 0 ? 0 : Math.round((tokens / budget) * 1000) / 10

/**
 * The usage breakdown: system, knowledge (stable and injected apart), task state (goal, subgoals and
 * signals), history (conversation apart from summaries and seams), tools (schema tokens of the last
 * render, when known), and what is free of the budget.
 * @since 0.1.0
 */
export const usage = (window: Window.Window, budget: number | null, toolTokens: number): Usage => {
  const sum = (messages: ReadonlyArray<Message.Message>) => messages.reduce((total, m) => total + m.tokens, 0)
  const stable = window.knowledge.filter((message) => message.kind === "chat")
  const injected = window.knowledge.filter((message) => message.kind !== "chat")
  const condensed = window.history.filter((message) => message.kind !== "chat")
  const conversation = window.history.filter((message) => message.kind === "chat")
  const entries: ReadonlyArray<readonly [string, number]> = [
    ["system", window.tokens.system],
    ["knowledge", sum(stable)],
    ["injected context", sum(injected)],
    ["task state", window.tokens.taskState + window.tokens.signals],
    ["history", sum(conversation)],
    ["summaries and seams", sum(condensed)],
    ["tools", toolTokens]
  ]
  const used = window.tokens.total + toolTokens
  return {
    version: window.version,
    budget,
    lines: entries.map(([name, tokens]) => ({ name, tokens, percent: percentOf(tokens, budget) })),
    used,
    free: budget === null ? null : budget - used
  }
}

/** An event that touched a message. @since 0.1.0 */
export interface Touch {
  readonly version: number
  readonly eventId: string
  readonly type: WindowEvent.EventType
  /** What the event did: added, pinned, unpinned, pruned, summarized, rewritten, removed, trimmed… */
  readonly action: string
}

/** Why a message is in the window (or why it left). @since 0.1.0 */
export interface BlameRow {
  readonly id: string
  readonly partition: Window.MessagePartition
  readonly role: Message.Role
  readonly kind: Message.MessageKind
  readonly tokens: number
  readonly preview: string
  readonly addedBy: Touch
  /** The last event that changed it after it was added (null when none did). */
  readonly lastChangedBy: Touch | null
}

/** A message that left the window, and the event that removed it. @since 0.1.0 */
export interface RemovedRow {
  readonly id: string
  readonly role: Message.Role
  readonly kind: Message.MessageKind
  readonly tokens: number
  readonly preview: string
  readonly addedBy: Touch
  readonly removedBy: Touch
}

/** Blame at a version: the messages in the window and those removed before it. @since 0.1.0 */
export interface Blame {
  readonly version: number
  readonly messages: ReadonlyArray<BlameRow>
  readonly removed: ReadonlyArray<RemovedRow>
}

const changeAction = (event: WindowEvent.WindowEvent, before: Message.Message, after: Message.Message): string => {
  switch (event._tag) {
    case "MessagePinned":
      return after.pinned === true ? "pinned" : "unpinned"
    case "ToolOutputPruned":
    case "MediaPruned":
      return "pruned"
    case "UserAskCut":
    case "UnseenCut":
      return `cut to fit (${before.tokens} → ${after.tokens} tokens)`
    case "DeferredSummariesApplied":
      return "summarized (deferred)"
    default:
      return before.tokens === after.tokens ? "rewritten" : `rewritten (${before.tokens} → ${after.tokens} tokens)`
  }
}

const removeAction = (event: WindowEvent.WindowEvent): string => {
  switch (event._tag) {
    case "HistoryTrimmed":
      return `trimmed (budget ${event.budget})`
    case "MessagesRemoved":
      return `removed (${event.reason})`
    case "Compacted":
      return `summarized (${event.tier} compaction)`
    case "SeamProduced":
    case "SeamsRecompacted":
      return `folded into a level-${event.level} seam`
    case "CycleAdvanced":
      return `left at cycle ${event.cycle}`
    case "MessagesInjected":
      return `replaced (${event.kind} injected again)`
    case "HistoryCleared":
      return "cleared"
    case "ConversationReset":
      return "reset"
    case "CompactionReverted":
      return "compaction undone"
    default:
      return "removed"
  }
}

const partitionNames: ReadonlyArray<Window.MessagePartition> = ["system", "knowledge", "history"]

/**
 * Blame every message at `at`: the event that put it there and the last that changed it. Folds the
 * entries with core's `Window.evolve`, one event at a time, comparing only the partitions an event
 * replaced (unchanged partitions keep their arrays).
 * @since 0.1.0
 */
export const blame = (entries: ReadonlyArray<Entry>, at: number): Blame => {
  const added = new Map<string, Touch>()
  const changed = new Map<string, Touch>()
  const removed = new Map<string, RemovedRow>()
  let window = Window.empty
  for (const entry of entries) {
    if (entry.version > at) break
    const next = Window.evolve(window, entry.event)
    const touch = (action: string): Touch => ({
      version: entry.version,
      eventId: entry.eventId,
      type: entry.type,
      action
    })
    const before = new Map<string, Message.Message>()
    const after = new Map<string, Message.Message>()
    for (const name of partitionNames) {
      if (window[name] === next[name]) continue
      for (const message of window[name]) before.set(message.id, message)
      for (const message of next[name]) after.set(message.id, message)
    }
    // A message that moved between partitions shows up on one side only when only one partition changed.
    for (const name of partitionNames) {
      if (window[name] !== next[name]) continue
      for (const message of next[name]) {
        if (before.has(message.id) && !after.has(message.id)) after.set(message.id, message)
        if (after.has(message.id) && !before.has(message.id)) before.set(message.id, message)
      }
    }
    for (const [id, message] of after) {
      const old = before.get(id)
      if (old === undefined) {
        added.set(id, touch(entry.type === "CompactionReverted" ? "restored" : "added"))
        changed.delete(id)
        removed.delete(id)
      } else if (
        old !== message &&
        JSON.stringify({ ...old, origin: null }) !== JSON.stringify({ ...message, origin: null })
      ) {
        changed.set(id, touch(changeAction(entry.event, old, message)))
      }
    }
    for (const [id, message] of before) {
      if (after.has(id)) continue
      removed.set(id, {
        id,
        role: message.role,
        kind: message.kind,
        tokens: message.tokens,
        preview: preview(message),
        addedBy: added.get(id) ?? touch("added"),
        removedBy: touch(removeAction(entry.event))
      })
    }
    window = next
  }
  const messages: Array<BlameRow> = []
  for (const partition of partitionNames) {
    for (const message of window[partition]) {
      messages.push({
        id: message.id,
        partition,
        role: message.role,
        kind: message.kind,
        tokens: message.tokens,
        preview: preview(message),
        addedBy: added.get(message.id) ?? {
          version: message.origin?.version ?? 0,
          eventId: message.origin?.eventId ?? "",
          type: "MessageAppended",
          action: "added"
        },
        lastChangedBy: changed.get(message.id) ?? null
      })
    }
  }
  return { version: window.version, messages, removed: [...removed.values()] }
}

/** A message present at both versions whose content changed. @since 0.1.0 */
export interface ChangedRow {
  readonly id: string
  readonly partition: Window.MessagePartition
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly before: string
  readonly after: string
}

/** What changed between two windows. @since 0.1.0 */
export interface Diff {
  readonly from: number
  readonly to: number
  readonly added: ReadonlyArray<MessageRow & { readonly partition: Window.MessagePartition }>
  readonly removed: ReadonlyArray<MessageRow & { readonly partition: Window.MessagePartition }>
  readonly changed: ReadonlyArray<ChangedRow>
  readonly taskState: { readonly before: Window.TaskState; readonly after: Window.TaskState } | null
  readonly signals: { readonly before: number; readonly after: number }
  readonly tokens: { readonly before: Window.Tokens; readonly after: Window.Tokens }
}

/** Messages added, removed and changed from window `a` to window `b`. @since 0.1.0 */
export const diff = (a: Window.Window, b: Window.Window): Diff => {
  const view = (window: Window.Window) => {
    const rows = partitions(window)
    const map = new Map<string, MessageRow & { readonly partition: Window.MessagePartition }>()
    const messages = new Map<string, Message.Message>()
    for (const partition of partitionNames) {
      for (const row of rows[partition]) map.set(row.id, { ...row, partition })
      for (const message of window[partition]) messages.set(message.id, message)
    }
    return { map, messages }
  }
  const before = view(a)
  const after = view(b)
  const added = [...after.map.values()].filter((row) => !before.map.has(row.id))
  const removed = [...before.map.values()].filter((row) => !after.map.has(row.id))
  const changed: Array<ChangedRow> = []
  for (const [id, message] of after.messages) {
    const old = before.messages.get(id)
    const row = after.map.get(id)
    if (old === undefined || row === undefined) continue
    const strip = (m: Message.Message) => JSON.stringify({ ...m, origin: null })
    if (strip(old) !== strip(message)) {
      changed.push({
        id,
        partition: row.partition,
        tokensBefore: old.tokens,
        tokensAfter: message.tokens,
        before: preview(old),
        after: preview(message)
      })
    }
  }
  const sameTask = JSON.stringify(a.taskState) === JSON.stringify(b.taskState)
  return {
    from: a.version,
    to: b.version,
    added,
    removed,
    changed,
    taskState: sameTask ? null : { before: a.taskState, after: b.taskState },
    signals: { before: a.signals.length, after: b.signals.length },
    tokens: { before: a.tokens, after: b.tokens }
  }
}

/** Event types that mark a compaction on a timeline. @since 0.1.0 */
export const compactionTypes: ReadonlySet<WindowEvent.EventType> = new Set([
  "Compacted",
  "ToolOutputPruned",
  "MediaPruned",
  "UserAskCut",
  "UnseenCut",
  "DeferredSummariesApplied",
  "HistoryTrimmed"
])

/** Event types that mark a seam on a timeline. @since 0.1.0 */
export const seamTypes: ReadonlySet<WindowEvent.EventType> = new Set([
  "SeamProduced",
  "SeamsRecompacted",
  "BriefingProduced",
  "CycleAdvanced"
])

/** One line of the event log. @since 0.1.0 */
export interface EventLine {
  readonly version: number
  readonly type: WindowEvent.EventType
  readonly schemaVersion: number
  readonly eventId: string
  readonly recordedAt: number
  /** `decision`: a `CompactionDecided` (tiers that evaluated and did not act; ADR 0128). Since 0.8.0. */
  readonly mark: "compaction" | "seam" | "decision" | null
  readonly summary: string
}

/**
 * One tier decision as text: `soft below-threshold (120 of 700 tokens)`, the guard's reason after a colon.
 * @since 0.8.0
 */
export const describeDecision = (decision: WindowEvent.TierDecision): string =>
  `${decision.tier} ${decision.reason}${decision.detail === undefined ? "" : `: ${decision.detail}`} (${decision.usedTokens} of ${decision.thresholdTokens} tokens)`

/** A one-line description of an event. @since 0.1.0 */
export const describeEvent = (event: WindowEvent.WindowEvent): string => {
  switch (event._tag) {
    case "SystemPromptSet":
    case "KnowledgeSet":
      return `${event.messages.length} message(s), ${event.messages.reduce((t, m) => t + m.tokens, 0)} tokens`
    case "MessagesInjected":
      return event.messages.length === 0
        ? `${event.kind}: cleared (no ${event.kind} context in the next render)`
        : `${event.kind}: ${event.messages.length} message(s), ${event.messages.reduce((t, m) => t + m.tokens, 0)} tokens`
    case "MessageAppended":
      return `${event.message.role} ${event.message.id} (${event.message.tokens} tokens): ${preview(event.message, 60)}`
    case "TaskGoalSet":
      return event.goal === null ? "goal cleared" : `goal: ${event.goal.slice(0, 60)}`
    case "SubgoalsSet":
      return `${event.subgoals.length} subgoal(s)`
    case "SignalRaised":
      return event.signal.text.slice(0, 60)
    case "MessagesRemoved":
      return `${event.messageIds.length} removed (${event.reason})`
    case "MessagePinned":
      return `${event.messageId} ${event.pinned ? "pinned" : "unpinned"}`
    case "HistoryTrimmed":
      return `${event.removedIds.length} trimmed to budget ${event.budget}`
    case "PromptRendered":
      return `${event.provider}/${event.model} ${event.tokens.total} tokens sha256 ${event.sha256.slice(0, 12)}${event.render === undefined ? " (not rebuildable)" : ""}`
    case "UsageReported":
      return `${event.inputTokens} in (${event.cacheReadTokens} cached), ${event.outputTokens} out`
    case "ToolOutputPruned":
      return `${event.outputs.length} tool output(s) pruned`
    case "MediaPruned":
      return `${event.parts.length} image(s) or document(s) pruned`
    case "UserAskCut":
      return `the user's ask ${event.messageId} cut to its head and tail (${event.tokens} tokens)${event.stored === null ? "" : `, whole text stored ${event.stored.slice(0, 16)}`}`
    case "UnseenCut":
      return `the unseen tool round's message ${event.messageId} cut to its head and tail (${event.tokens} tokens)${event.stored === null ? "" : `, whole text stored ${event.stored.slice(0, 16)}`}`
    case "Compacted":
      return `${event.tier}: ${event.removedIds.length} message(s) → ${event.summary === null ? "no summary" : `summary ${event.summary.tokens} tokens`}`
    case "CompactionFailed":
      return `${event.tier}: ${event.reason}`
    case "SeamProduced":
    case "SeamsRecompacted":
      return `level ${event.level}: ${event.replacedIds.length} message(s) → ${event.message.tokens} tokens`
    case "CycleAdvanced":
      return `cycle ${event.cycle}: ${event.removedIds.length} message(s) left`
    case "DeferredSummariesApplied":
    case "ToolPairsQueued":
      return `${event.toolCallIds.length} tool pair(s)`
    case "FactsRecorded":
      return `${event.facts.length} fact(s)`
    case "CheckpointSaved":
      return `LangGraph checkpoint ${event.checkpointId}${event.parentCheckpointId === null ? "" : ` after ${event.parentCheckpointId}`}${event.forkOf === undefined ? "" : ` (fork: time travel, the thread was at ${event.forkOf})`}: ${event.values.length} channel(s) written`
    case "CheckpointWritesSaved":
      return `LangGraph task ${event.taskId}: ${event.writes.length} pending write(s) on ${event.checkpointId}`
    case "CheckpointsDeleted":
      return "LangGraph thread deleted"
    case "CompactionDecided":
      return `${event.step}: ${event.decisions.map(describeDecision).join("; ")} (budget ${event.budgetTokens})`
    default:
      return ""
  }
}

/** One tier's decision not to act, as `ctxlog events --decisions` lists it (ADR 0128). @since 0.8.0 */
export interface DecisionLine extends WindowEvent.TierDecision {
  readonly version: number
  readonly eventId: string
  readonly step: WindowEvent.EventOf<"CompactionDecided">["step"]
  readonly budgetTokens: number
}

/** The `CompactionDecided` events of a log, one line per tier decision. @since 0.8.0 */
export const decisionLines = (entries: ReadonlyArray<Entry>): ReadonlyArray<DecisionLine> =>
  entries.flatMap((entry) => {
    const event = entry.event
    if (event._tag !== "CompactionDecided") return []
    return event.decisions.map((decision) => ({
      version: entry.version,
      eventId: entry.eventId,
      step: event.step,
      budgetTokens: event.budgetTokens,
      ...decision
    }))
  })

/** The log as lines. @since 0.1.0 */
export const eventLines = (entries: ReadonlyArray<Entry>): ReadonlyArray<EventLine> =>
  entries.map((entry) => ({
    version: entry.version,
    type: entry.type,
    schemaVersion: entry.schemaVersion,
    eventId: entry.eventId,
    recordedAt: entry.recordedAt,
    mark: compactionTypes.has(entry.type)
      ? "compaction"
      : seamTypes.has(entry.type)
        ? "seam"
        : entry.type === "CompactionDecided"
          ? "decision"
          : null,
    summary: describeEvent(entry.event)
  }))

/** A stream at a glance. @since 0.1.0 */
export interface StreamSummary {
  readonly stream: string
  readonly events: number
  readonly tokens: number
  readonly lastActivity: number
  readonly compactions: number
  readonly seams: number
  readonly renders: number
  readonly turns: number
}

/**
 * The event types a summary counts: a summary reads only these (and the window at the head, from the
 * snapshot), not the whole stream.
 * @since 0.1.0
 */
export const summaryTypes: ReadonlyArray<WindowEvent.EventType> = [...compactionTypes, ...seamTypes, "PromptRendered"]

/** Summarize a stream from its entries (at least those of {@link summaryTypes}) and its current window. @since 0.1.0 */
export const summarize = (
  stream: string,
  entries: ReadonlyArray<Entry>,
  window: Window.Window,
  lastActivity: number
): StreamSummary => ({
  stream,
  events: window.version,
  tokens: window.tokens.total,
  lastActivity,
  compactions: entries.filter((entry) => compactionTypes.has(entry.type)).length,
  seams: entries.filter((entry) => seamTypes.has(entry.type)).length,
  renders: entries.filter((entry) => entry.type === "PromptRendered").length,
  turns: window.compaction.turn
})

/** Tokens per partition at a version (one point of the chart). @since 0.1.0 */
export interface TokenPoint {
  readonly version: number
  readonly tokens: Window.Tokens
}

/**
 * Tokens per partition over versions, from what each render recorded (no folding needed). A stream
 * without renders gets a point per event, folded with core's projection.
 * @since 0.1.0
 */
export const tokenSeries = (entries: ReadonlyArray<Entry>): ReadonlyArray<TokenPoint> => {
  const points: Array<TokenPoint> = []
  for (const entry of entries) {
    if (entry.event._tag === "PromptRendered") points.push({ version: entry.version, tokens: entry.event.tokens })
  }
  if (points.length > 0) return points
  let window = Window.empty
  for (const entry of entries) {
    window = Window.evolve(window, entry.event)
    points.push({ version: entry.version, tokens: window.tokens })
  }
  return points
}

/** The turn number (1-based) each render belongs to: renders after the K-1th `TurnCompleted`. @since 0.1.0 */
export const renderTurns = (
  entries: ReadonlyArray<Entry>
): ReadonlyArray<{ readonly version: number; readonly turn: number }> => {
  const out: Array<{ version: number; turn: number }> = []
  let turn = 1
  for (const entry of entries) {
    if (entry.type === "TurnCompleted") turn++
    if (entry.type === "PromptRendered") out.push({ version: entry.version, turn })
  }
  return out
}

/** The longest common prefix of two strings, in characters. @since 0.1.0 */
export const commonPrefix = (a: string, b: string): number => {
  const max = Math.min(a.length, b.length)
  let i = 0
  while (i < max && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}
