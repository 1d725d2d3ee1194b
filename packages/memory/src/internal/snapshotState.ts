import { createHash } from "node:crypto"
import { deflateRawSync, inflateRawSync } from "node:zlib"
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
