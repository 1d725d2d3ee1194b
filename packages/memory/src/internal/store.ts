import { EventCodec, EventHash, EventLog, Validation } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Redaction from "../Redaction.js"
import * as RecallIndex from "../RecallIndex.js"
import type * as SnapshotStore from "../SnapshotStore.js"
import type { Backend, SearchFilter } from "./backend.js"
import { chunk, mentions } from "./indexing.js"
import * as RecallProjection from "./recallProjection.js"
import { terms } from "./search.js"

/** Options shared by both dialects. */
export interface StoreOptions {
  readonly redactor: Redaction.Redactor
  /** Rows read per query when streaming events. */
  readonly pageSize: number
  /** Largest document chunk, in characters. */
  readonly chunkChars: number
  /** Events the recall projection indexes per transaction. */
  readonly recallBatch: number
  /** Where background catch-ups of the recall index run (closed with the store). */
  readonly scope: Scope.Scope
  /** The HMAC key events are chained and snapshots sealed with (absent: unkeyed). */
  readonly hmacKey?: EventHash.ChainKey
}

/** What one durable store provides. */
export interface Store {
  readonly log: EventLog.EventLog.Service
  readonly snapshots: SnapshotStore.SnapshotStore.Service
  readonly recall: RecallIndex.RecallIndex.Service
  /** Event-data bytes this process appended to a stream (for the snapshot policy). */
  readonly appendedBytes: (stream: string) => number
}

interface EventRow {
  readonly global_position: number
  readonly event_id: string
  readonly stream_id: string
  readonly stream_version: number
  readonly type: string
  readonly schema_version: number
  readonly data: string
  readonly metadata: unknown
  readonly recorded_at: number
  readonly hash: string
}

const metadataOf = (raw: unknown): EventLog.EventMetadata => {
  let value: unknown = raw
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw)
    } catch {
      return {}
    }
  }
  if (typeof value !== "object" || value === null) return {}
  const field = (name: string): unknown => Reflect.get(value, name)
  const causationId = field("causationId")
  const correlationId = field("correlationId")
  const turn = field("turn")
  const actor = field("actor")
  return {
    ...(typeof causationId === "string" ? { causationId } : {}),
    ...(typeof correlationId === "string" ? { correlationId } : {}),
    ...(typeof turn === "number" ? { turn } : {}),
    ...(typeof actor === "string" ? { actor } : {})
  }
}

const envelopeOf = (row: EventRow) =>
  Effect.map(
    EventCodec.decode(
      { type: row.type, schemaVersion: row.schema_version, data: row.data },
      { stream: row.stream_id, version: row.stream_version }
    ),
    (event): EventLog.Envelope => ({
      stream: row.stream_id,
      version: row.stream_version,
      position: row.global_position,
      eventId: row.event_id,
      type: event._tag,
      schemaVersion: row.schema_version,
      event,
      data: row.data,
      metadata: metadataOf(row.metadata),
      recordedAt: row.recorded_at,
      hash: row.hash
    })
  )

const eventColumns = [
  "global_position",
  "event_id",
  "stream_id",
  "stream_version",
  "type",
  "schema_version",
  "data",
  "metadata",
  "recorded_at",
  "hash"
] as const

/** The services of a durable store over a dialect backend. */
export const make = (backend: Backend, options: StoreOptions): Store => {
  const { redactor } = options

  const projection = RecallProjection.make(backend, { batchSize: options.recallBatch })
  let catchingUp = false
  // Event-data bytes this process appended per stream (the snapshot policy's size trigger), bounded.
  const appendedBytes = new Map<string, number>()
  const countBytes = (stream: string, stored: ReadonlyArray<EventCodec.StoredEvent>) => {
    let total = appendedBytes.get(stream) ?? 0
    for (const record of stored) total += record.data.length
    appendedBytes.delete(stream)
    appendedBytes.set(stream, total)
    if (appendedBytes.size > 10_000) {
      const oldest = appendedBytes.keys().next()
      if (oldest.done !== true) appendedBytes.delete(oldest.value)
    }
  }

  const append: EventLog.EventLog.Service["append"] = (stream, events, expected, metadata = {}) =>
    Effect.gen(function* () {
      yield* Validation.checkAppend(stream, events, metadata)
      // Redact before encoding: the stored bytes, the hash chain and the index only see redacted text.
      // Each event is encoded once; those bytes are hashed and stored, and the recall projection reads
      // them back later (nothing is decoded on this path).
      const redacted = events.map((event) => Redaction.redactValue(redactor, event))
      const stored = yield* EventCodec.encodeAll(redacted)
      const now = yield* Clock.currentTimeMillis
      const result = yield* backend.append({
        stream,
        expected,
        ids: events.map((event) => event.id),
        stored,
        metadata: JSON.stringify(Redaction.redactValue(redactor, { ...metadata, recordedAt: now })),
        now,
        ...(options.hmacKey === undefined ? {} : { key: options.hmacKey })
      })
      if (result.written > 0) countBytes(stream, stored)
      // The recall index catches up after commit: before each query, and once a whole batch waits, in a
      // background fiber of the layer's scope (it runs while the caller waits on something else, e.g. the
      // model), so the backlog a query may find stays bounded and the append does not wait for it.
      if (
        !catchingUp &&
        result.lastPosition !== undefined &&
        result.lastPosition - projection.known() >= options.recallBatch
      ) {
        catchingUp = true
        yield* Effect.forkIn(
          projection.catchUp.pipe(
            Effect.catchAll((error) => Effect.logWarning(`recall index not caught up after append: ${error.message}`)),
            Effect.ensuring(
              Effect.sync(() => {
                catchingUp = false
              })
            )
          ),
          options.scope
        )
      }
      // A caller that keeps a window (ContextService) folds what the log holds: when a rule redacted
      // something (rare), the events as stored, decoded from their bytes.
      if (result.written === 0 || redacted.every((event, index) => event === events[index])) return result
      const decoded = yield* Effect.forEach(stored, (record) => EventCodec.decode(record, { stream })).pipe(
        Effect.mapError(
          (error) =>
            new EventLog.StoreError({
              operation: "append",
              detail: `a redacted event no longer decodes: ${error.message}`
            })
        )
      )
      return { ...result, stored: decoded }
    })

  const read: EventLog.EventLog.Service["read"] = (stream, readOptions = {}) =>
    Stream.paginateChunkEffect(Math.max(1, readOptions.from ?? 1), (from) =>
      Effect.gen(function* () {
        const rows = yield* backend.query("read", (db) => {
          let query = db
            .selectFrom("events")
            .select(eventColumns)
            .where("stream_id", "=", stream)
            .where("stream_version", ">=", from)
          if (readOptions.to !== undefined) query = query.where("stream_version", "<=", readOptions.to)
          return query.orderBy("stream_version").limit(options.pageSize).execute()
        })
        const envelopes = yield* Effect.forEach(rows, envelopeOf)
        const last = rows[rows.length - 1]
        return [
          Chunk.unsafeFromArray(envelopes),
          rows.length === options.pageSize && last !== undefined ? Option.some(last.stream_version + 1) : Option.none()
        ] as const
      })
    )

  const readAll: EventLog.EventLog.Service["readAll"] = (readOptions = {}) =>
    Stream.paginateChunkEffect(
      { after: readOptions.after ?? 0, remaining: readOptions.limit ?? Number.POSITIVE_INFINITY },
      ({ after, remaining }) =>
        Effect.gen(function* () {
          const size = Math.min(options.pageSize, remaining)
          if (size <= 0) return [Chunk.empty<EventLog.Envelope>(), Option.none()] as const
          const rows = yield* backend.query("read all", (db) =>
            db
              .selectFrom("events")
              .select(eventColumns)
              .where("global_position", ">", after)
              .orderBy("global_position")
              .limit(size)
              .execute()
          )
          const envelopes = yield* Effect.forEach(rows, envelopeOf)
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
      .query("version", (db) =>
        db.selectFrom("streams").select("version").where("stream_id", "=", stream).executeTakeFirst()
      )
      .pipe(Effect.map((row) => row?.version ?? 0))

  const streams: EventLog.EventLog.Service["streams"] = () =>
    backend
      .query("list streams", (db) =>
        db
          .selectFrom("streams")
          .select(["stream_id", "version", "created_at", "updated_at"])
          .where("version", ">", 0)
          .orderBy("created_at")
          .orderBy("stream_id")
          .execute()
      )
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

  // A keyed seal covers the stored hash of the event the snapshot ends at (one indexed read per save;
  // the unkeyed seal is the state's SHA-256 alone, as before, and reads nothing).
  const anchorOf = (snapshot: { readonly stream: string; readonly version: number }) =>
    options.hmacKey === undefined || snapshot.version === 0
      ? Effect.succeed(EventHash.genesis)
      : backend
          .query("read snapshot anchor", (db) =>
            db
              .selectFrom("events")
              .select("hash")
              .where("stream_id", "=", snapshot.stream)
              .where("stream_version", "=", snapshot.version)
              .executeTakeFirst()
          )
          .pipe(
            Effect.flatMap((row) =>
              row === undefined
                ? Effect.fail(
                    new EventLog.StoreError({
                      operation: "save snapshot",
                      detail: `stream "${snapshot.stream}" has no event at version ${snapshot.version}`
                    })
                  )
                : Effect.succeed(row.hash)
            )
          )

  const snapshots: SnapshotStore.SnapshotStore.Service = {
    latest: (stream, projection) =>
      backend
        .query("read snapshot", (db) =>
          db
            .selectFrom("snapshots")
            .selectAll()
            .where("stream_id", "=", stream)
            .where("projection", "=", projection)
            .executeTakeFirst()
        )
        .pipe(
          Effect.map((row) =>
            row === undefined
              ? Option.none()
              : Option.some({
                  stream: row.stream_id,
                  projection: row.projection,
                  projectionVersion: row.projection_version,
                  version: row.stream_version,
                  state: row.state,
                  stateHash: row.state_hash ?? undefined,
                  createdAt: row.created_at
                })
          )
        ),
    save: (snapshot) =>
      Effect.flatMap(Effect.all([Clock.currentTimeMillis, anchorOf(snapshot)]), ([now, anchor]) => {
        const stateHash = EventHash.seal({ ...snapshot, anchor }, options.hmacKey)
        return backend.query("save snapshot", (db) =>
          db
            .insertInto("snapshots")
            .values({
              stream_id: snapshot.stream,
              projection: snapshot.projection,
              projection_version: snapshot.projectionVersion,
              stream_version: snapshot.version,
              state: snapshot.state,
              state_hash: stateHash,
              created_at: now
            })
            .onConflict((conflict) =>
              conflict
                .columns(["stream_id", "projection"])
                .doUpdateSet({
                  projection_version: snapshot.projectionVersion,
                  stream_version: snapshot.version,
                  state: snapshot.state,
                  state_hash: stateHash,
                  created_at: now
                })
                // Another process may have saved a newer window of the same projection version: keep it. The
                // same version is replaced (same window; it may repair an edited or corrupted row).
                .where((eb) =>
                  eb.or([
                    eb("snapshots.projection_version", "<>", snapshot.projectionVersion),
                    eb("snapshots.stream_version", "<=", snapshot.version)
                  ])
                )
            )
            .execute()
            .then(() => undefined)
        )
      })
  }

  const filterOf = (request: RecallIndex.SearchRequest): SearchFilter => {
    const kinds = request.kinds ?? RecallIndex.recallableKinds
    switch (request.scope._tag) {
      case "Stream":
        return { source: "message", stream: request.scope.stream, kinds }
      case "Owner":
        return {
          source: "message",
          owner: request.scope.owner,
          kinds,
          ...(request.scope.except === undefined ? {} : { excludeStream: request.scope.except })
        }
      case "Documents":
        return { source: "document", owner: request.scope.owner }
    }
  }

  const recall: RecallIndex.RecallIndex.Service = {
    setOwner: (stream, owner) =>
      backend.query("set owner", (db) =>
        db
          .insertInto("stream_owners")
          .values({ stream_id: stream, owner })
          .onConflict((conflict) => conflict.column("stream_id").doUpdateSet({ owner }))
          .execute()
          .then(() => undefined)
      ),
    ownerOf: (stream) =>
      backend
        .query("read owner", (db) =>
          db.selectFrom("stream_owners").select("owner").where("stream_id", "=", stream).executeTakeFirst()
        )
        .pipe(Effect.map((row) => Option.fromNullable(row?.owner))),
    streamsOf: (owner) =>
      projection.catchUp.pipe(
        Effect.zipRight(
          backend
            .query("list streams of owner", (db) =>
              db
                .selectFrom("streams")
                .innerJoin("stream_owners", "stream_owners.stream_id", "streams.stream_id")
                .select([
                  "streams.stream_id",
                  "streams.version",
                  "streams.created_at",
                  "streams.updated_at",
                  "stream_owners.owner"
                ])
                .where("stream_owners.owner", "=", owner)
                .where("streams.version", ">", 0)
                .orderBy("streams.updated_at", "desc")
                .orderBy("streams.stream_id")
                .execute()
            )
            .pipe(
              Effect.map((rows) =>
                rows.map((row) => ({
                  stream: row.stream_id,
                  version: row.version,
                  createdAt: row.created_at,
                  updatedAt: row.updated_at,
                  owner: row.owner
                }))
              )
            )
        )
      ),
    search: (request) =>
      Effect.zipRight(
        projection.catchUp,
        backend.search(terms(request.query), filterOf(request), request.limit ?? 20)
      ).pipe(
        Effect.map((rows) =>
          rows.map(
            (row): RecallIndex.SearchHit => ({
              source: row.source === "document" ? "document" : "message",
              stream: row.stream_id ?? undefined,
              ref: row.ref,
              documentId: row.document_id ?? undefined,
              kind: row.kind,
              role: row.role,
              text: row.text,
              tokens: row.tokens,
              position: row.global_position ?? undefined,
              score: row.score
            })
          )
        )
      ),
    ingestDocument: (owner, documentId, text) =>
      Effect.gen(function* () {
        const invalid = (detail: string) => new RecallIndex.InvalidDocument({ owner, documentId, detail })
        if (owner.trim() === "") return yield* invalid("the owner is empty")
        if (documentId.trim() === "") return yield* invalid("the document id is empty")
        const chunks = chunk(redactor.redact(text), options.chunkChars)
        if (chunks.length === 0) return yield* invalid("the text is empty")
        const now = yield* Clock.currentTimeMillis
        return yield* backend.transact("ingest document", (tx) =>
          Effect.gen(function* () {
            yield* tx.removeDocument(owner, documentId)
            for (const [index, body] of chunks.entries()) {
              yield* tx.indexEntry({
                source: "document",
                stream_id: null,
                owner,
                ref: String(index),
                document_id: documentId,
                kind: "document_rag",
                role: "system",
                text: body,
                // An estimate: FullTextRecall recounts hits with the TokenCounter in use.
                tokens: Math.ceil(body.length / 4),
                global_position: null,
                created_at: now
              })
            }
            return { chunks: chunks.length }
          })
        )
      }),
    factsFor: (scope, text, limit = 20) =>
      projection.catchUp.pipe(
        Effect.zipRight(
          backend
            .query("read facts", (db) => {
              const base = db
                .selectFrom("facts")
                .select([
                  "facts.stream_id",
                  "facts.event_id",
                  "facts.subject",
                  "facts.predicate",
                  "facts.object",
                  "facts.source_message_id",
                  "facts.global_position"
                ])
              return (
                scope._tag === "Stream"
                  ? base.where("facts.stream_id", "=", scope.stream)
                  : base
                      .innerJoin("stream_owners", "stream_owners.stream_id", "facts.stream_id")
                      .where("stream_owners.owner", "=", scope.owner)
              )
                .orderBy("facts.global_position", "desc")
                .execute()
            })
            .pipe(
              Effect.map((rows) => {
                const seen = new Set<string>()
                const hits: Array<RecallIndex.FactHit> = []
                for (const row of rows) {
                  const key = JSON.stringify([
                    row.subject.toLowerCase(),
                    row.predicate.toLowerCase(),
                    row.object.toLowerCase()
                  ])
                  if (seen.has(key)) continue
                  const count = (mentions(text, row.subject) ? 1 : 0) + (mentions(text, row.object) ? 1 : 0)
                  if (count === 0) continue
                  seen.add(key)
                  hits.push({
                    stream: row.stream_id,
                    subject: row.subject,
                    predicate: row.predicate,
                    object: row.object,
                    sourceMessageId: row.source_message_id ?? undefined,
                    eventId: row.event_id,
                    position: row.global_position,
                    mentions: count
                  })
                }
                // Stable: equal mention counts keep newest-first order.
                return hits.sort((a, b) => b.mentions - a.mentions).slice(0, limit)
              })
            )
        )
      ),
    catchUp: () => projection.catchUp,
    rebuild: () => projection.rebuild
  }

  return {
    log: { append, read, readAll, version, streams },
    snapshots,
    recall,
    appendedBytes: (stream) => appendedBytes.get(stream) ?? 0
  }
}
