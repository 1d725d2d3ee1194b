import { type EventHash, EventLog, WindowRepository } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Anchor from "../Anchor.js"
import { Erasure } from "../Erasure.js"
import { FileStore } from "../FileStore.js"
import * as Redaction from "../Redaction.js"
import { RecallIndex } from "../RecallIndex.js"
import type * as Signing from "../Signing.js"
import * as SnapshotRepository from "../SnapshotRepository.js"
import { SnapshotStore } from "../SnapshotStore.js"
import type * as Sealing from "../Sealing.js"
import { SubjectErasure } from "../SubjectErasure.js"
import type * as SubjectKeys from "../SubjectKeys.js"
import type { Backend } from "./backend.js"
import * as Files from "./fileStore.js"
import * as SealedLog from "./sealedLog.js"
import * as SealedRecall from "./sealedRecall.js"
import * as Store from "./store.js"
import * as SubjectKeyTable from "./subjectKeyTable.js"
import * as StoreSubjectErasure from "./storeSubjectErasure.js"

/** Options every durable layer accepts. */
export interface CommonOptions {
  /** Snapshot the window once N events went by since the last snapshot (default 1,000; 0 = never by count). */
  readonly snapshotEvery?: number | undefined
  /** Snapshot the window once this many bytes of event data were appended since the last one (default 4 MB; 0 = never by size). */
  readonly snapshotBytes?: number | undefined
  /** What a load does with a snapshot whose text does not match its stored hash (default `"fail"`). */
  readonly onSnapshotMismatch?: "fail" | "rebuild" | undefined
  /** Events the recall index catches up per transaction (default 500). */
  readonly recallBatch?: number | undefined
  /** Secret patterns removed before events are written (default `Redaction.defaults`). */
  readonly redaction?: Redaction.Redactor | undefined
  /** Largest document chunk in characters (default 1,500). */
  readonly chunkChars?: number | undefined
  /**
   * Chain events with HMAC-SHA256 and seal snapshots under this secret (default: the unkeyed SHA-256
   * chain). Chosen when a stream is created: a keyed stream refuses appends and fails loads without its
   * key, and an unkeyed one refuses a store that has a key. Keep it out of the database and the logs.
   */
  readonly hmacKey?: EventHash.ChainKey | undefined
  /**
   * `"verified"` (default): a load checks the snapshot's seal, the hash chain of the tail it replays and
   * that the tail reaches the stream's version, failing with `TamperDetected`. `"unverified"`: skip
   * those checks (one hash per tail event and one or two indexed reads), for a trusted store.
   */
  readonly integrity?: "verified" | "unverified" | undefined
  /**
   * The owner (tenant) this layer acts for. Appends record it on a new stream, in the append's
   * transaction, and refuse another owner's stream with `OwnerMismatch` (nothing written); listings,
   * reads, snapshots, recall and erasure see only this owner's streams. Absent: every stream (an
   * administrator's view), and streams get an owner only through `RecallIndex.setOwner`.
   */
  readonly owner?: string | undefined
  /**
   * Sign every append's batch with this writer's Ed25519 key (`Signing.signer(writer, privateKey)`): one
   * signature per batch, stored in the append's transaction; `LogReader.verify` with a keyring of public
   * keys names the writer of each batch and rejects an unknown or revoked key (issue 43).
   */
  readonly signer?: Signing.Signer | undefined
  /**
   * Write the heads this store appends to a sink outside the database, every N appends and every T ms
   * (`Anchor.Options`); `LogReader.verify` with the kept heads (`anchors`) catches a recomputed chain, a
   * truncation or a rollback (issue 43).
   */
  readonly anchor?: Anchor.Options | undefined
  /**
   * Seal each subject's message content under the subject's data key before it is chained
   * (`Sealing.Options`: the subject of each stream, and the keys or the master key of the store's key
   * table); `SubjectErasure` then erases a subject everywhere and keeps every chain (issue 43, ADR 0112).
   */
  readonly sealing?: Sealing.Options | undefined
}

/** Everything a durable layer provides. */
export type Services =
  | EventLog.EventLog
  | WindowRepository.WindowRepository
  | SnapshotStore
  | RecallIndex
  | Erasure
  | FileStore
  | SubjectErasure

/** Open a backend and build the services over it. */
export const build = <E>(
  backend: Effect.Effect<Backend, E, Scope.Scope>,
  options: CommonOptions
): Effect.Effect<Context.Context<Services>, E | EventLog.StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    if (options.owner !== undefined && (options.owner.trim() === "" || options.owner.trim() !== options.owner)) {
      return yield* new EventLog.StoreError({
        operation: "open",
        detail: `the owner must be a non-blank id without surrounding whitespace, got ${JSON.stringify(options.owner)}`
      })
    }
    const opened = yield* backend
    const scope = yield* Effect.scope
    const anchorer = options.anchor === undefined ? undefined : yield* Anchor.make(options.anchor)
    const keys = yield* sealingKeys(opened, options.sealing)
    const store = Store.make(opened, {
      scope,
      redactor: options.redaction ?? Redaction.defaults,
      pageSize: 500,
      chunkChars: options.chunkChars ?? 1500,
      recallBatch: Math.max(1, options.recallBatch ?? 500),
      hmacKey: options.hmacKey,
      owner: options.owner,
      signer: options.signer,
      anchorer,
      openSealed: keys === undefined ? undefined : SealedLog.openRows(keys)
    })
    const sealed =
      keys === undefined || options.sealing === undefined
        ? undefined
        : SealedLog.make(store.log, store.snapshots, keys, {
            subjectOf: options.sealing.subjectOf,
            redactor: options.redaction ?? Redaction.defaults
          })
    const log = sealed?.log ?? store.log
    const snapshots = sealed?.snapshots ?? store.snapshots
    const repository = SnapshotRepository.make(log, snapshots, {
      appendedBytes: store.appendedBytes,
      every: options.snapshotEvery,
      bytes: options.snapshotBytes,
      onMismatch: options.onSnapshotMismatch,
      hmacKey: options.hmacKey,
      integrity: options.integrity
    })
    return Context.make(EventLog.EventLog, log).pipe(
      Context.add(WindowRepository.WindowRepository, repository),
      Context.add(SnapshotStore, snapshots),
      Context.add(SubjectErasure, StoreSubjectErasure.make(store.shared, keys, options.signer, log)),
      Context.add(
        RecallIndex,
        sealed === undefined || options.sealing === undefined
          ? store.recall
          : SealedRecall.make(store.recall, opened, options.sealing.subjectOf)
      ),
      Context.add(Erasure, store.erasure),
      Context.add(
        FileStore,
        Files.make(opened, { scope: options.owner, redactor: options.redaction ?? Redaction.defaults })
      )
    )
  })

/** The data keys a sealing store uses: the caller's service, or its own key table under the master key. */
const sealingKeys = (
  backend: Backend,
  sealing: Sealing.Options | undefined
): Effect.Effect<SubjectKeys.SubjectKeys.Service | undefined, EventLog.StoreError> => {
  if (sealing === undefined) return Effect.succeed(undefined)
  if (sealing.keys !== undefined) return Effect.succeed(sealing.keys)
  const master = sealing.masterKey
  if (master === undefined || master.length !== 32) {
    return Effect.fail(
      new EventLog.StoreError({
        operation: "open",
        detail: `sealing needs a key service (keys) or a 32-byte masterKey for the store's key table, got ${master === undefined ? "neither" : `a ${master.length}-byte masterKey`}`
      })
    )
  }
  return Effect.succeed(SubjectKeyTable.make(backend, master))
}
