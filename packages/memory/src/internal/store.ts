import type { EventLog } from "@ctxlog/core"
import type * as Erasure from "../Erasure.js"
import type * as RecallIndex from "../RecallIndex.js"
import type * as SnapshotStore from "../SnapshotStore.js"
import type { Backend } from "./backend.js"
import * as StoreErasure from "./storeErasure.js"
import * as StoreLog from "./storeLog.js"
import * as StoreRecall from "./storeRecall.js"
import * as StoreShared from "./storeShared.js"
import * as StoreSnapshots from "./storeSnapshots.js"

export type { StoreOptions } from "./storeShared.js"

/** What one durable store provides. */
export interface Store {
  readonly log: EventLog.EventLog.Service
  readonly snapshots: SnapshotStore.SnapshotStore.Service
  readonly recall: RecallIndex.RecallIndex.Service
  readonly erasure: Erasure.Erasure.Service
  /** Event-data bytes this process appended to a stream (for the snapshot policy). */
  readonly appendedBytes: (stream: string) => number
  /** What the services share (for services built beside them, e.g. the subject erasure). */
  readonly shared: StoreShared.StoreShared
}

/**
 * The services of a durable store over a dialect backend: one module per service (`storeLog`,
 * `storeSnapshots`, `storeRecall`, `storeErasure`), sharing the backend, the owner scope, the recall
 * projection and the appended-bytes counter (`storeShared`).
 */
export const make = (backend: Backend, options: StoreShared.StoreOptions): Store => {
  const shared = StoreShared.make(backend, options)
  return {
    log: StoreLog.make(shared),
    snapshots: StoreSnapshots.make(shared),
    recall: StoreRecall.make(shared),
    erasure: StoreErasure.make(shared),
    appendedBytes: shared.appendedBytes.get,
    shared
  }
}
