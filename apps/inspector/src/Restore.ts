/**
 * `ctxlog restore <stream> <compaction>` and the viewer's Restore button (issue 39, build item 3): undo a
 * compaction as an event. Both go through {@link restore} (the button posts to `ctxlog serve`'s
 * `POST /api/streams/:s/restore`, which calls {@link restoreIn}; the page asks for a confirmation first,
 * shows the typed refusal, and moves to the new head). The summary leaves the window and the messages it replaced come back, read
 * from the log (`UndoCompaction`, recorded as `CompactionReverted`); nothing is deleted or rewritten.
 * The one write the inspector makes besides `import` and `erase`.
 *
 * @since 0.8.0
 */
import type { ContextService, EventLog } from "@ctxlog/core"
import { Ctxlog } from "@ctxlog/memory"
import { UndoCompaction } from "@ctxlog/turn"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

/** What a restore did. @since 0.8.0 */
export interface Restored {
  readonly stream: string
  readonly compactionEventId: string
  /** The `CompactionReverted` event's id. */
  readonly revertEventId: string
  /** The stream's version after it. */
  readonly version: number
  /** Ids of the messages back in the window. */
  readonly restored: ReadonlyArray<string>
  /** The summary that left, if the compaction had one. */
  readonly summaryId: string | undefined
  /** The window's tokens after the restore. */
  readonly tokens: number
}

/** The errors a restore fails with. @since 0.8.0 */
export type RestoreError =
  | UndoCompaction.CompactionNotFound
  | UndoCompaction.CompactionNotUndoable
  | ContextService.LogError

/**
 * Undo compaction `compactionEventId` of `stream` through the context service in scope. Pure over the
 * log: a compaction that is not in effect any more (its summary rolled into a later one, or undone
 * already) is refused, typed, and nothing is written.
 * @since 0.8.0
 */
export const restore = (
  stream: EventLog.StreamId,
  compactionEventId: string
): Effect.Effect<Restored, RestoreError, ContextService.ContextService | EventLog.EventLog> =>
  Effect.map(UndoCompaction.undoCompaction(stream, compactionEventId), (outcome) => {
    const reverted = outcome.events.find((event) => event._tag === "CompactionReverted")
    return {
      stream,
      compactionEventId,
      revertEventId: reverted?.id ?? "",
      version: outcome.window.version,
      restored: reverted?._tag === "CompactionReverted" ? reverted.restored.map((message) => message.id) : [],
      summaryId:
        reverted?._tag === "CompactionReverted" && reverted.removedIds.length > 0 ? reverted.removedIds[0] : undefined,
      tokens: outcome.window.tokens.total
    }
  })

/** Where a restore writes: the SQLite file (it must exist) or the PostgreSQL database. @since 0.8.0 */
export type Target =
  | { readonly _tag: "sqlite"; readonly file: string }
  | { readonly _tag: "postgres"; readonly url: string }

/** The context service over a target, for {@link restore}. A missing SQLite file is an error, never a new log. @since 0.8.0 */
export const layer = (target: Target): Layer.Layer<Ctxlog.Services, unknown> =>
  target._tag === "sqlite"
    ? Ctxlog.sqlite({ filename: target.file, create: false })
    : Ctxlog.postgres({ url: target.url, maxConnections: 2 })

/** {@link restore} over a target, opened and closed around it. @since 0.8.0 */
export const restoreIn = (
  target: Target,
  stream: string,
  compactionEventId: string
): Effect.Effect<Restored, unknown> => restore(stream, compactionEventId).pipe(Effect.provide(layer(target)))

/** One line for a person. @since 0.8.0 */
export const describe = (restored: Restored): string =>
  `restored compaction ${restored.compactionEventId} of "${restored.stream}": ${restored.restored.length} message(s) back${restored.summaryId === undefined ? "" : `, summary ${restored.summaryId} out`} (CompactionReverted ${restored.revertEventId}, version ${restored.version}, ${restored.tokens} tokens)`
