import { Message, ToolPairs } from "@ctxlog/core"

/** A run of messages that must be kept or dropped together, in history order. */
export interface Unit {
  readonly messages: ReadonlyArray<Message.Message>
  /** Index in history of the unit's first message. */
  readonly first: number
  /** Index in history of the unit's last message. */
  readonly last: number
  readonly pinned: boolean
  readonly tokens: number
}

/**
 * Split history into atomic units. Starts from `ToolPairs.groups` (a call with every result answering
 * it) and merges groups a single message links: a tool message may answer calls made by two different
 * assistant messages, and keeping one of them without the other would strand a call or a result.
 * Units holding a result whose call is nowhere in the history are left out: no provider accepts them.
 */
export const atomicUnits = (history: ReadonlyArray<Message.Message>): ReadonlyArray<Unit> => {
  const groups = ToolPairs.groups(history)
  const indexOf = new Map(history.map((message, index) => [message.id, index]))

  // Union-find over group indices.
  const parent = groups.map((_, index) => index)
  const find = (index: number): number => {
    let root = index
    while (parent[root] !== root) root = parent[root] ?? root
    parent[index] = root
    return root
  }
  const groupOfCall = new Map<string, number>()
  groups.forEach((group, index) => {
    for (const message of group) for (const call of Message.toolCallsOf(message)) groupOfCall.set(call.id, index)
  })
  const orphan = new Set<number>()
  groups.forEach((group, index) => {
    for (const message of group) {
      for (const result of Message.toolResultsOf(message)) {
        const owner = groupOfCall.get(result.toolCallId)
        if (owner === undefined) orphan.add(index)
        else parent[find(owner)] = find(index)
      }
    }
  })

  const merged = new Map<number, Array<Message.Message>>()
  const orphanRoots = new Set([...orphan].map(find))
  groups.forEach((group, index) => {
    const root = find(index)
    const members = merged.get(root) ?? []
    members.push(...group)
    merged.set(root, members)
  })
  const units: Array<Unit> = []
  for (const [root, members] of merged) {
    if (orphanRoots.has(root)) continue
    const ordered = [...members].sort((a, b) => (indexOf.get(a.id) ?? 0) - (indexOf.get(b.id) ?? 0))
    units.push({
      messages: ordered,
      first: indexOf.get(ordered[0]?.id ?? "") ?? 0,
      last: indexOf.get(ordered[ordered.length - 1]?.id ?? "") ?? 0,
      pinned: ordered.some((message) => message.pinned === true),
      tokens: ordered.reduce((total, message) => total + message.tokens, 0)
    })
  }
  return units.sort((a, b) => a.first - b.first)
}

/**
 * Keep the newest units whose cost fits `limit`, walking back from the unit holding the last message
 * and stopping at the first unit that does not fit, so the kept history is a suffix (up to units that
 * interleave). Pinned units are always kept and count against the limit. The newest unit is always
 * kept, even alone over the limit: dropping the turn the model is answering makes agents loop
 * (Mastra #24110).
 */
export const selectNewest = (
  history: ReadonlyArray<Message.Message>,
  limit: number,
  cost: (unit: Unit) => number
): ReadonlyArray<Message.Message> => {
  const units = [...atomicUnits(history)].sort((a, b) => a.last - b.last)
  const kept = new Set<Unit>(units.filter((unit) => unit.pinned))
  let used = [...kept].reduce((total, unit) => total + cost(unit), 0)
  const newest = units[units.length - 1]
  if (newest !== undefined && !kept.has(newest)) {
    kept.add(newest)
    used += cost(newest)
  }
  for (let index = units.length - 2; index >= 0; index--) {
    const unit = units[index]
    if (unit === undefined || kept.has(unit)) continue
    if (used + cost(unit) > limit) break
    kept.add(unit)
    used += cost(unit)
  }
  const keptIds = new Set([...kept].flatMap((unit) => unit.messages.map((message) => message.id)))
  return history.filter((message) => keptIds.has(message.id))
}
