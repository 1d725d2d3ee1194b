/**
 * Sealed content (issue 43, items 3 and 4; ADR 0112): a store opened with `sealing` encrypts the content
 * of a subject's messages under the subject's data key ({@link SubjectKeys}) before it is hashed into the
 * chain, and opens it again on every read. Erasing the subject (`SubjectErasure`) destroys the key: the
 * content reads as {@link erasedText} everywhere, and every chain still verifies.
 *
 * What is sealed, in an event appended to a stream that has subjects: every message's `parts` (one text
 * part then holds the seal), every other `content`, `summary` or `carryOver` text (a recorded prompt's
 * blobs, a deferred tool summary, a compaction's carry-over) and a graph fact's subject and object. Ids, roles, kinds, token counts, fact
 * predicates and the event's shape stay in clear.
 *
 * Which subjects an event is sealed under (each one's key is needed to open it):
 * - the stream's own subject, `subjectOf(stream)` (per stream: a conversation belongs to one subject);
 * - for a summary, seam or briefing (an event with a receipt), the subjects of the events its receipt
 *   names as sources: a summary of a subject's messages is sealed under that subject too;
 * - inside {@link derivedFrom}, the subjects of the given events of any stream (a summary or briefing
 *   built from another stream's messages), whose stream and event ids the seal also records.
 *
 * The seal is `ctxlog-sealed:v1:` + base64url(header) + `.` + base64url(IV) + `.` + base64url(ciphertext
 * and GCM tag); the header (`{ v, t, k: [[subject, keyId]…], d?: [[stream, eventId]…] }`) is the associated
 * data, and the content key is HKDF-SHA256 over the named data keys.
 *
 * @since 0.8.0
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import type { EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import type * as SubjectKeys from "./SubjectKeys.js"

/** How a store seals content. @since 0.8.0 */
export interface Options {
  /** The subject a stream's content belongs to (undefined: none; its own messages stay in clear). */
  readonly subjectOf: (stream: string) => string | undefined
  /**
   * Where data keys are kept: a `SubjectKeys` service of the caller's, or (absent) the store's own
   * `subject_keys` table, each key wrapped under `masterKey`.
   */
  readonly keys?: SubjectKeys.SubjectKeys.Service | undefined
  /** 32 bytes, kept outside the database: wraps the data keys of the store's key table. */
  readonly masterKey?: Uint8Array | undefined
}

/** The text that starts every seal. @since 0.8.0 */
export const prefix = "ctxlog-sealed:v1:"

/** What a seal opens to once one of its subjects was erased. @since 0.8.0 */
export const erasedText = "[erased]"

/** One event another artifact was derived from. @since 0.8.0 */
export interface Source {
  readonly stream: string
  readonly eventId: string
}

/** A seal's header: what it holds, under which keys, derived from which events. @since 0.8.0 */
export interface Header {
  readonly v: 1
  /** `parts`: a message's parts (JSON); `text`: one string. */
  readonly t: "parts" | "text"
  /** `[subject, keyId]`, in the order their keys are fed to HKDF. */
  readonly k: ReadonlyArray<readonly [string, string]>
  /** `[stream, eventId]` of the events of other streams the content was derived from. */
  readonly d?: ReadonlyArray<readonly [string, string]>
}

interface Derivation {
  readonly subjects: ReadonlyArray<string>
  readonly sources: ReadonlyArray<Source>
}

/** @internal The derivation appends run under (see {@link derivedFrom}). */
export const currentDerivation: FiberRef.FiberRef<Derivation> = FiberRef.unsafeMake<Derivation>({
  subjects: [],
  sources: []
})

/** The headers of the seals in a stored event's data (its `data` text), in order. @since 0.8.0 */
export const headersIn = (data: string): ReadonlyArray<Header> => {
  const headers: Array<Header> = []
  let at = data.indexOf(prefix)
  while (at >= 0) {
    const start = at + prefix.length
    const end = data.indexOf(".", start)
    if (end < 0) break
    const header = parseHeader(data.slice(start, end))
    if (header !== undefined) headers.push(header)
    at = data.indexOf(prefix, end)
  }
  return headers
}

/** The subjects whose keys a stored event's seals need. @since 0.8.0 */
export const subjectsIn = (data: string): ReadonlyArray<string> => {
  const subjects = new Set<string>()
  for (const header of headersIn(data)) for (const [subject] of header.k) subjects.add(subject)
  return [...subjects]
}

/**
 * Run `effect` with its appends marked as derived from `sources` (events read from a sealed store, any
 * stream): what they append is sealed under those events' subjects too, and each seal records the
 * sources' stream and event ids (the lineage `SubjectErasure` lists). @since 0.8.0
 */
export const derivedFrom = <A, E, R>(
  sources: ReadonlyArray<Pick<EventLog.Envelope, "stream" | "eventId" | "data">>,
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.locally(effect, currentDerivation, {
    subjects: [...new Set(sources.flatMap((source) => subjectsIn(source.data)))],
    sources: sources.map(({ eventId, stream }) => ({ stream, eventId }))
  })

const base64url = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64url")

const isPair = (value: unknown): value is readonly [string, string] =>
  Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string"

const parseHeader = (encoded: string): Header | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(encoded, "base64url").toString("utf8"))
    if (typeof value !== "object" || value === null) return undefined
    const t: unknown = Reflect.get(value, "t")
    const k: unknown = Reflect.get(value, "k")
    const d: unknown = Reflect.get(value, "d")
    if (Reflect.get(value, "v") !== 1 || (t !== "parts" && t !== "text")) return undefined
    if (!Array.isArray(k) || k.length === 0 || !k.every(isPair)) return undefined
    if (d !== undefined && !(Array.isArray(d) && d.every(isPair))) return undefined
    return { v: 1, t, k, ...(d === undefined ? {} : { d }) }
  } catch {
    return undefined
  }
}

const contentKey = (keys: ReadonlyArray<SubjectKeys.DataKey>, header: string): Buffer =>
  Buffer.from(
    hkdfSync(
      "sha256",
      Buffer.concat(keys.map((key) => key.key)),
      Buffer.from(header, "utf8"),
      "ctxlog sealed content v1",
      32
    )
  )

/** @internal Seal `text` under `keys` (sorted by subject, non-empty). */
export const sealText = (
  text: string,
  kind: Header["t"],
  keys: ReadonlyArray<SubjectKeys.DataKey>,
  sources: ReadonlyArray<Source>
): string => {
  const header: Header = {
    v: 1,
    t: kind,
    k: keys.map((key) => [key.subject, key.keyId] as const),
    ...(sources.length === 0 ? {} : { d: sources.map((source) => [source.stream, source.eventId] as const) })
  }
  const encoded = base64url(Buffer.from(JSON.stringify(header), "utf8"))
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", contentKey(keys, encoded), iv)
  cipher.setAAD(Buffer.from(encoded, "utf8"))
  const body = Buffer.concat([cipher.update(text, "utf8"), cipher.final(), cipher.getAuthTag()])
  return `${prefix}${encoded}.${base64url(iv)}.${base64url(body)}`
}

/** @internal A seal taken apart: its header and the parts to decrypt (undefined: not a well-formed seal). */
export const parseSeal = (
  sealed: string
): { readonly header: Header; readonly encoded: string; readonly iv: Buffer; readonly body: Buffer } | undefined => {
  if (!sealed.startsWith(prefix)) return undefined
  const [encoded = "", iv = "", body = "", ...rest] = sealed.slice(prefix.length).split(".")
  const header = parseHeader(encoded)
  if (header === undefined || rest.length > 0) return undefined
  const ivBytes = Buffer.from(iv, "base64url")
  const bodyBytes = Buffer.from(body, "base64url")
  if (ivBytes.length !== 12 || bodyBytes.length < 16) return undefined
  return { header, encoded, iv: ivBytes, body: bodyBytes }
}

/** @internal Decrypt a parsed seal with its keys (in header order); throws when it does not authenticate. */
export const openSeal = (
  parsed: NonNullable<ReturnType<typeof parseSeal>>,
  keys: ReadonlyArray<SubjectKeys.DataKey>
): string => {
  const decipher = createDecipheriv("aes-256-gcm", contentKey(keys, parsed.encoded), parsed.iv)
  decipher.setAAD(Buffer.from(parsed.encoded, "utf8"))
  decipher.setAuthTag(parsed.body.subarray(parsed.body.length - 16))
  return Buffer.concat([decipher.update(parsed.body.subarray(0, parsed.body.length - 16)), decipher.final()]).toString(
    "utf8"
  )
}
