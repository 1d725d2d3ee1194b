/**
 * Signed batches (issue 43, item 1): a writer holding an Ed25519 private key signs each append's batch
 * over the hashes of its events and the hash before them (the previous head), so a verifier holding only
 * public keys (a {@link Keyring}) can tell WHO wrote each batch, and no one without the private key can
 * forge, edit, move or recompute a signed batch. An HMAC key (`hmacKey`) cannot do either: every writer
 * and every verifier holds the same secret.
 *
 * A store opened with `signer` writes one row into `batch_signatures` per append, in the append's
 * transaction: one signature per batch, no per-event work beyond joining the hashes the chain computed
 * anyway. `LogReader.verify` with a keyring checks every batch, names its writer and rejects an unknown
 * or revoked key; with a keyring, every event of a stream must be covered by a signed batch.
 *
 * Rotation: a writer may have several keys in the keyring; batches signed with an older key keep
 * verifying as long as its entry is there and not revoked. Revocation: an entry marked `revoked` rejects
 * every batch its key signed (a stolen key could have signed any of them).
 *
 * @since 0.8.0
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify
} from "node:crypto"
import * as Schema from "effect/Schema"

/** A writer's private key, ready to sign batches. @since 0.8.0 */
export interface Signer {
  /** Who signs: named in every batch and in `ctxlog verify`'s report. */
  readonly writer: string
  /** The public name of the key ({@link keyIdOf}). */
  readonly keyId: string
  /** Sign a batch payload ({@link payload}): base64. */
  readonly sign: (message: string) => string
}

/** A key, keyring or writer id that cannot be used: what was wrong and where. @since 0.8.0 */
export class SigningError extends Schema.TaggedError<SigningError>()("SigningError", {
  where: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.where}: ${this.detail}`
  }
}

const hasControl = (text: string): boolean => {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

const writerProblem = (writer: string): string | undefined =>
  writer.length === 0 || writer.length > 256 || writer.trim() !== writer || hasControl(writer)
    ? `a writer id has 1-256 characters, no surrounding whitespace and no control characters, got ${JSON.stringify(writer.slice(0, 80))}`
    : undefined

/** The public name of an Ed25519 key: 16 hex characters of the SHA-256 of its SPKI DER. @since 0.8.0 */
export const keyIdOf = (publicKey: KeyObject): string =>
  createHash("sha256")
    .update(publicKey.export({ type: "spki", format: "der" }))
    .digest("hex")
    .slice(0, 16)

const isEd25519 = (key: KeyObject) => key.asymmetricKeyType === "ed25519"

/**
 * A signer for `writer` with an Ed25519 private key (a `KeyObject`, or PKCS#8 PEM text). Fails with
 * {@link SigningError} naming the problem (a blank writer id, not a private key, not Ed25519).
 * @since 0.8.0
 */
export const signer = (writer: string, privateKey: KeyObject | string): Signer => {
  const bad = writerProblem(writer)
  if (bad !== undefined) throw new SigningError({ where: "signer", detail: bad })
  let key: KeyObject
  try {
    key = typeof privateKey === "string" ? createPrivateKey(privateKey) : privateKey
  } catch (cause) {
    throw new SigningError({
      where: `signer "${writer}"`,
      detail: `not a PEM private key (${cause instanceof Error ? cause.message : String(cause)})`
    })
  }
  if (key.type !== "private" || !isEd25519(key)) {
    throw new SigningError({
      where: `signer "${writer}"`,
      detail: `an Ed25519 private key is needed, got a ${key.type} ${key.asymmetricKeyType ?? "?"} key`
    })
  }
  const keyId = keyIdOf(createPublicKey(key))
  return { writer, keyId, sign: (message) => sign(null, Buffer.from(message, "utf8"), key).toString("base64") }
}

/** A new Ed25519 key pair for `writer`: the private key (PKCS#8 PEM, keep it secret) and its keyring entry. @since 0.8.0 */
export const generate = (writer: string): { readonly privateKeyPem: string; readonly entry: KeyringEntry } => {
  const bad = writerProblem(writer)
  if (bad !== undefined) throw new SigningError({ where: "generate", detail: bad })
  const { privateKey, publicKey } = generateKeyPairSync("ed25519")
  return {
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    entry: {
      writer,
      keyId: keyIdOf(publicKey),
      publicKey: publicKey.export({ type: "spki", format: "pem" }).toString()
    }
  }
}

/** What one signature covers. @since 0.8.0 */
export interface Batch {
  readonly stream: string
  readonly firstVersion: number
  readonly lastVersion: number
  readonly writer: string
  readonly keyId: string
  /** The stored hash before the batch's first event (`EventHash.genesis` from @ctxlog/core at version 1). */
  readonly previous: string
  /** The stored hashes of the batch's events, in order. */
  readonly hashes: ReadonlyArray<string>
}

/**
 * The signed text of a batch: a label, the stream, the versions, the writer and key id, the previous
 * head and every event hash of the batch, separated by U+001F. @since 0.8.0
 */
export const payload = (batch: Batch): string =>
  [
    "ctxlog signed batch v1",
    batch.stream,
    String(batch.firstVersion),
    String(batch.lastVersion),
    batch.writer,
    batch.keyId,
    batch.previous,
    ...batch.hashes
  ].join("\u001f")

/** One public key of a keyring. @since 0.8.0 */
export interface KeyringEntry {
  readonly writer: string
  /** {@link keyIdOf} the public key (checked when the keyring is read). */
  readonly keyId: string
  /** SPKI PEM text. */
  readonly publicKey: string
  /** Present: the key is revoked (the text says why, or when); every batch it signed is rejected. */
  readonly revoked?: string | undefined
}

/** Public keys by key id. @since 0.8.0 */
export interface Keyring {
  readonly keys: ReadonlyMap<string, KeyringEntry & { readonly key: KeyObject }>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Read a keyring: `{ "keys": [{ "writer", "publicKey", "keyId"?, "revoked"? }] }`. A bad entry fails with
 * {@link SigningError} naming `where` and the entry (`keys.2.publicKey`). @since 0.8.0
 */
export const parseKeyring = (text: string, where = "keyring"): Keyring => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (cause) {
    throw new SigningError({ where, detail: `not JSON (${cause instanceof Error ? cause.message : String(cause)})` })
  }
  if (!isRecord(parsed) || !Array.isArray(parsed.keys)) {
    throw new SigningError({ where, detail: `expected { "keys": [ … ] }` })
  }
  const keys = new Map<string, KeyringEntry & { readonly key: KeyObject }>()
  for (const [index, item] of parsed.keys.entries()) {
    const at = `${where}: keys.${index}`
    if (!isRecord(item)) throw new SigningError({ where: at, detail: "expected an object" })
    const { writer, publicKey, keyId, revoked } = item
    if (typeof writer !== "string") throw new SigningError({ where: `${at}.writer`, detail: "expected a string" })
    const bad = writerProblem(writer)
    if (bad !== undefined) throw new SigningError({ where: `${at}.writer`, detail: bad })
    if (typeof publicKey !== "string") throw new SigningError({ where: `${at}.publicKey`, detail: "expected PEM text" })
    let key: KeyObject
    try {
      key = createPublicKey(publicKey)
    } catch (cause) {
      throw new SigningError({
        where: `${at}.publicKey`,
        detail: `not a public key (${cause instanceof Error ? cause.message : String(cause)})`
      })
    }
    if (!isEd25519(key)) {
      throw new SigningError({
        where: `${at}.publicKey`,
        detail: `an Ed25519 key is needed, got ${key.asymmetricKeyType}`
      })
    }
    const id = keyIdOf(key)
    if (keyId !== undefined && keyId !== id) {
      throw new SigningError({
        where: `${at}.keyId`,
        detail: `the public key's id is ${id}, the entry says ${String(keyId)}`
      })
    }
    if (revoked !== undefined && typeof revoked !== "string") {
      throw new SigningError({ where: `${at}.revoked`, detail: "expected a string (why or when the key was revoked)" })
    }
    const held = keys.get(id)
    if (held !== undefined && held.writer !== writer) {
      throw new SigningError({ where: at, detail: `key ${id} is listed for writer "${held.writer}" already` })
    }
    // A key listed twice: revoked if either entry revokes it.
    const revocation = revoked ?? held?.revoked
    keys.set(id, { writer, keyId: id, publicKey, key, ...(revocation === undefined ? {} : { revoked: revocation }) })
  }
  return { keys }
}

/** Write a keyring file's text. @since 0.8.0 */
export const formatKeyring = (entries: ReadonlyArray<KeyringEntry>): string =>
  `${JSON.stringify({ keys: entries }, null, 2)}\n`

/** A signature row as stored. @since 0.8.0 */
export interface StoredBatch {
  readonly firstVersion: number
  readonly lastVersion: number
  readonly writer: string
  readonly keyId: string
  readonly signature: string
}

/** What a verifier found of one signed batch. @since 0.8.0 */
export interface BatchReport {
  readonly firstVersion: number
  readonly lastVersion: number
  readonly writer: string
  readonly keyId: string
  readonly status: "ok" | "unknown-key" | "revoked" | "wrong-writer" | "bad-signature" | "past-the-end"
}

/** A problem of the signature check, at a version. @since 0.8.0 */
export interface SignatureProblem {
  readonly version: number
  readonly detail: string
}

/**
 * Check a stream's signed batches against `keyring`: each must be signed by a key the keyring holds,
 * not revoked, listed for the writer the batch names, over the stored hashes of its events and the hash
 * before them; every event must be in exactly one batch. Pure: one signature check per batch.
 * @since 0.8.0
 */
export const checkBatches = (
  stream: string,
  hashes: ReadonlyArray<{ readonly version: number; readonly hash: string }>,
  batches: ReadonlyArray<StoredBatch>,
  keyring: Keyring,
  genesis: string
): { readonly batches: ReadonlyArray<BatchReport>; readonly problems: ReadonlyArray<SignatureProblem> } => {
  const problems: Array<SignatureProblem> = []
  const reports: Array<BatchReport> = []
  const byVersion = new Map(hashes.map((event) => [event.version, event.hash]))
  const lastVersion = hashes.at(-1)?.version ?? 0
  const sorted = [...batches].sort((a, b) => a.firstVersion - b.firstVersion)
  let covered = 0
  const uncovered = (from: number, to: number) =>
    problems.push({
      version: from,
      detail: `version${from === to ? ` ${from} is` : `s ${from}-${to} are`} not in any signed batch (written unsigned, or the signature removed)`
    })
  for (const batch of sorted) {
    const who = `batch ${batch.firstVersion}-${batch.lastVersion} signed by "${batch.writer}" (key ${batch.keyId})`
    const report = (status: BatchReport["status"]) => reports.push({ ...batch, status })
    if (batch.firstVersion <= covered) {
      problems.push({ version: batch.firstVersion, detail: `${who} overlaps the batch before it` })
    } else if (batch.firstVersion > covered + 1) {
      uncovered(covered + 1, Math.min(batch.firstVersion - 1, Math.max(lastVersion, covered + 1)))
    }
    covered = Math.max(covered, batch.lastVersion)
    if (batch.lastVersion > lastVersion) {
      report("past-the-end")
      problems.push({
        version: Math.max(batch.firstVersion, lastVersion + 1),
        detail: `${who} covers versions past the stream's end at version ${lastVersion} (events deleted)`
      })
      continue
    }
    const entry = keyring.keys.get(batch.keyId)
    if (entry === undefined) {
      report("unknown-key")
      problems.push({ version: batch.firstVersion, detail: `${who}: the key is not in the keyring` })
      continue
    }
    if (entry.revoked !== undefined) {
      report("revoked")
      problems.push({ version: batch.firstVersion, detail: `${who}: the key is revoked (${entry.revoked})` })
      continue
    }
    if (entry.writer !== batch.writer) {
      report("wrong-writer")
      problems.push({ version: batch.firstVersion, detail: `${who}: the keyring lists the key for "${entry.writer}"` })
      continue
    }
    const previous = batch.firstVersion === 1 ? genesis : byVersion.get(batch.firstVersion - 1)
    const own: Array<string> = []
    for (let version = batch.firstVersion; version <= batch.lastVersion; version++) {
      const hash = byVersion.get(version)
      if (hash !== undefined) own.push(hash)
    }
    const signed =
      previous !== undefined &&
      own.length === batch.lastVersion - batch.firstVersion + 1 &&
      verify(
        null,
        Buffer.from(payload({ ...batch, stream, previous, hashes: own }), "utf8"),
        entry.key,
        Buffer.from(batch.signature, "base64")
      )
    if (!signed) {
      report("bad-signature")
      problems.push({
        version: batch.firstVersion,
        detail: `${who}: the signature does not match the stored events (one was changed, deleted or moved, or the chain recomputed)`
      })
      continue
    }
    report("ok")
  }
  if (covered < lastVersion) uncovered(covered + 1, lastVersion)
  return { batches: reports, problems }
}
