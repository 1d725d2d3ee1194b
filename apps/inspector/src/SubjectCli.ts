/**
 * `ctxlog erase --subject` and `ctxlog verify-receipt` (issue 43, items 3-5; ADR 0112, 0113): erase a
 * subject everywhere in a sealing store and write its signed receipt; check a receipt offline against a
 * keyring of public keys.
 *
 * @since 0.8.0
 */
import { readFileSync, writeFileSync } from "node:fs"
import { PostgresEventLog, Signing, SqliteEventLog, SubjectErasure } from "@ctxlog/memory"
import { Options } from "@effect/cli"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** A subject erasure or receipt check that could not run: what was wrong. @since 0.8.0 */
export class SubjectCommandFailed extends Schema.TaggedError<SubjectCommandFailed>()("SubjectCommandFailed", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

const failed = (detail: string) => new SubjectCommandFailed({ detail })
const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/** What `erase --subject` needs. @since 0.8.0 */
export interface EraseSubject {
  readonly db: string
  readonly pg: Option.Option<string>
  readonly subject: string
  readonly actor: string
  readonly reason: string
  /** The environment variable holding the 32-byte master key of the store's key table (hex or base64). */
  readonly masterKeyEnv: Option.Option<string>
  /** The PKCS#8 PEM file of the Ed25519 key the receipt is signed with. */
  readonly signerKey: Option.Option<string>
  readonly writer: Option.Option<string>
  /** Where the receipt is written (JSON); it is printed too. */
  readonly receipt: Option.Option<string>
}

/** The options `erase` takes for a subject erasure. @since 0.8.0 */
export const eraseOptions = {
  subject: Options.text("subject").pipe(
    Options.optional,
    Options.withDescription("erase this subject's sealed content in every stream (instead of a stream)")
  ),
  masterKeyEnv: Options.text("master-key-env").pipe(
    Options.optional,
    Options.withDescription("with --subject: the environment variable holding the key table's 32-byte master key")
  ),
  signerKey: Options.text("signer-key").pipe(
    Options.optional,
    Options.withDescription("with --subject: the Ed25519 private key (PKCS#8 PEM file) the receipt is signed with")
  ),
  writer: Options.text("writer").pipe(
    Options.optional,
    Options.withDescription("with --subject: who signs the receipt (as the keyring names the key)")
  ),
  receipt: Options.text("receipt").pipe(
    Options.optional,
    Options.withDescription("with --subject: write the signed receipt to this file (JSON)")
  )
}

/** A 32-byte key from hex (64 digits) or base64 text. @since 0.8.0 */
export const masterKeyOf = (text: string, where: string): Effect.Effect<Uint8Array, SubjectCommandFailed> => {
  const trimmed = text.trim()
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64")
  return bytes.length === 32
    ? Effect.succeed(new Uint8Array(bytes))
    : Effect.fail(failed(`${where}: a master key is 32 bytes as 64 hex digits or base64, got ${bytes.length} bytes`))
}

const required = <A>(value: Option.Option<A>, option: string): Effect.Effect<A, SubjectCommandFailed> =>
  Option.match(value, {
    onNone: () => Effect.fail(failed(`erase --subject needs ${option}`)),
    onSome: Effect.succeed
  })

/** Erase a subject through the store (opened with its key table and signer) and return the receipt. @since 0.8.0 */
export const eraseSubject = (options: EraseSubject) =>
  Effect.scoped(
    Effect.gen(function* () {
      const variable = yield* required(options.masterKeyEnv, "--master-key-env NAME (the key table's master key)")
      const keyText = process.env[variable]
      if (keyText === undefined || keyText === "") {
        return yield* failed(`--master-key-env ${variable}: the environment variable is not set`)
      }
      const masterKey = yield* masterKeyOf(keyText, `--master-key-env ${variable}`)
      const keyFile = yield* required(options.signerKey, "--signer-key FILE (the receipt is signed)")
      const writer = yield* required(options.writer, "--writer NAME (who signs the receipt)")
      const signer = yield* Effect.try({
        try: () => Signing.signer(writer, readFileSync(keyFile, "utf8")),
        catch: (cause) => failed(`--signer-key ${keyFile}: ${describe(cause)}`)
      })
      // The erasure finds content by the subjects its seals name: no stream needs a subject here.
      const sealing = { masterKey, subjectOf: () => undefined }
      const context = yield* Option.match(options.pg, {
        onNone: () => SqliteEventLog.make({ filename: options.db, create: false, sealing, signer }),
        onSome: (url) => PostgresEventLog.make({ url, maxConnections: 2, sealing, signer })
      })
      const receipt = yield* Context.get(context, SubjectErasure.SubjectErasure).erase(options.subject, {
        actor: options.actor,
        reason: options.reason
      })
      if (Option.isSome(options.receipt)) {
        const path = options.receipt.value
        yield* Effect.try({
          try: () => writeFileSync(path, `${JSON.stringify(receipt, null, 2)}\n`),
          catch: (cause) => failed(`--receipt ${path}: ${describe(cause)}`)
        })
      }
      return receipt
    })
  ).pipe(Effect.mapError((error) => (error instanceof SubjectCommandFailed ? error : failed(error.message))))

/** One line per artifact of a receipt, after a summary line. @since 0.8.0 */
export const receiptText = (receipt: SubjectErasure.Receipt): string =>
  [
    `erased subject "${receipt.subject}": ${receipt.keysDestroyed} key(s) destroyed, ${receipt.artifacts.length} artifact(s), by ${receipt.actor}: ${receipt.reason}`,
    ...receipt.artifacts.map(
      (artifact) =>
        `  ${artifact.action} ${artifact.kind} ${artifact.stream} ${artifact.ref}${artifact.version === undefined ? "" : ` (version ${artifact.version})`}`
    ),
    `signed by "${receipt.writer}" (key ${receipt.keyId})`
  ].join("\n")

/** Check a receipt file against a keyring file, offline. @since 0.8.0 */
export const verifyReceiptFile = (
  file: string,
  keyringFile: string
): Effect.Effect<SubjectErasure.Verification & { readonly subject: string | undefined }, SubjectCommandFailed> =>
  Effect.try({
    try: () => {
      const keyring = Signing.parseKeyring(readFileSync(keyringFile, "utf8"), `--keyring ${keyringFile}`)
      const receipt: unknown = JSON.parse(readFileSync(file, "utf8"))
      const subject =
        typeof receipt === "object" && receipt !== null && typeof Reflect.get(receipt, "subject") === "string"
          ? String(Reflect.get(receipt, "subject"))
          : undefined
      return { ...SubjectErasure.verifyReceipt(receipt, keyring), subject }
    },
    catch: (cause) => failed(`${file}: ${describe(cause)}`)
  })
