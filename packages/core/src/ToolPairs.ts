/**
 * Tool call / tool result pairing: the structure no trim, compaction or render may break.
 *
 * @since 0.1.0
 */
import { type Message, toolCallsOf, toolResultsOf } from "./Message.js"

/**
 * Split messages into atomic groups, in order of each group's first message. A message that makes tool
 * calls forms one group with every message that answers one of those calls, and groups that share a
 * result message are one group; any other message is a group of its own. Dropping whole groups never
 * separates a call from its result.
 * @since 0.1.0
 */
export const groups = (messages: ReadonlyArray<Message>): ReadonlyArray<ReadonlyArray<Message>> => {
  // Union-find over message positions: a message that answers calls joins the group of every call it
  // answers, so one result message answering two calls made by two messages binds all three together.
  const parent = messages.map((_, index) => index)
  const root = (index: number): number => {
    let at = index
    while (parent[at] !== at) at = parent[at] ?? at
    return at
  }
  const callAt = new Map<string, number>()
  for (const [index, message] of messages.entries()) {
    for (const result of toolResultsOf(message)) {
      const call = callAt.get(result.toolCallId)
      if (call === undefined) continue
      const [a, b] = [root(call), root(index)]
      // The earlier message stays the root, so a group sorts by its first message.
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b)
    }
    for (const call of toolCallsOf(message)) callAt.set(call.id, index)
  }
  const members = new Map<number, Array<Message>>()
  for (const [index, message] of messages.entries()) {
    const group = root(index)
    const list = members.get(group)
    if (list === undefined) members.set(group, [message])
    else list.push(message)
  }
  // Map iteration follows insertion order: each group is inserted at its first (root) message.
  return [...members.values()]
}

/** A tool-pairing problem in a message list. @since 0.1.0 */
export type PairingProblem =
  | { readonly _tag: "OrphanResult"; readonly messageId: string; readonly toolCallId: string }
  | { readonly _tag: "DuplicateResult"; readonly messageId: string; readonly toolCallId: string }
  | { readonly _tag: "MissingResult"; readonly messageId: string; readonly toolCallId: string }

/**
 * Find every result without an earlier call, every call answered twice, and every call in
 * `completed` (its result was seen once) whose result is no longer present.
 * @since 0.1.0
 */
export const problems = (
  messages: ReadonlyArray<Message>,
  completed: ReadonlyArray<string> = []
): ReadonlyArray<PairingProblem> => {
  const found: Array<PairingProblem> = []
  const calls = new Map<string, string>()
  const answered = new Set<string>()
  for (const message of messages) {
    for (const result of toolResultsOf(message)) {
      if (!calls.has(result.toolCallId)) {
        found.push({ _tag: "OrphanResult", messageId: message.id, toolCallId: result.toolCallId })
      } else if (answered.has(result.toolCallId)) {
        found.push({ _tag: "DuplicateResult", messageId: message.id, toolCallId: result.toolCallId })
      }
      answered.add(result.toolCallId)
    }
    for (const call of toolCallsOf(message)) calls.set(call.id, message.id)
  }
  const completedSet = new Set(completed)
  for (const [toolCallId, messageId] of calls) {
    if (completedSet.has(toolCallId) && !answered.has(toolCallId)) {
      found.push({ _tag: "MissingResult", messageId, toolCallId })
    }
  }
  return found
}

/** Tool call ids made in `messages` that have no result in them yet. @since 0.1.0 */
export const pendingCalls = (messages: ReadonlyArray<Message>): ReadonlyArray<string> => {
  const answered = new Set(messages.flatMap((message) => toolResultsOf(message).map((result) => result.toolCallId)))
  return messages.flatMap((message) => toolCallsOf(message).map((call) => call.id)).filter((id) => !answered.has(id))
}

/**
 * For a plain message list (no window, so no record of renders): the ids of the tool results after the
 * last assistant message, which the model has not answered yet, and of the messages making the calls
 * they answer, and (since issue 39) of the messages making a call with no result in the list yet. What
 * `Window.unseenToolPairs` is for a window; a removal path working on a list (a conversation memory
 * policy) keeps these. O(messages).
 * @since 0.3.0
 */
export const unseenPairs = (messages: ReadonlyArray<Message>): ReadonlySet<string> => {
  const calls = new Set(pendingCalls(messages))
  const ids = new Set<string>()
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]
    if (message === undefined || message.role === "assistant") break
    const results = toolResultsOf(message)
    if (results.length === 0) continue
    ids.add(message.id)
    for (const result of results) calls.add(result.toolCallId)
  }
  if (calls.size === 0) return ids
  for (const message of messages) {
    if (toolCallsOf(message).some((call) => calls.has(call.id))) ids.add(message.id)
  }
  return ids
}

/**
 * A selection from `all` (a policy's pick) with the messages whose ids are in `keep` added back, in the
 * order of `all`: how a selecting path keeps the unseen tool pairs (`unseenPairs`, `Window.unseenToolPairs`)
 * whatever its policy chose. Returns `selected` itself when it holds them all already. O(all).
 * @since 0.3.0
 */
export const withKept = (
  all: ReadonlyArray<Message>,
  selected: ReadonlyArray<Message>,
  keep: ReadonlySet<string>
): ReadonlyArray<Message> => {
  if (keep.size === 0) return selected
  const chosen = new Set(selected.map((message) => message.id))
  const present = new Set(all.map((message) => message.id))
  let missing = false
  for (const id of keep) if (!chosen.has(id) && present.has(id)) missing = true
  if (!missing) return selected
  return all.filter((message) => chosen.has(message.id) || keep.has(message.id))
}
