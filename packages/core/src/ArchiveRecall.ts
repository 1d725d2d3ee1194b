/**
 * The archive within reach (issue 39, build item 3): what a summary, a seam or a cycle replaced, read
 * back from the log (compaction never deletes an event) and cut to a token budget. The one function
 * behind the `recall_archived` tool the sample agent offers and the integrations can offer
 * ({@link toolSpec}, {@link answer}); a call of it is a tool call like any other, recorded as one.
 *
 * @since 0.8.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { EventDecodeError } from "./EventCodec.js"
import * as EventLog from "./EventLog.js"
import type { StoreError } from "./EventLogError.js"
import type { ToolSpec } from "./LanguageModel.js"
import { type JsonValue, type Message, textOf, toolCallsOf, toolResultsOf } from "./Message.js"
import * as TokenCounter from "./TokenCounter.js"
import * as Tracing from "./Tracing.js"
import * as Window from "./Window.js"
import type { WindowEvent } from "./WindowEvent.js"

/** One event that took messages out of the window in favour of a summary, a seam or a briefing. @since 0.8.0 */
export interface Archive {
  /** The id of the event (`Compacted`, `SeamProduced`, `SeamsRecompacted`, `CycleAdvanced`). */
  readonly eventId: string
  readonly type: "Compacted" | "SeamProduced" | "SeamsRecompacted" | "CycleAdvanced"
  /** The compaction tier, the seam level or the cycle number. */
  readonly detail: string
  /** The summary or seam message that took their place (none for a cycle). */
  readonly replacementId: string | undefined
  /** The messages it replaced, as the window held them just before it, in history order. */
  readonly messages: ReadonlyArray<Message>
}

/** No archive in the stream answers to this id. @since 0.8.0 */
export class ArchiveNotFound extends Schema.TaggedError<ArchiveNotFound>()("ArchiveNotFound", {
  stream: Schema.String,
  id: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}" has no compaction, seam or cycle whose event or message id is "${this.id}"`
  }
}

const replacedIdsOf = (event: WindowEvent): ReadonlyArray<string> | undefined => {
  switch (event._tag) {
    case "Compacted":
    case "CycleAdvanced":
      return event.removedIds
    case "SeamProduced":
    case "SeamsRecompacted":
      return event.replacedIds
    default:
      return undefined
  }
}

/**
 * Every archive of a stream's events, oldest first: one replay, the replaced messages taken from the
 * window just before each event. O(events + replaced messages).
 * @since 0.8.0
 */
export const archives = (events: Iterable<WindowEvent>): ReadonlyArray<Archive> => {
  const found: Array<Archive> = []
  let window = Window.empty
  for (const event of events) {
    const ids = replacedIdsOf(event)
    if (ids !== undefined && ids.length > 0) {
      const wanted = new Set(ids)
      const messages = window.history.filter((message) => wanted.has(message.id))
      if (event._tag === "Compacted") {
        found.push({
          eventId: event.id,
          type: event._tag,
          detail: `tier ${event.tier}`,
          replacementId: event.summary?.id,
          messages
        })
      } else if (event._tag === "CycleAdvanced") {
        found.push({
          eventId: event.id,
          type: event._tag,
          detail: `cycle ${event.cycle}`,
          replacementId: undefined,
          messages
        })
      } else if (event._tag === "SeamProduced" || event._tag === "SeamsRecompacted") {
        found.push({
          eventId: event.id,
          type: event._tag,
          detail: `level ${event.level}`,
          replacementId: event.message.id,
          messages
        })
      }
    }
    window = Window.evolve(window, event)
  }
  return found
}

/** What to recall. @since 0.8.0 */
export interface Request {
  /** An archive's event id or the id of its summary or seam message; the newest archive when omitted. */
  readonly id?: string | undefined
  /** Tokens the answer may hold (estimated, ~4 characters a token). */
  readonly budgetTokens: number
  /** Skip this many of the replaced messages (to read on past a cut answer). */
  readonly offset?: number | undefined
}

const oneLine = (value: JsonValue): string => {
  const text = JSON.stringify(value)
  return text.length > 400 ? `${text.slice(0, 400)}…` : text
}

/** A message as the tool shows it: role and id, text, tool calls and results. */
const shown = (message: Message): string => {
  const lines = [`[${message.role} ${message.id}]`]
  const text = textOf(message)
  if (text.length > 0) lines.push(text)
  for (const call of toolCallsOf(message)) lines.push(`→ ${call.name}(${oneLine(call.input)}) #${call.id}`)
  for (const result of toolResultsOf(message)) {
    lines.push(`← #${result.toolCallId}${result.isError === true ? " (error)" : ""}: ${result.content}`)
  }
  return lines.join("\n")
}

/**
 * The answer to a recall over `events`: a list of the stream's archives (newest first) and what the
 * chosen one replaced, whole messages from `offset` while they fit the budget (a first message longer
 * than the budget is cut to its head and tail), then how to read on. Pure.
 * @since 0.8.0
 */
export const answer = (
  stream: string,
  events: Iterable<WindowEvent>,
  request: Request
): Effect.Effect<string, ArchiveNotFound> => {
  const all = archives(events)
  if (all.length === 0) return Effect.succeed("Nothing is archived: no summary, seam or cycle has replaced messages.")
  const id = request.id
  const chosen =
    id === undefined
      ? all[all.length - 1]
      : all.findLast((archive) => archive.eventId === id || archive.replacementId === id)
  if (chosen === undefined) return Effect.fail(new ArchiveNotFound({ stream, id: id ?? "" }))
  const budgetChars = Math.max(200, request.budgetTokens * TokenCounter.estimateCharsPerToken)
  const listing = all
    .slice(-8)
    .reverse()
    .map(
      (archive) =>
        `- ${archive.eventId}: ${archive.type} (${archive.detail}), ${archive.messages.length} message(s)${archive.replacementId === undefined ? "" : `, replaced by ${archive.replacementId}`}`
    )
  const header = [
    `Archives (newest first${all.length > 8 ? `, 8 of ${all.length}` : ""}):`,
    ...listing,
    "",
    `What ${chosen.eventId} (${chosen.type}, ${chosen.detail}) replaced:`
  ].join("\n")
  const offset = Math.max(0, Math.floor(request.offset ?? 0))
  const parts: Array<string> = []
  let used = header.length
  let next = offset
  for (; next < chosen.messages.length; next++) {
    const message = chosen.messages[next]
    if (message === undefined) break
    const text = shown(message)
    if (used + text.length + 2 > budgetChars) {
      if (parts.length === 0) {
        const room = Math.max(100, budgetChars - used - 80)
        const head = Math.floor(room * 0.6)
        parts.push(
          `${text.slice(0, head)}\n[… ${text.length - room} characters cut …]\n${text.slice(text.length - (room - head))}`
        )
        next++
      }
      break
    }
    parts.push(text)
    used += text.length + 2
  }
  const rest = chosen.messages.length - next
  const footer =
    rest > 0
      ? `\n\n[${rest} more message(s) not shown: call recall_archived with id "${chosen.eventId}" and offset ${next}]`
      : ""
  return Effect.succeed(`${header}\n\n${parts.join("\n\n")}${footer}`)
}

/**
 * {@link answer} over a stream read from the {@link EventLog.EventLog}.
 * @since 0.8.0
 */
export const recall: (
  stream: EventLog.StreamId,
  request: Request
) => Effect.Effect<string, ArchiveNotFound | StoreError | EventDecodeError, EventLog.EventLog> = Effect.fn(
  "ArchiveRecall.recall"
)(function* (stream: EventLog.StreamId, request: Request) {
  yield* Tracing.annotate("stream", stream)
  const log = yield* EventLog.EventLog
  const envelopes = yield* Stream.runCollect(log.read(stream))
  return yield* answer(
    stream,
    Chunk.toReadonlyArray(envelopes).map((envelope) => envelope.event),
    request
  )
})

/**
 * The tool the model calls: `recall_archived`, with an optional `id` (an archive's event id or its
 * summary's or seam's message id, as its answer lists them) and `offset`.
 * @since 0.8.0
 */
export const toolSpec: ToolSpec = {
  name: "recall_archived",
  description:
    "Read back what a summary, seam or cycle replaced in your context (the originals are kept in the log). Without an id: the newest archive, and a list of the others with their ids. Use offset to read on past a cut answer.",
  inputSchema: {
    type: "object",
    properties: { id: { type: "string" }, offset: { type: "integer", minimum: 0 } },
    required: []
  }
}

/** The tool's input. @since 0.8.0 */
export const ToolInput = Schema.Struct({
  id: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  offset: Schema.optional(Schema.Int.pipe(Schema.nonNegative()))
})
