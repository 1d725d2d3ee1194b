/**
 * The per-stream SHA-256 hash chain that makes tampering with a log detectable.
 *
 * Every backend computes the same chain over the exact stored bytes, so `verify` works on any of them.
 * Unkeyed (the default), the chain detects accidental or partial edits, but anyone who can write the
 * database can rewrite an event and recompute every later link. With a key, each link is an
 * HMAC-SHA256 over the same bytes, so a consistent chain cannot be forged without the key.
 *
 * A keyed stream says so in its stored head (`streams.head_hash`): {@link formatHead} writes
 * `hmac-sha256:<key id>:<hash>:<seal>`, where the key id ({@link keyId}) names the key without revealing
 * it, so a store opened without the key, or with another one, refuses the stream with a clear error
 * instead of extending it with links nobody can verify; the seal ({@link headSeal}) covers the stream,
 * version and hash of the row, so the row cannot be rewritten to match a truncated stream. Unkeyed heads stay the bare hash. Snapshots are sealed the
 * same way ({@link seal}): unkeyed, the SHA-256 of the state (as before); keyed, an HMAC over the state
 * and the hash of the event the snapshot ends at, so an edited snapshot cannot be re-sealed without
 * the key and a snapshot cannot be moved onto other events.
 *
 * @since 0.1.0
 */
import * as Crypto from "node:crypto"
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
export const chain = (previous: string, record: HashedRecord, key?: ChainKey): string => {
  const fields = `${previous}\u001f${record.stream}\u001f${record.version}\u001f${record.eventId}\u001f${record.type}\u001f${record.schemaVersion}\u001f`
  return key === undefined
    ? sha256(fields + record.data)
    : createHmac("sha256", key).update(fields).update(record.data).digest("hex")
}

// Node's one-shot digest (20.12 and later) skips building a Hash object per call: a load hashes every row.
const oneShot: ((algorithm: string, data: string, encoding: "hex") => string) | undefined =
  typeof Reflect.get(Crypto, "hash") === "function" ? Reflect.get(Crypto, "hash") : undefined

/** SHA-256 of a string, as hex. @since 0.1.0 */
export const sha256 = (text: string): string =>
  oneShot === undefined ? createHash("sha256").update(text).digest("hex") : oneShot("sha256", text, "hex")

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

/** The prefix of a keyed head or seal. @since 0.1.0 */
export const keyedPrefix = "hmac-sha256:"

/**
 * A short public name of a key: 16 hex characters of an HMAC of a fixed label under the key. It tells
 * keys apart without revealing them (and without helping to forge a link).
 * @since 0.1.0
 */
export const keyId = (key: ChainKey): string =>
  createHmac("sha256", key).update("ctxlog chain key id").digest("hex").slice(0, 16)

/** Where a stream's head stands: what a keyed head's seal covers. @since 0.1.0 */
export interface HeadAt {
  readonly stream: string
  /** The stream version the head hash belongs to. */
  readonly version: number
  readonly hash: string
}

/**
 * The HMAC of a stream row (`stream | version | hash`) under `key`: a stream row rewritten without the
 * key (say, to hide deleted last events) does not match it.
 * @since 0.1.0
 */
export const headSeal = (head: HeadAt, key: ChainKey): string =>
  createHmac("sha256", key)
    .update(["ctxlog stream head", head.stream, String(head.version), head.hash].join("\u001f"))
    .digest("hex")

/**
 * A stream's stored head: the hash alone when unkeyed, `hmac-sha256:<key id>:<hash>:<seal>` when keyed
 * (the seal is {@link headSeal}).
 * @since 0.1.0
 */
export const formatHead = (head: HeadAt, key?: ChainKey): string =>
  key === undefined ? head.hash : `${keyedPrefix}${keyId(key)}:${head.hash}:${headSeal(head, key)}`

/** A stored head read back: the hash, and the key id and seal when the stream is keyed. @since 0.1.0 */
export interface Head {
  readonly hash: string
  readonly keyId: string | undefined
  readonly seal: string | undefined
}

/** Read a stored head (either form). @since 0.1.0 */
export const parseHead = (stored: string): Head => {
  if (!stored.startsWith(keyedPrefix)) return { hash: stored, keyId: undefined, seal: undefined }
  const [id = "", hash = "", seal] = stored.slice(keyedPrefix.length).split(":")
  return { hash, keyId: id, seal }
}

/**
 * Why a stream whose head carries `storedKeyId` (undefined: unkeyed) cannot be read or extended with
 * `key`, if it cannot. (A stream with no events yet takes any key: callers check only existing heads.)
 * @since 0.1.0
 */
export const keyProblem = (storedKeyId: string | undefined, key: ChainKey | undefined): string | undefined => {
  if (storedKeyId === undefined) {
    return key === undefined ? undefined : "the stream was written without an HMAC key, but a key was given"
  }
  if (key === undefined) return "the stream is HMAC-keyed: open the store with its key (hmacKey)"
  return keyId(key) === storedKeyId ? undefined : `the stream was keyed with another key (key id ${storedKeyId})`
}

/** What a snapshot seal covers besides its state. @since 0.1.0 */
export interface SealedSnapshot {
  readonly stream: string
  readonly projection: string
  readonly projectionVersion: number
  /** The stream version the snapshot folds. */
  readonly version: number
  /** The stored hash of the event at `version` (the {@link genesis} at 0). */
  readonly anchor: string
  readonly state: string
}

/**
 * The seal stored beside a snapshot. Unkeyed: `sha256(state)` (unchanged from earlier releases).
 * Keyed: `hmac-sha256:<key id>:` + HMAC-SHA256 of `anchor | stream | projection | projectionVersion |
 * version | state`, which binds the snapshot to the chain at its version.
 * @since 0.1.0
 */
export const seal = (snapshot: SealedSnapshot, key?: ChainKey): string =>
  key === undefined
    ? sha256(snapshot.state)
    : `${keyedPrefix}${keyId(key)}:${createHmac("sha256", key)
        .update(
          [
            snapshot.anchor,
            snapshot.stream,
            snapshot.projection,
            String(snapshot.projectionVersion),
            String(snapshot.version)
          ].join("\u001f")
        )
        .update("\u001f")
        .update(snapshot.state)
        .digest("hex")}`

/**
 * Check the links of a stream's events from `anchor` (the stored hash of the event before the first
 * one, {@link genesis} for version 1): the first link that does not match, if any.
 * @since 0.1.0
 */
export const verifyFrom = (
  anchor: string,
  records: Iterable<HashedRecord & { readonly hash: string }>,
  key?: ChainKey
): { readonly ok: true; readonly head: string } | ({ readonly ok: false } & ChainBreak) => {
  let previous = anchor
  for (const record of records) {
    const expected = chain(previous, record, key)
    if (expected !== record.hash) return { ok: false, version: record.version, expected, actual: record.hash }
    previous = expected
  }
  return { ok: true, head: previous }
}
