/**
 * Work done by renders, for tests that count work (never read on the render path): effect `Metric`
 * counters (`ctxlog.providers.*`), incremented through their synchronous hook with {@link add} and read
 * with `WorkCounter.since(counters)` (ADR 0160).
 */
import { WorkCounter } from "@ctxlog/core"

export const counters = {
  /** History turns rendered to drafts: an old message rendered again counts here. */
  turnsRendered: WorkCounter.make(
    "ctxlog.providers.turns_rendered",
    "History turns rendered to drafts: an old message rendered again counts here."
  ),
  /** Request messages checked by the Messages API validator of the render cache. */
  messagesValidated: WorkCounter.make(
    "ctxlog.providers.messages_validated",
    "Request messages checked by the Messages API validator of the render cache."
  ),
  /** Characters of request JSON hashed by the render cache. */
  charsHashed: WorkCounter.make(
    "ctxlog.providers.chars_hashed",
    "Characters of request JSON hashed by the render cache."
  ),
  /** Renders the cache started from nothing (no state, or a prefix it could not reuse). */
  fullRenders: WorkCounter.make(
    "ctxlog.providers.full_renders",
    "Renders the cache started from nothing (no state, or a prefix it could not reuse)."
  )
}

export const { add } = WorkCounter
