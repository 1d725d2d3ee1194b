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
import * as EventHash from "./EventHash.js"
import { EventLog, type StoreError, type StreamId, TamperDetected } from "./EventLog.js"
import * as Window from "./Window.js"
import type { WindowEvent } from "./WindowEvent.js"

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
    readonly load: (stream: StreamId) => Effect.Effect<Window.Window, LoadError>
    /** Bring a window of `stream` the caller holds up to the stream's current version (reads only the tail). */
    readonly catchUp: (stream: StreamId, window: Window.Window) => Effect.Effect<Window.Window, LoadError>
    /** Told after each successful append with the window it produced; a snapshot policy may save it. Never fails. */
    readonly committed: (stream: StreamId, window: Window.Window) => Effect.Effect<void>
  }
}

/** What loading a window can fail with. @since 0.1.0 */
export type LoadError = StoreError | EventDecodeError | TamperDetected

/** How a repository checks what it loads. @since 0.1.0 */
export interface IntegrityOptions {
  /** The HMAC key the log's chain was written with (default: the unkeyed chain). */
  readonly hmacKey?: EventHash.ChainKey
  /**
   * `"verified"` (default): every event folded is checked against the hash chain, linked from the
   * event the window (or snapshot) ends at, and the tail must reach the stream's version. `"unverified"`:
   * fold without hashing, for speed, when the store is trusted.
   */
  readonly integrity?: "verified" | "unverified"
}

/**
 * Fold the events of `stream` after `from.version` into `from`, checking each link of the hash chain
 * on the way: from `anchor` (the stored hash of the event at `from.version`), or, when it is not given,
 * from the event at `from.version` read with the tail (one extra row). The stream's version is read
 * first, so a tail that ends short of it (deleted events) fails. Costs one hash per event folded: the
 * work stays proportional to the tail. Fails with {@link TamperDetected} naming the stream and the
 * first version that does not hold.
 * @since 0.1.0
 */
export const foldVerifiedTail = (
  log: EventLog.Service,
  stream: StreamId,
  from: Window.Window = Window.empty,
  options: { readonly hmacKey?: EventHash.ChainKey; readonly anchor?: string } = {}
): Effect.Effect<Window.Window, LoadError> =>
  Effect.gen(function* () {
    const known = yield* log.version(stream)
    const start = options.anchor === undefined && from.version > 0 ? from.version : from.version + 1
    let previous = options.anchor ?? (from.version === 0 ? EventHash.genesis : undefined)
    let last = from.version
    const events: Array<WindowEvent> = []
    const tamper = (version: number, detail: string) => new TamperDetected({ stream, version, detail })
    yield* Stream.runForEach(log.read(stream, { from: start }), (envelope) => {
      if (previous === undefined) {
        // The event the window ends at: its stored hash is where the tail's chain starts.
        if (envelope.version !== from.version) {
          return Effect.fail(tamper(from.version, `the event at version ${from.version} is missing`))
        }
        previous = envelope.hash
        return Effect.void
      }
      if (envelope.version !== last + 1) {
        return Effect.fail(tamper(last + 1, `the event at version ${last + 1} is missing`))
      }
      const expected = EventHash.chain(previous, envelope, options.hmacKey)
      if (expected !== envelope.hash) {
        return Effect.fail(
          tamper(
            envelope.version,
            "the event does not match its hash-chain link (edited, or written with another HMAC key or without one)"
          )
        )
      }
      previous = expected
      last = envelope.version
      events.push(envelope.event)
      return Effect.void
    })
    if (previous === undefined) {
      return yield* tamper(from.version, `the event at version ${from.version} is missing`)
    }
    if (last < known) {
      return yield* tamper(
        last + 1,
        `the stream row says version ${known}, but its events end at version ${last} (events deleted)`
      )
    }
    return events.length === 0 ? from : Window.replay(events, from)
  })

/** Fold the events of `stream` after `from.version` into `from`. @since 0.1.0 */
export const foldTail = (
  log: EventLog.Service,
  stream: StreamId,
  from: Window.Window = Window.empty
): Effect.Effect<Window.Window, StoreError | EventDecodeError> =>
  Effect.map(
    Stream.runFold(log.read(stream, { from: from.version + 1 }), [] as Array<WindowEvent>, (events, envelope) => {
      events.push(envelope.event)
      return events
    }),
    // One fold over the projection's state: no window is built per event.
    (events) => (events.length === 0 ? from : Window.replay(events, from))
  )

/**
 * Build a replaying repository over a log: loads check the hash chain of what they fold (with the log's
 * HMAC key, when it has one) unless `integrity: "unverified"`.
 * @since 0.1.0
 */
export const makeReplay = (
  log: EventLog.Service,
  options: IntegrityOptions = {}
): Effect.Effect<WindowRepository.Service> =>
  Effect.sync(() => {
    const fold = (stream: StreamId, from: Window.Window | undefined): Effect.Effect<Window.Window, LoadError> =>
      options.integrity === "unverified"
        ? foldTail(log, stream, from)
        : foldVerifiedTail(log, stream, from, options.hmacKey === undefined ? {} : { hmacKey: options.hmacKey })
    // The last window folded per stream; only the tail after it is read next time. The log stays the
    // source of truth: a write by anyone else shows up in the tail.
    const folded = new Map<StreamId, Window.Window>()
    const remember = (stream: StreamId) => (window: Window.Window) =>
      Effect.sync(() => {
        folded.set(stream, window)
      })
    return {
      load: (stream) => fold(stream, folded.get(stream)).pipe(Effect.tap(remember(stream))),
      // A caller's window was loaded (and checked) by this process: catching up folds only what was
      // appended since, on the hot path of every operation, without the checks.
      catchUp: (stream, window) => foldTail(log, stream, window).pipe(Effect.tap(remember(stream))),
      committed: (stream, window) => remember(stream)(window)
    }
  })

/** The replaying repository. @since 0.1.0 */
export const layerReplay: Layer.Layer<WindowRepository, never, EventLog> = Layer.effect(
  WindowRepository,
  Effect.flatMap(EventLog, (log) => makeReplay(log))
)

/** The replaying repository with integrity options (the log's HMAC key, or unverified loads). @since 0.1.0 */
export const layerReplayWith = (options: IntegrityOptions): Layer.Layer<WindowRepository, never, EventLog> =>
  Layer.effect(
    WindowRepository,
    Effect.flatMap(EventLog, (log) => makeReplay(log, options))
  )
