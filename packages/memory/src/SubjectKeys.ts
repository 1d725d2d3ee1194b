/**
 * Per-subject data keys (issue 43, item 3; ADR 0112): envelope encryption for a subject's content.
 *
 * A subject (a person, a customer: whoever can ask for erasure) has a 256-bit data key; a store opened
 * with `sealing` encrypts that subject's message content under it (AES-256-GCM, Node's `crypto`) before
 * the content is hashed into the chain. Destroying the subject's keys ({@link SubjectKeys.Service.destroy})
 * makes the content unreadable everywhere it was copied, while every chain still verifies: the chain
 * covers the ciphertext, which stays.
 *
 * Where the keys live is a service: {@link memory} keeps them in the process (a caller's own key service
 * can be any `Layer` of {@link SubjectKeys}), and a durable store keeps them in its `subject_keys` table
 * (migration 0015), each data key wrapped ({@link wrapKey}) under a master key the caller holds outside
 * the database. A subject may have several keys: {@link SubjectKeys.Service.rotate} makes a new one
 * current, and content sealed under an older one stays readable until the subject is erased.
 *
 * @since 0.8.0
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** One data key of a subject. @since 0.8.0 */
export interface DataKey {
  readonly subject: string
  /** 16 hex characters naming the key (random; never derived from the key). */
  readonly keyId: string
  /** 32 bytes. */
  readonly key: Uint8Array
}

/** A subject id or key that cannot be used, or a key service that failed: what and for which subject. @since 0.8.0 */
export class SubjectKeyError extends Schema.TaggedError<SubjectKeyError>()("SubjectKeyError", {
  subject: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `subject ${JSON.stringify(this.subject.slice(0, 80))}: ${this.detail}`
  }
}

/** Where subjects' data keys are kept. @since 0.8.0 */
export class SubjectKeys extends Context.Tag("@ctxlog/memory/SubjectKeys")<SubjectKeys, SubjectKeys.Service>() {}

/** @since 0.8.0 */
export declare namespace SubjectKeys {
  /** @since 0.8.0 */
  export interface Service {
    /** The subject's current data key, created on first use. */
    readonly current: (subject: string) => Effect.Effect<DataKey, SubjectKeyError>
    /** One key of the subject, or `None` when it was destroyed (or never existed). */
    readonly find: (subject: string, keyId: string) => Effect.Effect<Option.Option<DataKey>, SubjectKeyError>
    /** Make a new key the subject's current one; older keys still open what they sealed. */
    readonly rotate: (subject: string) => Effect.Effect<DataKey, SubjectKeyError>
    /** Destroy every key of the subject: how many there were. */
    readonly destroy: (subject: string) => Effect.Effect<number, SubjectKeyError>
  }
}

const hasControl = (text: string): boolean => {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}

/**
 * What is wrong with a subject id, if anything: 1-256 characters, no surrounding whitespace, no control
 * characters. Subject ids are stored in clear beside the ciphertext (the erasure finds content by them):
 * use a pseudonymous id, not a name or an address. @since 0.8.0
 */
export const subjectProblem = (subject: string): string | undefined =>
  subject.length === 0 || subject.length > 256 || subject.trim() !== subject || hasControl(subject)
    ? "a subject id has 1-256 characters, no surrounding whitespace and no control characters"
    : undefined

/** A subject id checked ({@link subjectProblem}). @since 0.8.0 */
export const checkSubject = (subject: string): Effect.Effect<string, SubjectKeyError> => {
  const problem = subjectProblem(subject)
  return problem === undefined
    ? Effect.succeed(subject)
    : Effect.fail(new SubjectKeyError({ subject, detail: problem }))
}

/** A new random data key for `subject`. @since 0.8.0 */
export const newKey = (subject: string): DataKey => ({
  subject,
  keyId: randomBytes(8).toString("hex"),
  key: new Uint8Array(randomBytes(32))
})

const masterProblem = (master: Uint8Array): string | undefined =>
  master.length === 32 ? undefined : `the master key must be 32 bytes, got ${master.length}`

/** The public name of a master key (16 hex characters of its SHA-256). @since 0.8.0 */
export const masterKeyId = (master: Uint8Array): string =>
  createHash("sha256").update(master).digest("hex").slice(0, 16)

/**
 * A data key wrapped under a 32-byte master key (AES-256-GCM, the subject and key id as associated data):
 * base64 of IV (12 bytes), tag (16) and the encrypted key (32). @since 0.8.0
 */
export const wrapKey = (master: Uint8Array, key: DataKey): string => {
  const problem = masterProblem(master)
  if (problem !== undefined) throw new SubjectKeyError({ subject: key.subject, detail: problem })
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", master, iv)
  cipher.setAAD(Buffer.from(`${key.subject}\u001f${key.keyId}`, "utf8"))
  const body = Buffer.concat([cipher.update(key.key), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")
}

/** The data key {@link wrapKey} wrapped; fails naming the subject when the master key or the bytes are wrong. @since 0.8.0 */
export const unwrapKey = (
  master: Uint8Array,
  subject: string,
  keyId: string,
  wrapped: string
): Effect.Effect<DataKey, SubjectKeyError> =>
  Effect.try({
    try: () => {
      const problem = masterProblem(master)
      if (problem !== undefined) throw new Error(problem)
      const bytes = Buffer.from(wrapped, "base64")
      if (bytes.length !== 60) throw new Error(`a wrapped key has 60 bytes, got ${bytes.length}`)
      const decipher = createDecipheriv("aes-256-gcm", master, bytes.subarray(0, 12))
      decipher.setAAD(Buffer.from(`${subject}\u001f${keyId}`, "utf8"))
      decipher.setAuthTag(bytes.subarray(12, 28))
      const key = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()])
      return { subject, keyId, key: new Uint8Array(key) }
    },
    catch: (cause) =>
      new SubjectKeyError({
        subject,
        detail: `key ${keyId} does not unwrap (wrong master key, or the stored key was altered): ${cause instanceof Error ? cause.message : String(cause)}`
      })
  })

/**
 * Keys kept in this process only (lost when it exits): for tests, and as the shape a caller's own key
 * service (a KMS, a vault) implements. @since 0.8.0
 */
export const makeMemory = (): SubjectKeys.Service => {
  const keys = new Map<string, Array<DataKey>>()
  const current: SubjectKeys.Service["current"] = (subject) =>
    Effect.map(checkSubject(subject), () => {
      const held = keys.get(subject)
      const last = held?.[held.length - 1]
      if (last !== undefined) return last
      const key = newKey(subject)
      keys.set(subject, [key])
      return key
    })
  return {
    current,
    find: (subject, keyId) =>
      Effect.succeed(Option.fromNullable(keys.get(subject)?.find((key) => key.keyId === keyId))),
    rotate: (subject) =>
      Effect.map(checkSubject(subject), () => {
        const key = newKey(subject)
        keys.set(subject, [...(keys.get(subject) ?? []), key])
        return key
      }),
    destroy: (subject) =>
      Effect.sync(() => {
        const held = keys.get(subject)?.length ?? 0
        keys.delete(subject)
        return held
      })
  }
}

/** {@link makeMemory} as a layer. @since 0.8.0 */
export const memory: Layer.Layer<SubjectKeys> = Layer.sync(SubjectKeys, makeMemory)
