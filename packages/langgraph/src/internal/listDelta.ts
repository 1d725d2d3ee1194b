/**
 * What changed between two versions of a list channel, found by identity.
 *
 * LangGraph's reducers (`messagesStateReducer`, `(a, b) => a.concat(b)`) build the next list from the
 * items of the previous one, so an item that stayed is the same object (or the same primitive) in both.
 * The diff walks both lists once and keeps the longest run of identical items it meets greedily: the
 * positions of the old list that are not kept are `removed`, and what follows the last kept item of the
 * new list is `appended`. An item replaced in place (same message id, new object) shows as the old one
 * removed and everything from it on appended again: correct, only larger than the ideal delta.
 *
 * Cost: one identity comparison per item of the two lists (no serialization, no allocation per kept
 * item); the caller serializes only `appended`.
 */

/** A list as its previous version and what changed. */
export interface ListDelta<A> {
  /** Positions of the previous list that are gone, ascending. */
  readonly removed: ReadonlyArray<number>
  /** The items after the kept ones, in order. */
  readonly appended: ReadonlyArray<A>
  /** Identity comparisons made (for the work counters). */
  readonly compared: number
}

/** Diff `next` against `previous` by identity. */
export const diff = <A>(previous: ReadonlyArray<A>, next: ReadonlyArray<A>): ListDelta<A> => {
  const removed: Array<number> = []
  let i = 0
  let j = 0
  let compared = 0
  while (i < previous.length && j < next.length) {
    compared += 1
    if (previous[i] === next[j]) {
      i += 1
      j += 1
    } else {
      removed.push(i)
      i += 1
    }
  }
  for (; i < previous.length; i += 1) removed.push(i)
  return { removed, appended: next.slice(j), compared }
}

/** Rebuild the next list from the previous one and a delta. */
export const apply = <A>(
  previous: ReadonlyArray<A>,
  removed: ReadonlyArray<number>,
  appended: ReadonlyArray<A>
): Array<A> => {
  if (removed.length === 0) return [...previous, ...appended]
  const gone = new Set(removed)
  const kept = previous.filter((_, index) => !gone.has(index))
  for (const item of appended) kept.push(item)
  return kept
}
