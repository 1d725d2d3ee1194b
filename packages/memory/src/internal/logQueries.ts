import type { Kysely } from "kysely"
import type { Database } from "./schema.js"
import { eventColumns } from "./storeShared.js"

// The read queries of the log, written once (ADR 0158): the store's read side (storeLog.ts) and the
// read-only `LogReader` (logReader.ts) both build their statements here, so the events range, the stream
// listing and the stream row are one query each, whatever door reads them. Each function builds a query
// and leaves running it to the caller: the store runs it through its backend (counted, in its
// connection's order), the reader in its one read transaction per call.

/** Which events of one stream: versions `from..to` (inclusive), of some types only, at most `limit` rows. */
export interface EventsRange {
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly types?: ReadonlyArray<string> | undefined
  readonly limit?: number | undefined
}

/** The event rows of one stream in version order (every column of {@link eventColumns}). */
export const streamEvents = (db: Kysely<Database>, stream: string, range: EventsRange) => {
  let query = db
    .selectFrom("events")
    .select(eventColumns)
    .where("stream_id", "=", stream)
    .where("stream_version", ">=", range.from ?? 1)
  if (range.to !== undefined) query = query.where("stream_version", "<=", range.to)
  if (range.types !== undefined && range.types.length > 0) query = query.where("type", "in", range.types)
  query = query.orderBy("stream_version")
  return range.limit === undefined ? query : query.limit(range.limit)
}

/**
 * The event rows of the whole log after position `after`, up to `bound` (what a global read may see,
 * `Backend.readGlobal`), in position order, only `owner`'s streams (undefined: every stream).
 */
export const globalEvents = (
  db: Kysely<Database>,
  range: { readonly after: number; readonly bound: number; readonly owner: string | undefined; readonly limit: number }
) => {
  const base = db
    .selectFrom("events")
    .select(eventColumns)
    .where("global_position", ">", range.after)
    .where("global_position", "<=", range.bound)
  return (
    range.owner === undefined
      ? base
      : base.where(
          "stream_id",
          "in",
          db.selectFrom("stream_owners").select("stream_id").where("owner", "=", range.owner)
        )
  )
    .orderBy("global_position")
    .limit(range.limit)
}

/** How a listing is ordered: by when each stream was created (the store), or by id (the reader). */
export type ListingOrder = "created" | "id"

/**
 * The streams that hold events, or only `owner`'s (the owner table joined: a database without one has
 * no owner to list, which the reader checks before asking).
 */
export const streamListing = (db: Kysely<Database>, owner: string | undefined, order: ListingOrder) => {
  const base = db
    .selectFrom("streams")
    .select(["streams.stream_id", "streams.version", "streams.created_at", "streams.updated_at"])
    .where("streams.version", ">", 0)
  const scoped =
    owner === undefined
      ? base
      : base.where(
          "streams.stream_id",
          "in",
          db.selectFrom("stream_owners").select("stream_owners.stream_id").where("stream_owners.owner", "=", owner)
        )
  return order === "created"
    ? scoped.orderBy("streams.created_at").orderBy("streams.stream_id")
    : scoped.orderBy("streams.stream_id")
}

/** A stream's row (its version and stored head), only when `owner` owns it (undefined: whoever owns it). */
export const streamRow = (db: Kysely<Database>, stream: string, owner: string | undefined) => {
  const base = db.selectFrom("streams").select(["streams.version", "streams.head_hash"])
  return (
    owner === undefined
      ? base
      : base
          .innerJoin("stream_owners", "stream_owners.stream_id", "streams.stream_id")
          .where("stream_owners.owner", "=", owner)
  ).where("streams.stream_id", "=", stream)
}
