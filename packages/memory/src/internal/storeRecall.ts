import { EventLog, TokenCounter } from "@ctxlog/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Kysely, sql } from "kysely"
import * as RecallIndex from "../RecallIndex.js"
import type { SearchFilter, SearchRow } from "./backend.js"
import type { Database } from "./schema.js"
import { chunk, mentions } from "./indexing.js"
import { entriesAfter, entriesPage, ownerHasEntries, searchEach, terms } from "./search.js"
import type { StoreShared } from "./storeShared.js"

/** The recall index of a durable store: owners, full-text search, documents and facts. */
export const make = (shared: StoreShared): RecallIndex.RecallIndex.Service => {
  const { backend, options, owner: scope, foreignOwner, projection } = shared
  const { redactor } = options

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

  const hitOf = (row: SearchRow): RecallIndex.SearchHit => ({
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

  /**
   * What a held-check learnt, per `held.growing.from` and stream and kinds: every entry of the scope up to
   * `through` is held (at a held size of `size`), and `unheld` (when set) is the first entry after it that
   * was not.
   */
  interface HeldCheck {
    readonly size: number
    readonly through: number
    readonly unheld: { readonly entryId: number; readonly ref: string } | undefined
  }
  const heldChecks = new WeakMap<object, Map<string, HeldCheck>>()

  /**
   * Whether the caller holds every entry a `Stream` request could find (then it would drop every hit, and
   * the scope need not be searched). Run after the catch-up. Under the same `held.growing.from` (its held
   * ids only grow with its size) only the entries after the last check are read, and a scope found not
   * all held costs no read while its first unheld entry stays unheld.
   */
  const allHeld = async (db: Kysely<Database>, request: RecallIndex.SearchRequest): Promise<boolean> => {
    const held = request.held
    if (held === undefined || request.scope._tag !== "Stream") return false
    const stream = request.scope.stream
    const kinds = request.kinds ?? RecallIndex.recallableKinds
    const growing = held.growing
    const key = `${stream}\u0000${kinds.join("\u0000")}`
    const checks = growing === undefined ? undefined : (heldChecks.get(growing.from) ?? new Map<string, HeldCheck>())
    const known = growing === undefined ? undefined : checks?.get(key)
    const usable = known !== undefined && growing !== undefined && growing.size >= known.size ? known : undefined
    if (usable?.unheld !== undefined && !held.has(usable.unheld.ref)) return false
    let through = usable?.through ?? 0
    let unheld: HeldCheck["unheld"]
    for (;;) {
      const entries = await entriesAfter(db, backend.dialect, stream, kinds, through)
      for (const entry of entries) {
        if (!held.has(entry.ref)) {
          unheld = { entryId: entry.entry_id, ref: entry.ref }
          break
        }
        through = entry.entry_id
      }
      if (unheld !== undefined || entries.length < entriesPage) break
    }
    if (growing !== undefined && checks !== undefined) {
      checks.set(key, { size: growing.size, through, unheld })
      heldChecks.set(growing.from, checks)
    }
    return unheld === undefined
  }

  /** Entries the index has not caught up with yet (`RecallProjection.pending`). */
  type Pending = ReadonlyArray<{ readonly stream: string; readonly ref: string; readonly kind: string }>

  /** Whether a request can be checked at all: a held stream or an owner scope. */
  const checkable = (request: RecallIndex.SearchRequest): boolean =>
    request.scope._tag === "Owner" || (request.scope._tag === "Stream" && request.held !== undefined)

  /**
   * For each request, whether its scope has nothing the caller would keep: every entry held, or an owner
   * scope with no entries. One query call for all of them. With `pending` (the entries a catch-up would
   * add), those count too: a pending entry of the stream must be held, and a pending entry of any other
   * stream may belong to the owner.
   */
  const nothingToFind = (
    requests: ReadonlyArray<RecallIndex.SearchRequest>,
    pending: Pending = []
  ): Effect.Effect<ReadonlyArray<boolean>, EventLog.StoreError> =>
    !requests.some(checkable)
      ? Effect.succeed(requests.map(() => false))
      : backend.query("check recall scopes", async (db) => {
          const found: Array<boolean> = []
          for (const request of requests) {
            const kinds = request.kinds ?? RecallIndex.recallableKinds
            const inScope = pending.filter((entry) => kinds.includes(entry.kind))
            switch (request.scope._tag) {
              case "Stream": {
                const stream = request.scope.stream
                const held = request.held
                found.push(
                  held !== undefined &&
                    inScope.every((entry) => entry.stream !== stream || held.has(entry.ref)) &&
                    (await allHeld(db, request))
                )
                break
              }
              case "Owner": {
                const except = request.scope.except
                found.push(
                  inScope.every((entry) => entry.stream === except) &&
                    !(await ownerHasEntries(db, request.scope.owner, except, kinds))
                )
                break
              }
              case "Documents":
                found.push(false)
            }
          }
          return found
        })

  /**
   * Events a search may leave to a later catch-up, when its every scope finds nothing without them: at
   * most this many (a catch-up indexes more in one transaction; reading them again each search would cost
   * more than indexing them).
   */
  const pendingLimit = 64

  // One catch-up, then one `searchEach` per distinct query and limit (one statement on SQLite). A scope
  // of an owner this store does not act for finds nothing, without a query; so does a scope with nothing
  // the caller would keep (every entry held, or an owner with no entries): ADR 0076.
  const searchAll = (
    requests: ReadonlyArray<RecallIndex.SearchRequest>
  ): Effect.Effect<ReadonlyArray<ReadonlyArray<RecallIndex.SearchHit>>, EventLog.StoreError> => {
    const askedRequests = requests.flatMap((request, at) =>
      request.scope._tag !== "Stream" && foreignOwner(request.scope.owner) ? [] : [{ at, request }]
    )
    if (askedRequests.length === 0) return Effect.succeed(requests.map(() => []))
    return Effect.gen(function* () {
      // Every scope checkable: check them against the index and what a catch-up would add to it first.
      // When none has anything the caller would keep, nothing is searched and the index is left to catch
      // up later (before the next search that runs, or in the background after appends).
      if (askedRequests.every(({ request }) => checkable(request))) {
        const pending = yield* projection.pending(pendingLimit)
        if (pending !== undefined) {
          const empty = yield* nothingToFind(
            askedRequests.map(({ request }) => request),
            pending
          )
          if (empty.every((value) => value)) return requests.map((): ReadonlyArray<RecallIndex.SearchHit> => [])
        }
      }
      yield* projection.catchUp
      const empty = yield* nothingToFind(askedRequests.map(({ request }) => request))
      const groups = new Map<string, Array<number>>()
      askedRequests.forEach(({ at, request }, index) => {
        if (empty[index] === true) return
        const key = `${request.limit ?? 20}\u0000${request.query}`
        groups.set(key, [...(groups.get(key) ?? []), at])
      })
      const each: Array<ReadonlyArray<RecallIndex.SearchHit>> = requests.map(() => [])
      for (const members of groups.values()) {
        const first = requests[members[0] ?? 0]
        if (first === undefined) continue
        const rows = yield* searchEach(
          backend,
          terms(first.query),
          members.flatMap((at) => {
            const request = requests[at]
            return request === undefined ? [] : [filterOf(request)]
          }),
          first.limit ?? 20
        )
        members.forEach((at, index) => {
          each[at] = (rows[index] ?? []).map(hitOf)
        })
      }
      return each
    })
  }

  return {
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
    search: (request) => Effect.map(searchAll([request]), (each) => each[0] ?? []),
    searchEach: (requests) => searchAll(requests),
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
                tokens: TokenCounter.estimate(body),
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
}
