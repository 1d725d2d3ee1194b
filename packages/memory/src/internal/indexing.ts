import { EventCodec, Message, WindowEvent } from "@ctxlog/core"
import * as Either from "effect/Either"

/** The messages an event brings into the window, which the recall index keeps. */
export const messagesOf = (event: WindowEvent.WindowEvent): ReadonlyArray<Message.Message> => {
  switch (event._tag) {
    case "MessageAppended":
    case "SeamProduced":
    case "SeamsRecompacted":
    case "BriefingProduced":
      return [event.message]
    case "MessagesInjected":
      return event.messages
    case "Compacted":
      return event.summary === null ? [] : [event.summary]
    default:
      // System prompts and knowledge are always in the window; restored messages were indexed when
      // they first entered it; the other events carry no message.
      return []
  }
}

/**
 * The event types `messagesOf` or `factsOf` take anything from. The recall projection decodes only rows
 * of these types: every other event (renders, usage, turns, trims, …) gives the index nothing, so its row
 * is skipped without a Schema pass (`indexing.property.test.ts` checks this list against both functions
 * on events of every type).
 */
export const indexedTypes: ReadonlySet<string> = new Set<WindowEvent.WindowEvent["_tag"]>([
  "MessageAppended",
  "SeamProduced",
  "SeamsRecompacted",
  "BriefingProduced",
  "MessagesInjected",
  "Compacted",
  "FactsRecorded"
])

/** The facts an event records. */
export const factsOf = (event: WindowEvent.WindowEvent): ReadonlyArray<WindowEvent.Fact> =>
  event._tag === "FactsRecorded" ? event.facts : []

/** What an event gives the recall index. */
export interface Indexed {
  readonly messages: ReadonlyArray<Message.Message>
  readonly facts: ReadonlyArray<WindowEvent.Fact>
}

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The fields of a stored message the index reads (id, role, kind, tokens, parts), checked for their type. */
const isMessage = (value: unknown): value is Message.Message =>
  isObject(value) &&
  typeof value.id === "string" &&
  typeof value.role === "string" &&
  typeof value.kind === "string" &&
  typeof value.tokens === "number" &&
  Array.isArray(value.parts) &&
  value.parts.every((part) => isObject(part) && typeof part.type === "string")

const isFact = (value: unknown): value is WindowEvent.Fact =>
  isObject(value) &&
  typeof value.subject === "string" &&
  typeof value.predicate === "string" &&
  typeof value.object === "string" &&
  (value.sourceMessageId === null || typeof value.sourceMessageId === "string")

const messages = (value: unknown): ReadonlyArray<Message.Message> | undefined =>
  Array.isArray(value) && value.every(isMessage) ? value : undefined

/**
 * What a stored event of an {@link indexedTypes} type gives the index, read from its JSON without a
 * Schema pass: the bytes were validated when they were appended (and a load checks them again), and the
 * stored form of a message is its decoded form (no field is transformed), so `messagesOf` and `factsOf`
 * of the decoded event return the same. Only data at the type's current schema version is read this way
 * (older data goes through the upcasters); undefined when the fields read are not what they must be,
 * so the caller decodes the event and reports what is wrong with it.
 */
export const indexedOf = (type: string, schemaVersion: number, data: string): Indexed | undefined => {
  if (!WindowEvent.isEventType(type) || WindowEvent.schemaVersions[type] !== schemaVersion) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(data)
  } catch {
    return undefined
  }
  if (!isObject(parsed) || parsed._tag !== type) return undefined
  const only = (list: ReadonlyArray<Message.Message> | undefined) =>
    list === undefined ? undefined : { messages: list, facts: [] }
  switch (type) {
    case "MessageAppended":
    case "SeamProduced":
    case "SeamsRecompacted":
    case "BriefingProduced":
      return only(isMessage(parsed.message) ? [parsed.message] : undefined)
    case "MessagesInjected":
      return only(messages(parsed.messages))
    case "Compacted":
      return only(parsed.summary === null ? [] : isMessage(parsed.summary) ? [parsed.summary] : undefined)
    case "FactsRecorded":
      return Array.isArray(parsed.facts) && parsed.facts.every(isFact)
        ? { messages: [], facts: parsed.facts }
        : undefined
    default:
      return undefined
  }
}

/** What full-text search sees of a message: text, tool names and inputs, tool outputs. */
export const searchableText = (message: Message.Message): string => Message.tokenTextOf(message)

/**
 * The searchable text of message `ref` in a stored event: what the index was given for it (SQLite keeps a
 * message's text only in its event, ADR 0072). Read from the JSON at the current schema version, else
 * decoded; the empty text when the event no longer holds the message or does not decode.
 */
export const messageTextIn = (type: string, schemaVersion: number, data: string, ref: string): string => {
  const read = indexedOf(type, schemaVersion, data)
  const messages =
    read?.messages ??
    Either.match(EventCodec.decodeEither({ type, schemaVersion, data }), {
      onLeft: () => [],
      onRight: messagesOf
    })
  const message = messages.find((candidate) => candidate.id === ref)
  return message === undefined ? "" : searchableText(message)
}

/**
 * Split a document into chunks of at most `maxChars`: paragraphs are packed together, a paragraph that
 * is too long is split on lines, and a line that is too long is cut.
 */
export const chunk = (text: string, maxChars: number): ReadonlyArray<string> => {
  const pieces: Array<string> = []
  for (const paragraph of text.split(/\n\s*\n/)) {
    if (paragraph.length <= maxChars) {
      pieces.push(paragraph)
      continue
    }
    for (const line of paragraph.split("\n")) {
      for (let start = 0; start < line.length || start === 0; start += maxChars) {
        pieces.push(line.slice(start, start + maxChars))
        if (line.length === 0) break
      }
    }
  }
  const chunks: Array<string> = []
  let current = ""
  for (const piece of pieces) {
    const joined = current === "" ? piece : `${current}\n\n${piece}`
    if (joined.length <= maxChars) {
      current = joined
    } else {
      if (current.trim() !== "") chunks.push(current.trim())
      current = piece
    }
  }
  if (current.trim() !== "") chunks.push(current.trim())
  return chunks
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Whether `text` mentions `entity` as a whole word or phrase, ignoring case. */
export const mentions = (text: string, entity: string): boolean => {
  const needle = entity.trim()
  if (needle.length < 2) return false
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(needle)}(?![\\p{L}\\p{N}_])`, "iu").test(text)
}

/** The part of a better-sqlite3 connection `registerRecallText` uses. */
interface FunctionHost {
  readonly function: (
    name: string,
    options: { readonly deterministic: boolean },
    run: (...values: Array<unknown>) => unknown
  ) => unknown
}

/**
 * Register `ctxlog_message_text(type, schema_version, data, ref)` on a SQLite connection: the view the
 * full-text index reads (`recall_text`, migration 0012) calls it for a message entry, whose text is kept
 * only in its event (ADR 0072). Every connection of a store registers it before it reads or writes.
 */
export const registerRecallText = (connection: FunctionHost): void => {
  connection.function("ctxlog_message_text", { deterministic: true }, (type, schemaVersion, data, ref) =>
    typeof type === "string" && typeof schemaVersion === "number" && typeof data === "string" && typeof ref === "string"
      ? messageTextIn(type, schemaVersion, data, ref)
      : ""
  )
}
