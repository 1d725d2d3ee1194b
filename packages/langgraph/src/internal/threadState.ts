/**
 * What the saver knows of one thread namespace (one stream), folded from its events: the checkpoints by
 * id, the channel values each checkpoint sees (addressed by the checkpoint that wrote them, never by
 * version alone: two branches of a forked thread reuse version numbers), the pending writes by
 * checkpoint, and the ids of the messages the ctxlog window holds. Folding is O(the event plus the
 * thread's channel count); a process folds a stream once and then only the events appended since (by
 * this process or another one).
 */
import { Lru, type WindowEvent } from "@ctxlog/core"

type CheckpointSaved = WindowEvent.EventOf<"CheckpointSaved">

/** A stored pending write. */
export interface StoredWrite {
  readonly taskId: string
  readonly taskPath: string
  readonly idx: number
  readonly channel: string
  readonly value: WindowEvent.SerializedValue
}

/** The key of a channel value. */
export const valueKey = (channel: string, version: WindowEvent.ChannelVersion): string =>
  `${channel}\u0000${typeof version}\u0000${String(version)}`

/** The key of a live list: the checkpoint that wrote it and the channel. */
export const liveKey = (writer: string, channel: string): string => `${writer}\u0000${channel}`

/** A channel value and the checkpoint that wrote it. */
export interface Written {
  readonly writer: string
  readonly written: WindowEvent.ChannelValueWritten
}

/** The folded state of one stream. */
export interface ThreadState {
  /** Stream version folded so far. */
  version: number
  readonly checkpoints: Map<string, CheckpointSaved>
  /** Checkpoint ids newest first (by id, as LangGraph orders them); rebuilt lazily. */
  sorted: ReadonlyArray<string> | undefined
  /**
   * Channel values by `valueKey`. LangGraph's versions are counters, so two branches of a forked thread
   * can write the same `(channel, version)`: every writer is kept, and `resolve` picks the one on the
   * reader's ancestor chain.
   */
  readonly values: Map<string, Array<Written>>
  /**
   * For each checkpoint, the nearest write of each channel on its own ancestor chain (itself first):
   * the addresses its channel values are read by. Its parent's map with its own writes laid over (a
   * copy of one entry per channel, no values): a branch never sees a value the other branch wrote.
   */
  readonly scopes: Map<string, ReadonlyMap<string, Written>>
  readonly writes: Map<string, Map<string, StoredWrite>>
  /** The checkpoint saved last (the head the window mirrors). */
  head: string | undefined
  /** The checkpoint that wrote the messages list the window mirrors. */
  windowWriter: string | undefined
  /** Ids of the messages of the list the saver mirrors into the window, in order. */
  windowIds: Array<string>
  /** Live channel values by `valueKey`: the lists this process wrote or rebuilt last (a small LRU). */
  readonly live: Lru.Lru<string, ReadonlyArray<unknown>>
}

const liveCapacity = 16

/** A state for a stream with no events. */
export const empty = (): ThreadState => ({
  version: 0,
  checkpoints: new Map(),
  sorted: undefined,
  values: new Map(),
  scopes: new Map(),
  writes: new Map(),
  head: undefined,
  windowWriter: undefined,
  windowIds: [],
  live: Lru.make(liveCapacity)
})

/**
 * Remember a live list value. Kept by reference, not copied (a copy would cost O(list) per `put`):
 * LangGraph's reducers return a new list and never change one they were given.
 */
export const remember = (state: ThreadState, key: string, value: ReadonlyArray<unknown>): void => {
  state.live.set(key, value)
}

const writeKey = (taskId: string, idx: number): string => `${taskId}\u0000${idx}`

/**
 * Fold one event of the stream. `ours`: the saver wrote it (its window events track the list the saver
 * mirrors; another writer's window events, a compaction say, change the window but not that list).
 */
export const fold = (state: ThreadState, event: WindowEvent.WindowEvent, ours: boolean): void => {
  switch (event._tag) {
    case "CheckpointSaved": {
      state.checkpoints.set(event.checkpointId, event)
      state.sorted = undefined
      const inherited = event.parentCheckpointId === null ? undefined : state.scopes.get(event.parentCheckpointId)
      const scope = new Map<string, Written>(inherited)
      for (const written of event.values) {
        const key = valueKey(written.channel, written.version)
        const writers = (state.values.get(key) ?? []).filter((entry) => entry.writer !== event.checkpointId)
        const entry = { writer: event.checkpointId, written }
        writers.push(entry)
        state.values.set(key, writers)
        scope.set(written.channel, entry)
      }
      state.scopes.set(event.checkpointId, scope)
      state.head = event.checkpointId
      if (event.windowOf !== undefined) state.windowWriter = event.windowOf
      return
    }
    case "CheckpointWritesSaved": {
      const forCheckpoint = state.writes.get(event.checkpointId) ?? new Map<string, StoredWrite>()
      for (const write of event.writes) {
        const key = writeKey(event.taskId, write.idx)
        // LangGraph's rule: a regular write (idx >= 0) is stored once; errors and interrupts replace.
        if (write.idx >= 0 && forCheckpoint.has(key)) continue
        forCheckpoint.set(key, {
          taskId: event.taskId,
          taskPath: event.taskPath,
          idx: write.idx,
          channel: write.channel,
          value: write.value
        })
      }
      state.writes.set(event.checkpointId, forCheckpoint)
      return
    }
    case "CheckpointsDeleted": {
      state.checkpoints.clear()
      state.sorted = undefined
      state.values.clear()
      state.scopes.clear()
      state.writes.clear()
      state.live.clear()
      state.head = undefined
      state.windowWriter = undefined
      return
    }
    case "MessageAppended": {
      if (!ours) return
      state.windowIds.push(event.message.id)
      return
    }
    case "MessagesRemoved": {
      if (!ours) return
      const gone = new Set(event.messageIds)
      state.windowIds = state.windowIds.filter((id) => !gone.has(id))
      return
    }
    case "HistoryCleared": {
      if (ours) state.windowIds = []
      return
    }
    default:
      return
  }
}

const sameVersion = (a: WindowEvent.ChannelVersion, b: WindowEvent.ChannelVersion): boolean =>
  typeof a === typeof b && a === b

/**
 * The write of `(channel, version)` that checkpoint `at` sees: the nearest write of the channel on
 * `at`'s own ancestor chain (its scope), when it is of that version. A version the chain wrote no value
 * for (a channel LangGraph cleared, which bumps its version and stores no value) is no value, whatever
 * another branch wrote at the same version number. Only a checkpoint whose chain never wrote the channel
 * at all (saved without a parent by a caller that did not pass the value again) falls back to the
 * version's writer in the thread, as a saver storing values by version would answer.
 */
export const resolve = (
  state: ThreadState,
  channel: string,
  version: WindowEvent.ChannelVersion,
  at: string | null
): Written | undefined => {
  const scope = at === null ? undefined : state.scopes.get(at)
  const nearest = scope?.get(channel)
  if (nearest !== undefined) {
    if (sameVersion(nearest.written.version, version)) return nearest
    // Versions only grow along a chain; an older write of this version further up is still the chain's.
    const seen = new Set<string>()
    for (let current = at; current !== null && !seen.has(current); ) {
      seen.add(current)
      const found = state.scopes.get(current)?.get(channel)
      if (found === undefined) return undefined
      if (sameVersion(found.written.version, version)) return found
      current = state.checkpoints.get(found.writer)?.parentCheckpointId ?? null
    }
    return undefined
  }
  const writers = state.values.get(valueKey(channel, version))
  if (writers === undefined || writers.length === 0) return undefined
  return writers[writers.length - 1]
}

/** Whether a pending write key is stored already (regular writes are stored once). */
export const hasWrite = (state: ThreadState, checkpointId: string, taskId: string, idx: number): boolean =>
  state.writes.get(checkpointId)?.has(writeKey(taskId, idx)) === true

/** Checkpoint ids newest first. */
export const newestFirst = (state: ThreadState): ReadonlyArray<string> => {
  if (state.sorted === undefined) {
    state.sorted = [...state.checkpoints.keys()].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
  }
  return state.sorted
}
