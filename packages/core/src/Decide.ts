/**
 * `decide(window, command) → events`: the pure command side of the window.
 *
 * Commands carry everything impure already resolved (message ids, token counts), so `decide` needs no
 * services. It returns event drafts; the service gives them ids and appends them.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type InjectedKind, type Message, toolCallsOf, toolResultsOf } from "./Message.js"
import * as ToolPairs from "./ToolPairs.js"
import * as Window from "./Window.js"
import type { Draft, Fact } from "./WindowEvent.js"

/** A window command. @since 0.1.0 */
export type WindowCommand =
  | { readonly _tag: "SetSystemPrompt"; readonly messages: ReadonlyArray<Message> }
  | { readonly _tag: "SetKnowledge"; readonly messages: ReadonlyArray<Message> }
  | { readonly _tag: "SetTaskGoal"; readonly goal: string | null; readonly tokens: number }
  | { readonly _tag: "SetSubgoals"; readonly subgoals: ReadonlyArray<string>; readonly tokens: number }
  | { readonly _tag: "RaiseSignal"; readonly signal: Window.Signal }
  | { readonly _tag: "AppendMessages"; readonly messages: ReadonlyArray<Message> }
  | { readonly _tag: "ClearHistory" }
  | { readonly _tag: "RemoveKind"; readonly kind: InjectedKind }
  | { readonly _tag: "TrimToBudget"; readonly budget: number }
  | { readonly _tag: "Inject"; readonly kind: InjectedKind; readonly messages: ReadonlyArray<Message> }
  | { readonly _tag: "ResetConversation" }
  | { readonly _tag: "Pin"; readonly messageId: string; readonly pinned: boolean }
  | { readonly _tag: "CompleteTurn" }
  | { readonly _tag: "RecordFacts"; readonly facts: ReadonlyArray<Fact> }

/** A command does not fit the window; nothing was written. @since 0.1.0 */
export class InvalidCommand extends Schema.TaggedError<InvalidCommand>()("InvalidCommand", {
  command: Schema.String,
  detail: Schema.String,
  messageId: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `${this.command}: ${this.detail}${this.messageId === undefined ? "" : ` (message ${this.messageId})`}`
  }
}

const invalid = (command: WindowCommand, detail: string, messageId?: string) =>
  Either.left(new InvalidCommand({ command: command._tag, detail, ...(messageId === undefined ? {} : { messageId }) }))

const none: Either.Either<ReadonlyArray<Draft>, InvalidCommand> = Either.right([])

/** Messages that carry tool parts must be ordinary conversation in history. */
const checkNoToolParts = (command: WindowCommand, messages: ReadonlyArray<Message>) => {
  const offender = messages.find((message) => toolCallsOf(message).length + toolResultsOf(message).length > 0)
  return offender === undefined
    ? undefined
    : invalid(command, "injected and partition messages cannot carry tool calls or results", offender.id)
}

const checkNewIds = (window: Window.Window, command: WindowCommand, messages: ReadonlyArray<Message>) => {
  const taken = new Set(Window.messages(window).map((message) => message.id))
  for (const message of messages) {
    if (taken.has(message.id)) return invalid(command, "message id is already in the window", message.id)
    taken.add(message.id)
  }
  return undefined
}

/** Validate appended messages against the history they join. */
const checkAppend = (window: Window.Window, command: WindowCommand, messages: ReadonlyArray<Message>) => {
  const duplicate = checkNewIds(window, command, messages)
  if (duplicate !== undefined) return duplicate
  const calls = new Set(window.history.flatMap((message) => toolCallsOf(message).map((call) => call.id)))
  const answered = new Set(window.completedToolIds)
  for (const message of messages) {
    const results = toolResultsOf(message)
    const made = toolCallsOf(message)
    if (message.kind !== "chat" && results.length + made.length > 0) {
      return invalid(command, `a "${message.kind}" message cannot carry tool calls or results`, message.id)
    }
    if (made.length > 0 && message.role !== "assistant") {
      return invalid(command, "only assistant messages make tool calls", message.id)
    }
    if (results.length > 0 && message.role !== "tool" && message.role !== "user") {
      return invalid(command, "tool results belong in tool (or user) messages", message.id)
    }
    for (const result of results) {
      if (!calls.has(result.toolCallId)) {
        return invalid(command, `tool result answers unknown tool call "${result.toolCallId}"`, message.id)
      }
      if (answered.has(result.toolCallId)) {
        return invalid(command, `tool call "${result.toolCallId}" already has a result`, message.id)
      }
      answered.add(result.toolCallId)
    }
    for (const call of made) {
      // A completed call id stays taken even after its pair left the window: its result could never
      // be appended again ("already has a result"), so the new call would dangle.
      if (calls.has(call.id) || answered.has(call.id)) {
        return invalid(command, `tool call id "${call.id}" is used already`, message.id)
      }
      calls.add(call.id)
    }
  }
  return undefined
}

/**
 * The history to drop, oldest first, so the window fits `budget` tokens. System, knowledge and task
 * state are never trimmed; pinned messages stay; a tool call and its results leave together; the newest
 * group always stays.
 * @since 0.1.0
 */
export const trimPlan = (window: Window.Window, budget: number): ReadonlyArray<string> => {
  if (budget <= 0 || window.tokens.total <= budget) return []
  const groups = ToolPairs.groups(window.history)
  let total = window.tokens.total
  const removed: Array<string> = []
  for (const group of groups.slice(0, -1)) {
    if (total <= budget) break
    if (group.some((message) => message.pinned === true)) continue
    for (const message of group) {
      removed.push(message.id)
      total -= message.tokens
    }
  }
  return removed
}

/** Decide the events for a command. @since 0.1.0 */
export const decide = (
  window: Window.Window,
  command: WindowCommand
): Either.Either<ReadonlyArray<Draft>, InvalidCommand> => {
  switch (command._tag) {
    case "SetSystemPrompt":
    case "SetKnowledge": {
      const problem = checkNoToolParts(command, command.messages)
      if (problem !== undefined) return problem
      // Stable knowledge is what a later KnowledgeSet replaces; an injected kind here would outlive it.
      const injected =
        command._tag === "SetKnowledge" ? command.messages.find((message) => message.kind !== "chat") : undefined
      if (injected !== undefined) {
        return invalid(command, `stable knowledge cannot be of kind "${injected.kind}": inject it instead`, injected.id)
      }
      const others =
        command._tag === "SetSystemPrompt"
          ? [...window.knowledge, ...window.history]
          : [...window.system, ...window.history, ...window.knowledge.filter((message) => message.kind !== "chat")]
      const taken = new Set(others.map((message) => message.id))
      // An id repeated within the new partition clashes too.
      const clash = command.messages.find((message) => {
        if (taken.has(message.id)) return true
        taken.add(message.id)
        return false
      })
      if (clash !== undefined) return invalid(command, "message id is already in the window", clash.id)
      return Either.right([
        command._tag === "SetSystemPrompt"
          ? { _tag: "SystemPromptSet", messages: command.messages }
          : { _tag: "KnowledgeSet", messages: command.messages }
      ])
    }
    case "SetTaskGoal":
      return Either.right([{ _tag: "TaskGoalSet", goal: command.goal, tokens: command.tokens }])
    case "SetSubgoals":
      return Either.right([{ _tag: "SubgoalsSet", subgoals: command.subgoals, tokens: command.tokens }])
    case "RaiseSignal":
      return Either.right([{ _tag: "SignalRaised", signal: command.signal }])
    case "AppendMessages": {
      const problem = checkAppend(window, command, command.messages)
      if (problem !== undefined) return problem
      return Either.right(command.messages.map((message) => ({ _tag: "MessageAppended", message }) as const))
    }
    case "ClearHistory":
      // Bookkeeping about history (queued or deferred tool pairs, seams) is cleared with it.
      return window.history.length === 0 &&
        window.completedToolIds.length === 0 &&
        window.pendingToolPairs.length === 0 &&
        window.deferredSummaries.length === 0 &&
        window.seams.length === 0
        ? none
        : Either.right([{ _tag: "HistoryCleared" }])
    case "RemoveKind": {
      const ids = [...window.knowledge, ...window.history]
        .filter((message) => message.kind === command.kind)
        .map((message) => message.id)
      return ids.length === 0
        ? none
        : Either.right([{ _tag: "MessagesRemoved", messageIds: ids, reason: `kind:${command.kind}` }])
    }
    case "TrimToBudget": {
      // NaN compares false with everything and would drop all but the newest group.
      if (Number.isNaN(command.budget) || (Number.isFinite(command.budget) && !Number.isInteger(command.budget))) {
        return invalid(command, `budget must be a whole number of tokens, got ${command.budget}`)
      }
      const removedIds = trimPlan(window, command.budget)
      return removedIds.length === 0
        ? none
        : Either.right([{ _tag: "HistoryTrimmed", budget: command.budget, removedIds }])
    }
    case "Inject": {
      const problem = checkNoToolParts(command, command.messages)
      if (problem !== undefined) return problem
      const mislabeled = command.messages.find((message) => message.kind !== command.kind)
      if (mislabeled !== undefined) {
        return invalid(command, `message kind "${mislabeled.kind}" differs from "${command.kind}"`, mislabeled.id)
      }
      const present = [...window.knowledge, ...window.history].some((message) => message.kind === command.kind)
      if (!present && command.messages.length === 0) return none
      const replaced = new Set(
        [...window.knowledge, ...window.history]
          .filter((message) => message.kind === command.kind)
          .map((message) => message.id)
      )
      const remaining: Window.Window = {
        ...window,
        knowledge: window.knowledge.filter((message) => !replaced.has(message.id)),
        history: window.history.filter((message) => !replaced.has(message.id))
      }
      const clash = checkNewIds(remaining, command, command.messages)
      if (clash !== undefined) return clash
      return Either.right([{ _tag: "MessagesInjected", kind: command.kind, messages: command.messages }])
    }
    case "ResetConversation":
      return Either.right([{ _tag: "ConversationReset" }])
    case "Pin": {
      const target = Window.findMessage(window, command.messageId)
      if (target === undefined) return invalid(command, "no such message in the window", command.messageId)
      if ((target.pinned === true) === command.pinned) return none
      return Either.right([{ _tag: "MessagePinned", messageId: command.messageId, pinned: command.pinned }])
    }
    case "CompleteTurn":
      return Either.right([{ _tag: "TurnCompleted" }])
    case "RecordFacts":
      return command.facts.length === 0 ? none : Either.right([{ _tag: "FactsRecorded", facts: command.facts }])
  }
}
