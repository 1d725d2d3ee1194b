import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as EventCodec from "../EventCodec.js"
import * as EventHash from "../EventHash.js"
import type { Envelope, EventLog, StreamInfo } from "../EventLog.js"
import * as Validation from "../Validation.js"
import { checkAppend } from "./appendRules.js"

interface State {
  readonly events: ReadonlyArray<Envelope>
  readonly streams: ReadonlyMap<string, StreamInfo & { readonly head: string }>
  readonly ids: ReadonlyMap<string, { readonly stream: string; readonly version: number }>
}

/** A fresh in-memory log; `key` chains its events with HMAC-SHA256. */
export const make = (key?: EventHash.ChainKey): Effect.Effect<EventLog.Service> =>
  Effect.gen(function* () {
    const state = yield* Ref.make<State>({ events: [], streams: new Map(), ids: new Map() })
    // One writer at a time: the check and the write form one atomic step, as a transaction would.
    const lock = yield* Effect.makeSemaphore(1)

    const append: EventLog.Service["append"] = (stream, events, expected, metadata = {}) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          // The boundary rules every backend applies (Validation): bad input is refused before any write.
          // As in the durable stores, an event of the commonest shape is encoded in plain code, which also
          // tells it is valid (ADR 0079): no walk and no Schema pass for it.
          const known = events.map(EventCodec.encodeKnown)
          const problem = Validation.appendInputProblem(stream, events, metadata, known)
          if (problem !== undefined) return yield* Effect.fail(problem)
          const stored = yield* EventCodec.encodeAllEither(events, known)
          const now = yield* Clock.currentTimeMillis
          const current = yield* Ref.get(state)
          const info = current.streams.get(stream)
          const version = info?.version ?? 0
          const ids = events.map((event) => event.id)
          const decision = yield* checkAppend({ stream, current: version, expected, ids, existing: current.ids })
          if (decision._tag === "AlreadyWritten") {
            return { stream, nextExpectedVersion: decision.lastVersion, written: 0, lastPosition: undefined }
          }
          if (decision._tag === "Nothing") {
            return { stream, nextExpectedVersion: version, written: 0, lastPosition: undefined }
          }
          let head = info?.head ?? EventHash.genesis
          let position = current.events.length
          const envelopes: Array<Envelope> = []
          const nextIds = new Map(current.ids)
          for (const [index, event] of events.entries()) {
            const record = stored[index]
            if (record === undefined) continue
            const streamVersion = decision.firstVersion + index
            position += 1
            head = EventHash.chain(
              head,
              {
                stream,
                version: streamVersion,
                eventId: event.id,
                type: record.type,
                schemaVersion: record.schemaVersion,
                data: record.data
              },
              key
            )
            nextIds.set(event.id, { stream, version: streamVersion })
            envelopes.push({
              stream,
              version: streamVersion,
              position,
              eventId: event.id,
              type: event._tag,
              schemaVersion: record.schemaVersion,
              // Decoded back from the stored bytes, exactly as a durable backend would return it.
              event: yield* EventCodec.decode(record).pipe(Effect.orDie),
              data: record.data,
              metadata,
              recordedAt: now,
              hash: head
            })
          }
          const nextVersion = version + events.length
          const streams = new Map(current.streams)
          streams.set(stream, {
            stream,
            version: nextVersion,
            createdAt: info?.createdAt ?? now,
            updatedAt: now,
            head
          })
          yield* Ref.set(state, { events: [...current.events, ...envelopes], streams, ids: nextIds })
          return {
            stream,
            nextExpectedVersion: nextVersion,
            written: events.length,
            lastPosition: position,
            lastHash: head
          }
        })
      )

    const read: EventLog.Service["read"] = (stream, options = {}) =>
      Stream.unwrap(
        Ref.get(state).pipe(
          Effect.map(({ events }) =>
            Stream.fromChunk(
              Chunk.unsafeFromArray(
                events.filter(
                  (envelope) =>
                    envelope.stream === stream &&
                    envelope.version >= (options.from ?? 1) &&
                    (options.to === undefined || envelope.version <= options.to)
                )
              )
            )
          )
        )
      )

    const readAll: EventLog.Service["readAll"] = (options = {}) =>
      Stream.unwrap(
        Ref.get(state).pipe(
          Effect.map(({ events }) => {
            const after = events.filter((envelope) => envelope.position > (options.after ?? 0))
            return Stream.fromChunk(
              Chunk.unsafeFromArray(options.limit === undefined ? after : after.slice(0, options.limit))
            )
          })
        )
      )

    const version: EventLog.Service["version"] = (stream) =>
      Ref.get(state).pipe(Effect.map(({ streams }) => streams.get(stream)?.version ?? 0))

    const streams: EventLog.Service["streams"] = () =>
      Ref.get(state).pipe(
        Effect.map(({ streams }) =>
          [...streams.values()].map(({ stream, version, createdAt, updatedAt }) => ({
            stream,
            version,
            createdAt,
            updatedAt
          }))
        )
      )

    return { append, read, readAll, version, streams }
  })
