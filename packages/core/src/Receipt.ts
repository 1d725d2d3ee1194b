/**
 * Receipts: what an event that replaced or removed window messages gave up (issue 39, ADR 0102).
 *
 * A compaction, a seam, a trim, a prune, a removal or a demotion names the exact messages it replaced (its
 * own id list); its receipt adds the window's tokens before and after it, the tokens those messages held,
 * and the events that had put them in the window (their `origin`s: the lineage a summary or a seam was
 * derived from). `ContextService` attaches a receipt to every such event it writes, on the window the
 * decision was made on: one place every path goes through, so no producer can forget it. A producer that
 * knows more (the reason, the pinned identifiers a summary lost, the messages of a memory that live
 * outside the window) puts a {@link draft} on its event; the service keeps what it says and fills in
 * the rest.
 *
 * @since 0.8.0
 */
import * as Window from "./Window.js"
import type { EventOf, Receipt as ReceiptShape, WindowEvent } from "./WindowEvent.js"

/** @since 0.8.0 */
export type Receipt = ReceiptShape

/** The event types that carry a receipt. @since 0.8.0 */
export type ReceiptedType =
  | "MessagesRemoved"
  | "HistoryTrimmed"
  | "ToolOutputPruned"
  | "MediaPruned"
  | "UserAskCut"
  | "UnseenCut"
  | "Compacted"
  | "SeamProduced"
  | "SeamsRecompacted"
  | "CycleAdvanced"

/** An event that carries a receipt. @since 0.8.0 */
export type Receipted = EventOf<ReceiptedType>

const receiptedTypes: ReadonlySet<string> = new Set<ReceiptedType>([
  "MessagesRemoved",
  "HistoryTrimmed",
  "ToolOutputPruned",
  "MediaPruned",
  "UserAskCut",
  "UnseenCut",
  "Compacted",
  "SeamProduced",
  "SeamsRecompacted",
  "CycleAdvanced"
])

/** Whether an event carries a receipt. @since 0.8.0 */
export const isReceipted = (event: { readonly _tag: string }): event is Receipted => receiptedTypes.has(event._tag)

/**
 * The message ids an event replaced or removed, as it names them (the receipt's `messageIds` when set).
 * @since 0.8.0
 */
export const replacedIds = (event: Receipted): ReadonlyArray<string> => {
  if (event.receipt?.messageIds !== undefined) return event.receipt.messageIds
  switch (event._tag) {
    case "MessagesRemoved":
      return event.messageIds
    case "HistoryTrimmed":
    case "Compacted":
    case "CycleAdvanced":
      return event.removedIds
    case "ToolOutputPruned":
      return event.outputs.map((output) => output.messageId)
    case "MediaPruned":
      return [...new Set(event.parts.map((part) => part.messageId))]
    case "UserAskCut":
    case "UnseenCut":
      return [event.messageId]
    case "SeamProduced":
    case "SeamsRecompacted":
      return event.replacedIds
  }
}

/**
 * A producer's part of a receipt: what only it knows. The service fills the token figures and, where the
 * producer gave none, the replaced tokens and sources from the window.
 * @since 0.8.0
 */
export const draft = (known: {
  readonly reason?: string | undefined
  readonly dropped?: ReadonlyArray<string> | undefined
  readonly messageIds?: ReadonlyArray<string> | undefined
  readonly replacedTokens?: number | undefined
  readonly sources?: ReadonlyArray<string> | undefined
}): Receipt => ({
  tokensBefore: 0,
  tokensAfter: 0,
  replacedTokens: known.replacedTokens ?? 0,
  sources: known.sources ?? [],
  ...(known.reason === undefined ? {} : { reason: known.reason }),
  ...(known.messageIds === undefined ? {} : { messageIds: known.messageIds }),
  ...(known.dropped === undefined || known.dropped.length === 0 ? {} : { dropped: known.dropped })
})

/**
 * The receipt of `event` decided on `before`, with `after` the window it leads to. What the producer put
 * on the event is kept; the token figures always come from the windows.
 * @since 0.8.0
 */
export const of = (before: Window.Window, event: Receipted, after: Window.Window): Receipt => {
  const given = event.receipt
  let replacedTokens = 0
  const sources: Array<string> = []
  const seen = new Set<string>()
  for (const id of replacedIds(event)) {
    const message = Window.findMessage(before, id)
    if (message === undefined) continue
    replacedTokens += message.tokens
    const source = message.origin?.eventId
    if (source !== undefined && !seen.has(source)) {
      seen.add(source)
      sources.push(source)
    }
  }
  return {
    ...given,
    tokensBefore: before.tokens.total,
    tokensAfter: after.tokens.total,
    replacedTokens: given !== undefined && given.replacedTokens > 0 ? given.replacedTokens : replacedTokens,
    sources: given !== undefined && given.sources.length > 0 ? given.sources : sources
  }
}

/**
 * Give every receipted event of `events` (in order, decided on `window`) its receipt. Answers `events`
 * itself when none carries one (the path of every appended message allocates nothing). Each event's
 * receipt is taken on the window the events before it lead to.
 * @since 0.8.0
 */
export const attach = (window: Window.Window, events: ReadonlyArray<WindowEvent>): ReadonlyArray<WindowEvent> => {
  let last = -1
  for (let index = 0; index < events.length; index++) {
    if (isReceipted(events[index] as WindowEvent)) last = index
  }
  if (last < 0) return events
  const out: Array<WindowEvent> = []
  let current = window
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as WindowEvent
    if (index > last) {
      out.push(event)
      continue
    }
    const next = Window.evolve(current, event)
    if (isReceipted(event)) {
      // A copy with the receipt as the last key, as `stamp` copies: the event's own keys keep their order.
      out.push(Object.assign({}, event, { receipt: of(current, event, next) }) as WindowEvent)
    } else {
      out.push(event)
    }
    current = next
  }
  return out
}
