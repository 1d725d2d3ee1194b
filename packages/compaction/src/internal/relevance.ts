/** Word-overlap relevance, for the task-aware pruning strategies. No model, deterministic. */

const stopWords = new Set(["the", "and", "for", "with", "that", "this", "from", "into", "are", "was", "not", "but"])

/** The distinct lower-case words of at least three letters or digits in `text`. */
export const termsOf = (text: string): ReadonlySet<string> =>
  new Set((text.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? []).filter((term) => !stopWords.has(term)))

/** Share of `query`'s terms found in `terms` (0 when the query has none). */
export const relevance = (terms: ReadonlySet<string>, query: ReadonlySet<string>): number => {
  if (query.size === 0) return 0
  let hits = 0
  for (const term of query) if (terms.has(term)) hits += 1
  return hits / query.size
}

/** Jaccard similarity of two term sets (0 when both are empty). */
export const similarity = (a: ReadonlySet<string>, b: ReadonlySet<string>): number => {
  if (a.size === 0 && b.size === 0) return 0
  let shared = 0
  for (const term of a) if (b.has(term)) shared += 1
  return shared / (a.size + b.size - shared)
}
