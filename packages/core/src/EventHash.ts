/**
 * The per-stream SHA-256 hash chain that makes tampering with a log detectable.
 *
 * Every backend computes the same chain over the exact stored bytes, so `verify` works on any of them.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"

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

/** `sha256(previous | stream | version | eventId | type | schemaVersion | data)` as hex. @since 0.1.0 */
export const chain = (previous: string, record: HashedRecord): string =>
  createHash("sha256")
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

/** Recompute a stream's chain and report the first broken link. @since 0.1.0 */
export const verify = (
  records: Iterable<HashedRecord & { readonly hash: string }>
): { readonly ok: true; readonly head: string } | ({ readonly ok: false } & ChainBreak) => {
  let previous = genesis
  for (const record of records) {
    const expected = chain(previous, record)
    if (expected !== record.hash) return { ok: false, version: record.version, expected, actual: record.hash }
    previous = expected
  }
  return { ok: true, head: previous }
}
