/**
 * One message whole, as the viewer's message pane shows it: every part in full (text, tool calls
 * with their input, tool results, reasoning; images and documents as metadata only, never their
 * bytes), its tokens, its origin (blame: the event that put it in the window and the last that
 * changed it) and its tool pair (call ↔ result) within the same window.
 *
 * Pure: it reads a window from core's projection and a {@link Queries.Blame}; the server loads both.
 *
 * @since 0.4.0
 */
import { Message, type Window } from "@ctxlog/core"
import * as Schema from "effect/Schema"
import type * as Queries from "./Queries.js"

/** A part as the pane shows it (media without its data). @since 0.4.0 */
export type PartView =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly input: string }
  | { readonly type: "tool_result"; readonly toolCallId: string; readonly content: string; readonly isError: boolean }
  | { readonly type: "reasoning"; readonly text: string; readonly opaque: boolean }
  | {
      readonly type: "image" | "document"
      readonly source: string
      readonly bytes: number | null
      readonly detail: string | null
    }

/** One side of a tool pair: the message holding the call or the result, when it is in the window. @since 0.4.0 */
export interface PairSide {
  readonly messageId: string
  readonly preview: string
}

/** A tool call and its result. @since 0.4.0 */
export interface ToolPair {
  readonly toolCallId: string
  readonly name: string | null
  readonly call: PairSide | null
  readonly result: PairSide | null
}

/** A message whole at a version. @since 0.4.0 */
export interface MessageDetail {
  readonly version: number
  readonly id: string
  readonly partition: Window.MessagePartition
  readonly role: Message.Role
  readonly kind: Message.MessageKind
  readonly tokens: number
  readonly pinned: boolean
  readonly parts: ReadonlyArray<PartView>
  readonly addedBy: Queries.Touch | null
  readonly lastChangedBy: Queries.Touch | null
  readonly toolPairs: ReadonlyArray<ToolPair>
}

/** The message is not in the window at that version. @since 0.4.0 */
export class MessageNotFound extends Schema.TaggedError<MessageNotFound>()("MessageNotFound", {
  id: Schema.String,
  version: Schema.Number,
  /** How many messages of the window the id (a prefix or suffix) matches: 0, or more than one. */
  matches: Schema.optionalWith(Schema.Number, { default: () => 0 })
}) {
  override get message(): string {
    return this.matches > 1
      ? `"${this.id}" matches ${this.matches} messages in the window at version ${this.version}: give more of the id`
      : `message "${this.id}" is not in the window at version ${this.version}`
  }
}

/**
 * Whether `ref` names the message `id` as people copy ids: the whole id, or a prefix or a suffix of
 * it (`ctxlog window` prints the end of an id after `…`; the `…` is dropped).
 * @since 0.4.0
 */
export const refersTo = (id: string, ref: string): boolean => {
  const bare = ref.replace(/^…/, "")
  return bare.length > 0 && (id === bare || id.startsWith(bare) || id.endsWith(bare))
}

const partitionNames: ReadonlyArray<Window.MessagePartition> = ["system", "knowledge", "history"]

const partView = (part: Message.Part): PartView => {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text }
    case "tool_call":
      return { type: "tool_call", id: part.id, name: part.name, input: JSON.stringify(part.input, null, 2) }
    case "tool_result":
      return { type: "tool_result", toolCallId: part.toolCallId, content: part.content, isError: part.isError }
    case "reasoning":
      return {
        type: "reasoning",
        text: part.text,
        opaque: part.signature !== undefined || part.redactedData !== undefined || part.encryptedContent !== undefined
      }
    case "server_tool_call":
    case "server_tool_result":
    case "tool_approval_request":
    case "tool_approval_response":
    case "custom":
      // Provider-executed tools, approvals and provider-specific parts: shown whole, as their JSON.
      return { type: "text", text: `[${part.type}] ${JSON.stringify(part, null, 2)}` }
    case "image":
    case "document": {
      const source = part.source.type === "url" ? part.source.url : `base64 ${part.source.mediaType}`
      const bytes = part.source.type === "base64" ? Math.floor((part.source.data.length * 3) / 4) : null
      const detail =
        part.type === "image"
          ? [part.width === undefined ? null : `${part.width}×${part.height ?? "?"} px`, part.detail ?? null]
              .filter((value) => value !== null)
              .join(", ") || null
          : [part.title ?? null, part.pages === undefined ? null : `${part.pages} pages`]
              .filter((value) => value !== null)
              .join(", ") || null
      return { type: part.type, source, bytes, detail }
    }
  }
}

/**
 * The message `id` of `window` whole, with its blame and its tool pairs (looked up in the same
 * window; a side that left the window is null). O(window) to find the pairs.
 * @since 0.4.0
 */
export const detail = (
  window: Window.Window,
  blame: Queries.Blame,
  id: string,
  preview: (message: Message.Message) => string
): MessageDetail | MessageNotFound => {
  let found: { readonly message: Message.Message; readonly partition: Window.MessagePartition } | undefined
  const calls = new Map<string, { readonly message: Message.Message; readonly name: string }>()
  const results = new Map<string, Message.Message>()
  const partial: Array<{ readonly message: Message.Message; readonly partition: Window.MessagePartition }> = []
  for (const partition of partitionNames) {
    for (const message of window[partition]) {
      if (message.id === id) found = { message, partition }
      else if (refersTo(message.id, id)) partial.push({ message, partition })
      for (const call of Message.toolCallsOf(message)) calls.set(call.id, { message, name: call.name })
      for (const result of Message.toolResultsOf(message)) results.set(result.toolCallId, message)
    }
  }
  // The whole id first; else a short one (a unique prefix or suffix, as `ctxlog window` prints it).
  if (found === undefined && partial.length === 1) found = partial[0]
  if (found === undefined) return new MessageNotFound({ id, version: window.version, matches: partial.length })
  const { message, partition } = found
  const side = (other: Message.Message | undefined): PairSide | null =>
    other === undefined ? null : { messageId: other.id, preview: preview(other) }
  const toolPairs: Array<ToolPair> = []
  for (const call of Message.toolCallsOf(message)) {
    toolPairs.push({ toolCallId: call.id, name: call.name, call: side(message), result: side(results.get(call.id)) })
  }
  for (const result of Message.toolResultsOf(message)) {
    const call = calls.get(result.toolCallId)
    toolPairs.push({
      toolCallId: result.toolCallId,
      name: call?.name ?? null,
      call: side(call?.message),
      result: side(message)
    })
  }
  const row = blame.messages.find((candidate) => candidate.id === message.id)
  return {
    version: window.version,
    id: message.id,
    partition,
    role: message.role,
    kind: message.kind,
    tokens: message.tokens,
    pinned: message.pinned === true,
    parts: message.parts.map(partView),
    addedBy: row?.addedBy ?? null,
    lastChangedBy: row?.lastChangedBy ?? null,
    toolPairs
  }
}
