/** The in-memory stack a turn runs on in tests, with a log that counts its appends and loads. */
import { TemplateCompactor } from "@ctxlog/compaction"
import {
  type Compactor,
  type EventCodec,
  ContextService,
  EventLog,
  Ids,
  RecallSource,
  TokenCounter,
  type WindowEvent,
  WindowRepository
} from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

/** Appends and stream reads the log served: a test double of our own service, as a Layer. */
export interface Counts {
  appends: number
  reads: number
  /** When given, the event types of each append, in order. */
  readonly batches?: Array<ReadonlyArray<WindowEvent.EventType>>
}

/** The counting log over whatever `EventLog` is provided to it. */
export const countingOver = (counts: Counts) =>
  Layer.effect(
    EventLog.EventLog,
    Effect.map(EventLog.EventLog, (log) => ({
      ...log,
      append: (...args: Parameters<typeof log.append>) =>
        Effect.suspend(() => {
          counts.appends++
          counts.batches?.push(args[1].map((event) => event._tag))
          return log.append(...args)
        }),
      read: (...args: Parameters<typeof log.read>) =>
        Stream.suspend(() => {
          counts.reads++
          return log.read(...args)
        })
    }))
  )

/** The counting log over an in-memory log. */
export const counting = (counts: Counts) => countingOver(counts).pipe(Layer.provide(EventLog.layerMemory()))

/** The turn's services over an in-memory log (gpt-tokenizer counts, the template compactor). */
export type Services =
  | ContextService.ContextService
  | EventLog.EventLog
  | WindowRepository.WindowRepository
  | TokenCounter.TokenCounter
  | Ids.Ids
  | RecallSource.RecallSource
  | Compactor.Compactor

export const stack = (counts: Counts = { appends: 0, reads: 0 }): Layer.Layer<Services> =>
  ContextService.layer().pipe(
    Layer.provideMerge(WindowRepository.layerReplay()),
    Layer.provideMerge(counting(counts)),
    Layer.provideMerge(
      Layer.mergeAll(
        TokenCounter.layerGpt(),
        Ids.layerUuidV7,
        RecallSource.layerEmpty,
        TemplateCompactor.layer({ maxBytes: 2048 })
      )
    )
  )

/** Every event of a stream, in order. */
export const eventsOf = (
  stream: string
): Effect.Effect<
  ReadonlyArray<EventLog.Envelope>,
  EventLog.StoreError | EventCodec.EventDecodeError,
  EventLog.EventLog
> =>
  Effect.flatMap(EventLog.EventLog, (log) =>
    Effect.map(Stream.runCollect(log.read(stream)), (envelopes) => Chunk.toReadonlyArray(envelopes))
  )

/** Rebuild every `PromptRendered` of a stream from the log: how many there are and why any failed. */
export const rebuildAll = (
  events: ReadonlyArray<{ readonly event: WindowEvent.WindowEvent; readonly version: number }>
) => {
  const verification = RenderRecord.verifyAll(events)
  return { renders: verification.renders, failures: verification.failures.map((failure) => failure.message) }
}

/** Every string in a request, depth first. */
export const stringsOf = (value: unknown): ReadonlyArray<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(stringsOf)
      : typeof value === "object" && value !== null
        ? Object.values(value).flatMap(stringsOf)
        : []
