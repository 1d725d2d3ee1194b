import { EventLog, type Message } from "@ctxlog/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import { sql } from "kysely"
import * as FileStore from "../FileStore.js"
import * as Sealing from "../Sealing.js"
import type * as Signing from "../Signing.js"
import * as SubjectErasure from "../SubjectErasure.js"
import * as SubjectKeys from "../SubjectKeys.js"
import * as Rederive from "./rederive.js"
import type { StoreShared } from "./storeShared.js"

type Artifact = SubjectErasure.Artifact

/**
 * Steps of the erasure left out (a fault a test injects to show its check bites: without removing the
 * recall index's rows, the plaintext they hold stays on disk). Empty in every other use.
 */
export const skippedSteps: FiberRef.FiberRef<ReadonlySet<"recall index">> = FiberRef.unsafeMake<
  ReadonlySet<"recall index">
>(new Set())

// A message event is named by the kind of its message (a summary or briefing appended as a message).
const messageKind = (data: string): Artifact["kind"] => {
  try {
    const value: unknown = JSON.parse(data)
    const message: unknown = typeof value === "object" && value !== null ? Reflect.get(value, "message") : undefined
    const kind: unknown = typeof message === "object" && message !== null ? Reflect.get(message, "kind") : undefined
    if (kind === "summary" || kind === "seam" || kind === "briefing") return kind
    return kind === "chat" || kind === undefined ? "message" : "injected"
  } catch {
    return "message"
  }
}

const kindOf = (type: string, data: string): Artifact["kind"] => {
  switch (type) {
    case "MessageAppended":
      return messageKind(data)
    case "Compacted":
    case "CycleAdvanced":
      return "summary"
    case "SeamProduced":
    case "SeamsRecompacted":
      return "seam"
    case "BriefingProduced":
      return "briefing"
    default:
      return "injected"
  }
}

interface Hit {
  readonly position: number
  readonly stream: string
  readonly version: number
  readonly eventId: string
  readonly kind: Artifact["kind"]
  readonly headers: ReadonlyArray<Sealing.Header>
}

const storeError = (operation: string) => (error: { readonly message: string }) =>
  new EventLog.StoreError({ operation, detail: error.message })

/** Per-subject erasure over a store's backend, the sealing keys and the store's signer (ADR 0112, 0113). */
export const make = (
  shared: StoreShared,
  keys: SubjectKeys.SubjectKeys.Service | undefined,
  signer: Signing.Signer | undefined,
  log: EventLog.EventLog.Service
): SubjectErasure.SubjectErasure.Service => {
  const { backend, projection } = shared

  // Every event whose seals name the subject, in log order, read a page at a time.
  const findHits = (subject: string) =>
    Effect.gen(function* () {
      const hits: Array<Hit> = []
      let after = 0
      for (;;) {
        const rows = yield* backend.query("find sealed events", (db) =>
          db
            .selectFrom("events")
            .select(["global_position", "stream_id", "stream_version", "event_id", "type", "data"])
            .where("global_position", ">", after)
            .where("data", "like", `%${Sealing.prefix}%`)
            .orderBy("global_position")
            .limit(500)
            .execute()
        )
        for (const row of rows) {
          const headers = Sealing.headersIn(row.data).filter((header) => header.k.some(([name]) => name === subject))
          if (headers.length === 0) continue
          hits.push({
            position: row.global_position,
            stream: row.stream_id,
            version: row.stream_version,
            eventId: row.event_id,
            kind: kindOf(row.type, row.data),
            headers
          })
        }
        const last = rows.at(-1)
        if (last === undefined || rows.length < 500) return hits
        after = last.global_position
      }
    })

  const headsOf = (streams: ReadonlyArray<string>) =>
    streams.length === 0
      ? Effect.succeed<ReadonlyArray<SubjectErasure.Head>>([])
      : Effect.map(
          backend.query("read heads", (db) =>
            db
              .selectFrom("streams")
              .select(["stream_id", "version", "head_hash"])
              .where("stream_id", "in", streams)
              .orderBy("stream_id")
              .execute()
          ),
          (rows) => rows.map((row) => ({ stream: row.stream_id, version: row.version, hash: row.head_hash }))
        )

  // The tool outputs a hit's messages referenced (its parts opened while the keys still exist).
  const referencedFiles = (hit: Hit, data: string, service: SubjectKeys.SubjectKeys.Service) =>
    Effect.gen(function* () {
      const found = new Set<string>()
      let at = data.indexOf(Sealing.prefix)
      while (at >= 0) {
        const end = data.indexOf('"', at)
        const parsed = Sealing.parseSeal(data.slice(at, end < 0 ? undefined : end))
        at = data.indexOf(Sealing.prefix, at + Sealing.prefix.length)
        if (parsed === undefined || parsed.header.t !== "parts") continue
        const dataKeys: Array<SubjectKeys.DataKey> = []
        for (const [subject, keyId] of parsed.header.k) {
          const key = yield* Effect.mapError(service.find(subject, keyId), storeError("erase subject"))
          if (Option.isSome(key)) dataKeys.push(key.value)
        }
        if (dataKeys.length !== parsed.header.k.length) continue
        const opened = yield* Effect.try({
          try: () => JSON.parse(Sealing.openSeal(parsed, dataKeys)) as ReadonlyArray<Message.Part>,
          catch: () =>
            new EventLog.StoreError({
              operation: "erase subject",
              detail: `stream "${hit.stream}" version ${hit.version}: a seal does not open`
            })
        })
        for (const handle of FileStore.referencedIn([{ parts: opened }])) found.add(handle.sha256)
      }
      return found
    })

  return {
    erase: (subject, request) =>
      Effect.gen(function* () {
        const invalid = (detail: string) => new SubjectErasure.InvalidSubjectErasure({ subject, detail })
        const problem = SubjectKeys.subjectProblem(subject)
        if (problem !== undefined) return yield* invalid(problem)
        if (request.actor.trim() === "") return yield* invalid("the actor is blank (say who erases)")
        if (request.reason.trim() === "") return yield* invalid("the reason is blank (say why)")
        if (keys === undefined)
          return yield* invalid("the store was opened without `sealing`: nothing is sealed per subject")
        if (signer === undefined) return yield* invalid("the store has no `signer`: an erasure receipt must be signed")
        if (shared.owner !== undefined)
          return yield* invalid("a subject erasure reaches every stream: open the store without an owner")
        // The recall index must hold every entry of the sealed events before they are found, so none is
        // written back after the erasure removed them.
        yield* projection.catchUp
        const hits = yield* findHits(subject)
        const streams = [...new Set(hits.map((hit) => hit.stream))].sort()
        const headsBefore = yield* headsOf(streams)
        const artifacts: Array<Artifact> = hits.map((hit) => {
          const sources = hit.headers.flatMap((header) => header.d ?? [])
          return {
            kind: hit.kind,
            action: "unreadable",
            stream: hit.stream,
            ref: hit.eventId,
            version: hit.version,
            ...(sources.length === 0 ? {} : { derivedFrom: sources.map(([stream, eventId]) => ({ stream, eventId })) })
          }
        })
        const positions = hits.map((hit) => hit.position)
        const eventIds = hits.map((hit) => hit.eventId)
        // Files: the stored outputs the sealed messages referenced, found while the keys still open them.
        const files: Array<{ readonly stream: string; readonly sha256: string }> = []
        for (const hit of hits) {
          const row = yield* backend.query("read sealed event", (db) =>
            db.selectFrom("events").select("data").where("global_position", "=", hit.position).executeTakeFirstOrThrow()
          )
          for (const sha256 of yield* referencedFiles(hit, row.data, keys)) files.push({ stream: hit.stream, sha256 })
        }
        // Rows derived from the hits, outside the chain: listed, then removed (in chunks of 500 ids). The
        // recall index holds the plaintext of sealed messages (ADR 0139): its rows go before the keys.
        const skipped = yield* FiberRef.get(skippedSteps)
        for (let from = 0; !skipped.has("recall index") && from < positions.length; from += 500) {
          const chunk = positions.slice(from, from + 500)
          const entries = yield* backend.query("read recall entries", (db) =>
            db
              .selectFrom("recall_entries")
              .select(["entry_id", "stream_id", "ref", "global_position"])
              .where("source", "=", "message")
              .where("global_position", "in", chunk)
              .orderBy("entry_id")
              .execute()
          )
          const byPosition = new Map(hits.map((hit) => [hit.position, hit]))
          for (const entry of entries) {
            const hit = entry.global_position === null ? undefined : byPosition.get(entry.global_position)
            artifacts.push({
              kind: "recall entry",
              action: "removed",
              stream: entry.stream_id ?? "",
              ref: hit?.eventId ?? entry.ref
            })
          }
          const ids = entries.map((entry) => entry.entry_id)
          if (ids.length > 0) {
            if (backend.dialect === "sqlite") {
              yield* backend.query("remove recall entries", (db) =>
                db.deleteFrom("recall_fts").where("rowid", "in", ids).execute()
              )
            }
            yield* backend.query("remove recall entries", (db) =>
              db.deleteFrom("recall_entries").where("entry_id", "in", ids).execute()
            )
          }
        }
        for (let from = 0; from < eventIds.length; from += 500) {
          const chunk = eventIds.slice(from, from + 500)
          const facts = yield* backend.query("read facts", (db) =>
            db.selectFrom("facts").select(["fact_id", "stream_id", "event_id"]).where("event_id", "in", chunk).execute()
          )
          for (const fact of facts)
            artifacts.push({ kind: "graph fact", action: "removed", stream: fact.stream_id, ref: fact.event_id })
          if (facts.length > 0) {
            yield* backend.query("remove facts", (db) =>
              db
                .deleteFrom("facts")
                .where(
                  "fact_id",
                  "in",
                  facts.map((fact) => fact.fact_id)
                )
                .execute()
            )
          }
        }
        for (const stream of streams) {
          const snapshots = yield* backend.query("remove snapshots", (db) =>
            db.deleteFrom("snapshots").where("stream_id", "=", stream).returning("projection").execute()
          )
          for (const snapshot of snapshots) {
            artifacts.push({ kind: "snapshot", action: "removed", stream, ref: snapshot.projection })
          }
        }
        for (const file of files) {
          const removed = yield* backend.query("remove files", (db) =>
            db
              .deleteFrom("files")
              .where("stream_id", "=", file.stream)
              .where("sha256", "=", file.sha256)
              .executeTakeFirst()
          )
          if (Number(removed.numDeletedRows) > 0) {
            artifacts.push({ kind: "file", action: "removed", stream: file.stream, ref: file.sha256 })
          }
        }
        // The keys last: until here a rerun after a crash finds and opens everything again.
        const keysDestroyed = yield* Effect.mapError(keys.destroy(subject), storeError("destroy subject keys"))
        // Re-derive each summary, seam or briefing made unreadable, appended after it in its stream: the
        // caller's `rederive` when given, else the store's own from its remaining lineage (ADR 0139).
        const rederive = request.rederive
        for (let index = 0; index < artifacts.length; index++) {
          const artifact = artifacts[index] as Artifact
          if (artifact.action !== "unreadable" || artifact.kind === "message") continue
          const failed = (cause: unknown) =>
            new EventLog.StoreError({
              operation: "re-derive after erasure",
              detail: `${artifact.kind} ${artifact.ref} of stream "${artifact.stream}": ${cause instanceof Error ? cause.message : String(cause)} (the subject is erased; nothing was appended for it)`
            })
          const made =
            rederive === undefined
              ? yield* Effect.mapError(Rederive.fromLineage(log, artifact), failed)
              : { events: yield* Effect.mapError(rederive(artifact), failed), derivedFrom: [] }
          if (made === undefined || made.events.length === 0) continue
          const version = yield* log.version(artifact.stream)
          const append = log.append(artifact.stream, made.events, version)
          yield* Effect.mapError(
            made.derivedFrom.length === 0 ? append : Sealing.derivedFrom(made.derivedFrom, append),
            storeError("re-derive after erasure")
          )
          artifacts[index] = { ...artifact, action: "re-derived", replacedBy: made.events.map((event) => event.id) }
        }
        const headsAfter = yield* headsOf(streams)
        const erasedAt = yield* Clock.currentTimeMillis
        const receipt = SubjectErasure.sign(
          {
            format: "ctxlog subject erasure receipt v1",
            subject,
            actor: request.actor,
            reason: request.reason,
            erasedAt,
            keysDestroyed,
            artifacts,
            headsBefore,
            headsAfter
          },
          signer
        )
        yield* backend.query("record subject erasure", (db) =>
          db
            .insertInto("subject_erasures")
            .values({ subject, erased_at: erasedAt, receipt: JSON.stringify(receipt) })
            .execute()
        )
        yield* compact(shared)
        return receipt
      }),
    receipts: (subject) =>
      Effect.map(
        backend.query("read subject erasures", (db) => {
          let query = db.selectFrom("subject_erasures").select("receipt")
          if (subject !== undefined) query = query.where("subject", "=", subject)
          return query.orderBy("erasure_id").execute()
        }),
        (rows) => rows.map((row) => JSON.parse(row.receipt) as SubjectErasure.Receipt)
      )
  }
}

/**
 * Leave no freed page holding what was removed. SQLite: checkpoint the WAL into the database and truncate
 * it, then VACUUM (rewrites the file without free pages) and truncate the WAL VACUUM wrote. PostgreSQL:
 * VACUUM FULL of the tables whose rows were deleted (rewritten into new files, the old ones unlinked) and
 * a CHECKPOINT; the WAL segments written before it keep the deleted rows until the server recycles them
 * (and any backup or replica keeps what it copied): ADR 0112.
 */
const compact = (shared: StoreShared): Effect.Effect<void, EventLog.StoreError> => {
  const { backend } = shared
  if (backend.dialect === "sqlite") {
    return Effect.asVoid(
      backend.query("compact after erasure", async (db) => {
        // The full-text index keeps a deleted row's terms in its segments until they are merged.
        await sql`insert into recall_fts (recall_fts) values ('optimize')`.execute(db)
        await sql`pragma wal_checkpoint(truncate)`.execute(db)
        await sql`vacuum`.execute(db)
        await sql`pragma wal_checkpoint(truncate)`.execute(db)
      })
    )
  }
  return Effect.gen(function* () {
    yield* backend.query("compact after erasure", (db) =>
      sql`vacuum full subject_keys, files, recall_entries, facts, snapshots`.execute(db)
    )
    yield* backend
      .query("checkpoint after erasure", (db) => sql`checkpoint`.execute(db))
      .pipe(Effect.catchAll((error) => Effect.logWarning(`no CHECKPOINT after erasure: ${error.message}`)))
  })
}
