/**
 * A snapshot-backed `WindowRepository`: load = newest snapshot + the events after it, so loading cost
 * depends on the tail, not on the length of the history. A snapshot is written when a load folded at
 * least `every` events past the previous one. A snapshot written by another projection version (the
 * window's shape or `evolve` changed) is ignored, the window is rebuilt from the log, and a fresh
 * snapshot replaces the old one.
 *
 * @since 0.1.0
 */
import { EventLog, Window, WindowRepository } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { SnapshotStore } from "./SnapshotStore.js"

/** The projection name snapshots of the window are stored under. @since 0.1.0 */
export const projection = "window"

/**
 * The version of the window projection. Bump it whenever `Window` or core `evolve` changes what a
 * stream folds into: older snapshots are then ignored and rebuilt.
 * @since 0.1.0
 */
export const projectionVersion = 1

/** Snapshot policy. @since 0.1.0 */
export interface Options {
  /** Write a snapshot once a load folded this many events past the last one (default 100; 0 = never). */
  readonly every?: number
  /** The projection version to read and write (default {@link projectionVersion}). */
  readonly projectionVersion?: number
}

/** Build the repository over a log and a snapshot store. @since 0.1.0 */
export const make = (
  log: EventLog.EventLog.Service,
  snapshots: SnapshotStore.Service,
  options: Options = {}
): WindowRepository.WindowRepository.Service => {
  const every = options.every ?? 100
  const version = options.projectionVersion ?? projectionVersion

  const restore = (state: string): Effect.Effect<Option.Option<Window.Window>> =>
    Effect.try(() => JSON.parse(state)).pipe(
      Effect.flatMap((json) => Window.decodeUnknown(json)),
      Effect.map(Option.some),
      Effect.catchAll((error) =>
        Effect.as(Effect.logWarning(`ignoring an unreadable window snapshot: ${error.message}`), Option.none())
      )
    )

  const save = (stream: string, window: Window.Window) =>
    Window.encode(window).pipe(
      Effect.flatMap((encoded) =>
        snapshots.save({
          stream,
          projection,
          projectionVersion: version,
          version: window.version,
          state: JSON.stringify(encoded)
        })
      ),
      // Snapshots are a cache of the log: failing to write one must not fail the load.
      Effect.catchAll((error) => Effect.logWarning(`window snapshot of "${stream}" not saved: ${error.message}`))
    )

  return {
    load: (stream) =>
      Effect.gen(function* () {
        const latest = yield* snapshots.latest(stream, projection)
        const current = Option.filter(latest, (snapshot) => snapshot.projectionVersion === version)
        const base = Option.isSome(current) ? yield* restore(current.value.state) : Option.none<Window.Window>()
        const from = Option.getOrElse(base, () => Window.empty)
        const window = yield* WindowRepository.foldTail(log, stream, from)
        // A snapshot that exists but could not be used (other projection version, unreadable) is rebuilt now.
        const rebuild = Option.isSome(latest) && Option.isNone(base)
        const due = every > 0 && window.version - from.version >= every
        if (window.version > 0 && (due || rebuild)) yield* save(stream, window)
        return window
      }),
    catchUp: (stream, window) => WindowRepository.foldTail(log, stream, window),
    committed: () => Effect.void
  }
}

/** The snapshot-backed repository over the `EventLog` and `SnapshotStore` in context. @since 0.1.0 */
export const layer = (
  options: Options = {}
): Layer.Layer<WindowRepository.WindowRepository, never, EventLog.EventLog | SnapshotStore> =>
  Layer.effect(
    WindowRepository.WindowRepository,
    Effect.map(Effect.all([EventLog.EventLog, SnapshotStore]), ([log, snapshots]) => make(log, snapshots, options))
  )
