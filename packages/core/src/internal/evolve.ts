/**
 * The window projection, O(the change) per event.
 *
 * A window handed to callers is plain data to look at: every field is an own enumerable property, and
 * `history` / `completedToolIds` are getters that materialize arrays on first read (memoized). Behind
 * each window stands a persistent {@link State}: history in a {@link Seq} (a rope with an id index),
 * indexes of tool calls, tool results and injected kinds in history, the completed tool ids as a
 * growable list with a hash set, and token totals kept incrementally. `evolve` works on the state and
 * never reads the materialized arrays, so folding an event costs O(what it changes), not O(the window).
 *
 * A window that did not come from here (decoded from a snapshot, built by hand, spread into a new
 * object) gets its state built once, in O(n), the first time it is evolved or decided on.
 */
import * as HashMap from "effect/HashMap"
import * as HashSet from "effect/HashSet"
import * as Caches from "../Caches.js"
import { isUserAsk, type Message, type MessageKind, toolCallsOf, toolResultsOf } from "../Message.js"
import type { CompactionState, DeferredSummary, SeamRef, Signal, TaskState, Tokens, Window } from "../Window.js"
import type { EventOf, WindowEvent } from "../WindowEvent.js"
import { Seq } from "./seq.js"
import { add, work } from "./work.js"

/** An append-only ordered set of strings, grown in place by the one version that owns its end. */
export class GrowSet {
  #array: ReadonlyArray<string> | undefined
  constructor(
    private readonly items: Array<string>,
    readonly length: number,
    readonly set: HashSet.HashSet<string>
  ) {}

  has(value: string): boolean {
    return HashSet.has(this.set, value)
  }

  add(values: ReadonlyArray<string>): GrowSet {
    let items = this.items
    let length = this.length
    let set = this.set
    for (const value of values) {
      if (HashSet.has(set, value)) continue
      if (items.length !== length) {
        items = items.slice(0, length)
        add(work.copied, length)
      }
      items.push(value)
      length += 1
      set = HashSet.add(set, value)
    }
    return length === this.length ? this : new GrowSet(items, length, set)
  }

  toArray(): ReadonlyArray<string> {
    if (this.#array === undefined) {
      this.#array = this.items.length === this.length ? this.items.slice() : this.items.slice(0, this.length)
      add(work.materialized, this.length)
    }
    return this.#array
  }

  static from(values: ReadonlyArray<string>): GrowSet {
    return new GrowSet([], 0, HashSet.empty()).add(values)
  }

  static readonly empty = new GrowSet([], 0, HashSet.empty())
}

/** The persistent state behind a window. */
export interface State {
  readonly version: number
  readonly system: ReadonlyArray<Message>
  readonly systemTokens: number
  readonly knowledge: ReadonlyArray<Message>
  readonly knowledgeTokens: number
  readonly taskState: TaskState
  readonly signals: ReadonlyArray<Signal>
  readonly history: Seq<Message>
  /** Tool call id → id of the history message that makes the call. */
  readonly calls: HashMap.HashMap<string, string>
  /** Tool call id → ids of the history messages that hold a result for it (one, in a valid log). */
  readonly results: HashMap.HashMap<string, ReadonlyArray<string>>
  /** Ids of the history messages of each injected kind (history is mostly `chat`). */
  readonly kinds: HashMap.HashMap<MessageKind, ReadonlyArray<string>>
  readonly completed: GrowSet
  readonly tokens: Tokens
  readonly compaction: CompactionState
  readonly pendingToolPairs: ReadonlyArray<string>
  readonly deferredSummaries: ReadonlyArray<DeferredSummary>
  readonly seams: ReadonlyArray<SeamRef>
  readonly cycle: number
  readonly carryOver: string | null
  readonly watermark: number | null
  readonly calibration: Window["calibration"]
  /**
   * Ids of the history messages holding tool results the model has not seen yet: appended after the
   * last `PromptRendered` and after the last assistant message (an answer is proof too, for streams
   * that record no renders). Small (one step's results), so its upkeep is O(the change).
   */
  readonly unseen: ReadonlyArray<string>
  /**
   * Tool call ids made in history that have no result yet (a call waiting for its result). No removal
   * path may drop the message making one: its result could never be appended. Small, O(the change).
   */
  readonly open: ReadonlyArray<string>
  /**
   * The id of the user's latest ask in history (`Message.isUserAsk`, issue 39), `undefined` when history
   * holds none, `null` when it is not known (the one it was left history): `Window.latestUserAsk` then
   * looks for it. Kept in O(the change), so the planners that keep the ask do not search history for it.
   */
  readonly latestAsk: string | null | undefined
}

const zeroTokens: Tokens = { system: 0, knowledge: 0, taskState: 0, signals: 0, history: 0, total: 0 }

const sum = (messages: ReadonlyArray<Message>): number => {
  add(work.summed, messages.length)
  let total = 0
  for (const message of messages) total += message.tokens
  return total
}

const emptyState: State = {
  version: 0,
  system: [],
  systemTokens: 0,
  knowledge: [],
  knowledgeTokens: 0,
  taskState: { goal: null, goalTokens: 0, subgoals: [], subgoalTokens: 0 },
  signals: [],
  history: Seq.empty(),
  calls: HashMap.empty(),
  results: HashMap.empty(),
  kinds: HashMap.empty(),
  completed: GrowSet.empty,
  tokens: zeroTokens,
  compaction: { turn: 0, turnsSinceHard: 0, cooldownRemaining: 0, compactedThisTurn: false },
  pendingToolPairs: [],
  deferredSummaries: [],
  seams: [],
  cycle: 0,
  carryOver: null,
  watermark: null,
  latestAsk: undefined,
  calibration: { estimatedInputTokens: 0, reportedInputTokens: 0, observations: 0 },
  unseen: [],
  open: []
}

/** The states of windows `view` did not make (hand-built, spread), computed once: a cache. */
const states = Caches.weak<Window, State>("core.evolve.states")

/**
 * The state behind a window `view` made, held by the window itself under this symbol (non-enumerable: no
 * key, spread, JSON or equality sees it). It is the window's own representation — its lazy getters read
 * their partition from it — not a cache, so it lives on the window and not in the cache layer, which may
 * be cleared or scoped (ADR 0162).
 */
const stateKey: unique symbol = Symbol("ctxlog.window.state")
type Viewed = { readonly [stateKey]?: State }

/** The state of a window `view` made (its getters read their partition from it). */
const viewed = (window: object): State => (window as Viewed)[stateKey] as State

// The two lazy partitions, as accessors shared by every window: one pair of functions for all of them, so
// every window has the same hidden class. Getters written in an object literal are new closures per object,
// and V8 gives each such object a dictionary of its own: ~2x the CPU of `view` and slow reads of every
// field (ADR 0166).
const historyAccessor: PropertyDescriptor = {
  get(this: object) {
    return viewed(this).history.toArray()
  },
  enumerable: true,
  configurable: true
}
const completedAccessor: PropertyDescriptor = {
  get(this: object) {
    return viewed(this).completed.toArray()
  },
  enumerable: true,
  configurable: true
}

/** A window under construction by `view`: its fields added in `Window`'s order. */
type Building = { -readonly [K in keyof Window]?: Window[K] }

/** The window for a state: plain fields, arrays of the big partitions materialized on first read. */
export const view = (state: State): Window => {
  // Fields in the order they always had (`history` and `completedToolIds` own, enumerable getters where
  // the literal had them), so keys, spreads and JSON are what they were.
  const window: Building = {}
  Object.defineProperty(window, stateKey, { value: state })
  window.version = state.version
  window.system = state.system
  window.knowledge = state.knowledge
  window.taskState = state.taskState
  window.signals = state.signals
  Object.defineProperty(window, "history", historyAccessor)
  window.tokens = state.tokens
  Object.defineProperty(window, "completedToolIds", completedAccessor)
  window.compaction = state.compaction
  window.pendingToolPairs = state.pendingToolPairs
  window.deferredSummaries = state.deferredSummaries
  window.seams = state.seams
  window.cycle = state.cycle
  window.carryOver = state.carryOver
  window.watermark = state.watermark
  window.calibration = state.calibration
  const made = window as Window
  add(work.views)
  return made
}

/** The state behind a window (built once, in O(n), for a window that did not come from here). */
export const stateOf = (window: Window): State => {
  const own = (window as Viewed)[stateKey]
  if (own !== undefined) return own
  const known = states.get(window)
  if (known !== undefined) return known
  const history = Seq.from(window.history)
  const state = withTokens(
    indexHistory(
      {
        ...emptyState,
        version: window.version,
        system: window.system,
        systemTokens: sum(window.system),
        knowledge: window.knowledge,
        knowledgeTokens: sum(window.knowledge),
        taskState: window.taskState,
        signals: window.signals,
        history,
        completed: GrowSet.from(window.completedToolIds),
        compaction: window.compaction,
        pendingToolPairs: window.pendingToolPairs,
        deferredSummaries: window.deferredSummaries,
        seams: window.seams,
        cycle: window.cycle,
        carryOver: window.carryOver,
        watermark: window.watermark,
        calibration: window.calibration,
        unseen: trailingResults(window.history)
      },
      window.history,
      []
    )
  )
  states.set(window, state)
  return state
}

export const empty: Window = view(emptyState)

/**
 * The tool-result messages after the last assistant message: what a window that did not come from
 * here (a snapshot, a hand-built window) counts as unseen. It cannot know the renders, so this is the
 * widest reading: it only protects results longer.
 */
const trailingResults = (history: ReadonlyArray<Message>): ReadonlyArray<string> => {
  const ids: Array<string> = []
  for (let index = history.length - 1; index >= 0; index--) {
    const message = history[index]
    if (message === undefined || message.role === "assistant") break
    if (toolResultsOf(message).length > 0) ids.push(message.id)
  }
  return ids.reverse()
}

const mapsTo = (map: HashMap.HashMap<string, string>, key: string, value: string): boolean => {
  const found = HashMap.get(map, key)
  return found._tag === "Some" && found.value === value
}

/** The indexes `indexHistory` keeps. */
type Indexes = Pick<State, "calls" | "results" | "kinds" | "unseen" | "open" | "latestAsk">

/** Keep the tool-call, tool-result and kind indexes in step with messages entering and leaving history. */
const indexHistory = (state: State, added: ReadonlyArray<Message>, removed: ReadonlyArray<Message>): State =>
  added.length === 0 && removed.length === 0 ? state : { ...state, ...indexesAfter(state, added, removed) }

/** {@link indexHistory}'s new indexes, for a caller that builds the next state in one object. */
const indexesAfter = (state: State, added: ReadonlyArray<Message>, removed: ReadonlyArray<Message>): Indexes => {
  let calls = state.calls
  let results = state.results
  let kinds = state.kinds
  for (const message of removed) {
    for (const call of toolCallsOf(message)) {
      if (mapsTo(calls, call.id, message.id)) calls = HashMap.remove(calls, call.id)
    }
    for (const result of toolResultsOf(message)) {
      const holders = HashMap.get(results, result.toolCallId)
      if (holders._tag === "None") continue
      const rest = holders.value.filter((id) => id !== message.id)
      results =
        rest.length === 0 ? HashMap.remove(results, result.toolCallId) : HashMap.set(results, result.toolCallId, rest)
    }
    if (message.kind !== "chat") {
      const ids = HashMap.get(kinds, message.kind)
      if (ids._tag === "Some")
        kinds = HashMap.set(
          kinds,
          message.kind,
          ids.value.filter((id) => id !== message.id)
        )
    }
  }
  for (const message of added) {
    for (const call of toolCallsOf(message)) calls = HashMap.set(calls, call.id, message.id)
    for (const result of toolResultsOf(message)) {
      const holders = HashMap.get(results, result.toolCallId)
      results = HashMap.set(
        results,
        result.toolCallId,
        holders._tag === "Some" ? [...holders.value, message.id] : [message.id]
      )
    }
    if (message.kind !== "chat") {
      const ids = HashMap.get(kinds, message.kind)
      kinds = HashMap.set(kinds, message.kind, ids._tag === "Some" ? [...ids.value, message.id] : [message.id])
    }
  }
  const gone = removed.length === 0 || state.unseen.length === 0 ? undefined : new Set(removed.map((m) => m.id))
  const unseen = gone === undefined ? state.unseen : state.unseen.filter((id) => !gone.has(id))
  return {
    calls,
    results,
    kinds,
    unseen,
    open: openAfter(state.open, added, removed),
    latestAsk: askAfter(state, added, removed)
  }
}

/**
 * The user's latest ask after `removed` left history and `added` joined it. `state.history` is the history
 * after the change, except for an append run, whose messages it does not hold yet (they join at the end,
 * so an ask among them is the latest). O(the messages changed).
 */
const askAfter = (state: State, added: ReadonlyArray<Message>, removed: ReadonlyArray<Message>): State["latestAsk"] => {
  let latest = state.latestAsk
  if (typeof latest === "string" && removed.some((message) => message.id === latest) && !state.history.has(latest)) {
    latest = null
  }
  for (const message of added) {
    if (!isUserAsk(message)) continue
    const key = state.history.keyOf(message.id)
    if (key === undefined || latest === undefined) latest = message.id
    else if (typeof latest === "string" && key > (state.history.keyOf(latest) ?? -1)) latest = message.id
  }
  return latest
}

/**
 * The calls waiting for a result after `removed` left history and `added` joined it (in that order): a
 * call leaves with its message, a result closes its call. O(the messages changed + the open calls).
 */
const openAfter = (
  open: ReadonlyArray<string>,
  added: ReadonlyArray<Message>,
  removed: ReadonlyArray<Message>
): ReadonlyArray<string> => {
  let next = open
  const close = (ids: ReadonlyArray<string>) => {
    if (ids.length === 0 || next.length === 0) return
    const closed = new Set(ids)
    if (next.some((id) => closed.has(id))) next = next.filter((id) => !closed.has(id))
  }
  for (const message of removed) close(toolCallsOf(message).map((call) => call.id))
  for (const message of added) {
    close(toolResultsOf(message).map((result) => result.toolCallId))
    const made = toolCallsOf(message)
    if (made.length > 0) next = [...next, ...made.map((call) => call.id)]
  }
  return next
}

const withTokens = (state: State): State => withTokensAt(state, state.version)

/** The token totals of `state` with its history at `history` tokens (the object kept when nothing changed). */
const tokensWith = (state: State, history: number): Tokens => {
  const taskState = state.taskState.goalTokens + state.taskState.subgoalTokens
  let signals = 0
  for (const signal of state.signals) signals += signal.tokens
  const current = state.tokens
  if (
    current.system === state.systemTokens &&
    current.knowledge === state.knowledgeTokens &&
    current.taskState === taskState &&
    current.signals === signals &&
    current.history === history
  ) {
    return current
  }
  const total = state.systemTokens + state.knowledgeTokens + taskState + signals + history
  return { system: state.systemTokens, knowledge: state.knowledgeTokens, taskState, signals, history, total }
}

/** The state at `version` with its token totals brought up to date: one new object at most. */
const withTokensAt = (state: State, version: number): State => {
  const tokens = tokensWith(state, state.history.tokens)
  if (tokens === state.tokens) return state.version === version ? state : { ...state, version }
  return { ...state, version, tokens }
}

/**
 * The message with its origin. A spread that adds a property the source lacks takes V8's slow path
 * (~0.4 µs, once per appended message); copying onto a fresh object keeps the same own keys in the same
 * order (`origin` last, or replaced where it was) at a tenth of that. A message is plain data from a
 * decode or a literal, so `Object.assign` and the spread copy the same.
 */
const stampOrigin =
  (version: number, eventId: string) =>
  (message: Message): Message =>
    Object.assign({}, message, { origin: { version, eventId } })

const isStable = (message: Message): boolean => message.kind === "chat"

/**
 * The one place history changes (but for appends, which remove nothing): the indexes follow, and so does
 * the seam list, which never names a message history no longer holds (issue 39, defects 1 and 2).
 */
const setHistory = (
  state: State,
  history: Seq<Message>,
  added: ReadonlyArray<Message>,
  removed: ReadonlyArray<Message>
) => indexHistory({ ...state, history, seams: seamsIn(state.seams, history, removed) }, added, removed)

/** The seam entries whose message is still in `history` after `removed` left it. */
const seamsIn = (
  seams: ReadonlyArray<SeamRef>,
  history: Seq<Message>,
  removed: ReadonlyArray<Message>
): ReadonlyArray<SeamRef> => {
  if (seams.length === 0 || removed.length === 0) return seams
  const gone = new Set(removed.map((message) => message.id))
  return seams.some((seam) => gone.has(seam.messageId) && !history.has(seam.messageId))
    ? seams.filter((seam) => !gone.has(seam.messageId) || history.has(seam.messageId))
    : seams
}

/** Replace the history messages with `ids` by `replacement`, where the first of them stood. */
const replaceInHistory = (state: State, ids: ReadonlyArray<string>, replacement: ReadonlyArray<Message>): State => {
  const { seq, removed } = state.history.replace(ids, replacement)
  return setHistory(state, seq, replacement, removed)
}

const removeFromHistory = (state: State, ids: Iterable<string>): State => {
  const { seq, removed } = state.history.remove(ids)
  return removed.length === 0 ? state : setHistory(state, seq, [], removed)
}

const withKnowledge = (state: State, knowledge: ReadonlyArray<Message>): State => ({
  ...state,
  knowledge,
  knowledgeTokens: sum(knowledge)
})

/** Replace the content of the tool result answering `toolCallId` inside history message `messageId`. */
const rewriteToolOutput = (
  history: Seq<Message>,
  messageId: string,
  toolCallId: string,
  content: string,
  tokens: number
): Seq<Message> => {
  const message = history.get(messageId)
  if (message === undefined) return history
  return history.update({
    ...message,
    tokens,
    parts: message.parts.map((part) =>
      part.type === "tool_result" && part.toolCallId === toolCallId ? { ...part, content } : part
    )
  })
}

/** Replace the image or document at `partIndex` of history message `messageId` by a text stub. */
const rewriteMedia = (
  history: Seq<Message>,
  messageId: string,
  partIndex: number,
  stub: string,
  tokens: number
): Seq<Message> => {
  const message = history.get(messageId)
  const part = message?.parts[partIndex]
  if (message === undefined || (part?.type !== "image" && part?.type !== "document")) return history
  return history.update({
    ...message,
    tokens,
    parts: message.parts.map((each, index) => (index === partIndex ? { type: "text", text: stub } : each))
  })
}

/** Replace text parts of history message `messageId` (a cut ask); `tokens` is its count after. */
const rewriteText = (
  history: Seq<Message>,
  messageId: string,
  parts: ReadonlyArray<{ readonly partIndex: number; readonly text: string }>,
  tokens: number
): Seq<Message> => {
  const message = history.get(messageId)
  if (message === undefined) return history
  const cut = new Map(parts.map((part) => [part.partIndex, part.text]))
  return history.update({
    ...message,
    tokens,
    parts: message.parts.map((part, index) => {
      const text = cut.get(index)
      if (text === undefined) return part
      // A text part's text, or (UnseenCut) a tool result's content.
      return part.type === "text" ? { ...part, text } : part.type === "tool_result" ? { ...part, content: text } : part
    })
  })
}

const applyDeferred = (state: State, event: EventOf<"DeferredSummariesApplied">): State => {
  const wanted = new Set(event.toolCallIds)
  let history = state.history
  const before = new Map<string, number>()
  for (const deferred of state.deferredSummaries) {
    const message = history.get(deferred.resultMessageId)
    if (message !== undefined) before.set(message.id, message.tokens)
  }
  // Reverse order: the newest deferred summary is applied first, as recorded.
  for (let i = state.deferredSummaries.length - 1; i >= 0; i--) {
    const deferred = state.deferredSummaries[i] as DeferredSummary
    if (!wanted.has(deferred.toolCallId)) continue
    const recorded = before.get(deferred.resultMessageId)
    const current = history.get(deferred.resultMessageId)
    if (recorded === undefined || current === undefined) continue
    // A summary's `tokens` counts the whole message with only its own output replaced. Apply its saving,
    // so that two summaries answering calls in one message both count (with one, this is `tokens`).
    const tokens = Math.max(0, current.tokens - (recorded - deferred.tokens))
    history = rewriteToolOutput(history, deferred.resultMessageId, deferred.toolCallId, deferred.summary, tokens)
  }
  return {
    ...state,
    history,
    deferredSummaries: state.deferredSummaries.filter((deferred) => !wanted.has(deferred.toolCallId))
  }
}

const idsOfKind = (state: State, kind: MessageKind): ReadonlyArray<string> => {
  const ids = HashMap.get(state.kinds, kind)
  return ids._tag === "Some" ? ids.value : []
}

const step = (state: State, event: WindowEvent, version: number): State => {
  const origin = stampOrigin(version, event.id)
  switch (event._tag) {
    case "SystemPromptSet": {
      const system = event.messages.map(origin)
      return { ...state, system, systemTokens: sum(system) }
    }
    case "KnowledgeSet":
      return withKnowledge(state, [...event.messages.map(origin), ...state.knowledge.filter((m) => !isStable(m))])
    case "TaskGoalSet":
      return { ...state, taskState: { ...state.taskState, goal: event.goal, goalTokens: event.tokens } }
    case "SubgoalsSet":
      return { ...state, taskState: { ...state.taskState, subgoals: event.subgoals, subgoalTokens: event.tokens } }
    case "SignalRaised":
      return { ...state, signals: [...state.signals, event.signal] }
    case "MessageAppended":
      // The run fold of one event: one new state object, its version and token totals set there.
      return appendRun(state, [event])
    case "MessagesInjected": {
      const knowledge = state.knowledge.filter((message) => message.kind !== event.kind)
      const stable = knowledge.filter(isStable)
      const injected = knowledge.filter((message) => !isStable(message))
      // Newest injection sits right after the stable prefix (system prompt, then stable knowledge).
      const rest = event.replacesInHistory ? removeFromHistory(state, idsOfKind(state, event.kind)) : state
      return withKnowledge(rest, [...stable, ...event.messages.map(origin), ...injected])
    }
    case "MessagesRemoved": {
      const ids = new Set(event.messageIds)
      const knowledge = state.knowledge.some((message) => ids.has(message.id))
        ? state.knowledge.filter((message) => !ids.has(message.id))
        : state.knowledge
      const next = removeFromHistory(state, event.messageIds)
      return {
        ...(knowledge === state.knowledge ? next : withKnowledge(next, knowledge)),
        seams: state.seams.filter((seam) => !ids.has(seam.messageId))
      }
    }
    case "MessagePinned": {
      const pin = (message: Message): Message =>
        message.id !== event.messageId
          ? message
          : event.pinned
            ? { ...message, pinned: true }
            : (({ pinned: _pinned, ...rest }) => rest)(message)
      const target = state.history.get(event.messageId)
      return {
        ...state,
        system: state.system.map(pin),
        knowledge: state.knowledge.map(pin),
        history: target === undefined ? state.history : state.history.update(pin(target))
      }
    }
    case "HistoryTrimmed":
      return removeFromHistory(state, event.removedIds)
    case "HistoryCleared": {
      const conversation =
        event.scope === "conversation"
          ? withKnowledge({ ...state, signals: [], taskState: emptyState.taskState }, state.knowledge.filter(isStable))
          : state
      return {
        ...conversation,
        history: Seq.empty(),
        calls: HashMap.empty(),
        results: HashMap.empty(),
        kinds: HashMap.empty(),
        completed: GrowSet.empty,
        pendingToolPairs: [],
        deferredSummaries: [],
        seams: [],
        unseen: [],
        open: [],
        latestAsk: undefined,
        // What compaction carried forward belongs to the cleared conversation: the next summary starts
        // afresh, and no cooldown or per-turn guard of the old history holds the new one back (issue 20).
        carryOver: null,
        watermark: null,
        compaction: { ...state.compaction, compactedThisTurn: false, cooldownRemaining: 0 }
      }
    }
    case "ConversationReset":
      return {
        ...emptyState,
        version: state.version,
        system: state.system,
        systemTokens: state.systemTokens,
        calibration: state.calibration
      }
    case "CalibrationCarried":
      return { ...state, calibration: event.calibration }
    case "TurnCompleted":
      return {
        ...state,
        compaction: {
          turn: state.compaction.turn + 1,
          turnsSinceHard: state.compaction.turnsSinceHard + 1,
          cooldownRemaining: Math.max(0, state.compaction.cooldownRemaining - 1),
          compactedThisTurn: false
        }
      }
    case "PromptRendered":
      // The render showed the model every tool result in history; signals last one render.
      return state.signals.length === 0 && state.unseen.length === 0 ? state : { ...state, signals: [], unseen: [] }
    case "UsageReported":
      // A server compaction hides how big the prompt was: that report says nothing about the estimate.
      if ((event.contextEdits?.compactions ?? 0) > 0) return state
      return {
        ...state,
        calibration: {
          estimatedInputTokens: state.calibration.estimatedInputTokens + event.estimatedInputTokens,
          // The estimate is of the prompt before the provider's edits: compare it with that.
          reportedInputTokens:
            state.calibration.reportedInputTokens + event.inputTokens + (event.contextEdits?.clearedInputTokens ?? 0),
          observations: state.calibration.observations + 1
        }
      }
    case "ToolOutputPruned": {
      let history = state.history
      for (const output of event.outputs) {
        history = rewriteToolOutput(history, output.messageId, output.toolCallId, output.content, output.tokens)
      }
      return { ...state, history }
    }
    case "MediaPruned": {
      let history = state.history
      for (const pruned of event.parts) {
        history = rewriteMedia(history, pruned.messageId, pruned.partIndex, pruned.stub, pruned.tokens)
      }
      return { ...state, history }
    }
    case "UserAskCut":
    case "UnseenCut":
      return { ...state, history: rewriteText(state.history, event.messageId, event.parts, event.tokens) }
    case "ToolPairsQueued": {
      const queued = new Set(state.pendingToolPairs)
      const added = event.toolCallIds.filter((id) => !queued.has(id))
      return added.length === 0 ? state : { ...state, pendingToolPairs: [...state.pendingToolPairs, ...added] }
    }
    case "ToolPairSummaryDeferred":
      return {
        ...state,
        pendingToolPairs: state.pendingToolPairs.filter((id) => id !== event.toolCallId),
        deferredSummaries: [
          ...state.deferredSummaries.filter((deferred) => deferred.toolCallId !== event.toolCallId),
          {
            toolCallId: event.toolCallId,
            resultMessageId: event.resultMessageId,
            summary: event.summary,
            tokens: event.tokens
          }
        ]
      }
    case "DeferredSummariesApplied":
      return applyDeferred(state, event)
    case "DeferredSummariesFlushed":
      return { ...state, pendingToolPairs: [], deferredSummaries: [] }
    case "Compacted": {
      const removed = new Set(event.removedIds)
      const hard = event.tier === "hard"
      // A summary that rolls seams in carries their highest level: the seam host goes on from that level
      // instead of starting again at 1 (issue 20, behaviour 9), and the next seam folds the summary in.
      let rolled = 0
      for (const seam of state.seams) if (removed.has(seam.messageId)) rolled = Math.max(rolled, seam.level)
      const seams = state.seams.filter((seam) => !removed.has(seam.messageId))
      return {
        ...replaceInHistory(state, event.removedIds, event.summary === null ? [] : [origin(event.summary)]),
        seams:
          rolled === 0 || event.summary === null ? seams : [...seams, { messageId: event.summary.id, level: rolled }],
        carryOver: event.carryOver,
        watermark: event.throughVersion,
        compaction: {
          ...state.compaction,
          compactedThisTurn: true,
          turnsSinceHard: hard ? 0 : state.compaction.turnsSinceHard,
          cooldownRemaining: hard ? event.cooldownTurns : state.compaction.cooldownRemaining
        }
      }
    }
    case "CompactionFailed":
      return state
    case "CompactionReverted": {
      const next = replaceInHistory(state, event.removedIds, event.restored.map(origin))
      // The seams the undo brings back get their entries again (v5; the summary's entry left with it).
      const known = new Set(next.seams.map((seam) => seam.messageId))
      const restored = (event.seams ?? []).filter(
        (seam) => !known.has(seam.messageId) && next.history.has(seam.messageId)
      )
      return {
        ...next,
        seams: restored.length === 0 ? next.seams : [...next.seams, ...restored],
        carryOver: event.carryOver,
        watermark: event.watermark
      }
    }
    case "SeamProduced":
    case "SeamsRecompacted": {
      const replaced = new Set(event.replacedIds)
      return {
        ...replaceInHistory(state, event.replacedIds, [origin(event.message)]),
        seams: [
          ...state.seams.filter((seam) => !replaced.has(seam.messageId)),
          { messageId: event.message.id, level: event.level }
        ]
      }
    }
    case "BriefingProduced": {
      const message = origin(event.message)
      const cleared = removeFromHistory(state, idsOfKind(state, "briefing"))
      return setHistory(cleared, cleared.history.prepend([message]), [message], [])
    }
    case "CycleAdvanced": {
      const removed = new Set(event.removedIds)
      return {
        ...removeFromHistory(state, event.removedIds),
        cycle: event.cycle,
        seams: state.seams.filter((seam) => !removed.has(seam.messageId))
      }
    }
    case "SeamsReset":
      return state.seams.length === 0 ? state : { ...state, seams: [] }
    case "FactsRecorded":
    case "TurnPolicySet":
    case "ConversationContinued":
    case "CheckpointSaved":
    case "CheckpointWritesSaved":
    case "CheckpointsDeleted":
    case "CompactionDecided":
      return state
    default:
      return absurd(event)
  }
}

const absurd = (value: never): never => {
  throw new Error(`unreachable: ${JSON.stringify(value)}`)
}

/** Fold one event into a state. */
export const evolveState = (state: State, event: WindowEvent): State => {
  const version = state.version + 1
  return withTokensAt(step(state, event, version), version)
}

export const evolve = (window: Window, event: WindowEvent): Window => {
  add(work.eventsFolded)
  return view(evolveState(stateOf(window), event))
}

/**
 * Fold a run of `MessageAppended` events (what a log holds most of) into one new state: the history grows
 * by all of them at once and the indexes and totals are updated once. The same state as folding them one
 * by one (`Window.reference.test.ts` and the replay property hold it so).
 */
const appendRun = (state: State, events: ReadonlyArray<EventOf<"MessageAppended">>): State => {
  const messages = events.map((event, at) => stampOrigin(state.version + at + 1, event.id)(event.message))
  const indexes = indexesAfter(state, messages, [])
  let unseen = indexes.unseen
  let completed = state.completed
  for (const message of messages) {
    const answered = toolResultsOf(message)
    // As in `step`: an assistant message answers what came before it; a tool result waits to be seen.
    if (message.role === "assistant") {
      if (unseen.length > 0) unseen = []
    } else if (answered.length > 0) unseen = [...unseen, message.id]
    if (answered.length > 0) completed = completed.add(answered.map((part) => part.toolCallId))
  }
  const history = state.history.append(messages)
  // Every field written out, not `{ ...state, ... }`: states reach here in many shapes (each step spreads
  // its own), and a spread of a 25-field object of a shape its site has not seen takes V8's slow path.
  // This is the fold of every appended message; the compiler checks that no field of State is missed.
  return {
    version: state.version + messages.length,
    system: state.system,
    systemTokens: state.systemTokens,
    knowledge: state.knowledge,
    knowledgeTokens: state.knowledgeTokens,
    taskState: state.taskState,
    signals: state.signals,
    history,
    calls: indexes.calls,
    results: indexes.results,
    kinds: indexes.kinds,
    completed,
    tokens: tokensWith(state, history.tokens),
    compaction: state.compaction,
    pendingToolPairs: state.pendingToolPairs,
    deferredSummaries: state.deferredSummaries,
    seams: state.seams,
    cycle: state.cycle,
    carryOver: state.carryOver,
    watermark: state.watermark,
    calibration: state.calibration,
    unseen,
    open: indexes.open,
    latestAsk: indexes.latestAsk
  }
}

/** Fold events without building a window per event; consecutive appended messages fold as one run. */
export const replay = (events: Iterable<WindowEvent>, from: Window): Window => {
  let state = stateOf(from)
  const list = Array.isArray(events) ? (events as ReadonlyArray<WindowEvent>) : [...events]
  add(work.eventsFolded, list.length)
  let at = 0
  while (at < list.length) {
    const event = list[at] as WindowEvent
    let end = at
    while (end < list.length && list[end]?._tag === "MessageAppended") end++
    if (end - at > 1) {
      state = appendRun(state, list.slice(at, end) as ReadonlyArray<EventOf<"MessageAppended">>)
      at = end
    } else {
      state = evolveState(state, event)
      at++
    }
  }
  return view(state)
}
