/**
 * `decide(window, command) → events`: the pure command side of the window.
 *
 * Commands carry everything impure already resolved (message ids, token counts), so `decide` needs no
 * services. It returns event drafts; the service gives them ids and appends them.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Schema from "effect/Schema"
import { type State, stateOf } from "./internal/evolve.js"
import { type InjectedKind, type Message, type MessageInput, toolCallsOf, toolResultsOf } from "./Message.js"
import * as Window from "./Window.js"
import type { Draft, Fact, WindowEvent } from "./WindowEvent.js"

/**
 * What the fields of a command carry in each of its two forms: what a caller writes (`Requested`: message
 * inputs, plain text) and what `decide` needs (`Resolved`: messages with ids and token counts, counted
 * task state and signals). The service resolves one into the other; nothing else differs.
 */
interface Requested {
  readonly system: { readonly prompt: string | ReadonlyArray<MessageInput> }
  readonly knowledge: { readonly knowledge: ReadonlyArray<string | MessageInput> }
  readonly counted: {}
  readonly signal: { readonly text: string }
  readonly message: MessageInput
  readonly item: string | MessageInput
}
interface Resolved {
  readonly system: { readonly messages: ReadonlyArray<Message> }
  readonly knowledge: { readonly messages: ReadonlyArray<Message> }
  readonly counted: { readonly tokens: number }
  readonly signal: { readonly signal: Window.Signal }
  readonly message: Message
  readonly item: Message
}

/**
 * The window commands, each declared once: the one command union, in the form a caller writes it
 * ({@link Command}) and the form `decide` takes ({@link WindowCommand}).
 */
type Commands<F extends Requested | Resolved> = {
  SetSystemPrompt: F["system"]
  SetKnowledge: F["knowledge"]
  SetTaskGoal: { readonly goal: string | null } & F["counted"]
  SetSubgoals: { readonly subgoals: ReadonlyArray<string> } & F["counted"]
  RaiseSignal: F["signal"]
  AppendMessages: { readonly messages: ReadonlyArray<F["message"]> }
  ClearHistory: {}
  /** Remove every message of an injected kind, from knowledge and history. */
  RemoveKind: { readonly kind: InjectedKind }
  TrimToBudget: { readonly budget: number }
  Inject: { readonly kind: InjectedKind; readonly messages: ReadonlyArray<F["item"]> }
  Pin: { readonly messageId: string; readonly pinned: boolean }
  CompleteTurn: {}
}

/**
 * A window operation as a value, as a caller writes it: what `ContextService.execute(stream, command)`
 * runs, the one entry of the service (its named members are helpers that build one). The two commands
 * that read the store before they decide (`Recall`, `InjectSummaries`) exist only in this form.
 * @since 0.8.0
 */
export type Command = Data.TaggedEnum<
  Commands<Requested> & {
    /** Recall from the `RecallSource` into `recall` (this conversation) or `cross_session` (the owner's others). */
    Recall: {
      readonly kind: "recall" | "cross_session"
      readonly query: string
      readonly budget: number
      readonly owner?: string | undefined
    }
    InjectSummaries: { readonly budget: number }
  }
>

/** Constructors and matchers of {@link Command} (`Command.AppendMessages({ messages })`). @since 0.8.0 */
export const Command = Data.taggedEnum<Command>()

/**
 * A command as `decide` takes it: the same commands with everything impure resolved (message ids, token
 * counts), plus the service's own (`ResetConversation`, `ContinueIn`, `RecordFacts`).
 * @since 0.1.0
 */
export type WindowCommand = Data.TaggedEnum<
  Commands<Resolved> & {
    ResetConversation: {}
    ContinueIn: { readonly into: string }
    RecordFacts: { readonly facts: ReadonlyArray<Fact> }
  }
>

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
  Either.left(new InvalidCommand({ command: command._tag, detail, messageId }))

const none: Either.Either<ReadonlyArray<Draft>, InvalidCommand> = Either.right([])

/** Messages that carry tool parts must be ordinary conversation in history. */
const checkNoToolParts = (command: WindowCommand, messages: ReadonlyArray<Message>) => {
  const offender = messages.find((message) => toolCallsOf(message).length + toolResultsOf(message).length > 0)
  return offender === undefined
    ? undefined
    : invalid(command, "injected and partition messages cannot carry tool calls or results", offender.id)
}

/** Whether a message id is taken in the window: system and knowledge are scanned (small), history by index. */
const takenIn =
  (state: State, skip?: ReadonlySet<string>) =>
  (id: string): boolean =>
    skip?.has(id) !== true &&
    (state.system.some((message) => message.id === id) ||
      state.knowledge.some((message) => message.id === id) ||
      state.history.has(id))

const checkNewIds = (
  state: State,
  command: WindowCommand,
  messages: ReadonlyArray<Message>,
  replaced?: ReadonlySet<string>
) => {
  const inWindow = takenIn(state, replaced)
  const seen = new Set<string>()
  for (const message of messages) {
    if (seen.has(message.id) || inWindow(message.id)) {
      return invalid(command, "message id is already in the window", message.id)
    }
    seen.add(message.id)
  }
  return undefined
}

/** Validate appended messages against the history they join. O(the messages appended). */
const appendedMessagesProblem = (state: State, command: WindowCommand, messages: ReadonlyArray<Message>) => {
  const duplicate = checkNewIds(state, command, messages)
  if (duplicate !== undefined) return duplicate
  const calls = new Set<string>()
  const answered = new Set<string>()
  const called = (id: string) => calls.has(id) || HashMap.has(state.calls, id)
  const done = (id: string) => answered.has(id) || state.completed.has(id)
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
      if (!called(result.toolCallId)) {
        return invalid(command, `tool result answers unknown tool call "${result.toolCallId}"`, message.id)
      }
      if (done(result.toolCallId)) {
        return invalid(command, `tool call "${result.toolCallId}" already has a result`, message.id)
      }
      answered.add(result.toolCallId)
    }
    for (const call of made) {
      // A completed call id stays taken even after its pair left the window: its result could never
      // be appended again ("already has a result"), so the new call would dangle.
      if (called(call.id) || done(call.id)) {
        return invalid(command, `tool call id "${call.id}" is used already`, message.id)
      }
      calls.add(call.id)
    }
  }
  return undefined
}

/**
 * The tool-pair group of a history message: the message, the results of the calls it makes, the calls
 * its results answer, and so on (a result joins a call made before it). Members in history order.
 */
const groupOf = (state: State, start: Message): ReadonlyArray<Message> => {
  const history = state.history
  const members = new Map<string, Message>()
  const queue: Array<Message> = [start]
  while (queue.length > 0) {
    const message = queue.pop() as Message
    if (members.has(message.id)) continue
    members.set(message.id, message)
    const key = history.keyOf(message.id) ?? 0
    for (const call of toolCallsOf(message)) {
      const holders = HashMap.get(state.results, call.id)
      if (holders._tag === "None") continue
      for (const id of holders.value) {
        const result = history.get(id)
        if (result !== undefined && (history.keyOf(id) ?? 0) > key) queue.push(result)
      }
    }
    for (const result of toolResultsOf(message)) {
      const maker = HashMap.get(state.calls, result.toolCallId)
      if (maker._tag === "None") continue
      const call = history.get(maker.value)
      if (call !== undefined && (history.keyOf(maker.value) ?? 0) < key) queue.push(call)
    }
  }
  if (members.size === 1) return [start]
  return [...members.values()].sort((a, b) => (history.keyOf(a.id) ?? 0) - (history.keyOf(b.id) ?? 0))
}

/** The order key of the first message of the newest group (scans back only as far as that group reaches). */
const newestGroupStart = (state: State): number => {
  const history = state.history
  let best = Number.NEGATIVE_INFINITY
  for (const message of history.reversed()) {
    const key = history.keyOf(message.id) ?? 0
    if (key < best) break
    const first = groupOf(state, message)[0]
    best = Math.max(best, first === undefined ? key : (history.keyOf(first.id) ?? key))
  }
  return best
}

/**
 * The history to drop, oldest first, so the window fits `budget` tokens. System, knowledge and task
 * state are never trimmed; pinned messages and the user's latest ask (`Window.latestUserAsk`) stay; a tool call and its results leave together (the groups
 * of `ToolPairs.groups`); the newest group always stays, and so does every tool result the model has not
 * seen yet with its call (`Window.unseenToolPairs`: kept whole; truncating it is compaction's fit step). O(the messages dropped), not O(history): groups
 * are found from the oldest message on, and only until the window fits.
 * @since 0.1.0
 */
export const trimPlan = (window: Window.Window, budget: number): ReadonlyArray<string> => {
  if (budget <= 0 || window.tokens.total <= budget) return []
  const state = stateOf(window)
  const history = state.history
  const newest = newestGroupStart(state)
  const unseen = Window.unseenToolPairs(window)
  const ask = Window.latestUserAsk(window)
  let total = window.tokens.total
  const removed: Array<string> = []
  const seen = new Set<string>()
  for (const message of history) {
    if (total <= budget) break
    if (seen.has(message.id)) continue
    if ((history.keyOf(message.id) ?? 0) >= newest) break
    const group = groupOf(state, message)
    for (const member of group) seen.add(member.id)
    if (group.some((member) => member.pinned === true || member.id === ask || unseen.has(member.id))) continue
    for (const member of group) {
      removed.push(member.id)
      total -= member.tokens
    }
  }
  return removed
}

/**
 * The first events of the stream a conversation continues in (`resetConversation`): the system prompt,
 * the stable knowledge (without their origins) and the usage calibration observed so far, so estimates
 * stay corrected in the new stream (`CalibrationCarried`; issue 20, behaviour 7). Pure.
 * @since 0.3.0
 */
export const continuation = (window: Window.Window, from: string): ReadonlyArray<Draft> => {
  const bare = ({ origin: _origin, ...message }: Message): Message => message
  const stable = window.knowledge.filter((message) => message.kind === "chat")
  return [
    ...(window.system.length === 0 ? [] : [{ _tag: "SystemPromptSet" as const, messages: window.system.map(bare) }]),
    ...(stable.length === 0 ? [] : [{ _tag: "KnowledgeSet" as const, messages: stable.map(bare) }]),
    ...(window.calibration.observations === 0
      ? []
      : [{ _tag: "CalibrationCarried" as const, from, calibration: window.calibration }])
  ]
}

/**
 * The summaries and seams a log still stands behind, oldest first: every compaction summary and seam
 * message, less those a later summary or seam rolled in (its removed or replaced ids: their text went
 * forward into it), those of a compaction that was undone (and the summaries that undo brought back are
 * live again), and everything before a clear or reset of the conversation. One pass over the events.
 * @since 0.3.0
 */
export const liveSummaries = (events: Iterable<WindowEvent>): ReadonlyArray<Message> => {
  const live = new Map<string, { readonly message: Message; readonly at: number }>()
  const undo = new Map<
    string,
    {
      readonly summaryId: string | null
      readonly rolled: ReadonlyArray<[string, { readonly message: Message; readonly at: number }]>
    }
  >()
  let at = 0
  const roll = (ids: ReadonlyArray<string>) => {
    const rolled: Array<[string, { readonly message: Message; readonly at: number }]> = []
    for (const id of ids) {
      const entry = live.get(id)
      if (entry === undefined) continue
      rolled.push([id, entry])
      live.delete(id)
    }
    return rolled
  }
  for (const event of events) {
    at += 1
    switch (event._tag) {
      case "Compacted": {
        if (event.summary === null) break
        undo.set(event.id, { summaryId: event.summary.id, rolled: roll(event.removedIds) })
        live.set(event.summary.id, { message: event.summary, at })
        break
      }
      case "CompactionReverted": {
        const undone = undo.get(event.compactionEventId)
        if (undone === undefined) break
        if (undone.summaryId !== null) live.delete(undone.summaryId)
        for (const [id, entry] of undone.rolled) live.set(id, entry)
        break
      }
      case "SeamProduced":
      case "SeamsRecompacted":
        roll(event.replacedIds)
        live.set(event.message.id, { message: event.message, at })
        break
      case "HistoryCleared":
      case "ConversationReset":
        live.clear()
        undo.clear()
        break
      default:
        break
    }
  }
  return [...live.values()].sort((a, b) => a.at - b.at).map((entry) => entry.message)
}

/**
 * What `injectSummaries` injects: the {@link liveSummaries} of a log, newest first, that the window does
 * not show already (a live summary or seam in history), within `budget` tokens, as system messages.
 * @since 0.3.0
 */
export const summariesToInject = (
  window: Window.Window,
  events: Iterable<WindowEvent>,
  budget: number
): ReadonlyArray<MessageInput> => {
  const stored = liveSummaries(events)
  const history = stateOf(window).history
  const kept: Array<MessageInput> = []
  let used = 0
  for (let i = stored.length - 1; i >= 0; i--) {
    const message = stored[i] as Message
    if (history.has(message.id) || used + message.tokens > budget) continue
    kept.push({ role: "system", parts: message.parts })
    used += message.tokens
  }
  return kept
}

/** Ids of the messages of `kind` in knowledge and history. */
const idsOfKind = (state: State, kind: InjectedKind): ReadonlyArray<string> => {
  const inHistory = HashMap.get(state.kinds, kind)
  return [
    ...state.knowledge.filter((message) => message.kind === kind).map((message) => message.id),
    ...(inHistory._tag === "Some" ? inHistory.value : [])
  ]
}

/** Decide the events for a command. @since 0.1.0 */
export const decide = (
  window: Window.Window,
  command: WindowCommand
): Either.Either<ReadonlyArray<Draft>, InvalidCommand> => {
  const state = stateOf(window)
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
      // The partition being replaced does not count: its ids may be used again.
      const replaced = new Set(
        (command._tag === "SetSystemPrompt"
          ? window.system
          : window.knowledge.filter((message) => message.kind === "chat")
        ).map((message) => message.id)
      )
      const clash = checkNewIds(state, command, command.messages, replaced)
      if (clash !== undefined) return clash
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
      const problem = appendedMessagesProblem(state, command, command.messages)
      if (problem !== undefined) return problem
      return Either.right(command.messages.map((message) => ({ _tag: "MessageAppended", message }) as const))
    }
    case "ClearHistory":
      // The conversation goes: history and its bookkeeping (queued or deferred tool pairs, seams), injected
      // context, signals, the task state and compaction's carry-over, watermark, cooldown and per-turn guard
      // (issue 20). The system prompt and stable knowledge stay (ADR 0011).
      return state.history.length === 0 &&
        state.completed.length === 0 &&
        window.pendingToolPairs.length === 0 &&
        window.deferredSummaries.length === 0 &&
        window.seams.length === 0 &&
        window.signals.length === 0 &&
        window.taskState.goal === null &&
        window.taskState.subgoals.length === 0 &&
        window.carryOver === null &&
        window.watermark === null &&
        !window.compaction.compactedThisTurn &&
        window.compaction.cooldownRemaining === 0 &&
        window.knowledge.every((message) => message.kind === "chat")
        ? none
        : Either.right([{ _tag: "HistoryCleared", scope: "conversation" }])
    case "RemoveKind": {
      const ids = idsOfKind(state, command.kind)
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
      // An injection replaces that kind in knowledge only: what compaction or a seam put in history stays.
      const replaced = new Set(
        state.knowledge.filter((message) => message.kind === command.kind).map((message) => message.id)
      )
      if (replaced.size === 0 && command.messages.length === 0) return none
      const clash = checkNewIds(state, command, command.messages, replaced)
      if (clash !== undefined) return clash
      return Either.right([
        { _tag: "MessagesInjected", kind: command.kind, messages: command.messages, replacesInHistory: false }
      ])
    }
    case "ResetConversation":
      return Either.right([{ _tag: "ConversationReset" }])
    case "ContinueIn":
      return Either.right([{ _tag: "ConversationContinued", into: command.into }])
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
