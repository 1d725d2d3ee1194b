/**
 * `CtxlogSaver`: a LangGraph checkpointer (`BaseCheckpointSaver`) over the ctxlog event log.
 *
 * ```ts
 * import { CtxlogSaver } from "@ctxlog/langgraph"
 *
 * const checkpointer = new CtxlogSaver({ sqlite: "agent.db" }) // or { postgres: url }, { memory: true }
 * const graph = workflow.compile({ checkpointer })
 * await graph.invoke(input, { configurable: { thread_id: "chat-1" } })
 * await checkpointer.close()
 * ```
 *
 * - A thread's namespace is a stream (`langgraph:<thread_id>`, `langgraph:<thread_id>/<checkpoint_ns>`);
 *   a checkpoint is a `CheckpointSaved` event, a task's pending writes a `CheckpointWritesSaved`.
 * - A channel's value is written only when its version changes (`newVersions`), and a list channel is
 *   written as what changed against the parent checkpoint's list: the positions that left and the items
 *   appended, each item through LangGraph's serializer (`this.serde`), so values round-trip exactly.
 * - The `messages` channel (a list of LangChain messages) is also mirrored into the ctxlog window as
 *   `MessageAppended` / `MessagesRemoved` events, so `ctxlog window`, `blame`, `diff` and the viewer show
 *   the thread's conversation. A checkpoint saved on an older one (time travel, `updateState` on a past
 *   config) records `forkOf` and moves the window to the fork's messages. A `DeltaChannel` messages list
 *   is mirrored from its writes; `mirrorDeltaChannel: false` stores it once, as the writes (ADR 0164).
 *
 * @since 0.5.0
 */
import { CtxlogError } from "@ctxlog/client"
import { EventLog, Ids, type Message, TokenCounter, Validation, type WindowEvent } from "@ctxlog/core"
import { PostgresEventLog, SqliteEventLog } from "@ctxlog/memory"
import type { RunnableConfig } from "@langchain/core/runnables"
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  type DeltaChannelHistory,
  DeltaSnapshot,
  isDeltaSnapshot,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey
} from "@langchain/langgraph-checkpoint"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as listDelta from "./internal/listDelta.js"
import { isBaseMessage, toWindowMessage } from "./internal/messages.js"
import { parseStream, streamOf } from "./internal/streamIds.js"
import * as thread from "./internal/threadState.js"
import { InvalidCheckpointConfig, SaverClosed, SerializationFailed } from "./SaverError.js"
/** `REMOVE_ALL_MESSAGES` of `@langchain/langgraph` (an optional peer: not imported at run time). */
const REMOVE_ALL_MESSAGES = "__remove_all__"

/** Where the log lives: exactly one of `sqlite` (a file path), `postgres` (a URL), `memory`. @since 0.5.0 */
export type CtxlogSaverOptions = (
  | { readonly sqlite: string; readonly postgres?: undefined; readonly memory?: undefined }
  | { readonly postgres: string; readonly sqlite?: undefined; readonly memory?: undefined }
  | { readonly memory: true; readonly sqlite?: undefined; readonly postgres?: undefined }
) & {
  /** LangGraph's serializer (default: `JsonPlusSerializer`, as every LangGraph saver). */
  readonly serde?: SerializerProtocol
  /** SQLite: `"full"` (default) syncs every commit; `"normal"` syncs at WAL checkpoints. */
  readonly durability?: "full" | "normal"
  /** The channel mirrored into the ctxlog window (default `"messages"`). */
  readonly messagesChannel?: string
  /**
   * Mirror a `DeltaChannel` messages list (`MessagesDeltaValue`) into the ctxlog window from its pending
   * writes (default `true`: each message is written a second time, as `MessageAppended`, so `ctxlog window`,
   * `blame` and the viewer show the thread; `false` stores its messages once, as the writes — about 3 WAL
   * pages a turn fewer — and its thread has no window: ADR 0164). A plain messages list is always mirrored.
   * @since 0.8.0
   */
  readonly mirrorDeltaChannel?: boolean
  /** Counts the tokens of mirrored messages (default `gpt-tokenizer`, o200k_base). */
  readonly tokenCounter?: Layer.Layer<TokenCounter.TokenCounter>
}

/**
 * What the saver did since it was made: the work a `put` costs, counted (tests guard that it follows
 * what changed, not the length of the thread).
 * @since 0.5.0
 */
export interface SaverWork {
  /** Values handed to `serde.dumpsTyped` (a list item counts one). */
  readonly serialized: number
  /** Events appended. */
  readonly events: number
  /** Bytes of serialized values written. */
  readonly bytes: number
  /** Identity comparisons made to find what changed in list channels. */
  readonly compared: number
  /** Events read back from the log (catching up, or a first read of a stream). */
  readonly eventsRead: number
  /** Appends retried after another writer moved the stream (`ConcurrencyConflict`). */
  readonly retried: number
  /**
   * Stored values handed to `serde.loadsTyped` (reads).
   * @since 0.8.0
   */
  readonly decoded: number
  /**
   * Transactions committed (appends): a group of writes committed together counts one.
   * @since 0.8.0
   */
  readonly commits: number
}

type Services = EventLog.EventLog | Ids.Ids | TokenCounter.TokenCounter
type CheckpointSaved = WindowEvent.EventOf<"CheckpointSaved">

/**
 * What one write appends, built on a stream's state; `staged` runs once its events are folded into that
 * state (a `put` keeps its lists as live values). `undefined`: nothing to write.
 */
type Builder = (
  state: thread.ThreadState
) => Promise<{ readonly events: ReadonlyArray<WindowEvent.WindowEvent>; readonly staged?: () => void } | undefined>

/** A write waiting for its group's commit. */
interface Member {
  readonly operation: string
  readonly build: Builder
  readonly settle: { readonly resolve: () => void; readonly reject: (error: unknown) => void }
}

/** The writes of one stream that commit together: their events, built on `state` ahead of the log. */
interface Group {
  readonly state: thread.ThreadState
  /** The stream's version in the log when the group began (the append's expected version). */
  readonly expected: number
  readonly events: Array<WindowEvent.WindowEvent>
  readonly members: Array<Member>
}

/** One turn of the event loop (`setImmediate`: after the I/O callbacks and promise jobs queued now). */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Writes committed together at most (a bound on the events one transaction holds). */
const groupLimit = 32

/** The actor the saver writes its events as (its window events are told apart from other writers'). */
const actor = "langgraph-saver"

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const encoder = new TextEncoder()

const storeBytes = (type: string, bytes: Uint8Array): WindowEvent.SerializedValue => {
  try {
    const text = utf8.decode(bytes)
    if (Validation.textProblem(text) === undefined) return { type, encoding: "utf8", data: text }
  } catch {
    // not UTF-8: stored as base64 below
  }
  return { type, encoding: "base64", data: Buffer.from(bytes).toString("base64") }
}

const bytesOf = (value: WindowEvent.SerializedValue): Uint8Array =>
  value.encoding === "utf8" ? encoder.encode(value.data) : new Uint8Array(Buffer.from(value.data, "base64"))

const storeLayer = (options: CtxlogSaverOptions): Layer.Layer<EventLog.EventLog, unknown> => {
  if (options.sqlite !== undefined) {
    return SqliteEventLog.layer({
      filename: options.sqlite,
      durability: options.durability
    })
  }
  if (options.postgres !== undefined) return PostgresEventLog.layer({ url: options.postgres })
  return EventLog.layerMemory()
}

const tagOf = (error: unknown): string =>
  isRecord(error) && typeof error._tag === "string" ? error._tag : error instanceof Error ? error.name : "Defect"

const toError = (cause: Cause.Cause<unknown>): CtxlogError => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    return new CtxlogError(tagOf(error), error instanceof Error ? error.message : String(error), error)
  }
  return new CtxlogError("Defect", Cause.pretty(cause), Cause.squash(cause))
}

const reject = (error: InvalidCheckpointConfig | SerializationFailed | SaverClosed): CtxlogError =>
  new CtxlogError(error._tag, error.message, error)

/** Where a call points: thread, namespace and (optional) checkpoint id, checked. */
interface Target {
  readonly threadId: string
  readonly namespace: string
  readonly checkpointId: string | undefined
}

const checkId = (operation: string, field: string, value: unknown, allowEmpty: boolean): string | undefined => {
  if (value === undefined) return undefined
  if (typeof value !== "string") {
    throw reject(new InvalidCheckpointConfig({ operation, field, detail: `must be a string, got ${typeof value}` }))
  }
  if (!allowEmpty && value === "") {
    throw reject(new InvalidCheckpointConfig({ operation, field, detail: "must not be empty" }))
  }
  return value
}

const configurableOf = (operation: string, config: unknown): Record<string, unknown> | undefined => {
  if (!isRecord(config)) {
    throw reject(new InvalidCheckpointConfig({ operation, field: "config", detail: "must be an object" }))
  }
  const configurable = config.configurable
  if (configurable === undefined) return undefined
  if (!isRecord(configurable)) {
    throw reject(new InvalidCheckpointConfig({ operation, field: "config.configurable", detail: "must be an object" }))
  }
  return configurable
}

const targetOf = (operation: string, config: unknown, needsCheckpoint: boolean): Target => {
  const configurable = configurableOf(operation, config)
  const threadId = checkId(operation, "config.configurable.thread_id", configurable?.thread_id, false)
  if (threadId === undefined) {
    throw reject(
      new InvalidCheckpointConfig({
        operation,
        field: "config.configurable.thread_id",
        detail: 'is missing: pass a thread id, e.g. graph.invoke(input, { configurable: { thread_id: "chat-1" } })'
      })
    )
  }
  const namespace = checkId(operation, "config.configurable.checkpoint_ns", configurable?.checkpoint_ns, true) ?? ""
  const checkpointId = checkId(operation, "config.configurable.checkpoint_id", configurable?.checkpoint_id, true)
  if (needsCheckpoint && (checkpointId === undefined || checkpointId === "")) {
    throw reject(
      new InvalidCheckpointConfig({
        operation,
        field: "config.configurable.checkpoint_id",
        detail: "is missing: writes belong to a checkpoint"
      })
    )
  }
  return { threadId, namespace, checkpointId: checkpointId === "" ? undefined : checkpointId }
}

const configOf = (threadId: string, namespace: string, checkpointId: string): RunnableConfig => ({
  configurable: { thread_id: threadId, checkpoint_ns: namespace, checkpoint_id: checkpointId }
})

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const keysA = Object.keys(a)
  const keysB = Object.keys(b)
  return (
    keysA.length === keysB.length &&
    keysA.every((key) => Object.hasOwn(b, key) && sameValue(Reflect.get(a, key), Reflect.get(b, key)))
  )
}

const isMessageList = (value: ReadonlyArray<unknown>): boolean => value.every(isBaseMessage)

/**
 * The version a channel value is written under when the checkpoint gives the channel no version (a
 * value LangGraph's versions do not address, so no other checkpoint can carry it): LangGraph's
 * versions are never the empty string. Such a value is read back by its own checkpoint only.
 */
const unversioned = ""

/**
 * The channels a `put` writes, with the version each is written under: those in `newVersions` (what
 * LangGraph says changed; a value it gives no version is a channel's default, which LangGraph restores
 * from the graph's own channel spec), or, when a caller gives no `newVersions`, every value it passed.
 */
const toWrite = (
  checkpoint: Checkpoint,
  newVersions: ChannelVersions | undefined
): ReadonlyArray<readonly [string, WindowEvent.ChannelVersion]> =>
  newVersions === undefined
    ? Object.keys(checkpoint.channel_values).map((channel) => [
        channel,
        checkpoint.channel_versions[channel] ?? unversioned
      ])
    : Object.entries(newVersions)

/**
 * A LangGraph checkpointer on the ctxlog event log (SQLite, PostgreSQL or in memory).
 * @since 0.5.0
 */
export class CtxlogSaver extends BaseCheckpointSaver {
  /** The stream a thread's namespace is stored in (`langgraph:<thread_id>[/<checkpoint_ns>]`). @since 0.5.0 */
  static streamFor(threadId: string, checkpointNamespace = ""): string {
    return streamOf(threadId, checkpointNamespace)
  }

  /** The Effect runtime underneath (the log, ids, token counter), for mixing in Effect code. @since 0.5.0 */
  readonly runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
  private readonly messagesChannel: string
  private readonly mirrorDeltaChannel: boolean
  private readonly threads = new Map<string, thread.ThreadState>()
  private readonly queues = new Map<string, Promise<unknown>>()
  /** Tasks queued on a stream and not started yet, and how many of them are writes. */
  private readonly waiting = new Map<string, { total: number; writes: number }>()
  /** The open group of each stream (writes staged, not committed yet). */
  private readonly groups = new Map<string, Group>()
  private readonly decodedItems = new WeakMap<WindowEvent.SerializedValue, { readonly value: unknown }>()
  private readonly versionsOf = new WeakMap<WindowEvent.SerializedValue, ChannelVersions>()
  /** Pending writes and `DeltaSnapshot` seeds decoded for `getDeltaChannelHistory`, once per process. */
  private readonly decodedHistory = new WeakMap<WindowEvent.SerializedValue, { readonly value: unknown }>()
  private closed = false
  private counted = {
    serialized: 0,
    events: 0,
    bytes: 0,
    compared: 0,
    eventsRead: 0,
    retried: 0,
    decoded: 0,
    commits: 0
  }

  constructor(options: CtxlogSaverOptions) {
    super(options.serde)
    const chosen = [options.sqlite, options.postgres, options.memory].filter((value) => value !== undefined)
    if (chosen.length !== 1) {
      throw reject(
        new InvalidCheckpointConfig({
          operation: "new CtxlogSaver",
          field: "options",
          detail: `takes exactly one of sqlite, postgres, memory (got ${chosen.length})`
        })
      )
    }
    this.messagesChannel = options.messagesChannel ?? "messages"
    this.mirrorDeltaChannel = options.mirrorDeltaChannel !== false
    this.runtime = ManagedRuntime.make(
      Layer.mergeAll(storeLayer(options), options.tokenCounter ?? TokenCounter.layerGpt(), Ids.layerUuidV7)
    )
  }

  /** The work counted since the saver was made. @since 0.5.0 */
  work(): SaverWork {
    return { ...this.counted }
  }

  /** Close the database (pool or file). Later calls reject with `SaverClosed`. @since 0.5.0 */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await Promise.allSettled([...this.queues.values()])
    await this.runtime.dispose()
  }

  private async run<A, E>(operation: string, effect: Effect.Effect<A, E, Services>): Promise<A> {
    if (this.closed) throw reject(new SaverClosed({ operation }))
    const exit = await this.runtime.runPromiseExit(effect)
    if (Exit.isSuccess(exit)) return exit.value
    throw toError(exit.cause)
  }

  /**
   * Run `task` after every earlier task on the same stream (one writer per stream in this process).
   * `kind` tells the group commit what waits: a write staged while only writes wait behind it leaves its
   * group open for them (see `stage`).
   */
  private exclusive<A>(stream: string, task: () => Promise<A>, kind: "read" | "write" = "read"): Promise<A> {
    const previous = this.queues.get(stream) ?? Promise.resolve()
    const waiting = this.waiting.get(stream) ?? { total: 0, writes: 0 }
    this.waiting.set(stream, waiting)
    waiting.total += 1
    if (kind === "write") waiting.writes += 1
    const start = () => {
      waiting.total -= 1
      if (kind === "write") waiting.writes -= 1
      return task()
    }
    const next = previous.then(start, start)
    const settled = next.then(
      () => undefined,
      () => undefined
    )
    this.queues.set(stream, settled)
    void settled.then(() => {
      if (this.queues.get(stream) === settled) {
        this.queues.delete(stream)
        if (waiting.total === 0) this.waiting.delete(stream)
      }
    })
    return next
  }

  /**
   * A `put` or `putWrites`: its events are built on the stream's state and committed in one transaction
   * with the writes queued right behind it on the same stream (LangGraph's loop issues a task's
   * `putWrites` while the step's `put` is still being written). The call resolves only once its own
   * events are committed, so each write is exactly as durable as when it was committed alone (ADR 0152).
   */
  private write(operation: string, stream: string, build: Builder): Promise<void> {
    let settle: Member["settle"] = { resolve: () => undefined, reject: () => undefined }
    const done = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject }
    })
    void this.exclusive(stream, () => this.stage(operation, stream, build, settle), "write")
    return done
  }

  /**
   * Build one write's events on the state of the open group (or the stream's, caught up), fold them into
   * that state at once (the group's next write builds on them), then commit the group unless more
   * writes, and only writes, wait behind this one.
   */
  private async stage(operation: string, stream: string, build: Builder, settle: Member["settle"]): Promise<void> {
    try {
      const open = this.groups.get(stream)
      const state = open?.state ?? (await this.sync(operation, stream))
      const built = await build(state)
      const group: Group = open ?? { state, expected: state.version, events: [], members: [] }
      for (const event of built?.events ?? []) {
        thread.fold(state, event, true)
        state.version += 1
        group.events.push(event)
      }
      built?.staged?.()
      group.members.push({ operation, build, settle })
      this.groups.set(stream, group)
    } catch (error) {
      settle.reject(error)
    }
    const group = this.groups.get(stream)
    if (group !== undefined && group.members.length < groupLimit) {
      // LangGraph issues a step's `put` and a finished task's `putWrites` a few callbacks apart: one turn
      // of the event loop lets a write issued meanwhile join this group instead of a transaction of its own.
      if (this.waiting.get(stream) === undefined || this.waiting.get(stream)?.total === 0) await nextTurn()
      const waiting = this.waiting.get(stream)
      if (waiting !== undefined && waiting.total > 0 && waiting.total === waiting.writes) return
    }
    await this.flush(stream)
  }

  /**
   * Commit the stream's open group: one append of every member's events at the version the group started
   * from. Written: each member resolves. Not written (another writer moved the stream, or the store
   * failed): the state folded ahead is dropped (the next read folds the log again) and each member is
   * written alone, in order, as if it had never been grouped (its own retries, its own error). Stored
   * changed (a redaction rule): the state is folded again from the log.
   */
  private async flush(stream: string): Promise<void> {
    const group = this.groups.get(stream)
    if (group === undefined) return
    this.groups.delete(stream)
    const first = group.members[0]
    if (group.events.length === 0 || first === undefined) {
      for (const member of group.members) member.settle.resolve()
      return
    }
    const events = group.events
    let outcome: "written" | "conflict" | { readonly error: unknown }
    try {
      const result = await this.run(
        first.operation,
        Effect.flatMap(EventLog.EventLog, (log) =>
          log.append(stream, events, group.expected, { actor }).pipe(
            Effect.map((appended) => (appended.stored === undefined ? ("as given" as const) : ("changed" as const))),
            Effect.catchTag("ConcurrencyConflict", () => Effect.succeed("conflict" as const))
          )
        )
      )
      if (result === "conflict") outcome = "conflict"
      else {
        outcome = "written"
        this.counted.commits += 1
        this.counted.events += events.length
        // Redacted on the way in: what this process folded is not what the log holds.
        if (result === "changed") this.threads.delete(stream)
      }
    } catch (error) {
      outcome = { error }
    }
    if (outcome === "written") {
      for (const member of group.members) member.settle.resolve()
      return
    }
    this.threads.delete(stream)
    if (outcome !== "conflict" && group.members.length === 1) {
      first.settle.reject(outcome.error)
      return
    }
    if (outcome === "conflict") this.counted.retried += 1
    for (const member of group.members) {
      try {
        await this.alone(member.operation, stream, member.build, outcome === "conflict" ? 1 : 0)
        member.settle.resolve()
      } catch (error) {
        member.settle.reject(error)
      }
    }
  }

  /** One write committed on its own: built on the caught-up state, tried again after a conflict. */
  private async alone(operation: string, stream: string, build: Builder, from: number): Promise<void> {
    for (let attempt = from; ; attempt += 1) {
      const state = await this.sync(operation, stream)
      const built = await build(state)
      if (built === undefined || built.events.length === 0) return
      const committed = await this.commit(operation, stream, state, attempt, Effect.succeed(built.events))
      if (committed === undefined) continue
      if (!committed.storedByLog) built.staged?.()
      return
    }
  }

  /**
   * Append the events `build` makes at the thread's version and fold what the log stored into `state`.
   * A concurrency conflict answers `undefined` (the caller syncs and tries again, five times at most;
   * then the conflict is the error). `storedByLog`: the log handed back what it stored (redacted), so
   * what the caller derived from the values it sent must not be kept.
   */
  private async commit(
    operation: string,
    stream: string,
    state: thread.ThreadState,
    attempt: number,
    build: Effect.Effect<ReadonlyArray<WindowEvent.WindowEvent>, never, Services>
  ): Promise<{ readonly storedByLog: boolean } | undefined> {
    const expected = state.version
    const result = await this.run(
      operation,
      Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        const events = yield* build
        return yield* log.append(stream, events, expected, { actor }).pipe(
          Effect.map((appended) => ({ _tag: "Written" as const, stored: appended.stored, events })),
          Effect.catchTag("ConcurrencyConflict", (conflict) => Effect.succeed({ _tag: "Conflict" as const, conflict }))
        )
      })
    )
    if (result._tag === "Conflict") {
      if (attempt < 5) {
        this.counted.retried += 1
        return undefined
      }
      throw new CtxlogError(result.conflict._tag, result.conflict.message, result.conflict)
    }
    const stored = result.stored ?? result.events
    stored.forEach((event, index) => {
      thread.fold(state, event, true)
      state.version = expected + index + 1
    })
    this.counted.events += stored.length
    this.counted.commits += 1
    return { storedByLog: result.stored !== undefined }
  }

  /** The stream's state, caught up with the log (one version query; the new events only). */
  private async sync(operation: string, stream: string): Promise<thread.ThreadState> {
    // A read never sees writes that are not committed yet (a group is open only while writes wait).
    await this.flush(stream)
    const state = this.threads.get(stream) ?? thread.empty()
    this.threads.set(stream, state)
    const read = await this.run(
      operation,
      Effect.gen(function* () {
        const log = yield* EventLog.EventLog
        const version = yield* log.version(stream)
        if (version <= state.version) return []
        return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream, { from: state.version + 1 })))
      })
    )
    for (const envelope of read) {
      if (envelope.version !== state.version + 1) continue
      thread.fold(state, envelope.event, envelope.metadata.actor === actor)
      state.version = envelope.version
    }
    this.counted.eventsRead += read.length
    return state
  }

  private async dump(
    operation: string,
    channel: string | undefined,
    value: unknown
  ): Promise<WindowEvent.SerializedValue> {
    try {
      const [type, bytes] = await this.serde.dumpsTyped(value)
      this.counted.serialized += 1
      this.counted.bytes += bytes.byteLength
      return storeBytes(type, bytes)
    } catch (error) {
      throw reject(
        new SerializationFailed({
          operation,
          // A Schema class: an undefined field would be a key of the instance and of its encoding.
          ...(channel === undefined ? {} : { channel }),
          detail: error instanceof Error ? error.message : String(error)
        })
      )
    }
  }

  private async load(operation: string, value: WindowEvent.SerializedValue, channel?: string): Promise<unknown> {
    try {
      this.counted.decoded += 1
      return await this.serde.loadsTyped(value.type, bytesOf(value))
    } catch (error) {
      throw reject(
        new SerializationFailed({
          operation,
          ...(channel === undefined ? {} : { channel }),
          detail: error instanceof Error ? error.message : String(error)
        })
      )
    }
  }

  /**
   * A channel's value at a version as checkpoint `at` sees it: a whole value, or a list rebuilt from the
   * nearest whole value or live list through the deltas after it. `undefined` when no checkpoint wrote it.
   */
  private async valueAt(
    operation: string,
    state: thread.ThreadState,
    channel: string,
    version: WindowEvent.ChannelVersion,
    at: string | null,
    copy: boolean
  ): Promise<{ readonly value: unknown; readonly writer: string } | undefined> {
    const first = thread.resolve(state, channel, version, at)
    if (first === undefined) return undefined
    const chain: Array<Extract<WindowEvent.ChannelValueWritten, { readonly base: unknown }>> = []
    const seen = new Set<string>()
    let current: thread.Written | undefined = first
    let start: unknown = []
    while (current !== undefined) {
      const live = state.live.peek(thread.liveKey(current.writer, channel))
      if (live !== undefined) {
        start = live
        break
      }
      const written: WindowEvent.ChannelValueWritten = current.written
      if ("value" in written) {
        start = await this.load(operation, written.value, channel)
        break
      }
      chain.push(written)
      if (seen.has(current.writer)) break
      seen.add(current.writer)
      const parent = state.checkpoints.get(current.writer)?.parentCheckpointId ?? null
      current = thread.resolve(state, channel, written.base, parent)
    }
    let value: unknown = start
    for (let index = chain.length - 1; index >= 0; index -= 1) {
      const step = chain[index]
      if (step === undefined) continue
      const appended: Array<unknown> = []
      for (const item of step.appended) {
        // A list item is decoded once per process: rebuilding older checkpoints' lists (`list`,
        // `getStateHistory`) reuses it instead of running the serializer again.
        const known = this.decodedItems.get(item)
        if (known !== undefined) {
          appended.push(known.value)
          continue
        }
        const decoded = await this.load(operation, item, channel)
        this.decodedItems.set(item, { value: decoded })
        appended.push(decoded)
      }
      value = listDelta.apply(Array.isArray(value) ? value : [], step.removed, appended)
    }
    if (!Array.isArray(value)) return { value, writer: first.writer }
    if (chain.length > 0 || !state.live.has(thread.liveKey(first.writer, channel))) {
      thread.remember(state, thread.liveKey(first.writer, channel), value)
    }
    // A list handed to LangGraph is a copy (the caller may change it); `put` only reads it: no O(list) copy.
    return { value: copy ? value.slice() : value, writer: first.writer }
  }

  /** A checkpoint's pending writes in LangGraph's order (`writesSortKey`: task path, task id, idx). */
  private orderedWrites(state: thread.ThreadState, checkpointId: string): ReadonlyArray<thread.StoredWrite> {
    const stored = [...(state.writes.get(checkpointId)?.values() ?? [])]
    return stored.sort((a, b) =>
      compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx))
    )
  }

  private async tupleOf(
    operation: string,
    state: thread.ThreadState,
    threadId: string,
    namespace: string,
    saved: CheckpointSaved,
    config: RunnableConfig | undefined
  ): Promise<CheckpointTuple> {
    const skeleton = await this.load(operation, saved.checkpoint)
    const checkpoint: Checkpoint = isRecord(skeleton)
      ? ({ ...skeleton, channel_values: {} } as unknown as Checkpoint)
      : ({ channel_values: {} } as unknown as Checkpoint)
    const values: Record<string, unknown> = {}
    for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
      const found = await this.valueAt(operation, state, channel, version, saved.checkpointId, true)
      if (found !== undefined && found.value !== undefined) values[channel] = found.value
    }
    // A value no channel version addresses belongs to its own checkpoint only.
    for (const written of saved.values) {
      if (written.version === unversioned && "value" in written) {
        values[written.channel] = await this.load(operation, written.value, written.channel)
      }
    }
    checkpoint.channel_values = values
    if (checkpoint.v < 4 && saved.parentCheckpointId !== null) {
      // Checkpoints before format 4 kept pending sends as the parent's TASKS writes (as MemorySaver migrates).
      const sends: Array<unknown> = []
      for (const write of this.orderedWrites(state, saved.parentCheckpointId)) {
        if (write.channel === TASKS) sends.push(await this.load(operation, write.value, write.channel))
      }
      checkpoint.channel_values[TASKS] = sends
      const versions = Object.values(checkpoint.channel_versions)
      checkpoint.channel_versions[TASKS] =
        versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined)
    }
    const metadata = (await this.load(operation, saved.metadata)) as CheckpointMetadata
    const pendingWrites: Array<CheckpointPendingWrite> = []
    for (const write of this.orderedWrites(state, saved.checkpointId)) {
      pendingWrites.push([write.taskId, write.channel, await this.load(operation, write.value, write.channel)])
    }
    const tuple: CheckpointTuple = {
      config: config ?? configOf(threadId, namespace, saved.checkpointId),
      checkpoint,
      metadata,
      pendingWrites
    }
    if (saved.parentCheckpointId !== null) {
      tuple.parentConfig = configOf(threadId, namespace, saved.parentCheckpointId)
    }
    return tuple
  }

  /** The checkpoint a config names, or the newest of its thread namespace. @since 0.5.0 */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    // LangGraph's behaviour: no thread, no checkpoint (a malformed thread id is still an error).
    if (configurableOf("getTuple", config)?.thread_id === undefined) return undefined
    const target = targetOf("getTuple", config, false)
    const stream = streamOf(target.threadId, target.namespace)
    return this.exclusive(stream, async () => {
      const state = await this.sync("getTuple", stream)
      const id = target.checkpointId ?? thread.newestFirst(state)[0]
      const saved = id === undefined ? undefined : state.checkpoints.get(id)
      if (saved === undefined) return undefined
      return this.tupleOf(
        "getTuple",
        state,
        target.threadId,
        target.namespace,
        saved,
        target.checkpointId === undefined ? undefined : config
      )
    })
  }

  /** Checkpoints newest first, filtered by thread, namespace, metadata (`filter`), `before` and `limit`. @since 0.5.0 */
  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const configurable = configurableOf("list", config)
    const threadId = checkId("list", "config.configurable.thread_id", configurable?.thread_id, true)
    const namespace = checkId("list", "config.configurable.checkpoint_ns", configurable?.checkpoint_ns, true)
    const checkpointId = checkId("list", "config.configurable.checkpoint_id", configurable?.checkpoint_id, true)
    const beforeConfigurable = options?.before === undefined ? undefined : configurableOf("list", options.before)
    const before = checkId("list", "options.before.configurable.checkpoint_id", beforeConfigurable?.checkpoint_id, true)
    const filter = options?.filter
    if (filter !== undefined && !isRecord(filter)) {
      throw reject(
        new InvalidCheckpointConfig({ operation: "list", field: "options.filter", detail: "must be an object" })
      )
    }
    let remaining = options?.limit
    const streams =
      threadId !== undefined && threadId !== "" && namespace !== undefined
        ? [streamOf(threadId, namespace)]
        : (
            await this.run(
              "list",
              Effect.flatMap(EventLog.EventLog, (log) => log.streams())
            )
          )
            .map((info) => info.stream)
            .filter((stream) => {
              const parsed = parseStream(stream)
              return (
                parsed !== undefined &&
                (threadId === undefined || threadId === "" || parsed.threadId === threadId) &&
                (namespace === undefined || parsed.namespace === namespace)
              )
            })
    for (const stream of streams) {
      const parsed = parseStream(stream)
      if (parsed === undefined) continue
      const tuples = await this.exclusive(stream, async () => {
        const state = await this.sync("list", stream)
        const out: Array<CheckpointTuple> = []
        for (const id of thread.newestFirst(state)) {
          if (remaining !== undefined && remaining <= 0) break
          if (checkpointId !== undefined && checkpointId !== "" && id !== checkpointId) continue
          if (before !== undefined && before !== "" && id >= before) continue
          const saved = state.checkpoints.get(id)
          if (saved === undefined) continue
          if (filter !== undefined) {
            const metadata = await this.load("list", saved.metadata)
            if (
              !isRecord(metadata) ||
              !Object.entries(filter).every(([key, value]) => sameValue(metadata[key], value))
            ) {
              continue
            }
          }
          if (remaining !== undefined) remaining -= 1
          out.push(await this.tupleOf("list", state, parsed.threadId, parsed.namespace, saved, undefined))
        }
        return out
      })
      for (const tuple of tuples) yield tuple
      if (remaining !== undefined && remaining <= 0) return
    }
  }

  /**
   * Save a checkpoint: the channels in `newVersions` only, a list as what changed against the parent's
   * list, the `messages` channel mirrored into the window.
   * @since 0.5.0
   */
  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions?: ChannelVersions
  ): Promise<RunnableConfig> {
    const target = targetOf("put", config, false)
    if (!isRecord(checkpoint) || typeof checkpoint.id !== "string" || checkpoint.id === "") {
      throw reject(
        new InvalidCheckpointConfig({ operation: "put", field: "checkpoint.id", detail: "must be a non-empty string" })
      )
    }
    if (!isRecord(checkpoint.channel_values) || !isRecord(checkpoint.channel_versions)) {
      throw reject(
        new InvalidCheckpointConfig({
          operation: "put",
          field: "checkpoint",
          detail: "must hold channel_values and channel_versions objects"
        })
      )
    }
    // LangGraph's loop always passes `newVersions`; a caller that does not (LangGraph's own saver tests
    // call `put(config, checkpoint, metadata)`) has not said what changed: every value is written.
    if (newVersions !== undefined && !isRecord(newVersions)) {
      throw reject(new InvalidCheckpointConfig({ operation: "put", field: "newVersions", detail: "must be an object" }))
    }
    const stream = streamOf(target.threadId, target.namespace)
    await this.write("put", stream, (state) => this.putEvents(state, target, checkpoint, metadata, newVersions))
    return configOf(target.threadId, target.namespace, checkpoint.id)
  }

  /** The events of a `put` on `state`: the window's change, then the checkpoint. */
  private async putEvents(
    state: thread.ThreadState,
    target: Target,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions | undefined
  ): ReturnType<Builder> {
    const parent = target.checkpointId === undefined ? undefined : state.checkpoints.get(target.checkpointId)
    const parentVersions = parent === undefined ? undefined : await this.channelVersionsOf(state, parent)
    const values: Array<WindowEvent.ChannelValueWritten> = []
    const lists: Array<readonly [string, ReadonlyArray<unknown>]> = []
    const fork = target.checkpointId !== undefined && state.head !== undefined && state.head !== target.checkpointId
    // What the messages list of this put changed against its base (the list of the checkpoint that wrote it).
    let messagesDelta:
      | {
          readonly baseWriter: string
          readonly removed: ReadonlyArray<string>
          readonly appended: ReadonlyArray<unknown>
        }
      | undefined
    for (const [channel, version] of toWrite(checkpoint, newVersions)) {
      if (!Object.hasOwn(checkpoint.channel_values, channel)) continue
      const value: unknown = Reflect.get(checkpoint.channel_values, channel)
      if (value === undefined) continue
      const baseVersion = version === unversioned ? undefined : parentVersions?.[channel]
      const base =
        Array.isArray(value) && baseVersion !== undefined && baseVersion !== version
          ? await this.valueAt("put", state, channel, baseVersion, target.checkpointId ?? null, false)
          : undefined
      const baseList: unknown = base?.value
      if (base !== undefined && Array.isArray(baseList) && Array.isArray(value)) {
        const delta = listDelta.diff(baseList, value)
        this.counted.compared += delta.compared
        if (delta.removed.length < baseList.length || baseList.length === 0) {
          const appended: Array<WindowEvent.SerializedValue> = []
          for (const item of delta.appended) appended.push(await this.dump("put", channel, item))
          values.push({ channel, version, base: baseVersion ?? version, removed: delta.removed, appended })
        } else {
          values.push({ channel, version, value: await this.dump("put", channel, value) })
        }
        if (channel === this.messagesChannel) {
          const removed = delta.removed.flatMap((index) => {
            const item: unknown = baseList[index]
            return isRecord(item) && typeof item.id === "string" ? [item.id] : []
          })
          messagesDelta = { baseWriter: base.writer, removed, appended: delta.appended }
        }
      } else {
        values.push({ channel, version, value: await this.dump("put", channel, value) })
      }
      if (Array.isArray(value)) lists.push([thread.liveKey(checkpoint.id, channel), value])
    }
    // The window mirrors one messages list (by the checkpoint that wrote it). This checkpoint's list:
    // written here, or carried from the checkpoint that last wrote its version.
    const messages: unknown = Reflect.get(checkpoint.channel_values, this.messagesChannel)
    const messagesVersion = checkpoint.channel_versions[this.messagesChannel]
    const writer =
      !Array.isArray(messages) || !isMessageList(messages)
        ? undefined
        : newVersions === undefined || Object.hasOwn(newVersions, this.messagesChannel)
          ? checkpoint.id
          : messagesVersion === undefined
            ? undefined
            : thread.resolve(state, this.messagesChannel, messagesVersion, target.checkpointId ?? null)?.writer
    let window: { readonly removed: ReadonlyArray<string>; readonly appended: ReadonlyArray<unknown> } | undefined
    if (writer !== undefined && writer !== state.windowWriter && Array.isArray(messages)) {
      if (writer === checkpoint.id && messagesDelta !== undefined && messagesDelta.baseWriter === state.windowWriter) {
        window = messagesDelta
      } else {
        // A fork (time travel), or a list with no base the window mirrors: move the window to this
        // list, keeping the messages both start with (by id). O(list): forks are rare.
        const ids = messages.map((item: unknown) => (isRecord(item) && typeof item.id === "string" ? item.id : ""))
        let kept = 0
        while (kept < state.windowIds.length && kept < ids.length && state.windowIds[kept] === ids[kept]) kept += 1
        window = { removed: state.windowIds.slice(kept), appended: messages.slice(kept) }
      }
    }
    if (
      this.mirrorDeltaChannel &&
      window === undefined &&
      !fork &&
      target.checkpointId !== undefined &&
      newVersions !== undefined &&
      Object.hasOwn(newVersions, this.messagesChannel) &&
      !(Array.isArray(messages) && isMessageList(messages))
    ) {
      // A DeltaChannel (`MessagesDeltaValue`) keeps no list in the checkpoint: its change is the parent's
      // pending writes to the channel, mirrored with the messages reducer's rules (unless the saver was made
      // with `mirrorDeltaChannel: false`: then the writes are the one copy of its messages, ADR 0164).
      window = await this.windowFromWrites(state, target.checkpointId)
    }
    const windowSource = window === undefined ? undefined : (writer ?? checkpoint.id)
    const skeleton = await this.dump("put", undefined, { ...checkpoint, channel_values: {} })
    const meta = await this.dump("put", undefined, metadata)
    const saved: Omit<CheckpointSaved, "id"> = {
      _tag: "CheckpointSaved",
      checkpointId: checkpoint.id,
      parentCheckpointId: target.checkpointId ?? null,
      // An event: an undefined key would make the live window differ from its replay.
      ...(fork && state.head !== undefined ? { forkOf: state.head } : {}),
      ...(windowSource === undefined ? {} : { windowOf: windowSource }),
      checkpoint: skeleton,
      metadata: meta,
      values
    }
    const reason =
      window === messagesDelta
        ? "langgraph: removed from messages"
        : fork
          ? `langgraph: fork from checkpoint ${target.checkpointId}`
          : "langgraph: messages replaced"
    const mirroredWindow = window
    const events = await this.run(
      "put",
      Effect.gen(function* () {
        const counter = yield* TokenCounter.TokenCounter
        const events: Array<WindowEvent.WindowEvent> = []
        if (mirroredWindow !== undefined && mirroredWindow.removed.length > 0) {
          events.push({ _tag: "MessagesRemoved", id: yield* Ids.next, messageIds: mirroredWindow.removed, reason })
        }
        for (const item of mirroredWindow?.appended ?? []) {
          const message: Message.Message = toWindowMessage(item, yield* Ids.next, counter)
          events.push({ _tag: "MessageAppended", id: yield* Ids.next, message })
        }
        events.push({ ...saved, id: yield* Ids.next })
        return events
      })
    )
    return {
      events,
      staged: () => {
        for (const [key, list] of lists) thread.remember(state, key, list)
      }
    }
  }

  /**
   * The window change a DeltaChannel messages list made: its pending writes on the parent checkpoint,
   * applied as `messagesDeltaReducer` does (a message with a new id is appended, one with a known id
   * replaces it, a `RemoveMessage` removes its id, `REMOVE_ALL_MESSAGES` everything). O(the writes).
   */
  private async windowFromWrites(
    state: thread.ThreadState,
    parentId: string
  ): Promise<{ readonly removed: ReadonlyArray<string>; readonly appended: ReadonlyArray<unknown> } | undefined> {
    const writes = this.orderedWrites(state, parentId).filter((write) => write.channel === this.messagesChannel)
    if (writes.length === 0) return undefined
    const present = new Set(state.windowIds)
    const removed = new Set<string>()
    const appended = new Map<string, unknown>()
    let anonymous = 0
    for (const write of writes) {
      const value = await this.load("put", write.value, write.channel)
      for (const item of Array.isArray(value) ? value : [value]) {
        if (!isBaseMessage(item)) continue
        const id = typeof item.id === "string" && item.id !== "" ? item.id : `anonymous-${++anonymous}`
        if (item.getType() === "remove") {
          const gone = id === REMOVE_ALL_MESSAGES ? [...present, ...appended.keys()] : [id]
          for (const each of gone) {
            if (present.has(each)) removed.add(each)
            appended.delete(each)
          }
          continue
        }
        if (present.has(id)) removed.add(id)
        appended.delete(id)
        appended.set(id, item)
      }
    }
    return { removed: [...removed], appended: [...appended.values()] }
  }

  /** A checkpoint's channel versions (read only; decoded once per process). */
  private async channelVersionsOf(state: thread.ThreadState, saved: CheckpointSaved): Promise<ChannelVersions> {
    const known = this.versionsOf.get(saved.checkpoint)
    if (known !== undefined) return known
    const skeleton = await this.load("put", saved.checkpoint)
    const versions = isRecord(skeleton) ? skeleton.channel_versions : undefined
    const out: ChannelVersions = {}
    if (isRecord(versions)) {
      for (const [channel, version] of Object.entries(versions)) {
        if (typeof version === "number" || typeof version === "string") out[channel] = version
      }
    }
    this.versionsOf.set(saved.checkpoint, out)
    void state
    return out
  }

  /**
   * A stored value decoded once per process for `getDeltaChannelHistory` (a write's value, a snapshot).
   * Handed out as a fresh list or `DeltaSnapshot` around the shared items: LangGraph's delta reducers
   * build a new list and never change the items they were given.
   */
  private async decodedOnce(operation: string, stored: WindowEvent.SerializedValue, channel: string): Promise<unknown> {
    let known = this.decodedHistory.get(stored)
    if (known === undefined) {
      known = { value: await this.load(operation, stored, channel) }
      this.decodedHistory.set(stored, known)
    }
    const value = known.value
    if (Array.isArray(value)) return value.slice()
    if (isDeltaSnapshot(value) && Array.isArray(value.value)) return new DeltaSnapshot(value.value.slice())
    return value
  }

  /**
   * What a `DeltaChannel` needs to rebuild its value at a checkpoint, served from the folded log: the
   * pending writes of each ancestor (the events `putWrites` appended) back to the nearest ancestor that
   * stored the channel's value (its seed, a `DeltaSnapshot`). LangGraph's default walks `getTuple` per
   * ancestor (a read, every channel value and every write decoded again, per step); here the chain is in
   * memory, only the requested channels' writes are decoded, and each stored value is decoded once per
   * process. The same answer as the default walk (LangGraph's contract: ancestors on the parent chain
   * only, writes in `writesSortKey` order, the seed ancestor's own writes included).
   * @since 0.8.0
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig
    channels: Array<string>
  }): Promise<Record<string, DeltaChannelHistory>> {
    const operation = "getDeltaChannelHistory"
    const { config, channels } = options
    if (channels.length === 0) return {}
    if (configurableOf(operation, config)?.thread_id === undefined) {
      return Object.fromEntries(channels.map((channel) => [channel, { writes: [] }]))
    }
    const target = targetOf(operation, config, false)
    const stream = streamOf(target.threadId, target.namespace)
    return this.exclusive(stream, async () => {
      const state = await this.sync(operation, stream)
      const id = target.checkpointId ?? thread.newestFirst(state)[0]
      const collected = new Map<string, Array<CheckpointPendingWrite>>(channels.map((channel) => [channel, []]))
      const seeds = new Map<string, unknown>()
      const remaining = new Set(channels)
      const seen = new Set<string>()
      let cursor = id === undefined ? null : (state.checkpoints.get(id)?.parentCheckpointId ?? null)
      while (cursor !== null && remaining.size > 0 && !seen.has(cursor)) {
        seen.add(cursor)
        const saved = state.checkpoints.get(cursor)
        if (saved === undefined) break
        const writes = this.orderedWrites(state, cursor)
        for (let index = writes.length - 1; index >= 0; index -= 1) {
          const write = writes[index]
          if (write === undefined || !remaining.has(write.channel)) continue
          const value = await this.decodedOnce(operation, write.value, write.channel)
          collected.get(write.channel)?.push([write.taskId, write.channel, value])
        }
        const versions = await this.channelVersionsOf(state, saved)
        for (const channel of [...remaining]) {
          const seed = await this.seedAt(operation, state, saved, channel, versions[channel])
          if (seed === undefined) continue
          seeds.set(channel, seed.value)
          remaining.delete(channel)
        }
        cursor = saved.parentCheckpointId
      }
      const out: Record<string, DeltaChannelHistory> = {}
      for (const channel of channels) {
        const entry: DeltaChannelHistory = { writes: (collected.get(channel) ?? []).reverse() }
        if (seeds.has(channel)) entry.seed = seeds.get(channel)
        out[channel] = entry
      }
      return out
    })
  }

  /** The value checkpoint `saved` holds for `channel` (as `getTuple` would give it), if it holds one. */
  private async seedAt(
    operation: string,
    state: thread.ThreadState,
    saved: CheckpointSaved,
    channel: string,
    version: WindowEvent.ChannelVersion | undefined
  ): Promise<{ readonly value: unknown } | undefined> {
    for (const written of saved.values) {
      if (written.channel === channel && written.version === unversioned && "value" in written) {
        return { value: await this.decodedOnce(operation, written.value, channel) }
      }
    }
    if (version === undefined) return undefined
    const found = thread.resolve(state, channel, version, saved.checkpointId)
    if (found === undefined) return undefined
    if ("value" in found.written) {
      const value = await this.decodedOnce(operation, found.written.value, channel)
      return value === undefined ? undefined : { value }
    }
    const rebuilt = await this.valueAt(operation, state, channel, version, saved.checkpointId, true)
    return rebuilt === undefined || rebuilt.value === undefined ? undefined : { value: rebuilt.value }
  }

  /** Save a task's pending writes against a checkpoint. @since 0.5.0 */
  async putWrites(
    config: RunnableConfig,
    writes: Array<PendingWrite>,
    taskId: string,
    taskPath?: string
  ): Promise<void> {
    const target = targetOf("putWrites", config, true)
    const checkpointId = target.checkpointId ?? ""
    if (typeof taskId !== "string" || taskId === "") {
      throw reject(
        new InvalidCheckpointConfig({ operation: "putWrites", field: "taskId", detail: "must be a non-empty string" })
      )
    }
    if (!Array.isArray(writes)) {
      throw reject(new InvalidCheckpointConfig({ operation: "putWrites", field: "writes", detail: "must be an array" }))
    }
    const stream = streamOf(target.threadId, target.namespace)
    await this.write("putWrites", stream, async (state) => {
      const saved: Array<WindowEvent.PendingWriteSaved> = []
      for (const [index, write] of writes.entries()) {
        if (!Array.isArray(write) || typeof write[0] !== "string") {
          throw reject(
            new InvalidCheckpointConfig({
              operation: "putWrites",
              field: `writes[${index}]`,
              detail: "must be a [channel, value] pair"
            })
          )
        }
        const [channel, value] = write
        const idx = WRITES_IDX_MAP[channel] ?? index
        if (idx >= 0 && thread.hasWrite(state, checkpointId, taskId, idx)) continue
        saved.push({ idx, channel, value: await this.dump("putWrites", channel, value) })
      }
      if (saved.length === 0) return undefined
      const id = await this.run("putWrites", Ids.next)
      const event: WindowEvent.WindowEvent = {
        _tag: "CheckpointWritesSaved",
        id,
        checkpointId,
        taskId,
        taskPath: taskPath ?? "",
        writes: saved
      }
      return { events: [event] }
    })
  }

  /**
   * Delete a thread: every namespace's checkpoints and writes are gone for the saver (a
   * `CheckpointsDeleted` event) and its window is cleared. The events stay in the append-only log; erase
   * them with `@ctxlog/memory`'s `Erasure` when they must go.
   * @since 0.5.0
   */
  async deleteThread(threadId: string): Promise<void> {
    checkId("deleteThread", "threadId", threadId, false)
    const streams = (
      await this.run(
        "deleteThread",
        Effect.flatMap(EventLog.EventLog, (log) => log.streams())
      )
    )
      .map((info) => info.stream)
      .filter((stream) => parseStream(stream)?.threadId === threadId)
    for (const stream of streams) {
      await this.exclusive(stream, async () => {
        for (let attempt = 0; ; attempt += 1) {
          const state = await this.sync("deleteThread", stream)
          if (state.checkpoints.size === 0 && state.writes.size === 0 && state.windowIds.length === 0) return
          const committed = await this.commit(
            "deleteThread",
            stream,
            state,
            attempt,
            Effect.gen(function* () {
              const events: ReadonlyArray<WindowEvent.WindowEvent> = [
                { _tag: "CheckpointsDeleted", id: yield* Ids.next },
                { _tag: "HistoryCleared", id: yield* Ids.next, scope: "conversation" }
              ]
              return events
            })
          )
          if (committed === undefined) continue
          return
        }
      })
    }
  }
}
