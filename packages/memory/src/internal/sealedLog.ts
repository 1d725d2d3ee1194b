import { EventCodec, EventLog, Receipt, Validation, type WindowEvent } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Redaction from "../Redaction.js"
import * as Sealing from "../Sealing.js"
import type { SnapshotStore } from "../SnapshotStore.js"
import type * as SubjectKeys from "../SubjectKeys.js"
import type * as RecallProjection from "./recallProjection.js"

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isMessage = (value: Readonly<Record<string, unknown>>): boolean =>
  typeof value.id === "string" && typeof value.role === "string" && Array.isArray(value.parts)

/**
 * A copy of `value` with every message's parts, every other `content` / `summary` / `carryOver` text and a graph fact's
 * subject and object passed through `onParts` / `onText` (what a seal covers); everything else as it was.
 */
const mapContent = (
  value: unknown,
  onParts: (parts: ReadonlyArray<unknown>) => ReadonlyArray<unknown>,
  onText: (text: string) => string
): unknown => {
  if (Array.isArray(value)) return value.map((item) => mapContent(item, onParts, onText))
  if (!isObject(value)) return value
  if (isMessage(value)) return { ...value, parts: onParts(value.parts as ReadonlyArray<unknown>) }
  // A graph fact: its subject and object are content, its predicate the graph's vocabulary.
  const isFact =
    typeof value.subject === "string" && typeof value.predicate === "string" && typeof value.object === "string"
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    const sealed =
      key === "content" ||
      key === "summary" ||
      key === "carryOver" ||
      (isFact && (key === "subject" || key === "object"))
    out[key] = sealed && typeof field === "string" ? onText(field) : mapContent(field, onParts, onText)
  }
  return out
}

/** Whether an event holds anything a seal covers. */
const hasContent = (event: WindowEvent.WindowEvent): boolean => {
  let found = false
  mapContent(
    event,
    (parts) => {
      found = true
      return parts
    },
    (text) => {
      found = true
      return text
    }
  )
  return found
}

const sealError = (operation: string, detail: string) => new EventLog.StoreError({ operation, detail })

/**
 * Open one envelope's seals with the keys its headers name (looked up once per `cache`): a destroyed key
 * opens to `Sealing.erasedText`; a seal that does not authenticate under its keys fails with a StoreError.
 */
export const openEvent = (
  keys: SubjectKeys.SubjectKeys.Service,
  envelope: Pick<EventLog.Envelope, "stream" | "version" | "data" | "event">,
  cache: Map<string, Option.Option<SubjectKeys.DataKey>>
): Effect.Effect<WindowEvent.WindowEvent, EventLog.StoreError> => {
  if (!envelope.data.includes(Sealing.prefix)) return Effect.succeed(envelope.event)
  const where = `stream "${envelope.stream}" version ${envelope.version}`
  return Effect.gen(function* () {
    for (const header of Sealing.headersIn(envelope.data)) {
      for (const [subject, keyId] of header.k) {
        const id = `${subject}\u001f${keyId}`
        if (cache.has(id)) continue
        const found = yield* Effect.mapError(keys.find(subject, keyId), (error) =>
          sealError("open sealed content", `${where}: ${error.message}`)
        )
        cache.set(id, found)
      }
    }
    const keysOf = (header: Sealing.Header): ReadonlyArray<SubjectKeys.DataKey> | undefined => {
      const found: Array<SubjectKeys.DataKey> = []
      for (const [subject, keyId] of header.k) {
        const key = cache.get(`${subject}\u001f${keyId}`)
        if (key === undefined || Option.isNone(key)) return undefined
        found.push(key.value)
      }
      return found
    }
    const openText = (sealed: string, kind: Sealing.Header["t"]): string | undefined => {
      const parsed = Sealing.parseSeal(sealed)
      if (parsed === undefined || parsed.header.t !== kind) return undefined
      const dataKeys = keysOf(parsed.header)
      return dataKeys === undefined ? Sealing.erasedText : Sealing.openSeal(parsed, dataKeys)
    }
    const event = yield* Effect.try({
      try: () =>
        mapContent(
          envelope.event,
          (parts) => {
            const only = parts[0]
            if (parts.length !== 1 || !isObject(only) || only.type !== "text" || typeof only.text !== "string") {
              return parts
            }
            const opened = openText(only.text, "parts")
            if (opened === undefined) return parts
            return opened === Sealing.erasedText
              ? [{ type: "text", text: Sealing.erasedText }]
              : (JSON.parse(opened) as ReadonlyArray<unknown>)
          },
          (text) => openText(text, "text") ?? text
        ) as WindowEvent.WindowEvent,
      catch: (cause) =>
        sealError(
          "open sealed content",
          `${where}: a seal does not open under its keys (altered, or a key was replaced): ${cause instanceof Error ? cause.message : String(cause)}`
        )
    })
    return event
  })
}

/**
 * The recall projection's opener (ADR 0139): each sealed row decoded and opened with one key cache per
 * batch; undefined for a row one of whose keys is gone (the index gets nothing from it).
 */
export const openRows =
  (keys: SubjectKeys.SubjectKeys.Service): RecallProjection.OpenSealed =>
  (rows) =>
    Effect.gen(function* () {
      const cache = new Map<string, Option.Option<SubjectKeys.DataKey>>()
      const opened = new Map<number, WindowEvent.WindowEvent | undefined>()
      for (const row of rows) {
        const decoded = EventCodec.decodeEither(
          { type: row.type, schemaVersion: row.schema_version, data: row.data },
          { stream: row.stream_id, version: row.stream_version }
        )
        if (Either.isLeft(decoded)) {
          return yield* sealError(
            "index recall",
            `event at position ${row.global_position} (stream "${row.stream_id}", version ${row.stream_version}) does not decode: ${decoded.left.message}`
          )
        }
        const event = yield* openEvent(
          keys,
          { stream: row.stream_id, version: row.stream_version, data: row.data, event: decoded.right },
          cache
        )
        const whole = Sealing.headersIn(row.data).every((header) =>
          header.k.every(([subject, keyId]) => {
            const key = cache.get(`${subject}\u001f${keyId}`)
            return key !== undefined && Option.isSome(key)
          })
        )
        opened.set(row.global_position, whole ? event : undefined)
      }
      return opened
    })

/** The sealed log and snapshot store over a store's own (ADR 0112). */
export interface Sealed {
  readonly log: EventLog.EventLog.Service
  readonly snapshots: SnapshotStore.Service
}

/** Seal appends and open reads of `inner`; keep no snapshot of a stream that holds sealed content. */
export const make = (
  inner: EventLog.EventLog.Service,
  snapshots: SnapshotStore.Service,
  keys: SubjectKeys.SubjectKeys.Service,
  options: { readonly subjectOf: (stream: string) => string | undefined; readonly redactor: Redaction.Redactor }
): Sealed => {
  const sealedStreams = new Set<string>()

  // The subjects of the events a summary's receipt names as its sources (all of the stream's when it names
  // none) whose keys still exist: an erased subject's content is gone, so nothing derives from it any more.
  const sourceSubjects = (
    stream: string,
    event: Receipt.Receipted
  ): Effect.Effect<ReadonlySet<string>, EventLog.StoreError> => {
    const named = new Set(event.receipt?.sources ?? [])
    return inner.read(stream).pipe(
      Stream.runFold(new Map<string, readonly [string, string]>(), (pairs, envelope) => {
        if (named.size === 0 || named.has(envelope.eventId)) {
          for (const header of Sealing.headersIn(envelope.data)) {
            for (const pair of header.k) pairs.set(`${pair[0]}\u001f${pair[1]}`, pair)
          }
        }
        return pairs
      }),
      Effect.flatMap((pairs) =>
        Effect.reduce(pairs.values(), new Set<string>(), (subjects, [subject, keyId]) =>
          subjects.has(subject)
            ? Effect.succeed(subjects)
            : Effect.map(keys.find(subject, keyId), (key) => (Option.isSome(key) ? subjects.add(subject) : subjects))
        )
      ),
      Effect.mapError((error) => sealError("seal derived content", error.message))
    )
  }

  const sealEvent = (
    event: WindowEvent.WindowEvent,
    dataKeys: ReadonlyArray<SubjectKeys.DataKey>,
    sources: ReadonlyArray<Sealing.Source>
  ): WindowEvent.WindowEvent =>
    mapContent(
      Redaction.redactValue(options.redactor, event),
      (parts) => [{ type: "text", text: Sealing.sealText(JSON.stringify(parts), "parts", dataKeys, sources) }],
      (text) => Sealing.sealText(text, "text", dataKeys, sources)
    ) as WindowEvent.WindowEvent

  const append: EventLog.EventLog.Service["append"] = (stream, events, expected, metadata) =>
    Effect.gen(function* () {
      // The plaintext is checked as the store checks it (bad text, a malformed event): once sealed, the
      // store would only see the seal. Nothing is written when it fails.
      const known = events.map(EventCodec.encodeKnown)
      const invalid = Validation.appendInputProblem(stream, events, metadata, known)
      if (invalid !== undefined) return yield* invalid
      const encoded = EventCodec.encodeAllEither(events, known)
      if (Either.isLeft(encoded)) return yield* encoded.left
      const derivation = yield* FiberRef.get(Sealing.currentDerivation)
      const own = options.subjectOf(stream)
      const out: Array<WindowEvent.WindowEvent> = []
      for (const event of events) {
        if (!hasContent(event)) {
          out.push(event)
          continue
        }
        const subjects = new Set<string>(derivation.subjects)
        if (own !== undefined) subjects.add(own)
        if (Receipt.isReceipted(event))
          for (const subject of yield* sourceSubjects(stream, event)) subjects.add(subject)
        if (subjects.size === 0) {
          out.push(event)
          continue
        }
        const dataKeys = yield* Effect.forEach([...subjects].sort(), (subject) =>
          Effect.mapError(keys.current(subject), (error) => sealError("seal content", error.message))
        )
        out.push(sealEvent(event, dataKeys, derivation.sources))
        sealedStreams.add(stream)
      }
      return yield* inner.append(stream, out, expected, metadata)
    })

  const open = (envelope: EventLog.Envelope, cache: Map<string, Option.Option<SubjectKeys.DataKey>>) => {
    if (envelope.data.includes(Sealing.prefix)) sealedStreams.add(envelope.stream)
    return Effect.map(openEvent(keys, envelope, cache), (event) => ({ ...envelope, event }))
  }

  const opened = <E>(
    stream: Stream.Stream<EventLog.Envelope, E>
  ): Stream.Stream<EventLog.Envelope, E | EventLog.StoreError> =>
    Stream.unwrap(
      Effect.sync(() => {
        const cache = new Map<string, Option.Option<SubjectKeys.DataKey>>()
        return Stream.mapEffect(stream, (envelope) => open(envelope, cache))
      })
    )

  return {
    log: {
      append,
      read: (stream, readOptions) => opened(inner.read(stream, readOptions)),
      readAll: (readOptions) => opened(inner.readAll(readOptions)),
      version: inner.version,
      streams: inner.streams
    },
    snapshots: {
      latest: snapshots.latest,
      // A window holding a subject's content would hold it in clear: such a stream is not snapshotted (its
      // loads replay the log, opening the seals), so erasing the key leaves no plaintext copy behind.
      save: (snapshot) =>
        options.subjectOf(snapshot.stream) !== undefined || sealedStreams.has(snapshot.stream)
          ? Effect.void
          : snapshots.save(snapshot)
    }
  }
}
