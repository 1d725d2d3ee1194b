/**
 * Messages: what a context window is made of.
 *
 * A message's `tokens` are counted once, when it enters the log, and stored in the event that put it
 * there; replay never needs a tokenizer. `origin` is the `{ version, eventId }` of that event (blame).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** The kinds that tag injected context, in declaration order. @since 0.1.0 */
export const injectedKinds = [
  "recall",
  "correction",
  "graph_facts",
  "persona_facts",
  "trajectory_hints",
  "tree_memory",
  "reasoning_strategies",
  "lsp",
  "code_context",
  "summary",
  "cross_session",
  "session_digest",
  "document_rag",
  "seam",
  "briefing"
] as const

/**
 * Every kind of message. `chat` is ordinary conversation; the others tag injected context so it can be
 * found and removed as a group.
 * @since 0.1.0
 */
export const MessageKind = Schema.Literal("chat", ...injectedKinds)
/** @since 0.1.0 */
export type MessageKind = typeof MessageKind.Type

/** All message kinds, in declaration order. @since 0.1.0 */
export const messageKinds: ReadonlyArray<MessageKind> = MessageKind.literals

/** Kinds that tag injected context (everything but `chat`). @since 0.1.0 */
export const InjectedKind = Schema.Literal(...injectedKinds)
/** @since 0.1.0 */
export type InjectedKind = typeof InjectedKind.Type

/** The speaker of a message. @since 0.1.0 */
export const Role = Schema.Literal("system", "user", "assistant", "tool")
/** @since 0.1.0 */
export type Role = typeof Role.Type

/** A message id (client-made, unique within a stream). @since 0.1.0 */
export const MessageId = Schema.String.pipe(Schema.minLength(1))

/** Plain text. @since 0.1.0 */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})
/** @since 0.1.0 */
export type TextPart = typeof TextPart.Type

/**
 * JSON value carried by a tool call's input. Numbers must be finite: `NaN` and `Infinity` would be
 * written as `null`, and the replayed window would differ from the live one.
 * @since 0.1.0
 */
export const JsonValue: Schema.Schema<JsonValue> = Schema.suspend(() =>
  Schema.Union(
    Schema.Null,
    Schema.Boolean,
    Schema.JsonNumber,
    Schema.String,
    Schema.Array(JsonValue),
    Schema.Record({ key: Schema.String, value: JsonValue })
  )
)
/** @since 0.1.0 */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

/** An assistant's request to run a tool. @since 0.1.0 */
export const ToolCallPart = Schema.Struct({
  type: Schema.Literal("tool_call"),
  id: Schema.String.pipe(Schema.minLength(1)),
  name: Schema.String.pipe(Schema.minLength(1)),
  input: JsonValue
})
/** @since 0.1.0 */
export type ToolCallPart = typeof ToolCallPart.Type

/** The output of a tool call, answering the call with the same id. @since 0.1.0 */
export const ToolResultPart = Schema.Struct({
  type: Schema.Literal("tool_result"),
  toolCallId: Schema.String.pipe(Schema.minLength(1)),
  content: Schema.String,
  isError: Schema.Boolean
})
/** @since 0.1.0 */
export type ToolResultPart = typeof ToolResultPart.Type

/**
 * Model reasoning, kept so it can be sent back as the provider requires. `text` is the readable
 * reasoning (Anthropic `thinking`, an OpenAI Responses summary, a chat `reasoning_content`); it is
 * empty for redacted reasoning. The opaque fields are provider data sent back byte for byte:
 * `signature` (Anthropic `thinking`), `redactedData` (Anthropic `redacted_thinking`), `itemId` and
 * `encryptedContent` (an OpenAI Responses `reasoning` item). A part without them is readable only:
 * renders that need the opaque data drop it.
 * @since 0.3.0
 */
export const ReasoningPart = Schema.Struct({
  type: Schema.Literal("reasoning"),
  text: Schema.String,
  signature: Schema.optional(Schema.String),
  redactedData: Schema.optional(Schema.String),
  itemId: Schema.optional(Schema.String),
  encryptedContent: Schema.optional(Schema.String)
})
/** @since 0.3.0 */
export type ReasoningPart = typeof ReasoningPart.Type

/** Where an image or a document comes from: a URL, or base64 data with its media type. @since 0.3.0 */
export const MediaSource = Schema.Union(
  Schema.Struct({ type: Schema.Literal("url"), url: Schema.String.pipe(Schema.minLength(1)) }),
  Schema.Struct({
    type: Schema.Literal("base64"),
    mediaType: Schema.String.pipe(Schema.minLength(1)),
    data: Schema.String
  })
)
/** @since 0.3.0 */
export type MediaSource = typeof MediaSource.Type

/**
 * An image. `width` and `height` (pixels) size its token cost; without them the cost is read from
 * the base64 data's header (PNG, JPEG, GIF, WebP) or, for a URL, the provider's largest cost.
 * `detail` is OpenAI's (`low` costs a fixed 85 tokens).
 * @since 0.3.0
 */
export const ImagePart = Schema.Struct({
  type: Schema.Literal("image"),
  source: MediaSource,
  width: Schema.optional(Schema.Int.pipe(Schema.positive())),
  height: Schema.optional(Schema.Int.pipe(Schema.positive())),
  detail: Schema.optional(Schema.Literal("auto", "low", "high"))
})
/** @since 0.3.0 */
export type ImagePart = typeof ImagePart.Type

/** A document (a PDF, or plain text) by URL or base64, with its page count when known. @since 0.3.0 */
export const DocumentPart = Schema.Struct({
  type: Schema.Literal("document"),
  source: MediaSource,
  title: Schema.optional(Schema.String),
  pages: Schema.optional(Schema.Int.pipe(Schema.positive()))
})
/** @since 0.3.0 */
export type DocumentPart = typeof DocumentPart.Type

/** One part of a message. @since 0.1.0 */
export const Part = Schema.Union(TextPart, ToolCallPart, ToolResultPart, ReasoningPart, ImagePart, DocumentPart)
/** @since 0.1.0 */
export type Part = typeof Part.Type

/** The event that put a message in the window. @since 0.1.0 */
export const Origin = Schema.Struct({
  version: Schema.Int.pipe(Schema.positive()),
  eventId: Schema.String
})
/** @since 0.1.0 */
export type Origin = typeof Origin.Type

/** A message as it is stored in events and held by the window. @since 0.1.0 */
export const Message = Schema.Struct({
  id: MessageId,
  role: Role,
  kind: MessageKind,
  parts: Schema.Array(Part),
  tokens: Schema.Int.pipe(Schema.nonNegative()),
  pinned: Schema.optional(Schema.Boolean),
  origin: Schema.optional(Origin)
})
/** @since 0.1.0 */
export type Message = typeof Message.Type

/**
 * A message before it enters the log: no id, no token count, no origin yet.
 * @since 0.1.0
 */
export interface MessageInput {
  readonly role: Role
  readonly parts: ReadonlyArray<Part>
  readonly kind?: MessageKind
  readonly pinned?: boolean
  /** Keep a caller-chosen id (for example one from an imported transcript). */
  readonly id?: string
}

/** A text part. @since 0.1.0 */
export const text = (value: string): TextPart => ({ type: "text", text: value })

/** A tool call part. @since 0.1.0 */
export const toolCall = (id: string, name: string, input: JsonValue): ToolCallPart => ({
  type: "tool_call",
  id,
  name,
  input
})

/** A tool result part. @since 0.1.0 */
export const toolResult = (toolCallId: string, content: string, isError = false): ToolResultPart => ({
  type: "tool_result",
  toolCallId,
  content,
  isError
})

/** A reasoning part (opaque provider fields optional). @since 0.3.0 */
export const reasoning = (value: string, opaque: Omit<ReasoningPart, "type" | "text"> = {}): ReasoningPart => ({
  type: "reasoning",
  text: value,
  ...opaque
})

/** An image part from a URL. @since 0.3.0 */
export const imageUrl = (url: string, size: Omit<ImagePart, "type" | "source"> = {}): ImagePart => ({
  type: "image",
  source: { type: "url", url },
  ...size
})

/** An image part from base64 data. @since 0.3.0 */
export const imageBase64 = (
  mediaType: string,
  data: string,
  size: Omit<ImagePart, "type" | "source"> = {}
): ImagePart => ({ type: "image", source: { type: "base64", mediaType, data }, ...size })

/** A system message input. @since 0.1.0 */
export const system = (value: string): MessageInput => ({ role: "system", parts: [text(value)] })
/** A user message input. @since 0.1.0 */
export const user = (value: string): MessageInput => ({ role: "user", parts: [text(value)] })
/** An assistant message input, with optional tool calls. @since 0.1.0 */
export const assistant = (value: string, calls: ReadonlyArray<ToolCallPart> = []): MessageInput => ({
  role: "assistant",
  parts: value.length > 0 ? [text(value), ...calls] : calls
})
/** A tool message input answering `toolCallId`. @since 0.1.0 */
export const tool = (toolCallId: string, content: string, isError = false): MessageInput => ({
  role: "tool",
  parts: [toolResult(toolCallId, content, isError)]
})

// Messages are immutable and their parts arrays are shared by every copy of a message (origins are stamped
// on a copy), so what these helpers derive is remembered per parts array: renders, validators and tool-pair
// checks ask for it on every message of the window, every turn. A single text part needs no memo.
const noCalls: ReadonlyArray<ToolCallPart> = []
const noResults: ReadonlyArray<ToolResultPart> = []
const callsMemo = new WeakMap<ReadonlyArray<Part>, ReadonlyArray<ToolCallPart>>()
const resultsMemo = new WeakMap<ReadonlyArray<Part>, ReadonlyArray<ToolResultPart>>()
const textMemo = new WeakMap<ReadonlyArray<Part>, string>()

const onlyText = (parts: ReadonlyArray<Part>): boolean => parts.length === 1 && parts[0]?.type === "text"

/** The tool calls a message makes. @since 0.1.0 */
export const toolCallsOf = (message: { readonly parts: ReadonlyArray<Part> }): ReadonlyArray<ToolCallPart> => {
  const parts = message.parts
  if (parts.length === 0 || onlyText(parts)) return noCalls
  let calls = callsMemo.get(parts)
  if (calls === undefined) {
    calls = parts.filter((part): part is ToolCallPart => part.type === "tool_call")
    callsMemo.set(parts, calls.length === 0 ? noCalls : calls)
  }
  return calls
}

/** The tool results a message carries. @since 0.1.0 */
export const toolResultsOf = (message: { readonly parts: ReadonlyArray<Part> }): ReadonlyArray<ToolResultPart> => {
  const parts = message.parts
  if (parts.length === 0 || onlyText(parts)) return noResults
  let results = resultsMemo.get(parts)
  if (results === undefined) {
    results = parts.filter((part): part is ToolResultPart => part.type === "tool_result")
    resultsMemo.set(parts, results.length === 0 ? noResults : results)
  }
  return results
}

/** The text of a message: its text parts joined by newlines. @since 0.1.0 */
export const textOf = (message: { readonly parts: ReadonlyArray<Part> }): string => {
  const parts = message.parts
  const first = parts[0]
  if (parts.length === 1 && first?.type === "text") return first.text
  let text = textMemo.get(parts)
  if (text === undefined) {
    text = parts
      .filter((part): part is TextPart => part.type === "text")
      .map((part) => part.text)
      .join("\n")
    textMemo.set(parts, text)
  }
  return text
}

/** The reasoning parts of a message. @since 0.3.0 */
export const reasoningOf = (message: { readonly parts: ReadonlyArray<Part> }): ReadonlyArray<ReasoningPart> =>
  onlyText(message.parts) ? [] : message.parts.filter((part): part is ReasoningPart => part.type === "reasoning")

/** The images and documents of a message. @since 0.3.0 */
export const mediaOf = (message: { readonly parts: ReadonlyArray<Part> }): ReadonlyArray<ImagePart | DocumentPart> =>
  onlyText(message.parts)
    ? []
    : message.parts.filter(
        (part): part is ImagePart | DocumentPart => part.type === "image" || part.type === "document"
      )

/**
 * Everything in a message that a tokenizer should see, as one string: text, reasoning text, tool
 * names and inputs, tool outputs. Images and documents are not text: token counters add their cost
 * by the provider's formula (`TokenCounter`). Token counters count this.
 * @since 0.1.0
 */
export const tokenTextOf = (message: { readonly parts: ReadonlyArray<Part> }): string =>
  message.parts
    .flatMap((part) => {
      if (part.type === "text" || part.type === "reasoning") return [part.text]
      if (part.type === "tool_call") return [`${part.name} ${JSON.stringify(part.input)}`]
      if (part.type === "tool_result") return [part.content]
      return []
    })
    .join("\n")
