/** Work done by renders, for tests that count work (never read on the render path). */
export interface Counters {
  /** History turns rendered to drafts: an old message rendered again counts here. */
  turnsRendered: number
  /** Request messages checked by the Messages API validator of the render cache. */
  messagesValidated: number
  /** Characters of request JSON hashed by the render cache. */
  charsHashed: number
  /** Renders the cache started from nothing (no state, or a prefix it could not reuse). */
  fullRenders: number
}

export const counters: Counters = { turnsRendered: 0, messagesValidated: 0, charsHashed: 0, fullRenders: 0 }

/** Zero the counters. */
export const reset = (): void => {
  counters.turnsRendered = 0
  counters.messagesValidated = 0
  counters.charsHashed = 0
  counters.fullRenders = 0
}
