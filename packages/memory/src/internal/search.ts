import { sql } from "kysely"
import type { SearchFilter, SearchTerms } from "./backend.js"

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
