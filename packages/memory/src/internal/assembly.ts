import { Caches, Message, type RecallSource, type Window } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { add, counters } from "./workCounters.js"

/** Texts compare equal when they differ only in case and whitespace. */
export const normalize = (text: string): string => text.replace(/\s+/g, " ").trim().toLowerCase()

/** A membership test (a `Set`, or a view of one up to a position). */
export interface Has {
  readonly has: (key: string) => boolean
}

/** What the window already holds, for dedupe: normalized texts and message ids. */
export interface Held {
  readonly texts: Has
  readonly ids: Has
  /**
   * The ids of its history alone, for a recall source (`RecallRequest.held`): they only grow while the
   * history grows by appends (the same index, extended in place), which `growing` says.
   */
  readonly history: RecallSource.HeldMessages
}

/**
 * An index of a history's normalized texts and ids, each at its first position. A longer history that
 * starts with the same messages (by identity) extends it in place; a view up to position `n` answers
 * for the history of length `n`, so a view handed out earlier stays true after the index grows.
 */
interface HistoryIndex {
  history: ReadonlyArray<Message.Message>
  readonly texts: Map<string, number>
  readonly ids: Map<string, number>
}

const maxIndexes = 16
const indexes = Caches.lru<string, HistoryIndex>("memory.assembly.indexes", maxIndexes)

const historyIndexOf = (
  history: ReadonlyArray<Message.Message>,
  refreshed: ReadonlySet<Message.MessageKind>
): HistoryIndex => {
  const key = `${[...refreshed].sort().join(",")}\u0000${history[0]?.id ?? ""}`
  const known = indexes.peek(key)
  let index: HistoryIndex | undefined
  let from = 0
  if (known !== undefined && known.history.length <= history.length) {
    index = known
    from = known.history.length
    for (let at = 0; at < from; at++) {
      if (known.history[at] !== history[at]) {
        index = undefined
        from = 0
        break
      }
    }
  }
  if (index === undefined) index = { history, texts: new Map(), ids: new Map() }
  for (let at = from; at < history.length; at++) {
    const message = history[at]
    if (message === undefined || refreshed.has(message.kind)) continue
    add(counters.messagesIndexed)
    const text = normalizedTextOf(message)
    if (text.length > 0 && !index.texts.has(text)) index.texts.set(text, at)
    if (!index.ids.has(message.id)) index.ids.set(message.id, at)
  }
  index.history = history
  indexes.set(key, index)
  return index
}

/**
 * Everything in the window except the injected kinds about to be refreshed: those are replaced, so a
 * fresh hit equal to a stale one must not be deduped away. The history part is indexed once per
 * message (see {@link HistoryIndex}): a prepare costs the messages new since the last one.
 */
export const held = (window: Window.Window, refreshed: ReadonlySet<Message.MessageKind>): Held => {
  const texts = new Set<string>()
  const ids = new Set<string>()
  for (const part of [window.system, window.knowledge]) {
    for (const message of part) {
      if (refreshed.has(message.kind)) continue
      const text = normalizedTextOf(message)
      if (text.length > 0) texts.add(text)
      ids.add(message.id)
    }
  }
  const history = window.history
  const index = historyIndexOf(history, refreshed)
  const length = history.length
  const within = (positions: ReadonlyMap<string, number>, key: string): boolean => {
    const at = positions.get(key)
    return at !== undefined && at < length
  }
  return {
    texts: { has: (key) => texts.has(key) || within(index.texts, key) },
    ids: { has: (id) => ids.has(id) || within(index.ids, id) },
    history: { has: (id) => within(index.ids, id), growing: { from: index, size: length } }
  }
}

// Messages are immutable: each one's normalized text is computed once (a window holds the same
// message objects from load to load), so a recall's dedupe costs the new messages, not the window.
const normalizedTexts = Caches.weak<Message.Message, string>("memory.assembly.normalizedTexts")

/** The normalized token text of a message, computed once per message object. */
export const normalizedTextOf = (message: Message.Message): string => {
  const known = normalizedTexts.get(message)
  if (known !== undefined) return known
  add(counters.textsNormalized)
  const text = normalize(Message.tokenTextOf(message))
  normalizedTexts.set(message, text)
  return text
}

/** A recall hit reduced to the text that will be injected. */
export interface Candidate {
  readonly text: string
  readonly score: number
  readonly tokens: number
  readonly source?: { readonly stream: string; readonly messageId: string } | undefined
}

/** Why candidates were left out, by count. */
export interface Dropped {
  readonly belowFloor: number
  readonly duplicate: number
  readonly overBudget: number
}

/** The text a hit injects: its text, or for tool parts their names, inputs and outputs. */
export const hitText = (hit: RecallSource.RecallHit): string => Message.tokenTextOf(hit.message).trim()

/**
 * Apply the retrieval policy to one kind's candidates: best score first, drop those under the floor,
 * those whose text the window (or an earlier kind) holds already, or whose source message is in the
 * window, then fill the budget greedily (a hit too big for what is left is skipped, a smaller one
 * after it may still fit). `seen` is updated with the kept texts so kinds do not repeat each other.
 */
export interface SelectOptions {
  readonly budget: number
  readonly minScore: number
  readonly dedupe: boolean
  readonly stream: string
  readonly held: Held
  readonly seen: Set<string>
}

/**
 * Whether `select` could keep a candidate, by what does not change while it runs (the floor and what
 * the window holds; not the budget or `seen`): a candidate that fails here is dropped whatever its
 * tokens, so they need not be counted.
 */
export const keepable = (
  candidate: Omit<Candidate, "tokens">,
  options: Omit<SelectOptions, "budget" | "seen">
): boolean => {
  if (!(candidate.score >= options.minScore)) return false
  const key = normalize(candidate.text)
  if (key.length === 0) return false
  return !(options.dedupe && inWindow(key, candidate, options))
}

const inWindow = (
  key: string,
  candidate: Omit<Candidate, "tokens">,
  options: Omit<SelectOptions, "budget" | "seen">
): boolean =>
  options.held.texts.has(key) ||
  (candidate.source !== undefined &&
    candidate.source.stream === options.stream &&
    options.held.ids.has(candidate.source.messageId))

export const select = (
  candidates: ReadonlyArray<Candidate>,
  options: SelectOptions
): { readonly kept: ReadonlyArray<Candidate>; readonly dropped: Dropped } => {
  const ordered = candidates
    .map((candidate, index) => ({ candidate, index }))
    .sort((a, b) => b.candidate.score - a.candidate.score || a.index - b.index)
    .map(({ candidate }) => candidate)
  const kept: Array<Candidate> = []
  let belowFloor = 0
  let duplicate = 0
  let overBudget = 0
  let used = 0
  for (const candidate of ordered) {
    if (!(candidate.score >= options.minScore)) {
      belowFloor++
      continue
    }
    const key = normalize(candidate.text)
    const held = options.seen.has(key) || inWindow(key, candidate, options)
    if (key.length === 0 || (options.dedupe && held)) {
      duplicate++
      continue
    }
    if (used + candidate.tokens > options.budget) {
      overBudget++
      continue
    }
    kept.push(candidate)
    used += candidate.tokens
    options.seen.add(key)
  }
  return { kept, dropped: { belowFloor, duplicate, overBudget } }
}

// ---- skill disambiguation ---------------------------------------------------------------------------

/** Ask for a bare JSON array: the easiest answer to check and the hardest to misread. */
export const skillPrompt = (
  query: string,
  candidates: ReadonlyArray<{ readonly name: string; readonly description: string }>
): { readonly system: string; readonly user: string } => ({
  system:
    "You choose which skill best serves a request. Several skills matched it with close scores. " +
    "Order them from most to least suitable. Answer with only a JSON array of the skill names, " +
    'for example ["first", "second"], and nothing else.',
  user: [
    `Request: ${query}`,
    "",
    "Skills:",
    ...candidates.map((skill) => `- ${skill.name}: ${skill.description}`)
  ].join("\n")
})

const decodeNames = Schema.decodeUnknownEither(Schema.parseJson(Schema.Array(Schema.String)))

/**
 * Read the model's order: the first `[...]` in the answer must be a JSON array of distinct candidate
 * names (at least one). Names it leaves out follow in score order. Anything else is `undefined`.
 */
export const parseOrder = (answer: string, candidates: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const start = answer.indexOf("[")
  const end = answer.indexOf("]", start)
  if (start === -1 || end === -1) return undefined
  const parsed = decodeNames(answer.slice(start, end + 1))
  if (Either.isLeft(parsed) || parsed.right.length === 0) return undefined
  const known = new Set(candidates)
  const order: Array<string> = []
  for (const item of parsed.right) {
    const name = item.trim()
    if (!known.has(name) || order.includes(name)) return undefined
    order.push(name)
  }
  return [...order, ...candidates.filter((name) => !order.includes(name))]
}
