import { Message, ToolPairs } from "@ctxlog/core"

/**
 * `safe[i]` says whether cutting the list before index `i` (0..length) keeps every tool call with its
 * results. A call still waiting for its result counts as reaching the end of the list: folding it away
 * would orphan the result that arrives later.
 */
export const safeCuts = (messages: ReadonlyArray<Message.Message>): ReadonlyArray<boolean> => {
  const safe = Array.from({ length: messages.length + 1 }, () => true)
  const position = new Map<Message.Message, number>()
  for (const [index, message] of messages.entries()) position.set(message, index)
  const pending = new Set(ToolPairs.pendingCalls(messages))
  for (const group of ToolPairs.groups(messages)) {
    const indices = group.flatMap((message) => {
      const index = position.get(message)
      return index === undefined ? [] : [index]
    })
    if (indices.length === 0) continue
    const first = Math.min(...indices)
    const waiting = group.some((message) => Message.toolCallsOf(message).some((call) => pending.has(call.id)))
    const last = waiting ? messages.length : Math.max(...indices)
    for (let cut = first + 1; cut <= last; cut++) safe[cut] = false
  }
  return safe
}

/** Shrink `[start, end)` to the widest range inside it whose both ends are safe cuts. */
export const adjust = (
  messages: ReadonlyArray<Message.Message>,
  start: number,
  end: number
): { readonly start: number; readonly end: number } => {
  const safe = safeCuts(messages)
  let from = start
  while (from < end && safe[from] !== true) from++
  let to = end
  while (to > from && safe[to] !== true) to--
  return { start: from, end: Math.max(from, to) }
}

/**
 * Split `[start, end)` into the messages to fold and the ones kept verbatim: a tool group with any
 * pinned member (flag or index) is kept whole, so pinning a result also keeps its call; so is the group
 * of the user's latest ask (`ask`, its id: `Window.latestUserAsk` or `Message.latestUserAsk`), which no
 * seam folds (issue 39, ADR 0124).
 */
export const splitPinned = (
  messages: ReadonlyArray<Message.Message>,
  start: number,
  end: number,
  pinnedIndices: ReadonlyArray<number>,
  ask: string | undefined
): { readonly fold: ReadonlyArray<Message.Message>; readonly kept: ReadonlyArray<Message.Message> } => {
  const range = messages.slice(start, end)
  const pinnedByIndex = new Set(
    pinnedIndices.flatMap((index) => {
      const message = messages[index]
      return message === undefined ? [] : [message]
    })
  )
  const keptSet = new Set<Message.Message>()
  for (const group of ToolPairs.groups(range)) {
    if (group.some((message) => message.pinned === true || pinnedByIndex.has(message) || message.id === ask)) {
      for (const message of group) keptSet.add(message)
    }
  }
  return {
    fold: range.filter((message) => !keptSet.has(message)),
    kept: range.filter((message) => keptSet.has(message))
  }
}
