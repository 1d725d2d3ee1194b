/**
 * The first release's projection, kept as the reference model: plain arrays, everything recomputed per
 * event (O(window)), obviously right. The property in `Window.reference.test.ts` checks the O(change)
 * projection against it on random event sequences.
 */
import type { Message } from "../../src/Message.js"
import { toolCallsOf, toolResultsOf } from "../../src/Message.js"
import type { Tokens, Window } from "../../src/Window.js"
import type { EventOf, WindowEvent } from "../../src/WindowEvent.js"
import * as ToolPairs from "../../src/ToolPairs.js"

const zeroTokens: Tokens = { system: 0, knowledge: 0, taskState: 0, signals: 0, history: 0, total: 0 }

export const empty: Window = {
  version: 0,
  system: [],
  knowledge: [],
  taskState: { goal: null, goalTokens: 0, subgoals: [], subgoalTokens: 0 },
  signals: [],
  history: [],
  tokens: zeroTokens,
  completedToolIds: [],
  compaction: { turn: 0, turnsSinceHard: 0, cooldownRemaining: 0, compactedThisTurn: false },
  pendingToolPairs: [],
  deferredSummaries: [],
  seams: [],
  cycle: 0,
  carryOver: null,
  watermark: null,
  calibration: { estimatedInputTokens: 0, reportedInputTokens: 0, observations: 0 }
}

const sum = (messages: ReadonlyArray<Message>): number => messages.reduce((total, message) => total + message.tokens, 0)

/** Recompute the cached totals: they always equal the sum of what the partitions hold. */
const withTokens = (window: Window): Window => {
  const system = sum(window.system)
  const knowledge = sum(window.knowledge)
  const taskState = window.taskState.goalTokens + window.taskState.subgoalTokens
  const signals = window.signals.reduce((total, signal) => total + signal.tokens, 0)
  const history = sum(window.history)
  return {
    ...window,
    tokens: {
      system,
      knowledge,
      taskState,
      signals,
      history,
      total: system + knowledge + taskState + signals + history
    }
  }
}

const stampOrigin =
  (version: number, eventId: string) =>
  (message: Message): Message => ({ ...message, origin: { version, eventId } })

const without = (messages: ReadonlyArray<Message>, ids: ReadonlySet<string>): ReadonlyArray<Message> =>
  messages.filter((message) => !ids.has(message.id))

/** Replace the messages in `ids` with `replacement`, placed where the first of them was. */
const replaceRange = (
  messages: ReadonlyArray<Message>,
  ids: ReadonlySet<string>,
  replacement: ReadonlyArray<Message>
): ReadonlyArray<Message> => {
  const first = messages.findIndex((message) => ids.has(message.id))
  const kept = without(messages, ids)
  if (first === -1) return [...replacement, ...kept]
  // Index among kept messages where the first removed one stood.
  const at = messages.slice(0, first).filter((message) => !ids.has(message.id)).length
  return [...kept.slice(0, at), ...replacement, ...kept.slice(at)]
}

const completedIn = (messages: ReadonlyArray<Message>): ReadonlyArray<string> =>
  messages.flatMap((message) => toolResultsOf(message).map((part) => part.toolCallId))

const addUnique = (ids: ReadonlyArray<string>, added: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (added.length === 0) return ids
  const seen = new Set(ids)
  return [...ids, ...added.filter((id) => !seen.has(id))]
}

/** Replace the content of the tool result answering `toolCallId` inside message `messageId`. */
const rewriteToolOutput = (
  history: ReadonlyArray<Message>,
  messageId: string,
  toolCallId: string,
  content: string,
  tokens: number
): ReadonlyArray<Message> =>
  history.map((message) =>
    message.id !== messageId
      ? message
      : {
          ...message,
          tokens,
          parts: message.parts.map((part) =>
            part.type === "tool_result" && part.toolCallId === toolCallId ? { ...part, content } : part
          )
        }
  )

const rewriteMedia = (
  history: ReadonlyArray<Message>,
  messageId: string,
  partIndex: number,
  stub: string,
  tokens: number
): ReadonlyArray<Message> =>
  history.map((message) => {
    const part = message.parts[partIndex]
    return message.id !== messageId || (part?.type !== "image" && part?.type !== "document")
      ? message
      : {
          ...message,
          tokens,
          parts: message.parts.map((each, index) => (index === partIndex ? { type: "text", text: stub } : each))
        }
  })

const removeEverywhere = (window: Window, ids: ReadonlySet<string>): Window => ({
  ...window,
  knowledge: without(window.knowledge, ids),
  history: without(window.history, ids),
  seams: window.seams.filter((seam) => !ids.has(seam.messageId))
})

const isStable = (message: Message): boolean => message.kind === "chat"

const applyDeferred = (window: Window, event: EventOf<"DeferredSummariesApplied">): Window => {
  const wanted = new Set(event.toolCallIds)
  const before = new Map(window.history.map((message) => [message.id, message.tokens]))
  let history = window.history
  // Reverse order: the newest deferred summary is applied first, as recorded.
  for (const deferred of [...window.deferredSummaries].reverse()) {
    if (!wanted.has(deferred.toolCallId)) continue
    const recorded = before.get(deferred.resultMessageId)
    const current = history.find((message) => message.id === deferred.resultMessageId)
    if (recorded === undefined || current === undefined) continue
    // A summary's `tokens` counts the whole message with only its own output replaced. Apply its saving,
    // so that two summaries answering calls in one message both count (with one, this is `tokens`).
    const tokens = Math.max(0, current.tokens - (recorded - deferred.tokens))
    history = rewriteToolOutput(history, deferred.resultMessageId, deferred.toolCallId, deferred.summary, tokens)
  }
  return {
    ...window,
    history,
    deferredSummaries: window.deferredSummaries.filter((deferred) => !wanted.has(deferred.toolCallId))
  }
}

const step = (window: Window, event: WindowEvent, version: number): Window => {
  const origin = stampOrigin(version, event.id)
  switch (event._tag) {
    case "SystemPromptSet":
      return { ...window, system: event.messages.map(origin) }
    case "KnowledgeSet":
      return {
        ...window,
        knowledge: [...event.messages.map(origin), ...window.knowledge.filter((message) => !isStable(message))]
      }
    case "TaskGoalSet":
      return { ...window, taskState: { ...window.taskState, goal: event.goal, goalTokens: event.tokens } }
    case "SubgoalsSet":
      return { ...window, taskState: { ...window.taskState, subgoals: event.subgoals, subgoalTokens: event.tokens } }
    case "SignalRaised":
      return { ...window, signals: [...window.signals, event.signal] }
    case "MessageAppended":
      return {
        ...window,
        history: [...window.history, origin(event.message)],
        completedToolIds: addUnique(window.completedToolIds, completedIn([event.message]))
      }
    case "MessagesInjected": {
      const knowledge = window.knowledge.filter((message) => message.kind !== event.kind)
      const history = event.replacesInHistory
        ? window.history.filter((message) => message.kind !== event.kind)
        : window.history
      const stable = knowledge.filter(isStable)
      const injected = knowledge.filter((message) => !isStable(message))
      // Newest injection sits right after the stable prefix (system prompt, then stable knowledge).
      return { ...window, history, knowledge: [...stable, ...event.messages.map(origin), ...injected] }
    }
    case "MessagesRemoved":
      return removeEverywhere(window, new Set(event.messageIds))
    case "MessagePinned": {
      const pin = (message: Message): Message =>
        message.id !== event.messageId
          ? message
          : event.pinned
            ? { ...message, pinned: true }
            : (({ pinned: _pinned, ...rest }) => rest)(message)
      return {
        ...window,
        system: window.system.map(pin),
        knowledge: window.knowledge.map(pin),
        history: window.history.map(pin)
      }
    }
    case "HistoryTrimmed":
      return { ...window, history: without(window.history, new Set(event.removedIds)) }
    case "HistoryCleared":
      return {
        ...window,
        ...(event.scope === "conversation"
          ? {
              knowledge: window.knowledge.filter(isStable),
              signals: [],
              taskState: { goal: null, goalTokens: 0, subgoals: [], subgoalTokens: 0 }
            }
          : {}),
        history: [],
        completedToolIds: [],
        pendingToolPairs: [],
        deferredSummaries: [],
        seams: [],
        carryOver: null,
        watermark: null,
        compaction: { ...window.compaction, compactedThisTurn: false, cooldownRemaining: 0 }
      }
    case "ConversationReset":
      return { ...empty, version: window.version, system: window.system, calibration: window.calibration }
    case "CalibrationCarried":
      return { ...window, calibration: event.calibration }
    case "TurnCompleted":
      return {
        ...window,
        compaction: {
          turn: window.compaction.turn + 1,
          turnsSinceHard: window.compaction.turnsSinceHard + 1,
          cooldownRemaining: Math.max(0, window.compaction.cooldownRemaining - 1),
          compactedThisTurn: false
        }
      }
    case "PromptRendered":
      return { ...window, signals: [] }
    case "UsageReported":
      return {
        ...window,
        calibration: {
          estimatedInputTokens: window.calibration.estimatedInputTokens + event.estimatedInputTokens,
          reportedInputTokens: window.calibration.reportedInputTokens + event.inputTokens,
          observations: window.calibration.observations + 1
        }
      }
    case "ToolOutputPruned": {
      let history = window.history
      for (const output of event.outputs) {
        history = rewriteToolOutput(history, output.messageId, output.toolCallId, output.content, output.tokens)
      }
      return { ...window, history }
    }
    case "MediaPruned": {
      let history = window.history
      for (const pruned of event.parts) {
        history = rewriteMedia(history, pruned.messageId, pruned.partIndex, pruned.stub, pruned.tokens)
      }
      return { ...window, history }
    }
    case "UserAskCut":
    case "UnseenCut": {
      const cut = new Map(event.parts.map((part) => [part.partIndex, part.text]))
      return {
        ...window,
        history: window.history.map((message) =>
          message.id !== event.messageId
            ? message
            : {
                ...message,
                tokens: event.tokens,
                parts: message.parts.map((part, index) => {
                  const text = cut.get(index)
                  if (text === undefined) return part
                  if (part.type === "tool_result") return { ...part, content: text }
                  return part.type !== "text" ? part : { ...part, text }
                })
              }
        )
      }
    }
    case "ToolPairsQueued":
      return { ...window, pendingToolPairs: addUnique(window.pendingToolPairs, event.toolCallIds) }
    case "ToolPairSummaryDeferred":
      return {
        ...window,
        pendingToolPairs: window.pendingToolPairs.filter((id) => id !== event.toolCallId),
        deferredSummaries: [
          ...window.deferredSummaries.filter((deferred) => deferred.toolCallId !== event.toolCallId),
          {
            toolCallId: event.toolCallId,
            resultMessageId: event.resultMessageId,
            summary: event.summary,
            tokens: event.tokens
          }
        ]
      }
    case "DeferredSummariesApplied":
      return applyDeferred(window, event)
    case "DeferredSummariesFlushed":
      return { ...window, pendingToolPairs: [], deferredSummaries: [] }
    case "Compacted": {
      const removed = new Set(event.removedIds)
      const summary = event.summary === null ? [] : [origin(event.summary)]
      const hard = event.tier === "hard"
      return {
        ...window,
        history: replaceRange(window.history, removed, summary),
        seams: [
          ...window.seams.filter((seam) => !removed.has(seam.messageId)),
          ...rolledSeam(window.seams, removed, event.summary)
        ],
        carryOver: event.carryOver,
        watermark: event.throughVersion,
        compaction: {
          ...window.compaction,
          compactedThisTurn: true,
          turnsSinceHard: hard ? 0 : window.compaction.turnsSinceHard,
          cooldownRemaining: hard ? event.cooldownTurns : window.compaction.cooldownRemaining
        }
      }
    }
    case "CompactionFailed":
      return window
    case "CompactionReverted": {
      const history = replaceRange(window.history, new Set(event.removedIds), event.restored.map(origin))
      const present = new Set(history.map((message) => message.id))
      const known = new Set(window.seams.map((seam) => seam.messageId))
      return {
        ...window,
        history,
        // Issue 39: the seams the undo brings back get their entries again.
        seams: [
          ...window.seams,
          ...(event.seams ?? []).filter((seam) => present.has(seam.messageId) && !known.has(seam.messageId))
        ],
        carryOver: event.carryOver,
        watermark: event.watermark
      }
    }
    case "SeamProduced":
    case "SeamsRecompacted": {
      const replaced = new Set(event.replacedIds)
      return {
        ...window,
        history: replaceRange(window.history, replaced, [origin(event.message)]),
        seams: [
          ...window.seams.filter((seam) => !replaced.has(seam.messageId)),
          { messageId: event.message.id, level: event.level }
        ]
      }
    }
    case "BriefingProduced":
      return {
        ...window,
        history: [origin(event.message), ...window.history.filter((message) => message.kind !== "briefing")]
      }
    case "CycleAdvanced": {
      const removed = new Set(event.removedIds)
      return {
        ...window,
        cycle: event.cycle,
        history: without(window.history, removed),
        seams: window.seams.filter((seam) => !removed.has(seam.messageId))
      }
    }
    case "SeamsReset":
      return { ...window, seams: [] }
    case "FactsRecorded":
    case "TurnPolicySet":
    case "ConversationContinued":
    case "CheckpointSaved":
    case "CheckpointWritesSaved":
    case "CheckpointsDeleted":
    case "CompactionDecided":
      return window
    default:
      return absurd(event)
  }
}

/** Issue 20: a summary that rolls seams in carries their highest level. */
const rolledSeam = (seams: Window["seams"], removed: ReadonlySet<string>, summary: Message | null): Window["seams"] => {
  const levels = seams.filter((seam) => removed.has(seam.messageId)).map((seam) => seam.level)
  return summary === null || levels.length === 0 ? [] : [{ messageId: summary.id, level: Math.max(...levels) }]
}

const absurd = (value: never): never => {
  throw new Error(`unreachable: ${JSON.stringify(value)}`)
}

export const evolve = (window: Window, event: WindowEvent): Window => {
  const version = window.version + 1
  return withTokens(seamsInHistory(window, { ...step(window, event, version), version }))
}

/**
 * Issue 39: the seam list never names a message that left history (a trim, a removal, an undo used to
 * leave one behind). An entry whose message the event did not touch stays.
 */
const seamsInHistory = (before: Window, after: Window): Window => {
  const present = new Set(after.history.map((message) => message.id))
  const had = new Set(before.history.map((message) => message.id))
  const seams = after.seams.filter((seam) => present.has(seam.messageId) || !had.has(seam.messageId))
  return seams.length === after.seams.length ? after : { ...after, seams }
}

/**
 * The first release's trim plan: groups of the whole history, oldest first, the newest group kept; since
 * issue 20 also every group holding a tool result after the last assistant message (unseen, in a stream
 * with no renders) or the call it answers; since issue 39 the user's latest ask.
 */
export const referenceTrimPlan = (window: Window, budget: number): ReadonlyArray<string> => {
  if (budget <= 0 || window.tokens.total <= budget) return []
  const groups = ToolPairs.groups(window.history)
  const lastAssistant = window.history.map((message) => message.role).lastIndexOf("assistant")
  const unseenCalls = new Set(
    window.history.slice(lastAssistant + 1).flatMap((message) => toolResultsOf(message).map((r) => r.toolCallId))
  )
  // Issue 39: a call still waiting for its result stays too (its result could never be appended).
  const pending = new Set(ToolPairs.pendingCalls(window.history))
  const touchesUnseen = (message: Message) =>
    toolResultsOf(message).some((r) => unseenCalls.has(r.toolCallId)) ||
    toolCallsOf(message).some((c) => unseenCalls.has(c.id) || pending.has(c.id))
  // Issue 39: and the user's latest ask (the newest user chat message that is no tool result).
  const ask = window.history.findLast(
    (message) => message.role === "user" && message.kind === "chat" && toolResultsOf(message).length === 0
  )
  let total = window.tokens.total
  const removed: Array<string> = []
  for (const group of groups.slice(0, -1)) {
    if (total <= budget) break
    if (group.some((message) => message.pinned === true || message === ask || touchesUnseen(message))) continue
    for (const message of group) {
      removed.push(message.id)
      total -= message.tokens
    }
  }
  return removed
}
