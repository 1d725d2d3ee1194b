import { EventCodec, EventHash, EventLog, Validation } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { sql } from "kysely"
import * as Erasure from "../Erasure.js"
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
  /**
   * The owner (tenant) this store acts for: appends record it on new streams and refuse other owners'
   * streams; listings, reads, snapshots and recall see only this owner's streams. Undefined: every stream.
   */
  readonly owner?: string | undefined
}

/** What one durable store provides. */
export interface Store {
  readonly log: EventLog.EventLog.Service
  readonly snapshots: SnapshotStore.SnapshotStore.Service
  readonly recall: RecallIndex.RecallIndex.Service
  readonly erasure: Erasure.Erasure.Service
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
  const { redactor, owner: scope } = options
  // `stream` is visible to this store: always unscoped; scoped, only when its owner row names the scope.
  const visible = (stream: string): Effect.Effect<boolean, EventLog.StoreError> =>
    scope === undefined
      ? Effect.succeed(true)
      : backend.query("read owner", (db) =>
          db
            .selectFrom("stream_owners")
            .select("owner")
            .where("stream_id", "=", stream)
            .where("owner", "=", scope)
            .executeTakeFirst()
            .then((row) => row !== undefined)
        )
  /** A scoped store asked about another owner: answers as if that owner had nothing. */
  const foreignOwner = (owner: string) => scope !== undefined && owner !== scope

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
        ...(options.hmacKey === undefined ? {} : { key: options.hmacKey }),
        owner: scope
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

  const readVisible: EventLog.EventLog.Service["read"] = (stream, readOptions = {}) =>
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

  // A scoped store reads another owner's stream as an empty one (checked once, before the first page).
  const read: EventLog.EventLog.Service["read"] = (stream, readOptions) =>
    scope === undefined
      ? readVisible(stream, readOptions)
      : Stream.unwrap(Effect.map(visible(stream), (seen) => (seen ? readVisible(stream, readOptions) : Stream.empty)))

  const readAll: EventLog.EventLog.Service["readAll"] = (readOptions = {}) =>
    Stream.paginateChunkEffect(
      { after: readOptions.after ?? 0, remaining: readOptions.limit ?? Number.POSITIVE_INFINITY },
      ({ after, remaining }) =>
        Effect.gen(function* () {
          const size = Math.min(options.pageSize, remaining)
          if (size <= 0) return [Chunk.empty<EventLog.Envelope>(), Option.none()] as const
          const rows = yield* backend.query("read all", (db) => {
            const base = db.selectFrom("events").select(eventColumns).where("global_position", ">", after)
            return (
              scope === undefined
                ? base
                : base.where(
                    "stream_id",
                    "in",
                    db.selectFrom("stream_owners").select("stream_id").where("owner", "=", scope)
                  )
            )
              .orderBy("global_position")
              .limit(size)
              .execute()
          })
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
        (scope === undefined
          ? db.selectFrom("streams").select("streams.version")
          : db
              .selectFrom("streams")
              .innerJoin("stream_owners", "stream_owners.stream_id", "streams.stream_id")
              .select("streams.version")
              .where("stream_owners.owner", "=", scope)
        )
          .where("streams.stream_id", "=", stream)
          .executeTakeFirst()
      )
      .pipe(Effect.map((row) => row?.version ?? 0))

  const streams: EventLog.EventLog.Service["streams"] = () =>
    backend
      .query("list streams", (db) => {
        const base = db
          .selectFrom("streams")
          .select(["streams.stream_id", "streams.version", "streams.created_at", "streams.updated_at"])
          .where("streams.version", ">", 0)
        return (
          scope === undefined
            ? base
            : base.where(
                "streams.stream_id",
                "in",
                db
                  .selectFrom("stream_owners")
                  .select("stream_owners.stream_id")
                  .where("stream_owners.owner", "=", scope)
              )
        )
          .orderBy("streams.created_at")
          .orderBy("streams.stream_id")
          .execute()
      })
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
  const latestSnapshot = (stream: string, projection: string) =>
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
      )

  const saveSnapshot: SnapshotStore.SnapshotStore.Service["save"] = (snapshot) =>
    Effect.flatMap(Effect.all([Clock.currentTimeMillis, anchorOf(snapshot)]), ([now, anchor]) => {
      const stateHash = EventHash.seal({ ...snapshot, anchor }, options.hmacKey)
      return backend.query("save snapshot", (db) =>
        db
          .insertInto("snapshots")
          .columns([
            "stream_id",
            "projection",
            "projection_version",
            "stream_version",
            "state",
            "state_hash",
            "created_at"
          ])
          // Only while the stream holds that version: a window saved after its stream was erased (by
          // another process, between this process's append and its save) is not written back.
          .expression((eb) =>
            eb
              .selectFrom("streams")
              .select([
                sql<string>`cast(${snapshot.stream} as text)`.as("stream_id"),
                sql<string>`cast(${snapshot.projection} as text)`.as("projection"),
                sql<number>`cast(${snapshot.projectionVersion} as integer)`.as("projection_version"),
                sql<number>`cast(${snapshot.version} as bigint)`.as("stream_version"),
                sql<string>`cast(${snapshot.state} as text)`.as("state"),
                sql<string>`cast(${stateHash} as text)`.as("state_hash"),
                sql<number>`cast(${now} as bigint)`.as("created_at")
              ])
              .where("streams.stream_id", "=", snapshot.stream)
              .where("streams.version", ">=", snapshot.version)
          )
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

  const snapshots: SnapshotStore.SnapshotStore.Service = {
    latest: (stream, projection) =>
      Effect.flatMap(visible(stream), (seen) =>
        seen ? latestSnapshot(stream, projection) : Effect.succeed(Option.none())
      ),
    save: (snapshot) =>
      Effect.flatMap(visible(snapshot.stream), (seen) => (seen ? saveSnapshot(snapshot) : Effect.void))
  }

  const filterOf = (request: RecallIndex.SearchRequest): SearchFilter => {
    const kinds = request.kinds ?? RecallIndex.recallableKinds
    switch (request.scope._tag) {
      case "Stream":
        return {
          source: "message",
          stream: request.scope.stream,
          kinds,
          ...(scope === undefined ? {} : { owner: scope })
        }
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
      Effect.gen(function* () {
        if (foreignOwner(owner)) {
          return yield* new EventLog.StoreError({
            operation: "set owner",
            detail: `this store acts for owner "${scope}"; it cannot give stream "${stream}" to "${owner}"`
          })
        }
        // Set once: a different owner afterwards is refused, never a silent change. A scoped store may
        // claim a stream without events only (as its appends do).
        const current = yield* backend.query("set owner", async (db) => {
          await db
            .insertInto("stream_owners")
            .columns(["stream_id", "owner"])
            .expression(() => {
              const row = db.selectNoFrom([
                sql<string>`cast(${stream} as text)`.as("stream_id"),
                sql<string>`cast(${owner} as text)`.as("owner")
              ])
              // SQLite needs a WHERE on INSERT … SELECT … ON CONFLICT (the parser is otherwise ambiguous).
              return scope === undefined
                ? row.where(sql<boolean>`1 = 1`)
                : row.where(({ exists, not, selectFrom }) =>
                    not(
                      exists(
                        selectFrom("streams")
                          .select("streams.stream_id")
                          .where("streams.stream_id", "=", stream)
                          .where("streams.version", ">", 0)
                      )
                    )
                  )
            })
            .onConflict((conflict) => conflict.column("stream_id").doNothing())
            .execute()
          const row = await db
            .selectFrom("stream_owners")
            .select("owner")
            .where("stream_id", "=", stream)
            .executeTakeFirst()
          return row?.owner ?? null
        })
        if (current !== owner) {
          return yield* new EventLog.OwnerMismatch({ stream, requested: owner, current })
        }
      }),
    ownerOf: (stream) =>
      backend
        .query("read owner", (db) =>
          db.selectFrom("stream_owners").select("owner").where("stream_id", "=", stream).executeTakeFirst()
        )
        .pipe(Effect.map((row) => Option.filter(Option.fromNullable(row?.owner), (owner) => !foreignOwner(owner)))),
    streamsOf: (owner) =>
      foreignOwner(owner)
        ? Effect.succeed([])
        : projection.catchUp.pipe(
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
      request.scope._tag !== "Stream" && foreignOwner(request.scope.owner)
        ? Effect.succeed([])
        : Effect.zipRight(
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
        if (foreignOwner(owner)) return yield* invalid(`this store acts for owner "${scope}" only`)
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
    factsFor: (factScope, text, limit = 20) =>
      factScope._tag === "Owner" && foreignOwner(factScope.owner)
        ? Effect.succeed([])
        : projection.catchUp.pipe(
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
                  const owned = base.innerJoin("stream_owners", "stream_owners.stream_id", "facts.stream_id")
                  return (
                    factScope._tag === "Owner"
                      ? owned.where("stream_owners.owner", "=", factScope.owner)
                      : scope === undefined
                        ? base.where("facts.stream_id", "=", factScope.stream)
                        : owned.where("facts.stream_id", "=", factScope.stream).where("stream_owners.owner", "=", scope)
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

  const erasure: Erasure.Erasure.Service = {
    erase: (stream, request) =>
      Effect.gen(function* () {
        const invalid = (detail: string) => new Erasure.InvalidErasure({ stream: Validation.excerpt(stream), detail })
        const problem = Validation.streamIdProblem(stream)
        if (problem !== undefined) return yield* invalid(`the stream id ${problem}`)
        if (request.actor.trim() === "") return yield* invalid("the actor is blank (say who erases)")
        if (request.reason.trim() === "") return yield* invalid("the reason is blank (say why)")
        const actor = redactor.redact(request.actor)
        const reason = redactor.redact(request.reason)
        // The recall projection must have indexed the stream's last event before the erasure commits;
        // otherwise a batch it read earlier could write the stream's entries back afterwards. A catch-up
        // is quick, and only appends racing the erasure can make it fall behind again.
        for (let attempt = 0; attempt < 8; attempt++) {
          yield* projection.catchUp
          const now = yield* Clock.currentTimeMillis
          const outcome = yield* backend.transact("erase stream", (tx) =>
            tx.eraseStream(stream, { actor, reason, now, owner: scope })
          )
          switch (outcome._tag) {
            case "Erased":
              appendedBytes.delete(stream)
              return outcome.record
            case "Missing":
              return yield* new Erasure.NothingToErase({ stream })
            case "Behind":
              continue
          }
        }
        return yield* new EventLog.StoreError({
          operation: "erase stream",
          detail: `stream "${stream}": the recall index kept falling behind concurrent appends; nothing was erased`
        })
      }),
    erasures: (stream) =>
      backend
        .query("read erasures", (db) => {
          let query = db.selectFrom("erasures").selectAll()
          if (stream !== undefined) query = query.where("stream_id", "=", stream)
          if (scope !== undefined) query = query.where("owner", "=", scope)
          return query.orderBy("erasure_id").execute()
        })
        .pipe(
          Effect.map((rows) =>
            rows.map(
              (row): Erasure.Record => ({
                stream: row.stream_id,
                owner: row.owner ?? undefined,
                events: row.events,
                lastVersion: row.last_version,
                headHash: row.head_hash,
                erasedAt: row.erased_at,
                actor: row.actor,
                reason: row.reason
              })
            )
          )
        )
  }

  return {
    log: { append, read, readAll, version, streams },
    snapshots,
    recall,
    erasure,
    appendedBytes: (stream) => appendedBytes.get(stream) ?? 0
  }
}
