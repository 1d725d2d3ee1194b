/**
 * A snapshot-backed `WindowRepository`: load = newest snapshot + the events after it, so loading cost
 * depends on the tail, not on the length of the history.
 *
 * - Snapshots are written from `committed` (the window an append produced), by policy: once `every`
 *   events or `bytes` of appended event data have gone by since the last snapshot, whichever comes first.
 *   A snapshot is `JSON.stringify(window)` plus the SHA-256 of that text (computed by the store).
 * - Restoring one does not run a Schema decode: the text's hash is checked against the stored hash (or,
 *   when the store keeps one, the digest of the stored bytes the text was decoded from: SQLite's deflated
 *   BLOB, ADR 0086), the text is parsed, and the plain object is the window. The hash is what makes that
 *   safe: the text is exactly what this projection version wrote. A snapshot whose text does not match
 *   its hash was edited or corrupted: `load` fails with a `TamperDetected` naming the stream and version (or, with
 *   `onMismatch: "rebuild"`, logs a warning and rebuilds from the log).
 * - With an HMAC key (`hmacKey`), the stored hash is a keyed seal over the state and the hash of the
 *   event the snapshot ends at (`EventHash.seal`): a snapshot cannot be edited and re-sealed without the
 *   key, nor moved onto other events. The tail replayed after it is checked link by link from that
 *   event's hash, and must reach the stream's version (`WindowRepository.foldVerifiedTail`); O(tail).
 *   `integrity: "unverified"` skips the chain, the keyed seal and the version check.
 * - A snapshot of another projection version, or one written before hashes were stored, is ignored (the
 *   window is rebuilt from the log) and replaced by the next `committed`.
 *
 * @since 0.1.0
 */
import { EventHash, EventLog, Lru, Window, WindowRepository } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SnapshotState from "./internal/snapshotState.js"
import { add, counters } from "./internal/workCounters.js"
import { type Snapshot, SnapshotStore } from "./SnapshotStore.js"

/** The projection name snapshots of the window are stored under. @since 0.1.0 */
export const projection = "window"

/**
 * The version of the window projection. Bump it whenever `Window` or core `evolve` changes what a
 * stream folds into: older snapshots are then ignored and rebuilt. 2: plain-JSON snapshots with a
 * state hash, restored without a Schema decode.
 * @since 0.1.0
 */
export const projectionVersion = 2

/** Default snapshot policy: events since the last snapshot. @since 0.1.0 */
export const defaultEvery = 1000

/** Default snapshot policy: bytes of event data appended since the last snapshot (4 MB). @since 0.1.0 */
export const defaultBytes = 4 * 1024 * 1024

/** Snapshot policy and load checks. @since 0.1.0 */
export interface Options extends WindowRepository.IntegrityOptions {
  /** Snapshot once this many events went by since the last snapshot (default {@link defaultEvery}; 0 = never by count). */
  readonly every?: number | undefined
  /** Snapshot once this many bytes of event data were appended since the last snapshot (default {@link defaultBytes}; 0 = never by size). */
  readonly bytes?: number | undefined
  /**
   * A running total of event-data bytes this process appended to a stream. The durable layers pass their
   * own counter; without one only `every` applies.
   */
  readonly appendedBytes?: ((stream: string) => number) | undefined
  /** What `load` does with a snapshot whose text does not match its hash (default `"fail"`). */
  readonly onMismatch?: "fail" | "rebuild" | undefined
  /** The projection version to read and write (default {@link projectionVersion}). */
  readonly projectionVersion?: number | undefined
  /** Streams whose snapshot bookkeeping is kept in memory (default 10,000; the oldest is dropped). */
  readonly maxTracked?: number | undefined
}

/** What the policy remembers of a stream's last snapshot. */
interface Mark {
  /** Stream version of the last snapshot (0: none). */
  readonly version: number
  /** `appendedBytes(stream)` when it was taken. */
  readonly bytes: number
  /** The stored snapshot could not be used (other projection version, no hash): replace it at once. */
  readonly stale: boolean
}

/**
 * An unkeyed snapshot is what was saved: its stored bytes match the digest saved with them (SQLite: the
 * deflated BLOB, a tenth of the text, which `state` was decoded from; ADR 0086), or, without one, its text
 * matches its seal. Either way the text is exactly what the store sealed.
 */
const intact = (snapshot: Snapshot, stateHash: string): boolean => {
  if (snapshot.stored !== undefined) {
    add(counters.snapshotBytesHashed, snapshot.stored.bytes.length)
    return SnapshotState.digest(snapshot.stored.bytes) === snapshot.stored.sha256
  }
  add(counters.snapshotBytesHashed, snapshot.state.length)
  return EventHash.sha256(snapshot.state) === stateHash
}

/** Build the repository over a log and a snapshot store. @since 0.1.0 */
export const make = (
  log: EventLog.EventLog.Service,
  snapshots: SnapshotStore.Service,
  options: Options = {}
): WindowRepository.WindowRepository.Service => {
  const every = options.every ?? defaultEvery
  const bytes = options.bytes ?? defaultBytes
  const appendedBytes = options.appendedBytes ?? (() => 0)
  const onMismatch = options.onMismatch ?? "fail"
  const version = options.projectionVersion ?? projectionVersion
  // Re-marking a stream makes it the most recent; reading a mark (`peek`) does not.
  const marks = Lru.make<string, Mark>(options.maxTracked ?? 10_000)
  const mark = (stream: string, at: number, stale = false) => {
    marks.set(stream, { version: at, bytes: appendedBytes(stream), stale })
  }

  const key = options.hmacKey
  const verified = options.integrity !== "unverified"

  /**
   * The stored hash of the event a keyed snapshot ends at (what its seal covers and where the tail's
   * chain starts); undefined when it is missing.
   */
  const anchorOf = (stream: string, at: number): Effect.Effect<string | undefined, WindowRepository.LoadError> => {
    const read = log.read(stream, { from: at, to: at })
    // One row: read as one effect when the store offers its pages (no Stream to run, ADR 0087).
    const pages = EventLog.pagesOf(read)
    return pages === undefined
      ? Effect.map(Stream.runHead(read), (head) => Option.getOrUndefined(Option.map(head, (envelope) => envelope.hash)))
      : Effect.map(pages(at, 1), (page) => page[0]?.hash)
  }

  /**
   * The window a snapshot holds, and the hash of its last event when the seal was checked against it;
   * none when it cannot be used (other version, no hash, unreadable).
   */
  const restore = (
    stream: string,
    snapshot: Snapshot
  ): Effect.Effect<
    Option.Option<{ readonly window: Window.Window; readonly anchor: string | undefined }>,
    WindowRepository.LoadError
  > =>
    Effect.suspend(() => {
      if (snapshot.projectionVersion !== version) return Effect.succeed(Option.none())
      if (snapshot.stateHash === undefined) {
        return Effect.as(
          Effect.logWarning(`window snapshot of "${stream}" at version ${snapshot.version} has no hash: rebuilding`),
          Option.none()
        )
      }
      const stateHash = snapshot.stateHash
      const unusable = (detail: string) =>
        onMismatch === "fail"
          ? Effect.fail(
              new EventLog.TamperDetected({
                stream,
                version: snapshot.version,
                detail: `the window snapshot ${detail}`
              })
            )
          : Effect.as(
              Effect.logWarning(`window snapshot of "${stream}" at version ${snapshot.version} ${detail}: rebuilding`),
              Option.none()
            )
      const use = (anchor: string | undefined) => {
        const parsed = SnapshotState.windowOf(snapshot.state, snapshot.version)
        return typeof parsed === "string" ? unusable(parsed) : Effect.succeed(Option.some({ window: parsed, anchor }))
      }
      const sealedWithKey = stateHash.startsWith(EventHash.keyedPrefix)
      if (!sealedWithKey) {
        if (verified && key !== undefined) return unusable("is not sealed with the HMAC key (unkeyed hash)")
        if (!intact(snapshot, stateHash)) return unusable("does not match its hash (edited or corrupted)")
        return use(undefined)
      }
      if (!verified) return use(undefined)
      if (key === undefined) return unusable("is sealed with an HMAC key: open the store with its hmacKey")
      return Effect.flatMap(anchorOf(stream, snapshot.version), (anchor) => {
        if (anchor === undefined) return unusable(`ends at version ${snapshot.version}, whose event is missing`)
        const expected = EventHash.seal({ ...snapshot, anchor }, key)
        return expected === stateHash
          ? use(anchor)
          : unusable("does not match its seal (edited, moved onto other events, or sealed with another key)")
      })
    })

  const integrity: WindowRepository.IntegrityOptions = {
    hmacKey: key,
    ...(verified ? {} : { integrity: "unverified" })
  }
  /** Fold the tail after `from`, checked from `anchor` unless loads are unverified. */
  const foldFrom = (stream: string, from: Window.Window | undefined, anchor: string | undefined) =>
    from === undefined
      ? WindowRepository.catchUpHeld(
          log,
          stream,
          { window: Window.empty, hash: EventHash.genesis },
          undefined,
          integrity
        )
      : WindowRepository.catchUpHeld(log, stream, { window: from, hash: anchor }, undefined, integrity)

  const save = (stream: string, window: Window.Window) =>
    Effect.suspend(() =>
      snapshots.save({
        stream,
        projection,
        projectionVersion: version,
        version: window.version,
        // A window is plain data (every field enumerable): no Schema encode on this path.
        state: JSON.stringify(window)
      })
    ).pipe(
      Effect.tap(() => Effect.sync(() => mark(stream, window.version))),
      // Snapshots are a cache of the log: failing to write one must not fail the append that preceded it.
      Effect.catchAllCause((cause) => Effect.logWarning(`window snapshot of "${stream}" not saved`, cause))
    )

  const loadHeld = (stream: string) =>
    Effect.gen(function* () {
      const latest = yield* snapshots.latest(stream, projection)
      const restored = Option.isSome(latest) ? yield* restore(stream, latest.value) : Option.none()
      const base = Option.map(restored, (found) => found.window)
      // Bytes are counted from the first time this process saw the snapshot a stream has now; a
      // snapshot that could not be used is replaced by the next committed window.
      const known = marks.peek(stream)
      if (Option.isSome(base)) {
        if (known?.version !== base.value.version) mark(stream, base.value.version)
      } else if (Option.isSome(latest)) mark(stream, 0, true)
      else if (known === undefined) mark(stream, 0)
      return yield* foldFrom(stream, Option.getOrUndefined(base), Option.getOrUndefined(restored)?.anchor)
    })

  return {
    load: (stream) => Effect.map(loadHeld(stream), (held) => held.window),
    loadHeld,
    // A window this process loaded (checked) and kept: only its new events are read, each checked
    // against the chain from the hash kept beside the window, so an edit made meanwhile is not served.
    catchUp: (stream, held, version) => WindowRepository.catchUpHeld(log, stream, held, version, integrity),
    committed: (stream, window) =>
      Effect.suspend(() => {
        const last = marks.peek(stream) ?? { version: 0, bytes: 0, stale: false }
        if (last.stale && window.version > 0) return save(stream, window)
        const dueByCount = every > 0 && window.version - last.version >= every
        const dueBySize = bytes > 0 && appendedBytes(stream) - last.bytes >= bytes
        return window.version > last.version && (dueByCount || dueBySize) ? save(stream, window) : Effect.void
      })
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
