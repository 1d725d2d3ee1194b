/**
 * One message, whole: every part in full (text, tool calls with their input, tool results, reasoning,
 * media as metadata, never the bytes), its tokens, its origin (blame) and its tool pair. `ctxlog message`,
 * `window --full` and the viewer's message pane read it from here.
 *
 * @since 0.2.0
 */
import type { Message, Window, WindowEvent } from "@ctxlog/core"
import type * as Queries from "./Queries.js"

/** A part as shown whole (media: what it is, never its bytes). @since 0.2.0 */
export type PartView =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_call"; readonly id: string; readonly name: string; readonly input: string }
  | { readonly type: "tool_result"; readonly toolCallId: string; readonly isError: boolean; readonly content: string }
  | {
      readonly type: "reasoning"
      readonly text: string
      readonly signed: boolean
      readonly redacted: boolean
      readonly encrypted: boolean
    }
  | {
      readonly type: "image" | "document"
      readonly source: string
      readonly mediaType: string | null
      readonly bytes: number | null
      readonly detail: string | null
    }

/** A message, whole, with where it came from and its tool pair. @since 0.2.0 */
export interface MessageDetail {
  readonly id: string
  readonly role: Message.Role
  readonly kind: Message.MessageKind
  readonly tokens: number
  readonly pinned: boolean
  /** Its partition in the window at `version`, or null when it is not in that window (removed, or later). */
  readonly partition: Window.MessagePartition | null
  /** The window version it was looked up at. */
  readonly version: number
  /** The event that put it in the log. */
  readonly origin: { readonly version: number; readonly type: string } | null
  readonly parts: ReadonlyArray<PartView>
  /** The other half of its tool pairs: the results of its calls, or the call a result answers. */
  readonly pair: ReadonlyArray<{
    readonly id: string
    readonly role: Message.Role
    readonly parts: ReadonlyArray<PartView>
  }>
}

const mediaView = (part: Message.ImagePart | Message.DocumentPart): PartView => ({
  type: part.type,
  source: part.source.type === "url" ? part.source.url : "inline base64",
  mediaType: part.source.type === "base64" ? part.source.mediaType : null,
  bytes: part.source.type === "base64" ? Math.floor((part.source.data.length * 3) / 4) : null,
  detail:
    part.type === "image"
      ? [part.width === undefined ? "" : `${part.width}x${part.height ?? "?"}`, part.detail ?? ""]
          .filter((item) => item !== "")
          .join(" ") || null
      : [part.title ?? "", part.pages === undefined ? "" : `${part.pages} pages`]
          .filter((item) => item !== "")
          .join(", ") || null
})

/** Every part of a message, whole. @since 0.2.0 */
export const partsOf = (message: Message.Message): ReadonlyArray<PartView> =>
  message.parts.map((part): PartView => {
    switch (part.type) {
      case "text":
        return { type: "text", text: part.text }
      case "tool_call":
        return { type: "tool_call", id: part.id, name: part.name, input: JSON.stringify(part.input, null, 2) }
      case "tool_result":
        return { type: "tool_result", toolCallId: part.toolCallId, isError: part.isError, content: part.content }
      case "reasoning":
        return {
          type: "reasoning",
          text: part.text,
          signed: part.signature !== undefined,
          redacted: part.redactedData !== undefined,
          encrypted: part.encryptedContent !== undefined
        }
      case "server_tool_call":
      case "server_tool_result":
      case "tool_approval_request":
      case "tool_approval_response":
      case "custom":
        // Provider-executed tools, approvals and provider-specific parts: shown whole, as their JSON.
        return { type: "text", text: `[${part.type}] ${JSON.stringify(part, null, 2)}` }
      default:
        return mediaView(part)
    }
  })

const isMessage = (value: unknown): value is Message.Message =>
  typeof value === "object" &&
  value !== null &&
  typeof Reflect.get(value, "id") === "string" &&
  Array.isArray(Reflect.get(value, "parts")) &&
  typeof Reflect.get(value, "role") === "string"

/** The messages an event carries (appended, injected, summaries, seams…), found by shape. */
const carried = (event: WindowEvent.WindowEvent): ReadonlyArray<Message.Message> => {
  const found: Array<Message.Message> = []
  for (const value of Object.values(event)) {
    if (isMessage(value)) found.push(value)
    else if (Array.isArray(value)) for (const item of value) if (isMessage(item)) found.push(item)
  }
  return found
}

const windowMessages = (window: Window.Window) =>
  [
    ...window.system.map((message) => ({ message, partition: "system" as const })),
    ...window.knowledge.map((message) => ({ message, partition: "knowledge" as const })),
    ...window.history.map((message) => ({ message, partition: "history" as const }))
  ] satisfies ReadonlyArray<{ message: Message.Message; partition: Window.MessagePartition }>

/** Why a reference did not name one message. @since 0.2.0 */
export interface NotFound {
  readonly _tag: "NotFound" | "Ambiguous"
  readonly detail: string
}

/**
 * The message `ref` names in the window at `window.version` (or, when it left the window, as its
 * event carried it): an id, a unique prefix or suffix of one, or `@N` for the message the event at version
 * N put in the log. `entries` are the stream's events up to the window's version.
 * @since 0.2.0
 */
export const find = (
  entries: ReadonlyArray<Queries.Entry>,
  window: Window.Window,
  ref: string
): { readonly _tag: "Found"; readonly detail: MessageDetail } | NotFound => {
  const inWindow = windowMessages(window)
  const all = new Map<string, { message: Message.Message; version: number; type: string }>()
  for (const entry of entries) {
    for (const message of carried(entry.event)) {
      if (!all.has(message.id)) all.set(message.id, { message, version: entry.version, type: entry.type })
    }
  }
  let id: string | undefined
  if (ref.startsWith("@")) {
    const version = Number(ref.slice(1))
    const entry = entries.find((candidate) => candidate.version === version)
    if (entry === undefined) return { _tag: "NotFound", detail: `no event at version ${ref.slice(1)}` }
    const messages = carried(entry.event)
    if (messages.length === 0) {
      return { _tag: "NotFound", detail: `the event at version ${version} (${entry.type}) carries no message` }
    }
    id = messages[0]?.id
  } else {
    const ids = [...new Set([...inWindow.map((item) => item.message.id), ...all.keys()])]
    const exact = ids.find((candidate) => candidate === ref)
    const matches =
      exact !== undefined ? [exact] : ids.filter((candidate) => candidate.startsWith(ref) || candidate.endsWith(ref))
    if (matches.length === 0) return { _tag: "NotFound", detail: `no message with id "${ref}"` }
    if (matches.length > 1) {
      return {
        _tag: "Ambiguous",
        detail: `"${ref}" matches ${matches.length} messages (${matches.slice(0, 3).join(", ")}${matches.length > 3 ? ", …" : ""}): give more of the id`
      }
    }
    id = matches[0]
  }
  const current = inWindow.find((item) => item.message.id === id)
  const logged = id === undefined ? undefined : all.get(id)
  const message = current?.message ?? logged?.message
  if (message === undefined) return { _tag: "NotFound", detail: `no message with id "${ref}"` }
  const callIds = new Set(message.parts.flatMap((part) => (part.type === "tool_call" ? [part.id] : [])))
  const answered = new Set(message.parts.flatMap((part) => (part.type === "tool_result" ? [part.toolCallId] : [])))
  const candidates = [
    ...inWindow.map((item) => item.message),
    ...[...all.values()].map((item) => item.message).filter((m) => !inWindow.some((item) => item.message.id === m.id))
  ]
  const pair = candidates
    .filter(
      (other) =>
        other.id !== message.id &&
        other.parts.some(
          (part) =>
            (part.type === "tool_result" && callIds.has(part.toolCallId)) ||
            (part.type === "tool_call" && answered.has(part.id))
        )
    )
    .map((other) => ({ id: other.id, role: other.role, parts: partsOf(other) }))
  const originVersion = message.origin?.version ?? logged?.version
  const originEntry = entries.find((entry) => entry.version === originVersion)
  return {
    _tag: "Found",
    detail: {
      id: message.id,
      role: message.role,
      kind: message.kind,
      tokens: message.tokens,
      pinned: message.pinned === true,
      partition: current?.partition ?? null,
      version: window.version,
      origin:
        originVersion === undefined ? null : { version: originVersion, type: originEntry?.type ?? logged?.type ?? "?" },
      parts: partsOf(message),
      pair
    }
  }
}

/** A part as plain text lines. @since 0.2.0 */
export const partText = (part: PartView): string => {
  switch (part.type) {
    case "text":
      return part.text
    case "tool_call":
      return `[tool call ${part.name} id ${part.id}]\n${part.input}`
    case "tool_result":
      return `[tool result for ${part.toolCallId}${part.isError ? ", error" : ""}]\n${part.content}`
    case "reasoning":
      return `[reasoning${part.signed ? ", signed" : ""}${part.redacted ? ", redacted" : ""}${part.encrypted ? ", encrypted" : ""}]\n${part.text}`
    case "image":
    case "document":
      return `[${part.type}: ${part.source}${part.mediaType === null ? "" : ` ${part.mediaType}`}${part.bytes === null ? "" : `, ${part.bytes} bytes`}${part.detail === null ? "" : `, ${part.detail}`}]`
  }
}

/** A message detail as plain text (what `ctxlog message` prints). @since 0.2.0 */
export const text = (detail: MessageDetail): string =>
  [
    `message ${detail.id}`,
    `role ${detail.role}, kind ${detail.kind}, ${detail.tokens} tokens${detail.pinned ? ", pinned" : ""}`,
    detail.partition === null
      ? `not in the window at version ${detail.version}`
      : `in ${detail.partition} at version ${detail.version}`,
    detail.origin === null ? "origin unknown" : `put there by v${detail.origin.version} ${detail.origin.type}`,
    "",
    ...detail.parts.map(partText),
    ...detail.pair.flatMap((other) => ["", `── tool pair: ${other.role} ${other.id}`, ...other.parts.map(partText)])
  ].join("\n")
