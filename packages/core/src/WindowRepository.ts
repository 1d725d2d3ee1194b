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
import { type Envelope, EventLog, pagesOf, type StoreError, type StreamId, TamperDetected } from "./EventLog.js"
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
    /** As `load`, with the stored hash of the window's last event (where a later `catchUp` checks from). */
    readonly loadHeld: (stream: StreamId) => Effect.Effect<Held, LoadError>
    /**
     * Bring a window of `stream` the caller holds up to the stream's current version, reading only the
     * tail. Unless the repository is `"unverified"`, each new event's chain link is checked from
     * `held.hash`, and the tail must reach `version` (the stream's version the caller just read; read
     * here when not given). A mismatch is a {@link TamperDetected} naming the stream and version.
     */
    readonly catchUp: (stream: StreamId, held: Held, version?: number) => Effect.Effect<Held, LoadError>
    /** Told after each successful append with the window it produced; a snapshot policy may save it. Never fails. */
    readonly committed: (stream: StreamId, window: Window.Window) => Effect.Effect<void>
  }
}

/**
 * A window and the stored hash of the last event it folded: the link the next event's chain hash is
 * computed from, kept beside a cached window so catching it up checks new events without rereading any.
 * @since 0.1.0
 */
export interface Held {
  readonly window: Window.Window
  /**
   * The stored hash of the event at `window.version` (the genesis hash at version 0); undefined when
   * not known, and then a catch-up reads that event with the tail (one more row in the same read).
   */
  readonly hash: string | undefined
}

/** What loading a window can fail with. @since 0.1.0 */
export type LoadError = StoreError | EventDecodeError | TamperDetected

/** How a repository checks what it loads. @since 0.1.0 */
export interface IntegrityOptions {
  /** The HMAC key the log's chain was written with (default: the unkeyed chain). */
  readonly hmacKey?: EventHash.ChainKey | undefined
  /**
   * `"verified"` (default): every event folded is checked against the hash chain, linked from the
   * event the window (or snapshot) ends at, and the tail must reach the stream's version. `"unverified"`:
   * fold without hashing, for speed, when the store is trusted.
   */
  readonly integrity?: "verified" | "unverified" | undefined
}

/** Options of a checked fold. @since 0.1.0 */
export interface VerifiedFoldOptions {
  /** The HMAC key the chain was written with (default: the unkeyed chain). */
  readonly hmacKey?: EventHash.ChainKey | undefined
  /** The stored hash of the event at `from.version`; when not given, that event is read with the tail. */
  readonly anchor?: string | undefined
  /** The stream's version, when the caller has just read it (else it is read first). */
  readonly version?: number | undefined
}

/** Envelopes a fold asks the log for at once (`readPage`), as the stores' own page size. */
const foldPage = 500

/**
 * Run `f` over the pages of `stream` from `options.from`: page by page as plain effects when the log's
 * read offers it (`EventLog.withPages`: no `Stream` to run), else through the stream. Stops at the first
 * failure of `f`.
 */
const eachPage = <E>(
  log: EventLog.Service,
  stream: StreamId,
  options: { readonly from: number; readonly verifiedByChain?: boolean },
  f: (page: Iterable<Envelope>) => Effect.Effect<void, E>
): Effect.Effect<void, E | StoreError | EventDecodeError> => {
  const read = log.read(stream, options)
  const pages = pagesOf(read)
  if (pages === undefined) return Stream.runForEachChunk(read, f)
  const next = (from: number): Effect.Effect<void, E | StoreError | EventDecodeError> =>
    Effect.flatMap(pages(from, foldPage), (page) =>
      Effect.flatMap(f(page), () => {
        const last = page[page.length - 1]
        return page.length < foldPage || last === undefined ? Effect.void : next(last.version + 1)
      })
    )
  return next(options.from)
}

/**
 * Fold the events of `stream` after `from.version` into `from`, checking each link of the hash chain
 * on the way: from `anchor` (the stored hash of the event at `from.version`), or, when it is not given,
 * from the event at `from.version` read with the tail (one extra row). The stream's version is read
 * first (unless given), so a tail that ends short of it (deleted events) fails. Costs one hash per
 * event folded: the work stays proportional to the tail. Fails with {@link TamperDetected} naming the
 * stream and the first version that does not hold. Returns the window and the hash of its last event.
 * @since 0.1.0
 */
export const foldVerifiedHeld = (
  log: EventLog.Service,
  stream: StreamId,
  from: Window.Window = Window.empty,
  options: VerifiedFoldOptions = {}
): Effect.Effect<Held, LoadError> =>
  Effect.gen(function* () {
    const known = options.version ?? (yield* log.version(stream))
    const start = options.anchor === undefined && from.version > 0 ? from.version : from.version + 1
    let previous = options.anchor ?? (from.version === 0 ? EventHash.genesis : undefined)
    let last = from.version
    const events: Array<WindowEvent> = []
    const tamper = (version: number, detail: string) => new TamperDetected({ stream, version, detail })
    // One check per row, synchronously over each page (no effect per row): the first broken link stops it.
    const check = (envelope: Envelope): TamperDetected | undefined => {
      if (previous === undefined) {
        // The event the window ends at: its stored hash is where the tail's chain starts.
        if (envelope.version !== from.version) {
          return tamper(from.version, `the event at version ${from.version} is missing`)
        }
        previous = envelope.hash
        return undefined
      }
      if (envelope.version !== last + 1) return tamper(last + 1, `the event at version ${last + 1} is missing`)
      const expected = EventHash.chain(previous, envelope, options.hmacKey)
      if (expected !== envelope.hash) {
        return tamper(
          envelope.version,
          "the event does not match its hash-chain link (edited, or written with another HMAC key or without one)"
        )
      }
      previous = expected
      last = envelope.version
      events.push(envelope.event)
      return undefined
    }
    yield* eachPage(log, stream, { from: start, verifiedByChain: true }, (page) => {
      for (const envelope of page) {
        const broken = check(envelope)
        if (broken !== undefined) return Effect.fail(broken)
      }
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
    return { window: events.length === 0 ? from : Window.replay(events, from), hash: previous }
  })

/**
 * {@link foldVerifiedHeld}, returning the window only.
 * @since 0.1.0
 */
export const foldVerifiedTail = (
  log: EventLog.Service,
  stream: StreamId,
  from: Window.Window = Window.empty,
  options: VerifiedFoldOptions = {}
): Effect.Effect<Window.Window, LoadError> =>
  Effect.map(foldVerifiedHeld(log, stream, from, options), (held) => held.window)

/**
 * Fold the events of `stream` after `from.version` into `from` without checking them; the hash is
 * that of the last event read (`hash` when none was).
 * @since 0.1.0
 */
export const foldHeld = (
  log: EventLog.Service,
  stream: StreamId,
  from: Window.Window = Window.empty,
  hash: string | undefined = from.version === 0 ? EventHash.genesis : undefined
): Effect.Effect<Held, StoreError | EventDecodeError> =>
  Effect.suspend(() => {
    const events: Array<WindowEvent> = []
    let last = hash
    return Effect.map(
      eachPage(log, stream, { from: from.version + 1 }, (page) => {
        for (const envelope of page) {
          events.push(envelope.event)
          last = envelope.hash
        }
        return Effect.void
      }),
      // One fold over the projection's state: no window is built per event.
      () => ({ window: events.length === 0 ? from : Window.replay(events, from), hash: last })
    )
  })

/** Fold the events of `stream` after `from.version` into `from`. @since 0.1.0 */
export const foldTail = (
  log: EventLog.Service,
  stream: StreamId,
  from: Window.Window = Window.empty
): Effect.Effect<Window.Window, StoreError | EventDecodeError> =>
  // `foldHeld` without the hash: pages as plain effects when the read offers them (ADR 0087).
  Effect.map(foldHeld(log, stream, from), (held) => held.window)

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
    // The last window folded per stream (with its last event's hash); only the tail after it is read
    // next time. The log stays the source of truth: a write by anyone else shows up in the tail.
    const folded = new Map<StreamId, Held>()
    const remember = (stream: StreamId) => (held: Held) =>
      Effect.sync(() => {
        folded.set(stream, held)
      })
    const loadHeld = (stream: StreamId) =>
      catchUpHeld(
        log,
        stream,
        folded.get(stream) ?? { window: Window.empty, hash: EventHash.genesis },
        undefined,
        options
      ).pipe(Effect.tap(remember(stream)))
    return {
      load: (stream) => Effect.map(loadHeld(stream), (held) => held.window),
      loadHeld,
      catchUp: (stream, held, version) =>
        catchUpHeld(log, stream, held, version, options).pipe(Effect.tap(remember(stream))),
      committed: (stream, window) => remember(stream)({ window, hash: undefined })
    }
  })

/**
 * Bring a held window up to date: each new event is checked against the chain from `held.hash` (read
 * with the tail when not known), with the log's key, and the tail must reach `version` (read when not
 * given), unless `integrity: "unverified"`. Costs one hash per new event and no other read, so it can
 * run on every operation.
 * @since 0.1.0
 */
export const catchUpHeld = (
  log: EventLog.Service,
  stream: StreamId,
  held: Held,
  version: number | undefined,
  options: IntegrityOptions = {}
): Effect.Effect<Held, LoadError> =>
  options.integrity === "unverified"
    ? foldHeld(log, stream, held.window, held.hash)
    : foldVerifiedHeld(log, stream, held.window, { hmacKey: options.hmacKey, anchor: held.hash, version })

/**
 * The replaying repository, with integrity options (the log's HMAC key, or unverified loads; both optional).
 * @since 0.1.0
 */
export const layerReplay = (options: IntegrityOptions = {}): Layer.Layer<WindowRepository, never, EventLog> =>
  Layer.effect(
    WindowRepository,
    Effect.flatMap(EventLog, (log) => makeReplay(log, options))
  )
