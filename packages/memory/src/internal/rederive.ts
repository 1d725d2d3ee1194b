import { randomUUID } from "node:crypto"
import { type EventCodec, type EventLog, Message, Receipt, TokenCounter, Window, type WindowEvent } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Sealing from "../Sealing.js"
import type * as SubjectErasure from "../SubjectErasure.js"
import { messagesOf } from "./indexing.js"

/** What the store's own re-derivation appends for an artifact, and the events of other streams it used. */
export interface Rederived {
  readonly events: ReadonlyArray<WindowEvent.WindowEvent>
  /** The remaining sources in other streams (the new summary is sealed under their subjects). */
  readonly derivedFrom: ReadonlyArray<EventLog.Envelope>
}

/** At most this many characters of each remaining source, and of the whole summary. */
const perSource = 400
const whole = 2000

const textOf = (event: WindowEvent.WindowEvent): string =>
  messagesOf(event)
    .map((message) => Message.tokenTextOf(message))
    .filter((text) => text.trim() !== "")
    .join("\n")

const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/**
 * The store's own re-derivation of a summary, seam or briefing an erasure made unreadable (ADR 0139),
 * run after the keys are destroyed: its lineage (the receipt's sources in its stream, the seal's sources
 * in other streams; every earlier event of its stream when neither names any) read again through the
 * sealing log, the sources that still read (none of their text erased) kept, and an extractive summary
 * of them (each source's text, cut) recorded as a `Compacted` event (tier `manual`) that replaces the
 * unreadable message in the window, with a receipt naming the remaining sources of its stream. Undefined
 * when the artifact is no longer in its stream's window (nothing reads it) or holds no message.
 */
export const fromLineage = (
  log: EventLog.EventLog.Service,
  artifact: SubjectErasure.Artifact
): Effect.Effect<Rederived | undefined, EventLog.StoreError | EventCodec.EventDecodeError> =>
  Effect.gen(function* () {
    const readAll = (stream: string) => Effect.map(Stream.runCollect(log.read(stream)), Chunk.toReadonlyArray)
    const own = yield* readAll(artifact.stream)
    const at = own.findIndex((envelope) => envelope.eventId === artifact.ref)
    const event = own[at]?.event
    if (event === undefined) return undefined
    const old = messagesOf(event)[0]
    const window = Window.replay(own.map((envelope) => envelope.event))
    if (old === undefined || !window.history.some((message) => message.id === old.id)) return undefined
    const named = Receipt.isReceipted(event) ? (event.receipt?.sources ?? []) : []
    const across = artifact.derivedFrom ?? []
    const inStream = (
      named.length > 0
        ? own.filter((envelope) => named.includes(envelope.eventId))
        : across.length > 0
          ? []
          : own.slice(0, at)
    ).filter((envelope) => messagesOf(envelope.event).length > 0)
    const other: Array<EventLog.Envelope> = []
    const byStream = new Map<string, Array<string>>()
    for (const source of across) byStream.set(source.stream, [...(byStream.get(source.stream) ?? []), source.eventId])
    for (const [stream, eventIds] of byStream) {
      for (const envelope of yield* readAll(stream)) if (eventIds.includes(envelope.eventId)) other.push(envelope)
    }
    const readable = (envelope: EventLog.Envelope) => {
      const text = textOf(envelope.event)
      return text !== "" && !text.includes(Sealing.erasedText)
    }
    const keptHere = inStream.filter(readable)
    const keptThere = other.filter(readable)
    const sources = inStream.length + other.length
    const kept = [...keptThere, ...keptHere]
    const body =
      kept.length === 0
        ? `[${old.kind} re-derived after an erasure: none of its ${sources} sources remain]`
        : cut(
            [
              `[${old.kind} re-derived after an erasure from ${kept.length} of its ${sources} sources]`,
              ...kept.map((envelope) => cut(textOf(envelope.event), perSource))
            ].join("\n"),
            whole
          )
    const tokens = TokenCounter.estimate(body) + TokenCounter.messageOverhead
    const id = randomUUID()
    const summary: Message.Message = {
      id: `${old.id}~${id}`,
      role: old.role,
      kind: old.kind,
      parts: [Message.text(body)],
      tokens
    }
    const carryOver = window.carryOver?.includes(Sealing.erasedText) === true ? body : window.carryOver
    const compacted: WindowEvent.WindowEvent = {
      _tag: "Compacted",
      id: `rederived-${id}`,
      tier: "manual",
      summary,
      removedIds: [old.id],
      carryOver,
      throughVersion: window.watermark ?? 0,
      cooldownTurns: 0,
      receipt: {
        tokensBefore: window.tokens.total,
        tokensAfter: window.tokens.total - old.tokens + tokens,
        replacedTokens: old.tokens,
        sources: keptHere.map((envelope) => envelope.eventId),
        reason: `re-derived after a subject erasure (${artifact.kind} ${artifact.ref} was unreadable)`
      }
    }
    return { events: [compacted], derivedFrom: keptThere }
  })
