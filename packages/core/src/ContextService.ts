/**
 * The window façade: every operation is load → decide → append (expected version) → evolve, and
 * returns the new window with the events it wrote.
 *
 * A stale write (another writer appended in between) is retried on a freshly loaded window: `decide`
 * is pure, so re-deciding is safe.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { decide, type InvalidCommand, type WindowCommand } from "./Decide.js"
import type { EventDecodeError, EventEncodeError } from "./EventCodec.js"
import type { InvalidInput } from "./Validation.js"
import {
  type ConcurrencyConflict,
  type DuplicateEventIds,
  EventLog,
  type EventMetadata,
  type StoreError,
  type StreamId
} from "./EventLog.js"
import { Ids } from "./Ids.js"
import type { InjectedKind, Message, MessageInput } from "./Message.js"
import { type RecallError, RecallSource } from "./RecallSource.js"
import { TokenCounter } from "./TokenCounter.js"
import * as Window from "./Window.js"
import { type Draft, stamp, type WindowEvent } from "./WindowEvent.js"
import * as EventLogModule from "./EventLog.js"
import * as IdsModule from "./Ids.js"
import * as RecallSourceModule from "./RecallSource.js"
import * as TokenCounterModule from "./TokenCounter.js"
import { layerReplay as layerReplayRepository, WindowRepository } from "./WindowRepository.js"

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
  | StoreError
  | EventDecodeError

/** Every failure a window operation can have. @since 0.1.0 */
export type ContextError = LogError | InvalidCommand | RecallError | VersionNotFound

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

/** @since 0.1.0 */
export declare namespace ContextService {
  /** @since 0.1.0 */
  export interface Service {
    readonly load: (stream: StreamId) => Effect.Effect<Window.Window, StoreError | EventDecodeError>
    /**
     * The extension point: run a pure decision on the loaded window and append what it returns, retrying
     * on a concurrency conflict. Compaction, seams and renders append their events through it.
     */
    readonly run: <E>(
      stream: StreamId,
      decide: (window: Window.Window) => Either.Either<ReadonlyArray<Draft>, E>,
      metadata?: EventMetadata
    ) => Effect.Effect<Outcome, E | LogError>
    /** Give messages ids and token counts, as they will enter the log. */
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
    readonly removeKind: Op<[kind: InjectedKind]>
    readonly removeRecallMessages: Op<[]>
    readonly removeCorrectionMessages: Op<[]>
    readonly removeGraphFactsMessages: Op<[]>
    readonly removePersonaFactsMessages: Op<[]>
    readonly removeTrajectoryHintsMessages: Op<[]>
    readonly removeTreeMemoryMessages: Op<[]>
    readonly removeReasoningStrategiesMessages: Op<[]>
    readonly removeLspMessages: Op<[]>
    readonly removeCodeContextMessages: Op<[]>
    readonly removeSummaryMessages: Op<[]>
    readonly removeCrossSessionMessages: Op<[]>
    readonly removeSessionDigestMessage: Op<[]>
    readonly removeDocumentRagMessages: Op<[]>
    readonly trimToBudget: Op<[budget: number]>
    readonly inject: Op<[kind: InjectedKind, messages: ReadonlyArray<string | MessageInput>]>
    readonly injectSemanticRecall: Recall
    readonly injectCrossSessionContext: Recall
    readonly injectSummaries: Recall
    readonly pin: Op<[messageId: string, pinned?: boolean]>
    readonly completeTurn: Op<[]>
    readonly resetConversation: Op<[]>
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

/** Build the service from its dependencies. @since 0.1.0 */
export const make = Effect.gen(function* () {
  const log = yield* EventLog
  const repository = yield* WindowRepository
  const counter = yield* TokenCounter
  const ids = yield* Ids
  const recallSource = yield* RecallSource

  const load = repository.load

  const run: ContextService.Service["run"] = (stream, decideFn, metadata) =>
    Effect.gen(function* () {
      const window = yield* load(stream)
      const drafts = yield* Either.match(decideFn(window), {
        onLeft: (error) => Effect.fail(error),
        onRight: (events) => Effect.succeed(events)
      })
      if (drafts.length === 0) return { window, events: [] }
      const events: Array<WindowEvent> = []
      for (const draft of drafts) events.push(stamp(draft, yield* ids.next))
      yield* log.append(stream, events, window.version, metadata)
      return { window: Window.replay(events, window), events }
    }).pipe(Effect.retry({ times: 8, while: isConflict }))

  const prepare = (inputs: ReadonlyArray<MessageInput>, kind?: InjectedKind) =>
    Effect.forEach(inputs, (input) =>
      Effect.map(
        input.id === undefined ? ids.next : Effect.succeed(input.id),
        (id): Message => ({
          id,
          role: input.role,
          kind: kind ?? input.kind ?? "chat",
          parts: input.parts,
          tokens: counter.countMessage(input),
          ...(input.pinned === true ? { pinned: true } : {})
        })
      )
    )

  const command = (stream: StreamId, cmd: WindowCommand) => run(stream, (window) => decide(window, cmd))

  const asInputs = (items: ReadonlyArray<string | MessageInput>, role: MessageInput["role"]) =>
    items.map(
      (item): MessageInput => (typeof item === "string" ? { role, parts: [{ type: "text", text: item }] } : item)
    )

  const removeKind = (stream: StreamId, kind: InjectedKind) => command(stream, { _tag: "RemoveKind", kind })
  const remover = (kind: InjectedKind) => (stream: StreamId) => removeKind(stream, kind)

  const inject: ContextService.Service["inject"] = (stream, kind, items) =>
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
          ...(owner === undefined ? {} : { owner })
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

  const forkAt: ContextService.Service["forkAt"] = (stream, version, into) =>
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

  const service: ContextService.Service = {
    load,
    run,
    prepare,
    setSystemPrompt: (stream, prompt) =>
      Effect.flatMap(prepare(typeof prompt === "string" ? asInputs([prompt], "system") : prompt), (messages) =>
        command(stream, { _tag: "SetSystemPrompt", messages })
      ),
    setKnowledge: (stream, knowledge) =>
      Effect.flatMap(prepare(asInputs(knowledge, "system")), (messages) =>
        command(stream, { _tag: "SetKnowledge", messages })
      ),
    setTaskGoal: (stream, goal) =>
      command(stream, { _tag: "SetTaskGoal", goal, tokens: goal === null ? 0 : counter.count(goal) }),
    setSubgoals: (stream, subgoals) =>
      command(stream, {
        _tag: "SetSubgoals",
        subgoals,
        tokens: subgoals.reduce((total, subgoal) => total + counter.count(subgoal), 0)
      }),
    raiseSignal: (stream, text) =>
      Effect.flatMap(ids.next, (id) =>
        command(stream, { _tag: "RaiseSignal", signal: { id, text, tokens: counter.count(text) } })
      ),
    appendMessages: (stream, inputs) =>
      Effect.flatMap(prepare(inputs), (messages) => command(stream, { _tag: "AppendMessages", messages })),
    clearHistory: (stream) => command(stream, { _tag: "ClearHistory" }),
    removeKind,
    removeRecallMessages: remover("recall"),
    removeCorrectionMessages: remover("correction"),
    removeGraphFactsMessages: remover("graph_facts"),
    removePersonaFactsMessages: remover("persona_facts"),
    removeTrajectoryHintsMessages: remover("trajectory_hints"),
    removeTreeMemoryMessages: remover("tree_memory"),
    removeReasoningStrategiesMessages: remover("reasoning_strategies"),
    removeLspMessages: remover("lsp"),
    removeCodeContextMessages: remover("code_context"),
    removeSummaryMessages: remover("summary"),
    removeCrossSessionMessages: remover("cross_session"),
    removeSessionDigestMessage: remover("session_digest"),
    removeDocumentRagMessages: remover("document_rag"),
    trimToBudget: (stream, budget) => command(stream, { _tag: "TrimToBudget", budget }),
    inject,
    injectSemanticRecall: recallInto("recall"),
    injectCrossSessionContext: recallInto("cross_session"),
    injectSummaries: recallInto("summary"),
    pin: (stream, messageId, pinned = true) => command(stream, { _tag: "Pin", messageId, pinned }),
    completeTurn: (stream) => command(stream, { _tag: "CompleteTurn" }),
    resetConversation: (stream) => command(stream, { _tag: "ResetConversation" }),
    forkAt
  }
  return service
})

/** The service over its dependencies. @since 0.1.0 */
export const layer: Layer.Layer<
  ContextService,
  never,
  EventLog | WindowRepository | TokenCounter | Ids | RecallSource
> = Layer.effect(ContextService, make)

/**
 * Everything in memory, for demos and tests: the service over `EventLog.layerMemory`, the replaying
 * repository, `gpt-tokenizer` (o200k_base), UUIDv7 ids and no recall source. The log is exposed too.
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<ContextService | EventLog> = layer.pipe(
  Layer.provideMerge(layerReplayRepository),
  Layer.provideMerge(EventLogModule.layerMemory),
  Layer.provide(Layer.mergeAll(TokenCounterModule.layerGpt(), IdsModule.layerUuidV7, RecallSourceModule.layerEmpty))
)
