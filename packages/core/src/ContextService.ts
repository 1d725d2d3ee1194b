/**
 * The window façade: every operation is load → decide → append (expected version) → evolve, and
 * returns the new window with the events it wrote.
 *
 * The service keeps the last window of each stream it touched in memory (an LRU bounded by streams) and
 * decides on it directly: the append's expected-version check, in the same transaction as the write,
 * tells whether another writer got there first. Then the window catches up by reading only the tail of
 * the stream, and the decision runs again (`decide` is pure, so re-deciding is safe), with jittered
 * exponential backoff between attempts. A decision that writes nothing checks the stream's version
 * before it returns, so it never answers from a stale window.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Decide from "./Decide.js"
import { continuation, decide, type InvalidCommand, summariesToInject, type WindowCommand } from "./Decide.js"
import type { EventDecodeError, EventEncodeError } from "./EventCodec.js"
import * as EventHash from "./EventHash.js"
import * as Validation from "./Validation.js"
import type { InvalidInput } from "./Validation.js"
import {
  type ConcurrencyConflict,
  type DuplicateEventIds,
  EventLog,
  type EventMetadata,
  type OwnerMismatch,
  type StoreError,
  type StreamId,
  type TamperDetected
} from "./EventLog.js"
import { Ids } from "./Ids.js"
import { drawOf } from "./internal/draw.js"
import * as Lru from "./Lru.js"
import type { InjectedKind, Message, MessageInput } from "./Message.js"
import { type RecallError, RecallSource } from "./RecallSource.js"
import { TokenCounter } from "./TokenCounter.js"
import * as Window from "./Window.js"
import * as Receipt from "./Receipt.js"
import { type Draft, stamp, type WindowEvent } from "./WindowEvent.js"
import * as EventLogModule from "./EventLog.js"
import * as IdsModule from "./Ids.js"
import * as RecallSourceModule from "./RecallSource.js"
import * as TokenCounterModule from "./TokenCounter.js"
import * as Tracing from "./Tracing.js"
import {
  type Held,
  type IntegrityOptions,
  layerReplay as layerReplayRepository,
  WindowRepository
} from "./WindowRepository.js"

/** What an operation did: the window after it and the events it wrote (none for a no-op). @since 0.1.0 */
export interface Outcome {
  readonly window: Window.Window
  readonly events: ReadonlyArray<WindowEvent>
}

/** The requested version is not in the stream. @since 0.1.0 */
export class VersionNotFound extends Schema.TaggedError<VersionNotFound>()("VersionNotFound", {
  stream: Schema.String,
  version: Schema.Number,
  current: Schema.Number
}) {
  override get message(): string {
    return `stream "${this.stream}" has no version ${this.version} (current version ${this.current})`
  }
}

/** Failures of the log underneath an operation. @since 0.1.0 */
export type LogError =
  | ConcurrencyConflict
  | DuplicateEventIds
  | EventEncodeError
  | InvalidInput
  | OwnerMismatch
  | StoreError
  | EventDecodeError
  | TamperDetected

/** Every failure a window operation can have. @since 0.1.0 */
export type ContextError = LogError | InvalidCommand | RecallError | VersionNotFound

/** The failures of executing `C`: a recall can also fail in its `RecallSource`. @since 0.8.0 */
export type CommandError<C extends Command> = C extends { readonly _tag: "Recall" }
  ? LogError | InvalidCommand | RecallError
  : LogError | InvalidCommand

/** The window operations. @since 0.1.0 */
export class ContextService extends Context.Tag("@ctxlog/core/ContextService")<
  ContextService,
  ContextService.Service
>() {}

type Op<A extends ReadonlyArray<unknown>> = (
  stream: StreamId,
  ...args: A
) => Effect.Effect<Outcome, LogError | InvalidCommand>

type Recall = (
  stream: StreamId,
  query: string,
  budget: number,
  owner?: string
) => Effect.Effect<Outcome, LogError | InvalidCommand | RecallError>

/**
 * A window operation as a value: what `execute(stream, command)` runs, the one entry of the service.
 * Every named member of the service is a typed helper that builds one of these and executes it, so an
 * operation can be logged, queued, traced or replayed as data. Declared once, in `Decide`, with the
 * form `decide` takes (`Decide.WindowCommand`). The source API's thirteen `removeXMessages` names are
 * values too: `RemoveKind({ kind })` with the kind the name stood for (`sourceKinds`).
 * @since 0.4.0
 */
export type Command = Decide.Command

/** Constructors and matchers of {@link Command} (`Command.AppendMessages({ messages })`). @since 0.4.0 */
export const Command: typeof Decide.Command = Decide.Command

/**
 * The source API's removal helpers by name, as the kind each one removes: `removeRecallMessages(s)` is
 * `execute(s, Command.RemoveKind({ kind: sourceKinds.removeRecallMessages }))`.
 * @since 0.4.0
 */
export const sourceKinds = {
  removeRecallMessages: "recall",
  removeCorrectionMessages: "correction",
  removeGraphFactsMessages: "graph_facts",
  removePersonaFactsMessages: "persona_facts",
  removeTrajectoryHintsMessages: "trajectory_hints",
  removeTreeMemoryMessages: "tree_memory",
  removeReasoningStrategiesMessages: "reasoning_strategies",
  removeLspMessages: "lsp",
  removeCodeContextMessages: "code_context",
  removeSummaryMessages: "summary",
  removeCrossSessionMessages: "cross_session",
  removeSessionDigestMessage: "session_digest",
  removeDocumentRagMessages: "document_rag"
} as const satisfies Record<string, InjectedKind>

/** What `batch` did: the effect's value, the window after the one append, and the events it wrote. @since 0.4.0 */
export interface Batched<A> extends Outcome {
  readonly value: A
}

/** @since 0.1.0 */
export declare namespace ContextService {
  /** @since 0.1.0 */
  export interface Service {
    readonly load: (stream: StreamId) => Effect.Effect<Window.Window, StoreError | EventDecodeError | TamperDetected>
    /**
     * The extension point: run a pure decision on the loaded window and append what it returns, retrying
     * on a concurrency conflict. Compaction, seams and renders append their events through it.
     */
    readonly run: <E>(
      stream: StreamId,
      decide: (window: Window.Window) => Either.Either<ReadonlyArray<Draft>, E>,
      metadata?: EventMetadata
    ) => Effect.Effect<Outcome, E | LogError>
    /**
     * Run one command: the single entry of the window operations. Every named operation below is a typed
     * helper that builds its command and runs it here (one span each, named after the operation).
     */
    readonly execute: <C extends Command>(stream: StreamId, command: C) => Effect.Effect<Outcome, CommandError<C>>
    /**
     * Run `effect` as one unit of work on `stream`: the window is loaded once, every operation inside
     * (this service's commands and `run`, whoever calls them: compaction, seams, renders) decides on
     * the window as it stands after the ones before it, and their events are written in ONE append
     * when the effect succeeds (nothing when it fails). A concurrent writer makes the append conflict;
     * the whole effect then runs again on the caught-up window (its decisions are re-made, so its
     * effects must be safe to repeat), up to the conflict retries. Operations on other streams inside
     * it are not batched.
     */
    readonly batch: <A, E, R>(
      stream: StreamId,
      effect: Effect.Effect<A, E, R>,
      metadata?: EventMetadata
    ) => Effect.Effect<Batched<A>, E | LogError, R>
    /**
     * Give messages ids and token counts, as they will enter the log: a message of an injected kind is
     * counted inside its `<context kind="…">` wrapper, as every builder sends it.
     */
    readonly prepare: (
      inputs: ReadonlyArray<MessageInput>,
      kind?: InjectedKind
    ) => Effect.Effect<ReadonlyArray<Message>>
    readonly setSystemPrompt: Op<[prompt: string | ReadonlyArray<MessageInput>]>
    readonly setKnowledge: Op<[knowledge: ReadonlyArray<string | MessageInput>]>
    readonly setTaskGoal: Op<[goal: string | null]>
    readonly setSubgoals: Op<[subgoals: ReadonlyArray<string>]>
    readonly raiseSignal: Op<[text: string]>
    readonly appendMessages: Op<[messages: ReadonlyArray<MessageInput>]>
    readonly clearHistory: Op<[]>
    /** Remove every message of an injected kind, from knowledge and history (see {@link sourceKinds}). */
    readonly removeKind: Op<[kind: InjectedKind]>
    readonly trimToBudget: Op<[budget: number]>
    readonly inject: Op<[kind: InjectedKind, messages: ReadonlyArray<string | MessageInput>]>
    readonly injectSemanticRecall: Recall
    readonly injectCrossSessionContext: Recall
    /**
     * Inject this conversation's stored summaries and seams that are no longer in the window (compaction
     * and seam events of the log), newest first, within `budget` tokens, as `summary` knowledge. Needs no
     * query. Reads the stream's log once: an operation for the start of a session, not for every turn.
     */
    readonly injectSummaries: (stream: StreamId, budget: number) => Effect.Effect<Outcome, LogError | InvalidCommand>
    readonly pin: Op<[messageId: string, pinned?: boolean]>
    readonly completeTurn: Op<[]>
    /**
     * Start a new conversation: a new stream that begins with this one's system prompt and stable
     * knowledge; this stream ends with `ConversationContinued` pointing to it. Returns the new stream.
     */
    readonly resetConversation: (
      stream: StreamId
    ) => Effect.Effect<Outcome & { readonly stream: StreamId }, LogError | InvalidCommand>
    /** Copy the events of `stream` up to `version` into the new stream `into` (which must not exist). */
    readonly forkAt: (
      stream: StreamId,
      version: number,
      into: StreamId
    ) => Effect.Effect<Outcome, LogError | VersionNotFound>
  }
}

const isConflict = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "ConcurrencyConflict"

/** How the service caches windows and retries stale writes. @since 0.1.0 */
export interface Options {
  /** Streams whose last window is kept in memory (least recently used leave first; default 1,000). */
  readonly cacheStreams?: number | undefined
  /** Attempts after a concurrency conflict before it is returned (default 30). */
  readonly conflictRetries?: number | undefined
  /**
   * First backoff between attempts; it doubles, with jitter, up to `conflictBackoffMax` (default 2 ms;
   * the first retry is at once).
   */
  readonly conflictBackoff?: Duration.DurationInput | undefined
  /** Longest backoff between two attempts (default 100 ms). */
  readonly conflictBackoffMax?: Duration.DurationInput | undefined
}

/** Build the service from its dependencies, with cache and retry options (all optional). @since 0.1.0 */
export const make = (options: Options = {}) =>
  Effect.gen(function* () {
    const log = yield* EventLog
    const repository = yield* WindowRepository
    const counter = yield* TokenCounter
    const ids = yield* Ids
    // The built-in id services are drawn in plain code (the same ids `next` gives): no effect per id.
    const draw = drawOf(ids)
    const recallSource = yield* RecallSource
    // Each window is kept with the hash of its last event: a catch-up checks the new events from it.
    const cache = Lru.make<StreamId, Held>(options.cacheStreams ?? 1000)
    const longest = Duration.decode(options.conflictBackoffMax ?? "100 millis")
    const retry = Schedule.exponential(options.conflictBackoff ?? "2 millis").pipe(
      Schedule.modifyDelay((delay) => Duration.min(delay, longest)),
      Schedule.jittered,
      // The first retry runs at once: catching up with the tail is usually all a conflict needs.
      Schedule.union(Schedule.once),
      Schedule.intersect(Schedule.recurs(Math.max(0, options.conflictRetries ?? 30))),
      Schedule.whileInput(isConflict)
    )
    /**
     * `Effect.retry(retry)`, its driver made only once an attempt has failed: nearly every operation succeeds
     * at once, and making the driver (and providing its iteration metadata) cost a one-message append more
     * than any other effect of it. From the first failure on, the schedule decides as before.
     */
    const retrying = <A, E, R>(attempt: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.catchAll(attempt, (first) =>
        Effect.flatMap(Schedule.driver(retry), (driver) => {
          const after = (error: E): Effect.Effect<A, E, R> =>
            Effect.matchEffect(driver.next(error), {
              onFailure: () => Effect.fail(error),
              onSuccess: () => Effect.catchAll(attempt, after)
            })
          return after(first)
        })
      )

    const remember = (stream: StreamId, held: Held): Window.Window => {
      const cached = cache.get(stream)
      // Another fiber may have cached a newer window of this stream meanwhile: keep the newest.
      if (cached === undefined || cached.window.version <= held.window.version) cache.set(stream, held)
      return held.window
    }

    /** The cached window (or the stored one), brought up to the stream's current version. */
    const fresh = (stream: StreamId) =>
      Effect.gen(function* () {
        const cached = cache.get(stream)
        if (cached === undefined) return remember(stream, yield* repository.loadHeld(stream))
        const current = yield* log.version(stream)
        if (current === cached.window.version) return cached.window
        if (current < cached.window.version) {
          // The stream went back (it was erased, and maybe written again): the cached window holds what
          // no longer exists, so it is dropped, never caught up.
          const loaded = yield* repository.loadHeld(stream)
          cache.set(stream, loaded)
          return loaded.window
        }
        const caughtUp = yield* repository.catchUp(stream, cached, current).pipe(
          // A window whose next event does not link to it is never served again: the next operation
          // loads (and checks) the stream from the store.
          Effect.tapErrorTag("TamperDetected", () => Effect.sync(() => cache.delete(stream)))
        )
        return remember(stream, caughtUp)
      })

    // The unit of work `batch` runs in, per fiber: operations on its stream decide on its window and
    // add to its events instead of appending. `self` tells this service's units from another's.
    const self = Symbol("ContextService")
    // Read off the running fiber: one effect on every operation's path, not a FiberRef.get and a map.
    const unitIn = (fiber: Fiber.RuntimeFiber<unknown, unknown>, stream: StreamId): Unit | undefined => {
      const unit = fiber.getFiberRef(currentUnit)
      return unit !== undefined && unit.owner === self && unit.stream === stream ? unit : undefined
    }
    const unitOf = (stream: StreamId) =>
      Effect.withFiberRuntime<Unit | undefined>((fiber) => Effect.succeed(unitIn(fiber, stream)))

    const load: ContextService.Service["load"] = (stream) =>
      Effect.flatMap(unitOf(stream), (unit) => (unit === undefined ? fresh(stream) : Effect.succeed(unit.window)))

    /** Give drafts their event ids: one effect for the common one-event decision, one per draft otherwise. */
    const stampAll = (drafts: ReadonlyArray<Draft>): Effect.Effect<Array<WindowEvent>> => {
      if (draw !== undefined) return Effect.sync(() => drafts.map((draft) => stamp(draft, draw())))
      if (drafts.length === 1) {
        const draft = drafts[0] as Draft
        return Effect.map(ids.next, (id) => [stamp(draft, id)])
      }
      return Effect.forEach(drafts, (draft) => Effect.map(ids.next, (id) => stamp(draft, id)))
    }

    /**
     * Append what a decision on `window` returned and fold it into the cached window. Plain `flatMap`s,
     * no generator: this is the path of every one-message `appendMessages` (issue 24).
     */
    const write = (
      stream: StreamId,
      window: Window.Window,
      drafts: ReadonlyArray<Draft>,
      metadata: EventMetadata | undefined
    ): Effect.Effect<Outcome, LogError> =>
      // Drawn in plain code when the id service allows it (this runs inside the attempt's effect).
      draw === undefined
        ? Effect.flatMap(stampAll(drafts), (stamped) => appendStamped(stream, window, stamped, metadata))
        : appendStamped(
            stream,
            window,
            drafts.map((draft) => stamp(draft, draw())),
            metadata
          )

    const appendStamped = (
      stream: StreamId,
      window: Window.Window,
      stamped: Array<WindowEvent>,
      metadata: EventMetadata | undefined
    ): Effect.Effect<Outcome, LogError> => {
      // Every event that replaces or removes messages gets its receipt here, on the decided-on window.
      const events = Receipt.attach(window, stamped)
      return Effect.flatMap(log.append(stream, events, window.version, metadata), (appended) => {
        // Fold what the log holds (a store may have redacted a secret), so the cache equals a replay.
        const written = appended.stored ?? events
        const next = remember(stream, { window: Window.replay(written, window), hash: appended.lastHash })
        return Effect.as(repository.committed(stream, next), { window: next, events: written })
      })
    }

    /** Decide on `window` and write what the decision returns (nothing for no events). */
    const decideAndWrite = <E>(
      stream: StreamId,
      window: Window.Window,
      decision: Either.Either<ReadonlyArray<Draft>, E>,
      metadata: EventMetadata | undefined
    ): Effect.Effect<Outcome, E | LogError> => {
      if (Either.isLeft(decision)) return Effect.fail(decision.left)
      const drafts = decision.right
      return drafts.length === 0 ? Effect.succeed({ window, events: [] }) : write(stream, window, drafts, metadata)
    }

    const runDirect: ContextService.Service["run"] = (stream, decideFn, metadata) => {
      let attempt = 0
      return Effect.suspend(() => {
        // First attempt: the cached window as it is (the append checks it). After a conflict: catch up.
        const cached = attempt++ === 0 ? cache.get(stream)?.window : undefined
        if (cached === undefined) {
          return Effect.flatMap(fresh(stream), (window) => decideAndWrite(stream, window, decideFn(window), metadata))
        }
        const decision = decideFn(cached)
        // A decision that writes nothing (no events, or refused) is checked by no append: make sure it was
        // not made on a stale window (another writer may have added the tool call a result answers).
        const writes = Either.isRight(decision) && decision.right.length > 0
        if (writes) return decideAndWrite(stream, cached, decision, metadata)
        return Effect.flatMap(log.version(stream), (current) =>
          current === cached.version
            ? decideAndWrite(stream, cached, decision, metadata)
            : Effect.flatMap(fresh(stream), (window) => decideAndWrite(stream, window, decideFn(window), metadata))
        )
      }).pipe(retrying)
    }

    /** Inside a unit: decide on the unit's window and keep the events for its one append. */
    const runInUnit = <E>(unit: Unit, decideFn: (window: Window.Window) => Either.Either<ReadonlyArray<Draft>, E>) =>
      Effect.gen(function* () {
        const drafts = yield* Either.match(decideFn(unit.window), { onLeft: Effect.fail, onRight: Effect.succeed })
        if (drafts.length === 0) return { window: unit.window, events: [] }
        const stamped: Array<WindowEvent> = []
        for (const draft of drafts) stamped.push(stamp(draft, yield* ids.next))
        const events = Receipt.attach(unit.window, stamped)
        unit.window = Window.replay(events, unit.window)
        unit.events.push(...events)
        return { window: unit.window, events }
      })

    // The unit is read off the fiber in the same effect that picks the path (one effect, not two).
    const run: ContextService.Service["run"] = (stream, decideFn, metadata) =>
      Effect.withFiberRuntime((fiber) => {
        const unit = unitIn(fiber, stream)
        return unit === undefined ? runDirect(stream, decideFn, metadata) : runInUnit(unit, decideFn)
      })

    const batch: ContextService.Service["batch"] = (stream, effect, metadata) =>
      Effect.flatMap(unitOf(stream), (outer) =>
        outer !== undefined
          ? // Nested in a unit of the same stream: its operations join the outer unit and its append.
            Effect.map(effect, (value) => ({ value, window: outer.window, events: [] }))
          : Effect.suspend(() => {
              let attempt = 0
              return Effect.gen(function* () {
                // As in `run`: the first attempt works on the cached window as it is (the append checks its
                // version, and a conflict runs the unit again on the caught-up window), so a turn's step
                // costs one append and no version read. A unit that writes nothing is checked instead.
                const cached = attempt++ === 0 ? cache.get(stream)?.window : undefined
                const unitOn = (base: Window.Window) =>
                  Effect.gen(function* () {
                    const unit: Unit = { owner: self, stream, window: base, events: [] }
                    const value = yield* Effect.locally(effect, currentUnit, unit)
                    return { base, unit, value }
                  })
                let ran = yield* unitOn(cached ?? (yield* fresh(stream)))
                if (
                  cached !== undefined &&
                  ran.unit.events.length === 0 &&
                  (yield* log.version(stream)) !== cached.version
                ) {
                  ran = yield* unitOn(yield* fresh(stream))
                }
                const { base, unit, value } = ran
                if (unit.events.length === 0) return { value, window: unit.window, events: [] }
                const appended = yield* log.append(stream, unit.events, base.version, metadata)
                const written = appended.stored ?? unit.events
                // The unit folded its events as it ran: fold again only what a store changed (a redaction).
                const folded = appended.stored === undefined ? unit.window : Window.replay(written, base)
                const next = remember(stream, { window: folded, hash: appended.lastHash })
                yield* repository.committed(stream, next)
                return { value, window: next, events: written }
              }).pipe(retrying)
            })
      )

    /**
     * Messages as they enter the log, counted as the builders send them: injected kinds inside their
     * `<context kind="…">` wrapper (Window.renderContext); in history, a `chat` system message too (under
     * the label `system`), as Anthropic and Ollama send it. Counted once here, never per event.
     */
    const messageOf = (input: MessageInput, id: string, kind: InjectedKind | undefined, history: boolean): Message => {
      const effective = kind ?? input.kind ?? "chat"
      const label = effective !== "chat" ? effective : history && input.role === "system" ? "system" : undefined
      const own = counter.countMessage(input)
      const message: { -readonly [K in keyof Message]: Message[K] } = {
        id,
        role: input.role,
        kind: effective,
        parts: input.parts,
        tokens: label === undefined ? own : Window.wrappedTokens(counter, label, input, own)
      }
      // The optional fields in the order the spreads gave them, assigned only when present (no object per
      // absent one: this runs for every message that enters the log).
      if (input.pinned === true) message.pinned = true
      if (input.name !== undefined) message.name = input.name
      if (input.providerOptions !== undefined) message.providerOptions = input.providerOptions
      return message
    }
    // The ids in input order (a message's own, else the next one): one effect for the usual one message.
    const countFor = (
      inputs: ReadonlyArray<MessageInput>,
      kind: InjectedKind | undefined,
      history: boolean
    ): Effect.Effect<ReadonlyArray<Message>> => {
      const only = inputs.length === 1 ? (inputs[0] as MessageInput) : undefined
      if (only !== undefined) {
        return only.id === undefined
          ? Effect.map(ids.next, (id) => [messageOf(only, id, kind, history)])
          : Effect.sync(() => [messageOf(only, only.id as string, kind, history)])
      }
      return Effect.forEach(inputs, (input) =>
        Effect.map(input.id === undefined ? ids.next : Effect.succeed(input.id), (id) =>
          messageOf(input, id, kind, history)
        )
      )
    }
    /** The messages in plain code, ids drawn by `drawn` in input order (a message's own id, else the next). */
    const countNow = (
      inputs: ReadonlyArray<MessageInput>,
      kind: InjectedKind | undefined,
      history: boolean,
      drawn: () => string
    ): ReadonlyArray<Message> => inputs.map((input) => messageOf(input, input.id ?? drawn(), kind, history))
    // Validation first: counting stringifies tool inputs, which a BigInt, a cycle or a deep array breaks.
    const prepareFor = (inputs: ReadonlyArray<MessageInput>, kind: InjectedKind | undefined, history: boolean) =>
      Effect.suspend(() => {
        const problem = Validation.messagesProblem(inputs)
        if (problem !== undefined) return Effect.fail(problem)
        return draw === undefined
          ? countFor(inputs, kind, history)
          : Effect.succeed(countNow(inputs, kind, history, draw))
      })
    const prepare = (inputs: ReadonlyArray<MessageInput>, kind?: InjectedKind) => prepareFor(inputs, kind, false)

    const command = (stream: StreamId, cmd: WindowCommand) => run(stream, (window) => decide(window, cmd))

    /** The goal's event, and the subgoals' when their share of the rendered block changes with it. */
    const setGoal = (window: Window.Window, goal: string | null) => {
      const shares = Window.taskStateShares(counter.count, goal, window.taskState.subgoals)
      const goalSet = decide(window, { _tag: "SetTaskGoal", goal, tokens: shares.goalTokens })
      return shares.subgoalTokens === window.taskState.subgoalTokens
        ? goalSet
        : Either.flatMap(goalSet, (events) =>
            Either.map(
              decide(window, {
                _tag: "SetSubgoals",
                subgoals: window.taskState.subgoals,
                tokens: shares.subgoalTokens
              }),
              (more) => [...events, ...more]
            )
          )
    }

    const asInputs = (items: ReadonlyArray<string | MessageInput>, role: MessageInput["role"]) =>
      items.map(
        (item): MessageInput => (typeof item === "string" ? { role, parts: [{ type: "text", text: item }] } : item)
      )

    const removeKind = (stream: StreamId, kind: InjectedKind) => command(stream, { _tag: "RemoveKind", kind })

    const inject = (stream: StreamId, kind: InjectedKind, items: ReadonlyArray<string | MessageInput>) =>
      Effect.flatMap(prepare(asInputs(items, "system"), kind), (messages) =>
        command(stream, { _tag: "Inject", kind, messages })
      )

    const recallInto =
      (kind: InjectedKind): Recall =>
      (stream, query, budget, owner) =>
        Effect.gen(function* () {
          const hits = yield* recallSource.recall({
            kind,
            stream,
            query,
            budget,
            owner
          })
          const prepared = yield* prepare(
            hits.map((hit) => hit.message),
            kind
          )
          // The source promises to respect the budget; enforce it anyway, best hits first.
          const kept: Array<Message> = []
          let used = 0
          for (const message of prepared) {
            if (used + message.tokens > budget) break
            kept.push(message)
            used += message.tokens
          }
          return yield* command(stream, { _tag: "Inject", kind, messages: kept })
        })

    const forkAt = (stream: StreamId, version: number, into: StreamId) =>
      Effect.gen(function* () {
        const current = yield* log.version(stream)
        if (!Number.isInteger(version) || version < 0 || version > current) {
          return yield* new VersionNotFound({ stream, version, current })
        }
        const source = yield* Stream.runCollect(log.read(stream, { to: version }))
        const events: Array<WindowEvent> = []
        for (const envelope of source) events.push({ ...envelope.event, id: yield* ids.next })
        yield* log.append(into, events, "no_stream", { actor: "fork", causationId: `${stream}@${version}` })
        return { window: Window.replay(events), events }
      })

    const injectSummaries = (stream: StreamId, budget: number) =>
      Effect.gen(function* () {
        const window = yield* load(stream)
        const envelopes = yield* Stream.runCollect(log.read(stream))
        const events = Array.from(envelopes, (envelope) => envelope.event)
        return yield* inject(stream, "summary", summariesToInject(window, events, budget))
      })

    const resetConversation = (stream: StreamId) =>
      Effect.gen(function* () {
        const window = yield* load(stream)
        const into = yield* ids.next
        const drafts = continuation(window, stream)
        // The new stream first: a pointer never leads nowhere.
        const events: Array<WindowEvent> = []
        for (const draft of drafts) events.push(stamp(draft, yield* ids.next))
        const appended =
          events.length > 0
            ? yield* log.append(into, events, "no_stream", { actor: "reset", causationId: stream })
            : undefined
        yield* command(stream, { _tag: "ContinueIn", into })
        const hash = events.length === 0 ? EventHash.genesis : appended?.lastHash
        return { stream: into, window: remember(into, { window: Window.replay(events), hash }), events }
      })

    const setSystemPrompt = (stream: StreamId, prompt: string | ReadonlyArray<MessageInput>) =>
      Effect.flatMap(prepare(typeof prompt === "string" ? asInputs([prompt], "system") : prompt), (messages) =>
        command(stream, { _tag: "SetSystemPrompt", messages })
      )
    const setKnowledge = (stream: StreamId, knowledge: ReadonlyArray<string | MessageInput>) =>
      Effect.flatMap(prepare(asInputs(knowledge, "system")), (messages) =>
        command(stream, { _tag: "SetKnowledge", messages })
      )
    // Task state and signals are counted as the builders render them (Window.renderState), from the
    // window the decision sees, so a retry after a conflict counts again.
    const setTaskGoal = (stream: StreamId, goal: string | null) => run(stream, (window) => setGoal(window, goal))
    const setSubgoals = (stream: StreamId, subgoals: ReadonlyArray<string>) =>
      run(stream, (window) =>
        decide(window, {
          _tag: "SetSubgoals",
          subgoals,
          tokens: Window.taskStateShares(counter.count, window.taskState.goal, subgoals).subgoalTokens
        })
      )
    const raiseSignal = (stream: StreamId, text: string) =>
      Effect.flatMap(ids.next, (id) =>
        run(stream, (window) =>
          decide(window, {
            _tag: "RaiseSignal",
            signal: { id, text, tokens: Window.signalShare(counter.count, window.signals, text) }
          })
        )
      )
    // Validated, counted and given ids in the effect that runs the command when ids are drawn in plain code.
    const appendMessages = (stream: StreamId, inputs: ReadonlyArray<MessageInput>) =>
      draw === undefined
        ? Effect.flatMap(prepareFor(inputs, undefined, true), (messages) =>
            command(stream, { _tag: "AppendMessages", messages })
          )
        : Effect.suspend(() => {
            const problem = Validation.messagesProblem(inputs)
            if (problem !== undefined) return Effect.fail(problem)
            return command(stream, { _tag: "AppendMessages", messages: countNow(inputs, undefined, true, draw) })
          })

    /**
     * One span per command, named after it, at the one place every operation goes through: an
     * `Effect.fn` per name (`Tracing.fn`), made on first use and kept by this service (a name per
     * operation, so a handful).
     */
    const spans = new Map<
      string,
      (stream: StreamId, effect: Effect.Effect<Outcome, unknown>) => Effect.Effect<Outcome, unknown>
    >()
    const streamAttributes = (stream: StreamId): Tracing.Attributes => ({ "ctxlog.stream": stream })
    const traced = <E>(
      name: string,
      stream: StreamId,
      effect: Effect.Effect<Outcome, E>
    ): Effect.Effect<Outcome, E> => {
      let span = spans.get(name)
      if (span === undefined) {
        span = Tracing.fn(
          `ctxlog.context.${name}`,
          (_stream: StreamId, effect: Effect.Effect<Outcome, unknown>) => effect,
          streamAttributes,
          Tracing.outcomeAttributes
        )
        spans.set(name, span)
      }
      // The span passes `effect`'s failure through untouched: its error type is `E`.
      return span(stream, effect) as Effect.Effect<Outcome, E>
    }
    const tracedLoad = Tracing.fn("ctxlog.context.load", load, streamAttributes, Tracing.windowAttributes)
    const tracedBatch = Tracing.fn(
      "ctxlog.context.batch",
      batch,
      (stream) => streamAttributes(stream),
      (done) => Tracing.outcomeAttributes(done)
    )
    const tracedPrepare = Tracing.fn(
      "ctxlog.context.prepare",
      (inputs: ReadonlyArray<MessageInput>, kind?: InjectedKind) => countFor(inputs, kind, false),
      (inputs) => ({ "ctxlog.messages": inputs.length })
    )
    const tracedReset = Tracing.fn(
      "ctxlog.context.resetConversation",
      resetConversation,
      streamAttributes,
      (outcome) => ({
        ...Tracing.outcomeAttributes(outcome),
        "ctxlog.new_stream": outcome.stream
      })
    )
    const tracedFork = Tracing.fn(
      "ctxlog.context.forkAt",
      forkAt,
      (stream, _version, into) => ({ "ctxlog.stream": stream, "ctxlog.into": into }),
      Tracing.outcomeAttributes
    )

    const perform = (stream: StreamId, cmd: Command): Effect.Effect<Outcome, CommandError<Command>> =>
      Command.$match(cmd, {
        SetSystemPrompt: ({ prompt }) => setSystemPrompt(stream, prompt),
        SetKnowledge: ({ knowledge }) => setKnowledge(stream, knowledge),
        SetTaskGoal: ({ goal }) => setTaskGoal(stream, goal),
        SetSubgoals: ({ subgoals }) => setSubgoals(stream, subgoals),
        RaiseSignal: ({ text }) => raiseSignal(stream, text),
        AppendMessages: ({ messages }) => appendMessages(stream, messages),
        ClearHistory: () => command(stream, { _tag: "ClearHistory" }),
        RemoveKind: ({ kind }) => removeKind(stream, kind),
        TrimToBudget: ({ budget }) => command(stream, { _tag: "TrimToBudget", budget }),
        Inject: ({ kind, messages }) => inject(stream, kind, messages),
        Recall: ({ kind, query, budget, owner }) => recallInto(kind)(stream, query, budget, owner),
        InjectSummaries: ({ budget }) => injectSummaries(stream, budget),
        Pin: ({ messageId, pinned }) => command(stream, { _tag: "Pin", messageId, pinned }),
        CompleteTurn: () => command(stream, { _tag: "CompleteTurn" })
      })

    const nameOf = (tag: Command["_tag"]): string => `${tag.charAt(0).toLowerCase()}${tag.slice(1)}`
    /** `execute`, its span named `name`: the named members keep the span names they always had. */
    const executeAs = <C extends Command>(name: string, stream: StreamId, cmd: C) =>
      // `$match` joins the failures of every branch; the branch `C` takes fails only as `CommandError<C>`.
      traced(name, stream, perform(stream, cmd) as Effect.Effect<Outcome, CommandError<C>>)
    const execute: ContextService.Service["execute"] = (stream, cmd) => executeAs(nameOf(cmd._tag), stream, cmd)

    const service: ContextService.Service = {
      load: tracedLoad,
      // A compaction is a span of its own (Tracing.compactionSpans): `run` is where every one is written.
      run: (stream, decideFn, metadata) =>
        traced(
          "run",
          stream,
          Effect.flatMap(Tracing.operationStart, (start) => {
            let before: Window.Window | undefined
            const watched: typeof decideFn = (window) => {
              before = window
              return decideFn(window)
            }
            return Effect.tap(run(stream, start === undefined ? decideFn : watched, metadata), (outcome) =>
              Tracing.compactionSpans(stream, start, before, outcome)
            )
          })
        ),
      batch: tracedBatch,
      // Unchecked, its type unchanged: callers pass messages they built (compaction, seams, assembly).
      prepare: tracedPrepare,
      execute,
      // The named operations: typed helpers over `execute`, each building its command.
      setSystemPrompt: (stream, prompt) => executeAs("setSystemPrompt", stream, Command.SetSystemPrompt({ prompt })),
      setKnowledge: (stream, knowledge) => executeAs("setKnowledge", stream, Command.SetKnowledge({ knowledge })),
      setTaskGoal: (stream, goal) => executeAs("setTaskGoal", stream, Command.SetTaskGoal({ goal })),
      setSubgoals: (stream, subgoals) => executeAs("setSubgoals", stream, Command.SetSubgoals({ subgoals })),
      raiseSignal: (stream, text) => executeAs("raiseSignal", stream, Command.RaiseSignal({ text })),
      appendMessages: (stream, messages) => executeAs("appendMessages", stream, Command.AppendMessages({ messages })),
      clearHistory: (stream) => executeAs("clearHistory", stream, Command.ClearHistory()),
      removeKind: (stream, kind) => executeAs("removeKind", stream, Command.RemoveKind({ kind })),
      trimToBudget: (stream, budget) => executeAs("trimToBudget", stream, Command.TrimToBudget({ budget })),
      inject: (stream, kind, messages) => executeAs("inject", stream, Command.Inject({ kind, messages })),
      injectSemanticRecall: (stream, query, budget, owner) =>
        executeAs("injectSemanticRecall", stream, Command.Recall({ kind: "recall", query, budget, owner })),
      injectCrossSessionContext: (stream, query, budget, owner) =>
        executeAs("injectCrossSessionContext", stream, Command.Recall({ kind: "cross_session", query, budget, owner })),
      injectSummaries: (stream, budget) => executeAs("injectSummaries", stream, Command.InjectSummaries({ budget })),
      pin: (stream, messageId, pinned = true) => executeAs("pin", stream, Command.Pin({ messageId, pinned })),
      completeTurn: (stream) => executeAs("completeTurn", stream, Command.CompleteTurn()),
      resetConversation: tracedReset,
      forkAt: tracedFork
    }
    return service
  })

/** The unit of work of a `batch`: its stream, the window so far and the events for its one append. */
interface Unit {
  readonly owner: symbol
  readonly stream: StreamId
  window: Window.Window
  readonly events: Array<WindowEvent>
}

const currentUnit = FiberRef.unsafeMake<Unit | undefined>(undefined)

/** What the service needs: the log, the repository, the token counter, ids and a recall source. @since 0.2.0 */
export type Requirements = EventLog | WindowRepository | TokenCounter | Ids | RecallSource

/**
 * The service over its dependencies, with cache and retry options (all optional).
 * @since 0.1.0
 */
export const layer = (options: Options = {}): Layer.Layer<ContextService, never, Requirements> =>
  Layer.effect(ContextService, make(options))

/** Options of the in-memory stack: the service's own options, the log's and what backs each port. @since 0.2.0 */
export interface MemoryOptions extends Options, IntegrityOptions {
  /** The token counter (default: `gpt-tokenizer`, o200k_base). */
  readonly tokenCounter?: Layer.Layer<TokenCounter> | undefined
  /** The ids of events and messages (default: UUIDv7). */
  readonly ids?: Layer.Layer<Ids> | undefined
  /** Recall injected on `prepare` (default: none). */
  readonly recall?: Layer.Layer<RecallSource> | undefined
  /**
   * Over a scratch log (`EventLog.layerScratch`, windows loaded unverified) instead of the in-memory
   * store: for a replay that writes only the events its own steps made, and reads them back once.
   * @since 0.8.0
   */
  readonly scratch?: boolean | undefined
}

/** Everything `layerMemory` provides: the service and every port under it. @since 0.2.0 */
export type MemoryServices = ContextService | Requirements

/**
 * Everything in memory, for demos, examples and tests: the service over a fresh in-memory log (keyed
 * with `hmacKey` when given), the replaying repository, `gpt-tokenizer` (o200k_base), UUIDv7 ids and
 * no recall source unless told otherwise. Every port is exposed too, so a test can read the log or
 * count with the same counter. The one in-memory stack: nothing else wires it by hand.
 * @since 0.1.0
 */
export const layerMemory = (options: MemoryOptions = {}): Layer.Layer<MemoryServices> =>
  layer(options).pipe(
    Layer.provideMerge(
      layerReplayRepository(
        options.scratch === true
          ? { integrity: "unverified" }
          : { hmacKey: options.hmacKey, integrity: options.integrity }
      )
    ),
    Layer.provideMerge(
      options.scratch === true ? EventLogModule.layerScratch : EventLogModule.layerMemory({ hmacKey: options.hmacKey })
    ),
    Layer.provideMerge(
      Layer.mergeAll(
        options.tokenCounter ?? TokenCounterModule.layerGpt(),
        options.ids ?? IdsModule.layerUuidV7,
        options.recall ?? RecallSourceModule.layerEmpty
      )
    )
  )
