/**
 * Search in content: the events whose messages (text, tool calls and results, reasoning), goal,
 * subgoals or signals hold a string, case-insensitively, with a snippet around the first hit. The
 * viewer's search box filters its timeline with it.
 *
 * @since 0.4.0
 */
import { Message } from "@ctxlog/core"
import type * as Queries from "./Queries.js"

/** An event whose content holds the query. @since 0.4.0 */
export interface Hit {
  readonly version: number
  readonly messageId: string | null
  readonly snippet: string
}

/** The hits (the first `limit`) and how many events matched in all. @since 0.4.0 */
export interface Result {
  readonly query: string
  readonly total: number
  readonly hits: ReadonlyArray<Hit>
}

const isMessage = (value: object): value is Message.Message =>
  "role" in value && "parts" in value && Array.isArray(value.parts) && "id" in value && typeof value.id === "string"

/** The searchable texts of an event: each message's token text, and the free text of task state and signals. */
const textsOf = (value: unknown, out: Array<{ readonly messageId: string | null; readonly text: string }>): void => {
  if (Array.isArray(value)) {
    for (const item of value) textsOf(item, out)
    return
  }
  if (typeof value !== "object" || value === null) return
  if (isMessage(value)) {
    out.push({ messageId: value.id, text: Message.tokenTextOf(value) })
    return
  }
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === "string" && (key === "goal" || key === "text" || key === "content")) {
      out.push({ messageId: null, text: field })
    } else if (key === "subgoals" && Array.isArray(field)) {
      for (const subgoal of field) if (typeof subgoal === "string") out.push({ messageId: null, text: subgoal })
    } else if (typeof field === "object") {
      textsOf(field, out)
    }
  }
}

const snippetOf = (text: string, at: number, length: number) => {
  const start = Math.max(0, at - 40)
  const end = Math.min(text.length, at + length + 80)
  return `${start > 0 ? "…" : ""}${text.slice(start, end).replace(/\s+/g, " ")}${end < text.length ? "…" : ""}`
}

/** Search the entries' content for `query` (case-insensitive); one hit per event. O(content). @since 0.4.0 */
export const search = (entries: ReadonlyArray<Queries.Entry>, query: string, limit = 500): Result => {
  const needle = query.toLowerCase()
  const hits: Array<Hit> = []
  let total = 0
  if (needle === "") return { query, total, hits }
  for (const entry of entries) {
    const texts: Array<{ readonly messageId: string | null; readonly text: string }> = []
    textsOf(entry.event, texts)
    for (const { messageId, text } of texts) {
      const at = text.toLowerCase().indexOf(needle)
      if (at < 0) continue
      total++
      if (hits.length < limit)
        hits.push({ version: entry.version, messageId, snippet: snippetOf(text, at, needle.length) })
      break
    }
  }
  return { query, total, hits }
}
