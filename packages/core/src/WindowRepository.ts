/**
 * Loads the current window of a stream. The default folds the stream's events (keeping the last folded
 * window per stream and reading only the tail after it); `@ctxlog/memory` adds a snapshot-backed one.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { EventDecodeError } from "./EventCodec.js"
import { EventLog, type StoreError, type StreamId } from "./EventLog.js"
import * as Window from "./Window.js"

/** Loads windows. @since 0.1.0 */
export class WindowRepository extends Context.Tag("@ctxlog/core/WindowRepository")<
  WindowRepository,
  WindowRepository.Service
>() {}

/** @since 0.1.0 */
export declare namespace WindowRepository {
  /** @since 0.1.0 */
  export interface Service {
    /** The current window of a stream: newest usable snapshot + the events after it. */
    readonly load: (stream: StreamId) => Effect.Effect<Window.Window, StoreError | EventDecodeError>
    /** Bring a window of `stream` the caller holds up to the stream's current version (reads only the tail). */
    readonly catchUp: (
      stream: StreamId,
      window: Window.Window
    ) => Effect.Effect<Window.Window, StoreError | EventDecodeError>
    /** Told after each successful append with the window it produced; a snapshot policy may save it. Never fails. */
    readonly committed: (stream: StreamId, window: Window.Window) => Effect.Effect<void>
  }
}

/** Fold the events of `stream` after `from.version` into `from`. @since 0.1.0 */
export const foldTail = (
  log: EventLog.Service,
  stream: StreamId,
  from: Window.Window = Window.empty
): Effect.Effect<Window.Window, StoreError | EventDecodeError> =>
  Stream.runFold(log.read(stream, { from: from.version + 1 }), from, (window, envelope) =>
    Window.evolve(window, envelope.event)
  )

/** Build a replaying repository over a log. @since 0.1.0 */
export const makeReplay = (log: EventLog.Service): Effect.Effect<WindowRepository.Service> =>
  Effect.sync(() => {
    // The last window folded per stream; only the tail after it is read next time. The log stays the
    // source of truth: a write by anyone else shows up in the tail.
    const folded = new Map<StreamId, Window.Window>()
    return {
      load: (stream) =>
        foldTail(log, stream, folded.get(stream)).pipe(
          Effect.tap((window) =>
            Effect.sync(() => {
              folded.set(stream, window)
            })
          )
        ),
      catchUp: (stream, window) => foldTail(log, stream, window),
      // Nothing to save: the log is the only store of this repository.
      committed: () => Effect.void
    }
  })

/** The replaying repository. @since 0.1.0 */
export const layerReplay: Layer.Layer<WindowRepository, never, EventLog> = Layer.effect(
  WindowRepository,
  Effect.flatMap(EventLog, makeReplay)
)
