import { EventCodec, EventLog, Validation } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Redaction from "../Redaction.js"
import type { EventRow } from "./schema.js"
import { globalEvents, streamEvents, streamListing, streamRow } from "./logQueries.js"
import { metadataOf, type StoreShared } from "./storeShared.js"
import { add, counters } from "./workCounters.js"

/**
 * The envelopes of one page of rows, decoded in one synchronous loop (no effect per row); the first row
 * that does not decode fails the page. The events of one append share their metadata text: it is parsed
 * once for them (the envelopes share the read-only object), not once a row.
 */
const envelopesOf = (
  rows: ReadonlyArray<EventRow>,
  verifiedByChain = false
): Effect.Effect<ReadonlyArray<EventLog.Envelope>, EventCodec.EventDecodeError> =>
  Effect.suspend(() => {
    const decode = verifiedByChain ? EventCodec.decodeVerifiedEither : EventCodec.decodeEither
    if (verifiedByChain) add(counters.rowsVerifiedByChain, rows.length)
    else add(counters.rowsDecoded, rows.length)
    const envelopes: Array<EventLog.Envelope> = []
    let raw: unknown
    let metadata: EventLog.EventMetadata = {}
    for (const row of rows) {
      const decoded = decode(
        { type: row.type, schemaVersion: row.schema_version, data: row.data },
        { stream: row.stream_id, version: row.stream_version }
      )
      if (Either.isLeft(decoded)) return Effect.fail(decoded.left)
      if (row.metadata !== raw || raw === undefined) {
        raw = row.metadata
        metadata = metadataOf(row.metadata)
      }
      envelopes.push({
        stream: row.stream_id,
        version: row.stream_version,
        position: row.global_position,
        eventId: row.event_id,
        type: decoded.right._tag,
        schemaVersion: row.schema_version,
        event: decoded.right,
        data: row.data,
        metadata,
        recordedAt: row.recorded_at,
        hash: row.hash
      })
    }
    return Effect.succeed(envelopes)
  })

/** The event log of a durable store: append (validated, redacted, encoded once, chained), reads, listings. */
export const make = (shared: StoreShared): EventLog.EventLog.Service => {
  const { backend, options, owner: scope, visible, projection } = shared
  const { redactor, anchorer } = options
  let catchingUp = false

  // The recall index catches up after commit: before each query, and once a whole batch waits, in a
  // background fiber of the layer's scope (it runs while the caller waits on something else, e.g. the
  // model), so the append does not wait for it. The backlog a query may find stays bounded even when the
  // caller never waits on anything (a loop of appends, an import): once two batches wait, the append runs
  // the catch-up itself (waiting for the background one if it is running). The bound used to rest on the
  // background fiber getting turns between appends, which only an incidental yield on the append path gave
  // it: without one, a loop of appends left 8,500 events unindexed after 20,000 (issue 24).
  const catchUpLogged = projection.catchUpInBackground.pipe(
    Effect.asVoid,
    Effect.catchAll((error) => Effect.logWarning(`recall index not caught up after append: ${error.message}`))
  )
  const catchUpBehind = (lastPosition: number | undefined): Effect.Effect<void> => {
    if (lastPosition === undefined) return Effect.void
    const behind = lastPosition - projection.known()
    if (behind >= 2 * options.recallBatch) return catchUpLogged
    if (catchingUp || behind < options.recallBatch) return Effect.void
    return Effect.suspend(() => {
      catchingUp = true
      return Effect.asVoid(
        Effect.forkIn(
          catchUpLogged.pipe(
            Effect.ensuring(
              Effect.sync(() => {
                catchingUp = false
              })
            )
          ),
          options.scope
        )
      )
    })
  }

  // The metadata column: the caller's metadata, redacted, with the time. Nearly every append passes none
  // (`{}`): its text is written directly, the same bytes `JSON.stringify` gives (nothing to redact in it).
  const metadataJson = (metadata: EventLog.EventMetadata, now: number): string =>
    Object.keys(metadata).length === 0 && Object.getPrototypeOf(metadata) === Object.prototype
      ? `{"recordedAt":${JSON.stringify(now)}}`
      : JSON.stringify(Redaction.redactValue(redactor, { ...metadata, recordedAt: now }))

  // One effect around the plain steps (validate, redact, encode, then the backend's one transaction): the
  // append runs per event written, so it takes no effect per step.
  const append: EventLog.EventLog.Service["append"] = (stream, events, expected, metadata = {}) =>
    Effect.flatMap(Clock.currentTimeMillis, (now): ReturnType<EventLog.EventLog.Service["append"]> => {
      // The commonest events (a message) are encoded in plain code, which also tells they are valid: no
      // validation walk and no Schema pass for them (ADR 0079). Any other goes the full way.
      const known = events.map(EventCodec.encodeKnown)
      const invalid = Validation.appendInputProblem(stream, events, metadata, known)
      if (invalid !== undefined) return Effect.fail(invalid)
      // Redact before encoding: the stored bytes, the hash chain and the index only see redacted text.
      // Each event is encoded once; those bytes are hashed and stored, and the recall projection reads
      // them back later (nothing is decoded on this path). An event a rule changed is encoded again.
      const redacted = events.map((event) => Redaction.redactValue(redactor, event))
      let changed = false
      for (let index = 0; index < redacted.length; index++) {
        if (redacted[index] !== events[index]) {
          changed = true
          known[index] = undefined
        }
        if (known[index] === undefined) add(counters.eventsEncodedBySchema)
      }
      const encoded = EventCodec.encodeAllEither(redacted, known)
      if (Either.isLeft(encoded)) return Effect.fail(encoded.left)
      const stored = encoded.right
      return backend
        .append({
          stream,
          expected,
          ids: events.map((event) => event.id),
          stored,
          metadata: metadataJson(metadata, now),
          now,
          key: options.hmacKey,
          owner: scope,
          signer: options.signer
        })
        .pipe(
          Effect.flatMap((result) => {
            if (result.written > 0) shared.appendedBytes.add(stream, stored)
            const anchored =
              anchorer === undefined || result.written === 0 || result.lastHash === undefined
                ? Effect.void
                : anchorer.note(stream, result.nextExpectedVersion, result.lastHash)
            const behind = catchUpBehind(result.lastPosition)
            const caughtUp =
              anchored === Effect.void ? behind : behind === Effect.void ? anchored : Effect.zipRight(anchored, behind)
            // A caller that keeps a window (ContextService) folds what the log holds: when a rule redacted
            // something (rare), the events as stored, decoded from their bytes.
            if (result.written === 0 || !changed) {
              // The common case: no catch-up due, the result as it is (no effect of its own).
              return caughtUp === Effect.void ? Effect.succeed(result) : Effect.as(caughtUp, result)
            }
            return Effect.zipRight(
              caughtUp,
              Effect.forEach(stored, (record) => EventCodec.decode(record, { stream })).pipe(
                Effect.mapError(
                  (error) =>
                    new EventLog.StoreError({
                      operation: "append",
                      detail: `a redacted event no longer decodes: ${error.message}`
                    })
                ),
                Effect.map((decoded): EventLog.AppendResult => ({ ...result, stored: decoded }))
              )
            )
          })
        )
    })

  /** The rows of one page of a visible stream, from `from`, at most `limit`, decoded. */
  const page = (stream: string, readOptions: EventLog.ReadOptions, from: number, limit: number) =>
    Effect.flatMap(
      backend.query("read", (db) => streamEvents(db, stream, { from, to: readOptions.to, limit }).execute()),
      (rows) => envelopesOf(rows, readOptions.verifiedByChain)
    )

  const readVisible = (stream: string, readOptions: EventLog.ReadOptions) =>
    Stream.paginateChunkEffect(Math.max(1, readOptions.from ?? 1), (from) =>
      Effect.map(page(stream, readOptions, from, options.pageSize), (envelopes) => {
        add(counters.streamPages)
        const last = envelopes[envelopes.length - 1]
        return [
          Chunk.unsafeFromArray(envelopes),
          envelopes.length === options.pageSize && last !== undefined ? Option.some(last.version + 1) : Option.none()
        ] as const
      })
    )

  // A scoped store reads another owner's stream as an empty one (checked once before the first page of
  // the stream; by a fold reading pages, before each page). A fold reads the pages as plain effects, with
  // no Stream to run (`EventLog.withPages`, ADR 0087).
  const read: EventLog.EventLog.Service["read"] = (stream, readOptions = {}) =>
    EventLog.withPages(
      scope === undefined
        ? readVisible(stream, readOptions)
        : Stream.unwrap(
            Effect.map(visible(stream), (seen) => (seen ? readVisible(stream, readOptions) : Stream.empty))
          ),
      (from, limit) => {
        const paged = Effect.tap(page(stream, readOptions, Math.max(1, from), Math.max(1, limit)), () => {
          add(counters.effectPages)
        })
        return scope === undefined
          ? paged
          : Effect.flatMap(visible(stream), (seen) => (seen ? paged : Effect.succeed([])))
      }
    )

  const readAll: EventLog.EventLog.Service["readAll"] = (readOptions = {}) =>
    Stream.paginateChunkEffect(
      { after: readOptions.after ?? 0, remaining: readOptions.limit ?? Number.POSITIVE_INFINITY },
      ({ after, remaining }) =>
        Effect.gen(function* () {
          const size = Math.min(options.pageSize, remaining)
          if (size <= 0) return [Chunk.empty<EventLog.Envelope>(), Option.none()] as const
          const rows = yield* backend.readGlobal("read all", (db, bound) =>
            globalEvents(db, { after, bound, owner: scope, limit: size }).execute()
          )
          const envelopes = yield* envelopesOf(rows)
          const last = rows[rows.length - 1]
          return [
            Chunk.unsafeFromArray(envelopes),
            rows.length === size && last !== undefined && remaining - size > 0
              ? Option.some({ after: last.global_position, remaining: remaining - size })
              : Option.none()
          ] as const
        })
    )

  const version: EventLog.EventLog.Service["version"] = (stream) =>
    backend
      .query("version", (db) => streamRow(db, stream, scope).executeTakeFirst())
      .pipe(Effect.map((row) => row?.version ?? 0))

  const streams: EventLog.EventLog.Service["streams"] = () =>
    backend
      .query("list streams", (db) => streamListing(db, scope, "created").execute())
      .pipe(
        Effect.map((rows) =>
          rows.map((row) => ({
            stream: row.stream_id,
            version: row.version,
            createdAt: row.created_at,
            updatedAt: row.updated_at
          }))
        )
      )

  return { append, read, readAll, version, streams }
}
