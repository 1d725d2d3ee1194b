/**
 * Loading what the queries need from a {@link Source}: decoded entries, the window at a version
 * (from the stored snapshot when it is at or before that version, so `--at` near the end of a long
 * stream folds only the tail), renders rebuilt and verified, and the integrity check of `verify`.
 *
 * @since 0.1.0
 */
import { type EventCodec, type EventHash, TokenCounter, Window } from "@ctxlog/core"
import { LogReader, SnapshotRepository } from "@ctxlog/memory"
import { CtxBuilder, RenderRecord } from "@ctxlog/providers"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Entry } from "./Queries.js"
import * as Queries from "./Queries.js"
import { didYouMean } from "./Suggest.js"
import type { Range, RawEvent, ReadFailure, Source } from "./Source.js"
import { decode } from "./Source.js"

/** The stream has no events. @since 0.1.0 */
export class StreamNotFound extends Schema.TaggedError<StreamNotFound>()("StreamNotFound", {
  stream: Schema.String,
  target: Schema.String,
  /** `; did you mean "x"?` when a stream of the log has a close name, else empty. */
  hint: Schema.optionalWith(Schema.String, { default: () => "" })
}) {
  override get message(): string {
    return `no stream "${this.stream}" in ${this.target}${this.hint}`
  }
}

/** A version outside the stream. @since 0.1.0 */
export class VersionOutOfRange extends Schema.TaggedError<VersionOutOfRange>()("VersionOutOfRange", {
  stream: Schema.String,
  version: Schema.Number,
  head: Schema.Number
}) {
  override get message(): string {
    return `stream "${this.stream}" has versions 1..${this.head}; there is no version ${this.version}`
  }
}

/** No render matches the request. @since 0.1.0 */
export class RenderNotFound extends Schema.TaggedError<RenderNotFound>()("RenderNotFound", {
  stream: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}": ${this.detail}`
  }
}

/** Every failure of a read. @since 0.1.0 */
export type ReadError = ReadFailure | StreamNotFound | VersionOutOfRange | EventCodec.EventDecodeError

/** Decode raw events into entries (the first that does not decode fails the read). @since 0.1.0 */
export const decodeAll = (raws: ReadonlyArray<RawEvent>) =>
  Effect.forEach(raws, (raw) =>
    Effect.map(
      decode(raw),
      (event): Entry => ({
        version: raw.version,
        eventId: raw.eventId,
        type: event._tag,
        schemaVersion: raw.schemaVersion,
        recordedAt: raw.recordedAt,
        event
      })
    )
  )

/** The head version of a stream that must exist. @since 0.1.0 */
export const head = (source: Source, stream: string): Effect.Effect<number, ReadFailure | StreamNotFound> =>
  Effect.flatMap(source.version(stream), (version) =>
    version === 0
      ? Effect.flatMap(source.streams(), (infos) =>
          Effect.fail(
            new StreamNotFound({
              stream,
              target: source.target,
              hint: didYouMean(
                stream,
                infos.map((info) => info.stream)
              )
            })
          )
        )
      : Effect.succeed(version)
  )

/** Check a requested version against the head (undefined = the head). @since 0.1.0 */
export const resolveVersion = (stream: string, headVersion: number, at: number | undefined) =>
  at === undefined
    ? Effect.succeed(headVersion)
    : Number.isInteger(at) && at >= 0 && at <= headVersion
      ? Effect.succeed(at)
      : Effect.fail(new VersionOutOfRange({ stream, version: at, head: headVersion }))

/** Read and decode a stream's entries in a range. @since 0.1.0 */
export const entries = (source: Source, stream: string, range: Range = {}) =>
  Effect.flatMap(source.events(stream, range), decodeAll)

/**
 * The stored snapshot as a window, when it was written by this projection version and holds a window of
 * its version: `@ctxlog/memory`'s {@link LogReader.snapshotWindow} (the inspector decodes no snapshot).
 * @since 0.1.0
 */
export const snapshotWindow = (source: Source, stream: string): Effect.Effect<Window.Window | undefined, ReadFailure> =>
  LogReader.snapshotWindow(source, stream)

/** A window and where its fold started. @since 0.1.0 */
export type WindowAt = LogReader.WindowAt

/**
 * The window at `at`: from the stored snapshot when it is at or before `at`, else from the first
 * event; only the events after the starting point are read. Asked of `@ctxlog/memory`
 * ({@link LogReader.windowAt}), which restores and folds it.
 * @since 0.1.0
 */
export const windowAt = (source: Source, stream: string, at: number): Effect.Effect<WindowAt, ReadError> =>
  LogReader.windowAt(source, stream, at)

/** A render found in the log, rebuilt (or not) and checked. @since 0.1.0 */
export interface RenderCheck {
  readonly version: number
  readonly turn: number
  readonly provider: string
  readonly model: string
  readonly recordedSha256: string
  readonly verified: boolean
  readonly sha256: string | null
  readonly body: string | null
  readonly problem: string | null
}

/** Rebuild the render event at `version` given the entries before and including it. @since 0.1.0 */
export const checkRender = (
  before: Window.Window,
  entry: Entry,
  turn: number,
  blobs: ReadonlyMap<string, string>
): RenderCheck | undefined => {
  if (entry.event._tag !== "PromptRendered") return undefined
  const rebuilt = RenderRecord.rebuild(before, entry.event, entry.version, blobs)
  return {
    version: entry.version,
    turn,
    provider: entry.event.provider,
    model: entry.event.model,
    recordedSha256: entry.event.sha256,
    verified: Either.isRight(rebuilt),
    sha256: Either.isRight(rebuilt) ? rebuilt.right.sha256 : null,
    body: Either.isRight(rebuilt) ? rebuilt.right.body : null,
    problem: Either.isLeft(rebuilt) ? rebuilt.left.message : null
  }
}

/**
 * The render at version `at` (or the last render at or before it), or the last render of turn `turn`,
 * rebuilt from the window before it and checked against its recorded hash.
 * @since 0.1.0
 */
export const renderAt = (
  source: Source,
  stream: string,
  selector: { readonly at?: number; readonly turn?: number }
): Effect.Effect<RenderCheck, ReadError | RenderNotFound> =>
  Effect.gen(function* () {
    const headVersion = yield* head(source, stream)
    const limit = yield* resolveVersion(stream, headVersion, selector.at)
    const all = yield* entries(source, stream, { to: selector.turn === undefined ? limit : headVersion })
    const turns = Queries.renderTurns(all)
    const chosen =
      selector.turn === undefined
        ? turns.filter((render) => render.version <= limit).at(-1)
        : turns.filter((render) => render.turn === selector.turn).at(-1)
    if (chosen === undefined) {
      return yield* new RenderNotFound({
        stream,
        detail:
          selector.turn === undefined
            ? `no PromptRendered event at or before version ${limit}`
            : `no PromptRendered event in turn ${selector.turn} (turns with renders: ${[...new Set(turns.map((t) => t.turn))].slice(0, 5).join(", ")}${turns.length > 5 ? ", …" : ""})`
      })
    }
    const { window: before } = yield* windowAt(source, stream, chosen.version - 1)
    const blobs = RenderRecord.collectBlobs(all.filter((entry) => entry.version <= chosen.version).map((e) => e.event))
    const entry = all.find((candidate) => candidate.version === chosen.version)
    const check = entry === undefined ? undefined : checkRender(before, entry, chosen.turn, blobs)
    if (check === undefined) return yield* new RenderNotFound({ stream, detail: `version ${chosen.version} vanished` })
    return check
  })

/** A problem `verify` found. @since 0.1.0 */
export interface Problem {
  readonly stream: string
  readonly version: number
  readonly check: LogReader.Check | "decode" | "render"
  readonly detail: string
}

/** What `verify` found in one stream. @since 0.1.0 */
export interface StreamCheck {
  readonly stream: string
  readonly events: number
  /** The verified head (version and hash), when the chain holds. */
  readonly head: LogReader.Head | null
  readonly keyed: boolean
  readonly snapshot: number | null
  readonly rendersVerified: number
  readonly rendersNotRebuildable: number
  /** The stream's signed batches: versions, writer, key id and what the keyring said (`unchecked` without one). */
  readonly batches: NonNullable<LogReader.Integrity["batches"]>
  readonly problems: ReadonlyArray<Problem>
}

/**
 * Check one stream: the log's integrity as `@ctxlog/memory`'s {@link LogReader} checks it (versions 1..n,
 * the hash chain keyed with `key` when given, the `streams` row, the snapshot's seal, a head kept
 * elsewhere), then every event decodes, the stored snapshot equals a full replay to its version, and
 * (with `renders`) every rebuildable render rebuilds to its recorded hash.
 * @since 0.1.0
 */
export const verifyStream = (
  source: Source,
  stream: string,
  options: {
    readonly renders: boolean
    readonly key?: EventHash.ChainKey | undefined
    readonly expectedHead?: LogReader.Head | undefined
    readonly keyring?: LogReader.VerifyOptions["keyring"]
    readonly anchors?: LogReader.VerifyOptions["anchors"]
  }
): Effect.Effect<StreamCheck, ReadFailure> =>
  Effect.gen(function* () {
    const checked = yield* source.verify(stream, {
      key: options.key,
      expectedHead: options.expectedHead,
      keyring: options.keyring,
      anchors: options.anchors
    })
    const raws = checked.events
    const snapshot = checked.snapshot
    const problems: Array<Problem> = [...checked.integrity.problems]
    let window = Window.empty
    let verified = 0
    let notRebuildable = 0
    let turn = 1
    const blobs = new Map<string, string>()
    for (const raw of raws) {
      const decoded = yield* Effect.either(decode(raw))
      if (Either.isLeft(decoded)) {
        problems.push({ stream, version: raw.version, check: "decode", detail: decoded.left.message })
        break
      }
      const event = decoded.right
      if (options.renders && event._tag === "PromptRendered") {
        RenderRecord.collectBlobs([event], blobs)
        const check = checkRender(
          window,
          {
            version: raw.version,
            eventId: raw.eventId,
            type: event._tag,
            schemaVersion: raw.schemaVersion,
            recordedAt: raw.recordedAt,
            event
          },
          turn,
          blobs
        )
        if (check?.verified === true) verified++
        else if (event.render === undefined) notRebuildable++
        else problems.push({ stream, version: raw.version, check: "render", detail: check?.problem ?? "not checked" })
      }
      if (event._tag === "TurnCompleted") turn++
      window = Window.evolve(window, event)
      if (
        snapshot !== undefined &&
        snapshot.projectionVersion === SnapshotRepository.projectionVersion &&
        raw.version === snapshot.version
      ) {
        const replayed = JSON.stringify(Schema.encodeSync(Window.Window)(window))
        let stored: string
        try {
          stored = JSON.stringify(JSON.parse(snapshot.state))
        } catch {
          stored = ""
        }
        if (replayed !== stored) {
          problems.push({
            stream,
            version: snapshot.version,
            check: "snapshot",
            detail: "the stored window snapshot differs from a full replay to its version"
          })
        }
      }
    }
    problems.sort((a, b) => a.version - b.version)
    return {
      stream,
      events: raws.length,
      head: checked.integrity.head ?? null,
      keyed: checked.integrity.keyed,
      snapshot: snapshot?.version ?? null,
      rendersVerified: verified,
      rendersNotRebuildable: notRebuildable,
      batches: checked.integrity.batches ?? [],
      problems
    }
  })

/** The budget and tool tokens of the last render at or before a version (from its recorded spec). @since 0.1.0 */
export interface RenderContext {
  readonly budget: number | null
  readonly toolTokens: number
  readonly provider: string | null
  readonly model: string | null
}

/**
 * What the last render at or before `at` says about the budget (its builder's effective context
 * window) and the tool schemas it sent (about four characters a token, as the builders count them).
 * Reads only the stream's `PromptRendered` events.
 * @since 0.1.0
 */
export const renderContext = (source: Source, stream: string, at: number): Effect.Effect<RenderContext, ReadError> =>
  Effect.gen(function* () {
    const renders = yield* entries(source, stream, { to: at, types: ["PromptRendered"] })
    const last = renders.at(-1)?.event
    if (last === undefined || last._tag !== "PromptRendered") {
      return { budget: null, toolTokens: 0, provider: null, model: null }
    }
    const spec = last.render
    const config = spec === undefined ? undefined : RenderRecord.decodeConfig(spec)
    const blobs = RenderRecord.collectBlobs(renders.map((entry) => entry.event))
    const tools = spec?.toolsSha256 === undefined ? undefined : blobs.get(spec.toolsSha256)
    return {
      budget: config === undefined ? null : CtxBuilder.forProvider(config).ctxWindow,
      toolTokens: tools === undefined ? 0 : TokenCounter.estimate(tools),
      provider: last.provider,
      model: last.model
    }
  })
