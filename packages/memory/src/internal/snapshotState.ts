import { createHash } from "node:crypto"
import { deflateRawSync, inflateRawSync } from "node:zlib"
import type { Window } from "@ctxlog/core"
import type { Dialect } from "./schema.js"

// How a snapshot's state (the window as JSON text) is kept in the `snapshots` table. On SQLite it is a
// BLOB of the text deflated (raw DEFLATE, level 4: a window's JSON shrinks 7–10x; against level 1 the
// BLOB is 30% smaller and inflates 15–35% faster, which every load from a snapshot pays, for a deflate
// about 1.5x as long on the rare save: ADR 0058); a TEXT value is the JSON itself (rows written before, or edited by hand), so both
// read back. PostgreSQL keeps TEXT (its TOAST compresses large values already). The seal always covers
// the JSON text, never the stored bytes: compression changes no guarantee (ADR 0058). Beside it SQLite
// keeps the `digest` of the stored bytes, which an unkeyed load checks instead of the text (ADR 0086).

/** The stored form of a state on this dialect. */
export const encode = (dialect: Dialect, state: string): string | Uint8Array =>
  dialect === "sqlite" ? deflateRawSync(state, { level: 4 }) : state

/**
 * The JSON text of a stored state. Bytes that do not inflate give the empty text, which matches no seal:
 * the reader reports the snapshot as not matching its seal (or rebuilds), as for any edited row.
 */
export const decode = (stored: string | Uint8Array): string => {
  if (typeof stored === "string") return stored
  try {
    return inflateRawSync(stored).toString("utf8")
  } catch {
    return ""
  }
}

/**
 * The SHA-256 (hex) of a state's stored bytes: what SQLite keeps beside the seal (`stored_hash`, ADR
 * 0086), so a load checks the deflated bytes (about a tenth of the text) instead of hashing the text.
 */
export const digest = (stored: Uint8Array): string => createHash("sha256").update(stored).digest("hex")

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * The top-level shape of a window, checked in O(1): the hash already vouches for the content (this
 * projection version wrote exactly this text), the check only guards against a wrong row.
 */
const isWindow = (value: unknown): value is Window.Window =>
  isRecord(value) &&
  typeof value.version === "number" &&
  Array.isArray(value.system) &&
  Array.isArray(value.knowledge) &&
  Array.isArray(value.history) &&
  Array.isArray(value.signals) &&
  Array.isArray(value.completedToolIds) &&
  Array.isArray(value.pendingToolPairs) &&
  Array.isArray(value.deferredSummaries) &&
  Array.isArray(value.seams) &&
  isRecord(value.tokens) &&
  isRecord(value.taskState) &&
  isRecord(value.compaction) &&
  isRecord(value.calibration)

/**
 * The window a snapshot's JSON text holds at `version`, parsed without a Schema decode (the seal, checked
 * by whoever read the row, vouches for the text); or why it cannot be used. The one restore of a window
 * snapshot: `SnapshotRepository` and `LogReader.windowAt` both use it (ADR 0158).
 */
export const windowOf = (state: string, version: number): Window.Window | string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(state)
  } catch (cause) {
    return `is not JSON: ${cause instanceof Error ? cause.message : String(cause)}`
  }
  return isWindow(parsed) && parsed.version === version ? parsed : "does not hold a window of that version"
}
