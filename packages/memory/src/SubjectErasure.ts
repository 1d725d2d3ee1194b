/**
 * Per-subject erasure that keeps every chain (issue 43, items 3-5; ADR 0112, 0113).
 *
 * A store opened with `sealing` keeps a subject's content sealed under the subject's data keys
 * (`Sealing`, `SubjectKeys`). {@link SubjectErasure.Service.erase} finds every event of every stream whose
 * seals name the subject (its own messages, and the summaries, seams and briefings derived from them, in
 * any stream), removes what was derived from those events outside the chain (their recall entries and
 * graph facts, which hold the opened plaintext, ADR 0139; the snapshots of their streams; the stored tool
 * outputs their messages referenced), destroys the subject's keys, re-derives each summary, seam or
 * briefing made unreadable (the store's extractive re-derivation from its remaining sources, or the
 * caller's `rederive`), and compacts the database files so freed pages keep nothing.
 * No event is deleted or changed: every chain still verifies, and the erased content reads as
 * `Sealing.erasedText`.
 *
 * Each erasure yields a {@link Receipt}: what was erased, every artifact made unreadable or removed, and
 * the heads of the streams it touched before and after, signed with the store's Ed25519 `signer`
 * (`Signing`). {@link verifyReceipt} checks it offline against a keyring of public keys (`ctxlog
 * verify-receipt`). The receipt is also kept in the append-only `subject_erasures` table.
 *
 * @since 0.8.0
 */
import { verify } from "node:crypto"
import type { EventLog, WindowEvent } from "@ctxlog/core"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Signing from "./Signing.js"

/** Who erases and why (both required). @since 0.8.0 */
export interface Request {
  readonly actor: string
  readonly reason: string
  /**
   * Re-derive a summary, seam or briefing of a stream the erasure made unreadable: given the artifact
   * (after the keys are destroyed, so a read of its stream shows `[erased]` in place of the subject's
   * content), the events to append to its stream in its place (a new summary without the subject), or
   * none to leave it removed. They are appended through the sealing log (sealed under any other
   * subject they derive from); the receipt lists each as `re-derived` with the new event ids. Absent:
   * the store re-derives it itself (ADR 0139), an extractive summary of the sources its lineage names
   * that still read, recorded as a `Compacted` event replacing it in the window.
   */
  readonly rederive?:
    | ((artifact: Artifact) => Effect.Effect<ReadonlyArray<WindowEvent.WindowEvent>, unknown>)
    | undefined
}

/** A stream's head: its version and the stored hash of its last event. @since 0.8.0 */
export interface Head {
  readonly stream: string
  readonly version: number
  readonly hash: string
}

/**
 * One artifact the erasure reached. `message` is the subject's own content; `summary`, `seam`, `briefing`
 * and `injected` are events derived from it (their seals name the subject); `recall entry`, `graph fact`,
 * `snapshot` and `file` are rows derived from those events. Events stay in the chain, `unreadable`; rows
 * are `removed`; a summary the caller replaced (`Request.rederive`) is `re-derived`. @since 0.8.0
 */
export interface Artifact {
  readonly kind:
    | "message"
    | "summary"
    | "seam"
    | "briefing"
    | "injected"
    | "recall entry"
    | "graph fact"
    | "snapshot"
    | "file"
  readonly action: "unreadable" | "removed" | "re-derived"
  readonly stream: string
  /** The event id (events, recall entries and facts: the event they came from), or the file's SHA-256, or the projection. */
  readonly ref: string
  /** The event's version in its stream (events only). */
  readonly version?: number
  /** The events of other streams the artifact records it was derived from (`Sealing.derivedFrom`). */
  readonly derivedFrom?: ReadonlyArray<{ readonly stream: string; readonly eventId: string }>
  /** `re-derived`: the ids of the events appended in its place. */
  readonly replacedBy?: ReadonlyArray<string>
}

/** What a receipt states, in the order it is signed. @since 0.8.0 */
export interface Statement {
  readonly format: "ctxlog subject erasure receipt v1"
  readonly subject: string
  readonly actor: string
  readonly reason: string
  /** Epoch milliseconds. */
  readonly erasedAt: number
  /** Data keys destroyed. */
  readonly keysDestroyed: number
  readonly artifacts: ReadonlyArray<Artifact>
  /** The heads of every stream the erasure touched, before it and after it (equal: no chain changed). */
  readonly headsBefore: ReadonlyArray<Head>
  readonly headsAfter: ReadonlyArray<Head>
  readonly writer: string
  readonly keyId: string
}

/** A signed erasure receipt. @since 0.8.0 */
export interface Receipt extends Statement {
  /** Ed25519 over {@link canonical} of the statement, base64. */
  readonly signature: string
}

/** The erasure request is incomplete, the store seals nothing, or it has no signer; nothing was erased. @since 0.8.0 */
export class InvalidSubjectErasure extends Schema.TaggedError<InvalidSubjectErasure>()("InvalidSubjectErasure", {
  subject: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `erasure of subject ${JSON.stringify(this.subject.slice(0, 80))} refused: ${this.detail}`
  }
}

/** Per-subject erasure of a sealing store. @since 0.8.0 */
export class SubjectErasure extends Context.Tag("@ctxlog/memory/SubjectErasure")<
  SubjectErasure,
  SubjectErasure.Service
>() {}

/** @since 0.8.0 */
export declare namespace SubjectErasure {
  /** @since 0.8.0 */
  export interface Service {
    /** Erase `subject` everywhere (see the module comment) and return the signed receipt. */
    readonly erase: (
      subject: string,
      request: Request
    ) => Effect.Effect<Receipt, InvalidSubjectErasure | EventLog.StoreError>
    /** Every receipt kept, oldest first (only `subject`'s when given). */
    readonly receipts: (subject?: string) => Effect.Effect<ReadonlyArray<Receipt>, EventLog.StoreError>
  }
}

/** JSON with every object's keys sorted: the bytes a receipt's signature covers. @since 0.8.0 */
export const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonical(field)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/** Sign a statement with a writer's key. @since 0.8.0 */
export const sign = (statement: Omit<Statement, "writer" | "keyId">, signer: Signing.Signer): Receipt => {
  const full: Statement = { ...statement, writer: signer.writer, keyId: signer.keyId }
  return { ...full, signature: signer.sign(canonical(full)) }
}

/** What {@link verifyReceipt} found. @since 0.8.0 */
export interface Verification {
  readonly ok: boolean
  readonly writer: string | undefined
  readonly keyId: string | undefined
  /** Each problem, in words (empty when ok). */
  readonly problems: ReadonlyArray<string>
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Check a receipt offline (parsed JSON) against a keyring of public keys: its format, that its key is in
 * the keyring for the writer it names and not revoked, and its Ed25519 signature over every other field.
 * @since 0.8.0
 */
export const verifyReceipt = (receipt: unknown, keyring: Signing.Keyring): Verification => {
  if (!isRecord(receipt)) return { ok: false, writer: undefined, keyId: undefined, problems: ["not a JSON object"] }
  const writer = typeof receipt.writer === "string" ? receipt.writer : undefined
  const keyId = typeof receipt.keyId === "string" ? receipt.keyId : undefined
  const problems: Array<string> = []
  if (receipt.format !== "ctxlog subject erasure receipt v1") {
    problems.push(`format is ${JSON.stringify(receipt.format)}, expected "ctxlog subject erasure receipt v1"`)
  }
  if (typeof receipt.signature !== "string") problems.push("signature: missing")
  const entry = keyId === undefined ? undefined : keyring.keys.get(keyId)
  if (writer === undefined || keyId === undefined) problems.push("writer and keyId: missing")
  else if (entry === undefined) problems.push(`key ${keyId} (writer "${writer}") is not in the keyring`)
  else if (entry.revoked !== undefined) problems.push(`key ${keyId} is revoked (${entry.revoked})`)
  else if (entry.writer !== writer)
    problems.push(`the keyring lists key ${keyId} for "${entry.writer}", not "${writer}"`)
  if (problems.length === 0 && entry !== undefined && typeof receipt.signature === "string") {
    const { signature, ...statement } = receipt
    const signed = verify(null, Buffer.from(canonical(statement), "utf8"), entry.key, Buffer.from(signature, "base64"))
    if (!signed) problems.push(`the signature of "${writer}" does not match the receipt (a field was changed)`)
  }
  return { ok: problems.length === 0, writer, keyId, problems }
}
