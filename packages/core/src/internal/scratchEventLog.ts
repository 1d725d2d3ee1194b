import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { AppendResult, Envelope, EventLog, StreamInfo } from "../EventLog.js"
import { ConcurrencyConflict } from "../EventLogError.js"
import type { WindowEvent } from "../WindowEvent.js"
import { matches } from "./appendRules.js"

/** The hash a scratch envelope carries: a scratch log keeps no chain (its windows load unverified). */
const unchained = ""

/**
 * A scratch log for one writer that made its events itself (a replay): the events are kept as given,
 * in arrays that grow by the batch (an append costs what it writes, never what the stream holds), with
 * no codec round trip, no hash chain and no boundary validation. The expected-version check stays.
 */
export const make = (): Effect.Effect<EventLog.Service> =>
  Effect.sync(() => {
    const byStream = new Map<string, { info: StreamInfo; envelopes: Array<Envelope> }>()
    const all: Array<Envelope> = []
    const envelopeOf = (stream: string, version: number, position: number, event: WindowEvent, at: number) => ({
      stream,
      version,
      position,
      eventId: event.id,
      type: event._tag,
      schemaVersion: 0,
      event,
      // Never stored as text: the JSON of the event, made when asked for.
      get data() {
        return JSON.stringify(event)
      },
      metadata: {},
      recordedAt: at,
      hash: unchained
    })

    const append: EventLog.Service["append"] = (stream, events, expected) =>
      Effect.suspend((): Effect.Effect<AppendResult, ConcurrencyConflict> => {
        const held = byStream.get(stream)
        const current = held?.info.version ?? 0
        if (!matches(current, expected)) {
          return Effect.fail(new ConcurrencyConflict({ stream, expected, actual: current }))
        }
        if (events.length === 0) {
          return Effect.succeed({ stream, nextExpectedVersion: current, written: 0, lastPosition: undefined })
        }
        const now = Date.now()
        const entry = held ?? {
          info: { stream, version: 0, createdAt: now, updatedAt: now },
          envelopes: []
        }
        for (const event of events) {
          const envelope = envelopeOf(stream, entry.envelopes.length + 1, all.length + 1, event, now)
          entry.envelopes.push(envelope)
          all.push(envelope)
        }
        entry.info = { ...entry.info, version: entry.envelopes.length, updatedAt: now }
        byStream.set(stream, entry)
        return Effect.succeed({
          stream,
          nextExpectedVersion: entry.envelopes.length,
          written: events.length,
          lastPosition: all.length,
          lastHash: unchained
        })
      })

    const read: EventLog.Service["read"] = (stream, options = {}) =>
      Stream.suspend(() => {
        const envelopes = byStream.get(stream)?.envelopes ?? []
        const from = Math.max(1, options.from ?? 1)
        const to = Math.min(envelopes.length, options.to ?? envelopes.length)
        return Stream.fromChunk(Chunk.unsafeFromArray(envelopes.slice(from - 1, Math.max(from - 1, to))))
      })

    const readAll: EventLog.Service["readAll"] = (options = {}) =>
      Stream.suspend(() => {
        const after = all.slice(Math.max(0, options.after ?? 0))
        return Stream.fromChunk(
          Chunk.unsafeFromArray(options.limit === undefined ? after : after.slice(0, options.limit))
        )
      })

    const version: EventLog.Service["version"] = (stream) => Effect.sync(() => byStream.get(stream)?.info.version ?? 0)

    const streams: EventLog.Service["streams"] = () => Effect.sync(() => [...byStream.values()].map(({ info }) => info))

    return { append, read, readAll, version, streams }
  })
