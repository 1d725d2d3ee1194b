import type { EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { type Kysely, sql } from "kysely"
import type { Backend, SearchFilter, SearchRow, SearchTerms } from "./backend.js"
import type { Database, Dialect } from "./schema.js"
import { add, counters } from "./workCounters.js"

/** The WHERE conditions of a search, shared by both dialects (`e` = recall_entries, `o` = stream_owners). */
export const filterSql = (filter: SearchFilter) => {
  const conditions = [sql`e.source = ${filter.source}`]
  if (filter.stream !== undefined) conditions.push(sql`e.stream_id = ${filter.stream}`)
  if (filter.excludeStream !== undefined) conditions.push(sql`e.stream_id <> ${filter.excludeStream}`)
  if (filter.owner !== undefined) {
    // Documents carry their owner; a message's owner is its stream's, looked up at query time.
    conditions.push(filter.source === "document" ? sql`e.owner = ${filter.owner}` : sql`o.owner = ${filter.owner}`)
  }
  if (filter.kinds !== undefined) {
    conditions.push(
      filter.kinds.length === 0 ? sql`1 = 0` : sql`e.kind in (${sql.join(filter.kinds.map((kind) => sql`${kind}`))})`
    )
  }
  return sql.join(conditions, sql` and `)
}

/**
 * Search terms of a free-text query: lower-cased words of letters and digits, at least two characters,
 * deduplicated, at most 48. Only such words reach a MATCH or tsquery expression, so no query syntax can
 * be injected through them.
 */
export const terms = (query: string): SearchTerms => {
  const words = (query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []).slice(0, 64)
  return {
    terms: [...new Set(words.filter((word) => word.length >= 2))].slice(0, 48),
    words,
    text: query.slice(0, 2000)
  }
}

/** Tier bonus added to a row's relevance: a phrase match outranks an all-terms match, which outranks the rest. */
export const tierBonus = { phrase: 2000, all: 1000 } as const

/** Entries `entriesAfter` reads at a time. */
export const entriesPage = 512

/**
 * The recall entries of `stream` of these kinds with an entry id above `after`, oldest first, at most
 * `entriesPage` of them: what a held-check reads. Entry ids only grow (SQLite AUTOINCREMENT, a PostgreSQL
 * identity), so the entries after a checked one are the ones indexed since. On SQLite the scan walks the
 * primary key from `after` (the new rows), not the stream's whole index. Inside a `Backend.query`.
 */
export const entriesAfter = async (
  db: Kysely<Database>,
  dialect: Dialect,
  stream: string,
  kinds: ReadonlyArray<string>,
  after: number
): Promise<ReadonlyArray<{ readonly entry_id: number; readonly ref: string }>> => {
  const streamColumn = dialect === "sqlite" ? sql`+e.stream_id` : sql`e.stream_id`
  const kindList = kinds.length === 0 ? sql`1 = 0` : sql`e.kind in (${sql.join(kinds.map((kind) => sql`${kind}`))})`
  const result = await sql<{ entry_id: number; ref: string }>`
    select e.entry_id, e.ref from recall_entries e
    where e.entry_id > ${after} and ${streamColumn} = ${stream} and e.source = 'message' and ${kindList}
    order by e.entry_id
    limit ${entriesPage}`.execute(db)
  add(counters.entriesChecked, result.rows.length)
  return result.rows.map((row) => ({ entry_id: Number(row.entry_id), ref: row.ref }))
}

/**
 * Whether an owner scope has anything to search: a message entry of these kinds in a stream of `owner`
 * (other than `except`). One indexed lookup; a scope without one finds nothing, so it is not searched.
 * Inside a `Backend.query`.
 */
export const ownerHasEntries = async (
  db: Kysely<Database>,
  owner: string,
  except: string | undefined,
  kinds: ReadonlyArray<string>
): Promise<boolean> => {
  if (kinds.length === 0) return false
  const result = await sql<{ found: number }>`
    select 1 as found from stream_owners o
    join recall_entries e on e.stream_id = o.stream_id
    where o.owner = ${owner} ${except === undefined ? sql`` : sql`and o.stream_id <> ${except}`}
      and e.source = 'message' and e.kind in (${sql.join(kinds.map((kind) => sql`${kind}`))})
    limit 1`.execute(db)
  return result.rows.length > 0
}

/**
 * Several scoped searches for one query, at one state of the index: what `Backend.search` returns for
 * each filter, in order. On SQLite one statement answers them all: each tier's MATCH runs once for every
 * filter (BM25 depends on the query and the whole index, not on the filter, so a row scores what it
 * would in a search of its own), each row is kept at its best tier per filter, and the first `limit`
 * rows of each filter are returned, tier first, then BM25, then entry id: the order of the tier-by-tier
 * queries, with their dedupe (a row of a better tier is never repeated by a worse one). On PostgreSQL
 * the filters are searched one after the other.
 */
export const searchEach = (
  backend: Backend,
  query: SearchTerms,
  filters: ReadonlyArray<SearchFilter>,
  limit: number
): Effect.Effect<ReadonlyArray<ReadonlyArray<SearchRow>>, EventLog.StoreError> => {
  if (filters.length === 0) return Effect.succeed([])
  if (backend.dialect !== "sqlite") {
    return Effect.forEach(filters, (filter) => {
      add(counters.searchStatements)
      return backend.search(query, filter, limit)
    })
  }
  const { terms, words } = query
  if (terms.length === 0) return Effect.succeed(filters.map(() => []))
  const quoted = terms.map((term) => `"${term}"`)
  const tiers = [
    ...(words.length > 1 ? [{ match: `"${words.join(" ")}"`, bonus: tierBonus.phrase }] : []),
    ...(terms.length > 1 ? [{ match: quoted.join(" AND "), bonus: tierBonus.all }] : []),
    { match: quoted.join(" OR "), bonus: 0 }
  ]
  const conditions = filters.map((filter) => sql`(${filterSql(filter)})`)
  const flags = conditions.map((condition, at) => sql`${condition} as ${sql.raw(`s${at}`)}`)
  const hits = sql.join(
    tiers.map(
      (tier, at) => sql`
        select ${sql.lit(at)} as tier, ${tier.bonus} as bonus, e.entry_id, bm25(recall_fts) as rank, ${sql.join(flags)}
        from recall_fts
        join recall_entries e on e.entry_id = recall_fts.rowid
        left join stream_owners o on o.stream_id = e.stream_id
        where recall_fts match ${tier.match} and (${sql.join(conditions, sql` or `)})`
    ),
    sql` union all `
  )
  // Per filter: each entry at its best tier (the one aggregate is min(tier), so SQLite takes bonus and rank
  // from that row), the first `limit` by tier, BM25, entry id.
  const tops = sql.join(
    filters.map(
      (_, at) => sql`
        select * from (
          select ${sql.lit(at)} as scope, entry_id, min(tier) as tier, bonus, rank
          from hits where ${sql.raw(`s${at}`)}
          group by entry_id
          order by tier, rank, entry_id
          limit ${limit}
        )`
    ),
    sql` union all `
  )
  return backend
    .query("search", async (db) => {
      add(counters.searchStatements)
      const result = await sql<SearchRow & { scope: number }>`
        with hits as materialized (${hits}),
        top as (${tops})
        select t.scope, e.source, e.stream_id, e.ref, e.document_id, e.kind, e.role, rt.text, e.tokens,
               e.global_position, t.bonus - t.rank as score
        from top t
        join recall_entries e on e.entry_id = t.entry_id
        join recall_text rt on rt.entry_id = e.entry_id
        order by t.scope, t.tier, t.rank, t.entry_id`.execute(db)
      return result.rows
    })
    .pipe(
      Effect.map((rows) => {
        const each: Array<Array<SearchRow>> = filters.map(() => [])
        // A hit's text is what the index reads, through the view (a message's from its event, ADR 0072).
        for (const { scope, ...row } of rows) each[scope]?.push(row)
        return each
      })
    )
}
