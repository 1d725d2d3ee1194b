/**
 * Messages: what a context window is made of.
 *
 * A message's `tokens` are counted once, when it enters the log, and stored in the event that put it
 * there; replay never needs a tokenizer. `origin` is the `{ version, eventId }` of that event (blame).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Caches from "./Caches.js"

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
  "briefing",
  // Since 0.8.0 (issue 39, ADR 0126): the skills a turn chose for its query, placed in knowledge.
  "skill"
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

/**
 * Provider data kept opaque and given back in place, keyed by namespace: the AI SDK's
 * `providerOptions` / `providerMetadata` (`openai: { itemId }`, `anthropic: { cacheControl }`,
 * `google: { thoughtSignature }`, ...), an OpenAI Agents item's `providerData` and the item fields
 * ctxlog does not model. ctxlog interprets none of it: it is stored with the message or part, counted
 * as no tokens, and handed back by the adapter of the framework it came from. A builder for a
 * provider API sends none of it (the adapters decide what their framework gets back).
 * @since 0.8.0
 */
export const ProviderOptions = Schema.Record({ key: Schema.String, value: JsonValue })
/** @since 0.8.0 */
export type ProviderOptions = typeof ProviderOptions.Type

/**
 * Where a piece of text comes from, as the provider gave it (Anthropic `char_location`,
 * `page_location`, `content_block_location`, `web_search_result_location`, ...; an OpenAI
 * `url_citation` annotation): its `type` and the provider's fields, kept as JSON and sent back as
 * they came. Citations cost no input tokens (the provider does not count them) and none are counted.
 * @since 0.4.0
 */
export const Citation = Schema.Struct(
  { type: Schema.String.pipe(Schema.minLength(1)) },
  Schema.Record({ key: Schema.String, value: JsonValue })
)
/** @since 0.4.0 */
export type Citation = typeof Citation.Type

/** Plain text, with the citations the provider attached to it (since 0.4.0). @since 0.1.0 */
export const TextPart = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String,
  citations: Schema.optional(Schema.Array(Citation)),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.1.0 */
export type TextPart = typeof TextPart.Type

/** An assistant's request to run a tool. @since 0.1.0 */
export const ToolCallPart = Schema.Struct({
  type: Schema.Literal("tool_call"),
  id: Schema.String.pipe(Schema.minLength(1)),
  name: Schema.String.pipe(Schema.minLength(1)),
  input: JsonValue,
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.1.0 */
export type ToolCallPart = typeof ToolCallPart.Type

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
  encryptedContent: Schema.optional(Schema.String),
  providerOptions: Schema.optional(ProviderOptions)
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
  detail: Schema.optional(Schema.Literal("auto", "low", "high")),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.3.0 */
export type ImagePart = typeof ImagePart.Type

/** A document (a PDF, or plain text) by URL or base64, with its page count when known. @since 0.3.0 */
export const DocumentPart = Schema.Struct({
  type: Schema.Literal("document"),
  source: MediaSource,
  title: Schema.optional(Schema.String),
  pages: Schema.optional(Schema.Int.pipe(Schema.positive())),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.3.0 */
export type DocumentPart = typeof DocumentPart.Type

/** What a tool result can be made of: text, images, documents. @since 0.4.0 */
export const ToolResultContent = Schema.Union(TextPart, ImagePart, DocumentPart)
/** @since 0.4.0 */
export type ToolResultContent = typeof ToolResultContent.Type

/**
 * The output of a tool call, answering the call with the same id. `content` is its text. A result
 * made of more than text (images, documents, several text blocks) also has `parts`, in order (since
 * 0.4.0); `content` is then the text of its text parts joined by newlines. A later rewrite of
 * `content` alone (pruning, a deferred summary) supersedes `parts`: see {@link toolResultContentOf}.
 * @since 0.1.0
 */
export const ToolResultPart = Schema.Struct({
  type: Schema.Literal("tool_result"),
  toolCallId: Schema.String.pipe(Schema.minLength(1)),
  content: Schema.String,
  isError: Schema.Boolean,
  parts: Schema.optional(Schema.Array(ToolResultContent)),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.1.0 */
export type ToolResultPart = typeof ToolResultPart.Type

/**
 * A tool call the provider ran itself (Anthropic `server_tool_use` such as `web_search`, an AI SDK
 * tool call with `providerExecuted`). It is history, not a request to the caller: nothing answers it
 * with a `tool_result`. `provider` names who ran it (`anthropic`, `openai`, ...); it is sent back only
 * to that provider, and a render for any other is a typed error.
 * @since 0.4.0
 */
export const ServerToolCallPart = Schema.Struct({
  type: Schema.Literal("server_tool_call"),
  id: Schema.String.pipe(Schema.minLength(1)),
  name: Schema.String.pipe(Schema.minLength(1)),
  input: JsonValue,
  provider: Schema.String.pipe(Schema.minLength(1)),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.4.0 */
export type ServerToolCallPart = typeof ServerToolCallPart.Type

/**
 * The result of a provider-executed tool call, as the provider gave it: `resultType` is its block
 * type (Anthropic `web_search_tool_result`, `code_execution_tool_result`, ...; `tool-result` from the
 * AI SDK) and `content` its payload, kept as JSON and sent back byte for byte to the same provider.
 * @since 0.4.0
 */
export const ServerToolResultPart = Schema.Struct({
  type: Schema.Literal("server_tool_result"),
  toolCallId: Schema.String.pipe(Schema.minLength(1)),
  resultType: Schema.String.pipe(Schema.minLength(1)),
  content: JsonValue,
  isError: Schema.optional(Schema.Boolean),
  provider: Schema.String.pipe(Schema.minLength(1)),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.4.0 */
export type ServerToolResultPart = typeof ServerToolResultPart.Type

/**
 * The model asked to run a tool call that needs the user's approval first (AI SDK
 * `tool-approval-request`), in the assistant message that made the call.
 * @since 0.4.0
 */
export const ToolApprovalRequestPart = Schema.Struct({
  type: Schema.Literal("tool_approval_request"),
  approvalId: Schema.String.pipe(Schema.minLength(1)),
  toolCallId: Schema.String.pipe(Schema.minLength(1)),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.4.0 */
export type ToolApprovalRequestPart = typeof ToolApprovalRequestPart.Type

/**
 * The user's answer to an approval request: granted (`approved: true`) or denied, with an optional
 * reason, in a tool message. Approvals steer the agent loop; model APIs that have no such notion
 * are sent none of them (a denied call is answered by the tool result the caller records).
 * @since 0.4.0
 */
export const ToolApprovalResponsePart = Schema.Struct({
  type: Schema.Literal("tool_approval_response"),
  approvalId: Schema.String.pipe(Schema.minLength(1)),
  approved: Schema.Boolean,
  reason: Schema.optional(Schema.String),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.4.0 */
export type ToolApprovalResponsePart = typeof ToolApprovalResponsePart.Type

/**
 * Provider-specific content with no standard form (an AI SDK `custom` part, ai 7 and later): its
 * `kind` is `{provider}.{type}` (`anthropic.message_start`, `anthropic.fallback`, `openai.compaction`)
 * and its payload is in `providerOptions`, kept as it came. Only the AI SDK builder sends it back (the
 * AI SDK provider decides its wire form, often none); the native builders send none of it. It costs
 * no tokens of its own.
 * @since 0.8.0
 */
export const CustomPart = Schema.Struct({
  type: Schema.Literal("custom"),
  kind: Schema.String.pipe(Schema.pattern(/^[^.]+\..+$/)),
  providerOptions: Schema.optional(ProviderOptions)
})
/** @since 0.8.0 */
export type CustomPart = typeof CustomPart.Type

/** One part of a message. @since 0.1.0 */
export const Part = Schema.Union(
  TextPart,
  ToolCallPart,
  ToolResultPart,
  ReasoningPart,
  ImagePart,
  DocumentPart,
  ServerToolCallPart,
  ServerToolResultPart,
  ToolApprovalRequestPart,
  ToolApprovalResponsePart,
  CustomPart
)
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
  origin: Schema.optional(Origin),
  /** The speaker's name (OpenAI `name`, LangChain `name`), kept and given back; never rendered as text (since 0.8.0). */
  name: Schema.optional(Schema.String),
  /** Message-level provider data (AI SDK `providerOptions`, an Agents item's own fields), opaque (since 0.8.0). */
  providerOptions: Schema.optional(ProviderOptions)
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
  /** The speaker's name, kept with the message (since 0.8.0). */
  readonly name?: string
  /** Message-level provider data, kept opaque (since 0.8.0). */
  readonly providerOptions?: ProviderOptions
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

/**
 * A reasoning part (opaque provider fields optional). A field given as `undefined` is left out, so a
 * caller passes what it has: the part equals its replay (decoded from JSON, where no key is undefined).
 * @since 0.3.0
 */
export const reasoning = (value: string, opaque: Omit<ReasoningPart, "type" | "text"> = {}): ReasoningPart => {
  const part: { -readonly [K in keyof ReasoningPart]: ReasoningPart[K] } = { type: "reasoning", text: value }
  if (opaque.signature !== undefined) part.signature = opaque.signature
  if (opaque.redactedData !== undefined) part.redactedData = opaque.redactedData
  if (opaque.itemId !== undefined) part.itemId = opaque.itemId
  if (opaque.encryptedContent !== undefined) part.encryptedContent = opaque.encryptedContent
  return part
}

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

/** A document part from base64 data (or plain text's base64) with an optional title. @since 0.4.0 */
export const documentBase64 = (
  mediaType: string,
  data: string,
  extra: Omit<DocumentPart, "type" | "source"> = {}
): DocumentPart => ({ type: "document", source: { type: "base64", mediaType, data }, ...extra })

/** A document part from a URL. @since 0.4.0 */
export const documentUrl = (url: string, extra: Omit<DocumentPart, "type" | "source"> = {}): DocumentPart => ({
  type: "document",
  source: { type: "url", url },
  ...extra
})

const textOfContent = (parts: ReadonlyArray<ToolResultContent>): string =>
  parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")

/**
 * A tool result made of parts (text, images, documents), in order; its `content` is the text of its
 * text parts. A result that is one plain text part is stored as plain `content`.
 * @since 0.4.0
 */
export const toolResultParts = (
  toolCallId: string,
  parts: ReadonlyArray<ToolResultContent>,
  isError = false
): ToolResultPart => {
  const only = parts[0]
  return parts.length === 1 &&
    only?.type === "text" &&
    only.citations === undefined &&
    only.providerOptions === undefined
    ? toolResult(toolCallId, only.text, isError)
    : { type: "tool_result", toolCallId, content: textOfContent(parts), isError, parts }
}

/**
 * What a tool result holds, in order: its `parts` while their text is still its `content`, else its
 * `content` as one text part (a rewrite of `content` alone, such as pruning or a deferred summary,
 * supersedes the parts it was made of).
 * @since 0.4.0
 */
export const toolResultContentOf = (part: ToolResultPart): ReadonlyArray<ToolResultContent> =>
  part.parts !== undefined && textOfContent(part.parts) === part.content ? part.parts : [text(part.content)]

/** A provider-executed tool call. @since 0.4.0 */
export const serverToolCall = (provider: string, id: string, name: string, input: JsonValue): ServerToolCallPart => ({
  type: "server_tool_call",
  id,
  name,
  input,
  provider
})

/** The result of a provider-executed tool call. @since 0.4.0 */
export const serverToolResult = (
  provider: string,
  toolCallId: string,
  resultType: string,
  content: JsonValue,
  isError?: boolean
): ServerToolResultPart => ({
  type: "server_tool_result",
  toolCallId,
  resultType,
  content,
  provider,
  // A message part: an undefined key would make a live window differ from its replay (ADR 0060).
  ...(isError === undefined ? {} : { isError })
})

/** A request for the user's approval of a tool call. @since 0.4.0 */
export const toolApprovalRequest = (approvalId: string, toolCallId: string): ToolApprovalRequestPart => ({
  type: "tool_approval_request",
  approvalId,
  toolCallId
})

/** The user's grant (`approved: true`) or denial of an approval request. @since 0.4.0 */
export const toolApprovalResponse = (
  approvalId: string,
  approved: boolean,
  reason?: string
): ToolApprovalResponsePart => ({
  type: "tool_approval_response",
  approvalId,
  approved,
  // A message part: absent stays absent (ADR 0060).
  ...(reason === undefined ? {} : { reason })
})

/** The provider-executed tool calls and results of a message. @since 0.4.0 */
export const serverPartsOf = (message: {
  readonly parts: ReadonlyArray<Part>
}): ReadonlyArray<ServerToolCallPart | ServerToolResultPart> =>
  onlyText(message.parts)
    ? []
    : message.parts.filter(
        (part): part is ServerToolCallPart | ServerToolResultPart =>
          part.type === "server_tool_call" || part.type === "server_tool_result"
      )

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
const callsMemo = Caches.weak<ReadonlyArray<Part>, ReadonlyArray<ToolCallPart>>("core.Message.callsMemo")
const resultsMemo = Caches.weak<ReadonlyArray<Part>, ReadonlyArray<ToolResultPart>>("core.Message.resultsMemo")
const textMemo = Caches.weak<ReadonlyArray<Part>, string>("core.Message.textMemo")

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

/**
 * Whether a message is a user's ask: a user chat message that carries no tool result (issue 39). The
 * newest one in a history is the user's latest ask, which no compaction, trim or seam takes away.
 * @since 0.8.0
 */
export const isUserAsk = (message: Pick<Message, "role" | "kind" | "parts">): boolean =>
  message.role === "user" && message.kind === "chat" && toolResultsOf(message).length === 0

/** The user's latest ask in a list of messages (the newest {@link isUserAsk}), if any. O(messages after it). @since 0.8.0 */
export const latestUserAsk = <A extends Pick<Message, "role" | "kind" | "parts">>(
  messages: ReadonlyArray<A>
): A | undefined => messages.findLast(isUserAsk)

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
 * The images and documents of a message, those inside its tool results included (what a token
 * counter prices by the provider's media formula).
 * @since 0.4.0
 */
export const allMediaOf = (message: {
  readonly parts: ReadonlyArray<Part>
}): ReadonlyArray<ImagePart | DocumentPart> =>
  onlyText(message.parts)
    ? []
    : message.parts.flatMap((part): ReadonlyArray<ImagePart | DocumentPart> => {
        if (part.type === "image" || part.type === "document") return [part]
        if (part.type === "tool_result" && part.parts !== undefined) {
          return toolResultContentOf(part).filter(
            (inner): inner is ImagePart | DocumentPart => inner.type === "image" || inner.type === "document"
          )
        }
        return []
      })

/** What of one part a token counter counts (nothing for media, which is priced by its formula). */
const partTokenText = (part: Part): string | undefined => {
  if (part.type === "text" || part.type === "reasoning") return part.text
  if (part.type === "tool_call" || part.type === "server_tool_call") return `${part.name} ${JSON.stringify(part.input)}`
  if (part.type === "tool_result") return part.content
  if (part.type === "server_tool_result") return JSON.stringify(part.content)
  return undefined
}

/**
 * Everything in a message that a tokenizer should see, as one string: text, reasoning text, tool
 * names and inputs, tool outputs, provider-executed tool calls and their results (as the JSON sent
 * back). Images and documents, in a message or in a tool result, are not text: token counters add
 * their cost by the provider's formula (`TokenCounter`). Citations and approvals are not sent as
 * model input text and count nothing. Token counters count this.
 * @since 0.1.0
 */
export const tokenTextOf = (message: { readonly parts: ReadonlyArray<Part> }): string => {
  // A loop, not `flatMap(...).join("\n")`: the same text (counted parts joined by line breaks) without an
  // array per part, on the path of every appended message; a one-part message is its text as it is.
  let out: string | undefined
  for (const part of message.parts) {
    const text = partTokenText(part)
    if (text !== undefined) out = out === undefined ? text : `${out}\n${text}`
  }
  return out ?? ""
}
