/**
 * Undo a compaction: its summary leaves the window and the messages it removed come back, read from
 * the log (compaction never deletes them). Recorded as `CompactionReverted`.
 *
 * @since 0.1.0
 */
import { ContextService, EventLog, type Message, Tracing, Window, type WindowEvent } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { by } from "./internal/metadata.js"

/** No `Compacted` event with this id in the stream. @since 0.1.0 */
export class CompactionNotFound extends Schema.TaggedError<CompactionNotFound>()("CompactionNotFound", {
  stream: Schema.String,
  compactionEventId: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}" has no Compacted event with id "${this.compactionEventId}"`
  }
}

/** The compaction is no longer in effect (its summary left the window, or was rolled forward). @since 0.1.0 */
export class CompactionNotUndoable extends Schema.TaggedError<CompactionNotUndoable>()("CompactionNotUndoable", {
  stream: Schema.String,
  compactionEventId: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `cannot undo compaction "${this.compactionEventId}" of stream "${this.stream}": ${this.detail}`
  }
}

/**
 * The revert decision: `compacted` is the event to undo and `before` the window just before it.
 * Pure. Fails when the summary is no longer in the window or a restored id is back already.
 * @since 0.1.0
 */
export const decide = (
  stream: EventLog.StreamId,
  window: Window.Window,
  compacted: WindowEvent.EventOf<"Compacted">,
  before: Window.Window
): Either.Either<ReadonlyArray<WindowEvent.Draft>, CompactionNotUndoable> => {
  const notUndoable = (detail: string) =>
    Either.left(new CompactionNotUndoable({ stream, compactionEventId: compacted.id, detail }))
  const present = new Set(window.history.map((message) => message.id))
  if (compacted.summary !== null && !present.has(compacted.summary.id)) {
    return notUndoable(`its summary message "${compacted.summary.id}" is no longer in the window`)
  }
  const removed = new Set(compacted.removedIds)
  const returning = before.history.filter((message) => removed.has(message.id))
  const back = returning.find((message) => present.has(message.id))
  if (back !== undefined) return notUndoable(`message "${back.id}" is in the window again`)
  // A message the compaction kept between ones it removed (the user's latest ask, a pinned one) stands
  // after the summary now: it leaves and comes back with them, so history is in its order again.
  const first = before.history.findIndex((message) => removed.has(message.id))
  const last = before.history.findLastIndex((message) => removed.has(message.id))
  const between =
    first < 0 ? [] : before.history.slice(first, last + 1).filter((m) => !removed.has(m.id) && present.has(m.id))
  const stillThere = new Map(
    window.history.filter((message) => between.some((m) => m.id === message.id)).map((m) => [m.id, m])
  )
  const restored: ReadonlyArray<Message.Message> =
    between.length === 0
      ? returning
      : before.history
          .slice(first, last + 1)
          .flatMap((message) =>
            removed.has(message.id)
              ? [message]
              : stillThere.has(message.id)
                ? [stillThere.get(message.id) ?? message]
                : []
          )
  return Either.right([
    {
      _tag: "CompactionReverted",
      compactionEventId: compacted.id,
      removedIds: [...(compacted.summary === null ? [] : [compacted.summary.id]), ...between.map((m) => m.id)],
      restored,
      carryOver: before.carryOver,
      watermark: before.watermark,
      // The seams it rolled in get their entries back (the summary carried their level; issue 39).
      seams: before.seams.filter((seam) => removed.has(seam.messageId))
    }
  ])
}

/**
 * Undo the compaction recorded by event `compactionEventId`: replay the log up to just before it to
 * get the removed messages back, then append `CompactionReverted`.
 * @since 0.1.0
 */
export const undoCompaction: (
  stream: EventLog.StreamId,
  compactionEventId: string
) => Effect.Effect<
  ContextService.Outcome,
  CompactionNotFound | CompactionNotUndoable | ContextService.LogError,
  ContextService.ContextService | EventLog.EventLog
> = Effect.fn("UndoCompaction.undoCompaction")(function* (stream: EventLog.StreamId, compactionEventId: string) {
  yield* Tracing.annotate("stream", stream)
  const log = yield* EventLog.EventLog
  const ctx = yield* ContextService.ContextService
  const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
  const at = envelopes.findIndex((envelope) => envelope.eventId === compactionEventId)
  const found = envelopes[at]
  if (found === undefined || found.event._tag !== "Compacted") {
    return yield* new CompactionNotFound({ stream, compactionEventId })
  }
  const compacted = found.event
  const before = Window.replay(envelopes.slice(0, at).map((envelope) => envelope.event))
  return yield* ctx.run(
    stream,
    (window) => decide(stream, window, compacted, before),
    by("undoCompaction", compactionEventId)
  )
})
