/**
 * The export format and imports.
 *
 * `ctxlog.events` JSONL, format version 1 — one JSON object per line:
 *
 * - line 1, the header: `{ "format": "ctxlog.events", "formatVersion": 1, "stream": "<id>", "events": <n> }`
 * - then one line per event, in version order:
 *   `{ "version": <n>, "eventId": "<id>", "type": "<EventType>", "schemaVersion": <n>, "data": { … },
 *   "recordedAt": <epoch ms>, "metadata": { … } }` where `data` is the event as stored (its JSON).
 *
 * An import decodes every line first (upcasting old schema versions), checks the versions run 1..n,
 * and only then writes the whole stream in one append that expects the stream not to exist: a bad
 * line, an unknown event type or an existing stream writes nothing. The target database's hash chain
 * and timestamps are its own; a window snapshot at the head is saved after the append.
 *
 * @since 0.1.0
 */
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { EventCodec, EventLog, Validation, type WindowEvent, WindowRepository } from "@ctxlog/core"
import { PostgresEventLog, Redaction, SqliteEventLog } from "@ctxlog/memory"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Entry } from "./Queries.js"
import { summarize } from "./Suggest.js"
import type { RawEvent } from "./Source.js"

/** The export format's name. @since 0.1.0 */
export const format = "ctxlog.events"
/** The export format's version. @since 0.1.0 */
export const formatVersion = 1

/** An import file is malformed; `line` is 1-based. @since 0.1.0 */
export class ImportError extends Schema.TaggedError<ImportError>()("ImportError", {
  file: Schema.String,
  line: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.file}${this.line > 0 ? `, line ${this.line}` : ""}: ${this.detail}`
  }
}

/** Writing the imported stream failed; nothing was written. @since 0.1.0 */
export class WriteError extends Schema.TaggedError<WriteError>()("WriteError", {
  target: Schema.String,
  stream: Schema.String,
  detail: Schema.String,
  /** Versions written before the failure (an import of several metadata runs); 0: nothing was written. */
  written: Schema.optionalWith(Schema.Number, { default: () => 0 })
}) {
  override get message(): string {
    return `import into ${this.target} (stream "${this.stream}"): ${this.detail}; ${
      this.written === 0
        ? "nothing was written"
        : `versions 1..${this.written} were written: erase the stream (ctxlog erase) and import again`
    }`
  }
}

/** Export a stream's raw events as `ctxlog.events` JSONL text. @since 0.1.0 */
export const exportJsonl = (stream: string, raws: ReadonlyArray<RawEvent>): string => {
  const lines = [JSON.stringify({ format, formatVersion, stream, events: raws.length })]
  for (const raw of raws) {
    lines.push(
      `{"version":${raw.version},"eventId":${JSON.stringify(raw.eventId)},"type":${JSON.stringify(raw.type)},"schemaVersion":${raw.schemaVersion},"data":${raw.data},"recordedAt":${raw.recordedAt},"metadata":${JSON.stringify(raw.metadata)}}`
    )
  }
  return `${lines.join("\n")}\n`
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A parsed export: its stream and decoded events. @since 0.1.0 */
export interface Parsed {
  readonly stream: string
  readonly events: ReadonlyArray<WindowEvent.WindowEvent>
  /** Each event's metadata (causation, correlation, turn, actor), as exported. */
  readonly metadata: ReadonlyArray<EventLog.EventMetadata>
}

/** The metadata fields an export line carries that the log keeps; anything else is dropped. */
const metadataOf = (value: unknown): EventLog.EventMetadata => {
  if (!isRecord(value)) return {}
  return {
    ...(typeof value.causationId === "string" ? { causationId: value.causationId } : {}),
    ...(typeof value.correlationId === "string" ? { correlationId: value.correlationId } : {}),
    ...(typeof value.turn === "number" && Number.isInteger(value.turn) ? { turn: value.turn } : {}),
    ...(typeof value.actor === "string" ? { actor: value.actor } : {})
  }
}

/** Parse and decode a `ctxlog.events` JSONL text, naming the file and line of the first problem. @since 0.1.0 */
export const parseJsonl = (file: string, text: string): Effect.Effect<Parsed, ImportError> =>
  Effect.gen(function* () {
    const fail = (line: number, detail: string) => Effect.fail(new ImportError({ file, line, detail }))
    // A byte order mark (editors on Windows write one) is not part of the first line; CRLF ends are JSON whitespace.
    const lines = text.replace(/^\uFEFF/, "").split("\n")
    const parsed: Array<{ line: number; value: Record<string, unknown> }> = []
    for (const [index, raw] of lines.entries()) {
      if (raw.trim() === "") continue
      let value: unknown
      try {
        value = JSON.parse(raw)
      } catch (cause) {
        return yield* fail(index + 1, `not JSON (${cause instanceof Error ? cause.message : String(cause)})`)
      }
      if (!isRecord(value)) return yield* fail(index + 1, "expected a JSON object")
      parsed.push({ line: index + 1, value })
    }
    const [header, ...rows] = parsed
    if (header === undefined) return yield* fail(0, "the file is empty")
    if (header.value.format !== format) {
      return yield* fail(header.line, `expected a header with "format": "${format}"`)
    }
    if (header.value.formatVersion !== formatVersion) {
      return yield* fail(
        header.line,
        `format version ${String(header.value.formatVersion)} is not supported (this ctxlog reads ${formatVersion})`
      )
    }
    const stream = header.value.stream
    if (typeof stream !== "string" || stream === "") return yield* fail(header.line, "the header names no stream")
    const streamProblem = Validation.streamIdProblem(stream)
    if (streamProblem !== undefined) return yield* fail(header.line, `the header's stream id ${streamProblem}`)
    const events: Array<WindowEvent.WindowEvent> = []
    const metadata: Array<EventLog.EventMetadata> = []
    const idLines = new Map<string, number>()
    for (const [index, { line, value }] of rows.entries()) {
      if (typeof value.type !== "string" || typeof value.schemaVersion !== "number" || !("data" in value)) {
        return yield* fail(line, 'expected { "version", "type", "schemaVersion", "data" }')
      }
      if (value.version !== index + 1) {
        return yield* fail(line, `expected version ${index + 1}, found ${String(value.version)}`)
      }
      // What no store accepts is refused here, naming the line, rather than by the append: values nested
      // deeper than the append allows (JSON.stringify would overflow the stack on thousands of levels),
      // numbers JSON cannot hold (1e999 parses as Infinity), NUL and lone surrogates in text.
      const problem = Validation.valueProblem(value.data, "data")
      if (problem !== undefined) return yield* fail(line, `${problem.path}: ${problem.detail}`)
      const decoded = yield* Effect.either(
        EventCodec.decode(
          { type: value.type, schemaVersion: value.schemaVersion, data: JSON.stringify(value.data) },
          { stream, version: index + 1, line }
        )
      )
      if (decoded._tag === "Left") return yield* fail(line, decoded.left.message)
      const first = idLines.get(decoded.right.id)
      if (first !== undefined) {
        return yield* fail(line, `event id ${JSON.stringify(decoded.right.id)} repeats line ${first}`)
      }
      idLines.set(decoded.right.id, line)
      events.push(decoded.right)
      metadata.push(metadataOf(value.metadata))
    }
    if (typeof header.value.events === "number" && header.value.events !== events.length) {
      return yield* fail(
        header.line,
        `the header announces ${header.value.events} events, the file holds ${events.length}`
      )
    }
    return { stream, events, metadata }
  })

/** Where an import writes. @since 0.1.0 */
export type Target =
  | { readonly _tag: "sqlite"; readonly filename: string }
  | { readonly _tag: "postgres"; readonly url: string }

/** Options of {@link write}. @since 0.1.0 */
export interface WriteOptions {
  /** Chain the imported stream (and seal its snapshot) under this HMAC key, as a keyed store would. */
  readonly hmacKey?: string | undefined
  /** Each event's metadata (default: none). */
  readonly metadata?: ReadonlyArray<EventLog.EventMetadata> | undefined
  /**
   * Each event's original time (epoch ms; an imported session's): the events of one time are one append,
   * made under a clock stopped at that time, so `recordedAt` keeps it. Default: the writer's clock.
   */
  readonly recordedAt?: ReadonlyArray<number> | undefined
}

/** A clock stopped at one instant: an append under it records that time. */
const clockAt = (millis: number): Clock.Clock => ({
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => millis,
  currentTimeMillis: Effect.succeed(millis),
  unsafeCurrentTimeNanos: () => BigInt(millis) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(millis) * 1_000_000n),
  sleep: () => Effect.void
})

/**
 * Consecutive events with the same metadata (and original time, when given), each run one append (the
 * log stores one metadata and one time per append): a stream written by one append per turn comes back
 * as one append per turn.
 */
const runsOf = (
  events: ReadonlyArray<WindowEvent.WindowEvent>,
  metadata: ReadonlyArray<EventLog.EventMetadata>,
  recordedAt: ReadonlyArray<number> | undefined
): ReadonlyArray<{
  readonly events: ReadonlyArray<WindowEvent.WindowEvent>
  readonly metadata: EventLog.EventMetadata
  readonly at: number | undefined
}> => {
  const runs: Array<{
    events: Array<WindowEvent.WindowEvent>
    metadata: EventLog.EventMetadata
    at: number | undefined
    key: string
  }> = []
  events.forEach((event, index) => {
    const meta = metadata[index] ?? {}
    const at = recordedAt?.[index]
    const key = `${JSON.stringify(meta)}@${String(at)}`
    const last = runs.at(-1)
    if (last !== undefined && last.key === key) last.events.push(event)
    else runs.push({ events: [event], metadata: meta, at, key })
  })
  return runs
}

/**
 * Append a whole stream in one append that expects it not to exist (atomic: all or nothing). The
 * SQLite file and its directory are created when missing. No redaction: an import keeps the bytes
 * it was given, so recorded render hashes still verify. With `hmacKey` the stream is keyed: a store
 * opened with that key verifies and extends it.
 * @since 0.1.0
 */
export const write = (
  target: Target,
  stream: string,
  events: ReadonlyArray<WindowEvent.WindowEvent>,
  options: WriteOptions = {}
): Effect.Effect<EventLog.AppendResult, WriteError> => {
  const name = target._tag === "sqlite" ? `sqlite:${target.filename}` : "postgres"
  const fail = (detail: string) => new WriteError({ target: name, stream, detail })
  const open =
    target._tag === "sqlite"
      ? Effect.sync(() => mkdirSync(dirname(target.filename), { recursive: true })).pipe(
          Effect.zipRight(
            SqliteEventLog.make({
              filename: target.filename,
              redaction: Redaction.none,
              snapshotEvery: 1,
              hmacKey: options.hmacKey
            })
          )
        )
      : PostgresEventLog.make({
          url: target.url,
          redaction: Redaction.none,
          snapshotEvery: 1,
          maxConnections: 2,
          hmacKey: options.hmacKey
        })
  return Effect.scoped(
    Effect.gen(function* () {
      const context = yield* open
      const log = Context.get(context, EventLog.EventLog)
      // Re-appending the same event ids would be an idempotent no-op; an import into a stream that
      // exists is refused instead, so the caller learns nothing was imported.
      const existing = yield* log.version(stream)
      if (existing > 0) return yield* Effect.fail(fail(`the stream exists already (version ${existing})`))
      // Every run is checked before the first is written, so bad metadata writes nothing. The first append
      // expects no stream; the others the version the previous one left.
      const runs = runsOf(events, options.metadata ?? [], options.recordedAt)
      for (const run of runs) yield* Validation.validateAppendInput(stream, run.events, run.metadata)
      let appended: EventLog.AppendResult = { stream, nextExpectedVersion: 0, written: 0, lastPosition: undefined }
      for (const [index, run] of runs.entries()) {
        const written = appended.written
        const append = log.append(
          stream,
          run.events,
          index === 0 ? "no_stream" : appended.nextExpectedVersion,
          run.metadata
        )
        const result = yield* (run.at === undefined ? append : Effect.withClock(append, clockAt(run.at))).pipe(
          Effect.mapError((error) =>
            written === 0 ? error : new WriteError({ target: name, stream, detail: error.message, written })
          )
        )
        appended = { ...result, written: written + result.written }
      }
      // The snapshot-backed repository saves a window snapshot at the head when told of the append (the
      // policy is one event here), so inspecting the imported stream near its end folds only the tail.
      const repository = Context.get(context, WindowRepository.WindowRepository)
      yield* repository.committed(stream, yield* repository.load(stream))
      return appended
    })
  ).pipe(
    Effect.mapError((error) =>
      error._tag === "WriteError"
        ? error
        : error._tag === "ConcurrencyConflict"
          ? fail(`the stream exists already (version ${error.actual})`)
          : error._tag === "DuplicateEventIds"
            ? // Hundreds of ids on one line help nobody: the first few and how many.
              fail(
                `${error.ids.length} event ids are stored already in another stream (${summarize(error.ids)}); import into another database`
              )
            : fail(error.message)
    )
  )
}

/** Entries as the events to copy. @since 0.1.0 */
export const eventsOf = (entries: ReadonlyArray<Entry>): ReadonlyArray<WindowEvent.WindowEvent> =>
  entries.map((entry) => entry.event)
