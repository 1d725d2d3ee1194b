/**
 * The per-stream SHA-256 hash chain that makes tampering with a log detectable.
 *
 * Every backend computes the same chain over the exact stored bytes, so `verify` works on any of them.
 * Unkeyed (the default), the chain detects accidental or partial edits, but anyone who can write the
 * database can rewrite an event and recompute every later link. With a key, each link is an
 * HMAC-SHA256 over the same bytes, so a consistent chain cannot be forged without the key. (The
 * durable stores do not take a key yet; wiring it through them and `verify` is later work.)
 *
 * @since 0.1.0
 */
import { createHash, createHmac } from "node:crypto"

/** What one link of the chain covers. @since 0.1.0 */
export interface HashedRecord {
  readonly stream: string
  readonly version: number
  readonly eventId: string
  readonly type: string
  readonly schemaVersion: number
  readonly data: string
}

/** The hash before a stream's first event. @since 0.1.0 */
export const genesis = "0".repeat(64)

/** A secret key for an HMAC chain. @since 0.1.0 */
export type ChainKey = string | Uint8Array

/**
 * `sha256(previous | stream | version | eventId | type | schemaVersion | data)` as hex, or the
 * HMAC-SHA256 of the same bytes under `key` when one is given. The unkeyed form is unchanged from
 * earlier releases, so existing logs verify as before.
 * @since 0.1.0
 */
export const chain = (previous: string, record: HashedRecord, key?: ChainKey): string =>
  (key === undefined ? createHash("sha256") : createHmac("sha256", key))
    .update(
      [previous, record.stream, String(record.version), record.eventId, record.type, String(record.schemaVersion)].join(
        "\u001f"
      )
    )
    .update("\u001f")
    .update(record.data)
    .digest("hex")

/** SHA-256 of a string, as hex. @since 0.1.0 */
export const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex")

/** The first link that does not match, if any. @since 0.1.0 */
export interface ChainBreak {
  readonly version: number
  readonly expected: string
  readonly actual: string
}

/** Recompute a stream's chain (keyed when `key` is given) and report the first broken link. @since 0.1.0 */
export const verify = (
  records: Iterable<HashedRecord & { readonly hash: string }>,
  key?: ChainKey
): { readonly ok: true; readonly head: string } | ({ readonly ok: false } & ChainBreak) => {
  let previous = genesis
  for (const record of records) {
    const expected = chain(previous, record, key)
    if (expected !== record.hash) return { ok: false, version: record.version, expected, actual: record.hash }
    previous = expected
  }
  return { ok: true, head: previous }
}
