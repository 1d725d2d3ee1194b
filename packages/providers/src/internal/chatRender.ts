/**
 * Sections → OpenAI Chat Completions request (also Ollama `/v1`, vLLM, llama.cpp server) and
 * Sections → OpenAI Responses request.
 */
// Request bodies: an optional key is spread, so the body (hashed, and compared whole in the golden
// tests) never carries an undefined one.
import { type LanguageModel, Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import { type InvalidRequest, make as invalid } from "../InvalidRequest.js"
import * as RequestValidator from "../RequestValidator.js"
import { sendsReasoning } from "../SentTokens.js"
import { add, counters } from "./renderCounters.js"
import { dataUrlOf, mediaStub, type Sections, type Turn, type UserContent, wrapContext } from "./sections.js"
import type {
  ChatCompletionsRequest,
  ChatContentPart,
  ChatMessage,
  ChatTool,
  ResponsesContentPart,
  ResponsesInputItem,
  ResponsesRequest,
  ResponsesTool
} from "../ProviderRequest.js"

export interface Settings {
  readonly model: string
  /** Role of identity and knowledge: `developer` for reasoning models. */
  readonly systemRole: "system" | "developer"
  /** One system message for everything (small local models often honour only the first). */
  readonly mergeSystem: boolean
  /** Role of system or injected messages found inside history. */
  readonly contextRole: "system" | "developer" | "user"
  readonly tokenParam: "max_tokens" | "max_completion_tokens"
  readonly maxTokens?: number | undefined
  readonly temperature?: number | undefined
  readonly tools?: ReadonlyArray<LanguageModel.ToolSpec> | undefined
  readonly reminder?: string | undefined
  /**
   * How documents go: `file` parts with base64 data (OpenAI), or a text line naming them (servers
   * that take no files). URL documents are always a text line: these APIs fetch no files. Default `text`.
   */
  readonly documents?: "file" | "text" | undefined
  /** Whether the server fetches image URLs (Ollama takes only base64 images). Default true. */
  readonly imageUrls?: boolean | undefined
  /**
   * Responses: also send reasoning that has `encrypted_content` but no item id (stateless use,
   * `store: false`, as Codex CLI sends it). Default false: only reasoning with an id goes back.
   */
  readonly statelessReasoning?: boolean | undefined
}

/** Tool results have no error flag in these APIs: say it in the text. */
export const errorPrefix = "[tool error] "

const resultText = (content: string, isError: boolean): string => (isError ? `${errorPrefix}${content}` : content)

/**
 * A tool result in a Chat Completions `tool` message, which takes text only: a result made of parts
 * keeps its text and names each image or document in a line where it stood (the best this API can do).
 */
export const chatToolResultText = (part: Message.ToolResultPart): string => {
  const content = Message.toolResultContentOf(part)
  const only = content[0]
  const text =
    content.length === 1 && only?.type === "text"
      ? only.text
      : content.map((inner) => (inner.type === "text" ? inner.text : mediaStub(inner))).join("\n")
  return resultText(text, part.isError)
}

/** A tool result as a Responses `function_call_output`'s output: text, or input parts when made of parts. */
export const responsesToolOutput = (part: Message.ToolResultPart): string | ReadonlyArray<ResponsesContentPart> => {
  const content = Message.toolResultContentOf(part)
  const only = content[0]
  if (content.length === 1 && only?.type === "text") return resultText(only.text, part.isError)
  const parts = responsesContent(content)
  const list = typeof parts === "string" ? [{ type: "input_text" as const, text: parts }] : parts
  return part.isError ? [{ type: "input_text", text: errorPrefix.trim() }, ...list] : list
}

/**
 * These APIs take no provider-executed tool blocks back (OpenAI's own server tools are not modelled
 * as parts ctxlog can send): an assistant message holding one is refused, naming the part.
 */
export const refuseServerParts = (
  provider: string,
  messageId: string,
  parts: ReadonlyArray<Message.Part>
): InvalidRequest | undefined => {
  const index = parts.findIndex((part) => part.type === "server_tool_call" || part.type === "server_tool_result")
  const part = parts[index]
  if (part === undefined || (part.type !== "server_tool_call" && part.type !== "server_tool_result")) return undefined
  return invalid(provider, `a ${part.type} part ran by ${part.provider} goes back only to ${part.provider}`, {
    messageId,
    partIndex: index
  })
}

/** The system-side texts: identity, stable knowledge, injected knowledge (each joined). */
const systemTexts = (sections: Omit<Sections, "turns">, merge: boolean): ReadonlyArray<string> => {
  const identity = sections.identity.map((piece) => piece.text).join("\n\n")
  const stable = sections.stable.map((piece) => piece.text).join("\n\n")
  const injected = sections.injected.map((piece) => wrapContext(piece.kind, piece.text)).join("\n\n")
  const texts = [identity, stable, injected].filter((value) => value.length > 0)
  return merge ? (texts.length === 0 ? [] : [texts.join("\n\n")]) : texts
}

/** OpenAI wants a file name with inline file data: the title, else one from the media type. */
const filenameOf = (part: Message.DocumentPart): string => {
  if (part.title !== undefined && part.title.length > 0) return part.title
  const subtype = part.source.type === "base64" ? (part.source.mediaType.split("/")[1] ?? "bin") : "bin"
  return `document.${subtype === "plain" ? "txt" : subtype}`
}

/** A user turn's content: plain text when it is only text, else parts in message order. */
const chatContent = (
  content: ReadonlyArray<UserContent>,
  documents: "file" | "text",
  imageUrls: boolean
): string | ReadonlyArray<ChatContentPart> => {
  const only = content[0]
  if (content.length === 1 && only?.type === "text") return only.text
  return content.map((part): ChatContentPart => {
    if (part.type === "text") return { type: "text", text: part.text }
    if (part.type === "image" && (imageUrls || part.source.type === "base64")) {
      return {
        type: "image_url",
        image_url: { url: dataUrlOf(part.source), ...(part.detail === undefined ? {} : { detail: part.detail }) }
      }
    }
    return part.type === "document" && documents === "file" && part.source.type === "base64"
      ? {
          type: "file",
          file: { filename: filenameOf(part), file_data: dataUrlOf(part.source) }
        }
      : { type: "text", text: mediaStub(part) }
  })
}

const responsesContent = (content: ReadonlyArray<UserContent>): string | ReadonlyArray<ResponsesContentPart> => {
  const only = content[0]
  if (content.length === 1 && only?.type === "text") return only.text
  return content.map((part): ResponsesContentPart => {
    if (part.type === "text") return { type: "input_text", text: part.text }
    if (part.type === "image") {
      return { type: "input_image", image_url: dataUrlOf(part.source), detail: part.detail ?? "auto" }
    }
    return part.source.type === "url"
      ? { type: "input_file", file_url: part.source.url }
      : {
          type: "input_file",
          filename: filenameOf(part),
          file_data: dataUrlOf(part.source)
        }
  })
}

/** Messages before history: identity, knowledge, then task state and signals as a user message. */
export const chatLead = (sections: Omit<Sections, "turns">, settings: Settings): ReadonlyArray<ChatMessage> => {
  const messages: Array<ChatMessage> = systemTexts(sections, settings.mergeSystem).map((content) => ({
    role: settings.systemRole,
    content
  }))
  if (sections.state !== undefined) messages.push({ role: "user", content: sections.state.text })
  return messages
}

/** One history turn as Chat Completions messages (every call is one turn rendered: `counters.turnsRendered`). */
export const chatTurn = (
  provider: string,
  turn: Turn,
  settings: Settings
): Either.Either<ReadonlyArray<ChatMessage>, InvalidRequest> => {
  add(counters.turnsRendered)
  switch (turn._tag) {
    case "User":
      return Either.right([
        { role: "user", content: chatContent(turn.content, settings.documents ?? "text", settings.imageUrls ?? true) }
      ])
    case "Context":
      return Either.right([
        {
          role: settings.contextRole,
          content:
            turn.kind === "chat" && settings.contextRole !== "user"
              ? turn.text
              : wrapContext(turn.kind === "chat" ? turn.role : turn.kind, turn.text)
        }
      ])
    case "Assistant": {
      const refused = refuseServerParts(provider, turn.messageId, turn.parts)
      if (refused !== undefined) return Either.left(refused)
      if (turn.text.length === 0 && turn.calls.length === 0) return Either.right([])
      return Either.right([
        {
          role: "assistant",
          content: turn.text.length === 0 ? null : turn.text,
          ...(turn.calls.length === 0
            ? {}
            : {
                tool_calls: turn.calls.map((call) => ({
                  id: call.id,
                  type: "function" as const,
                  function: { name: call.name, arguments: JSON.stringify(call.input) }
                }))
              })
        }
      ])
    }
    case "Results":
      return Either.right(
        turn.results.map(
          ({ part }): ChatMessage => ({
            role: "tool",
            tool_call_id: part.toolCallId,
            content: chatToolResultText(part)
          })
        )
      )
  }
}

/** The index of the last item `isUser` holds for, or -1. */
const lastIndex = <M>(items: ReadonlyArray<M>, isUser: (item: M) => boolean): number => {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]
    if (item !== undefined && isUser(item)) return index
  }
  return -1
}

/**
 * Lead and history items with the reminder on the last user item (or appended as one), and the
 * index of the first item that changes when more history comes: the reminder's item (the items
 * before it are the same objects in the next render of a longer history).
 */
const withReminderAt = <M>(
  lead: ReadonlyArray<M>,
  history: ReadonlyArray<M>,
  reminder: string | undefined,
  isUser: (item: M) => boolean,
  make: (content: string) => M,
  prepend: (item: M, reminder: string) => M
): { readonly items: ReadonlyArray<M>; readonly stable: number } => {
  const items = lead.length === 0 ? [...history] : [...lead, ...history]
  if (reminder === undefined || reminder.length === 0) return { items, stable: items.length }
  const index = lastIndex(items, isUser)
  const target = items[index]
  if (target === undefined) {
    items.push(make(reminder))
    return { items, stable: items.length - 1 }
  }
  items[index] = prepend(target, reminder)
  return { items, stable: index }
}

/** A Chat Completions request from its lead and history messages (not validated), and its stable prefix. */
export const assembleChat = (
  lead: ReadonlyArray<ChatMessage>,
  history: ReadonlyArray<ChatMessage>,
  settings: Settings
): { readonly request: ChatCompletionsRequest; readonly stable: number } => {
  const { items, stable } = withReminderAt<ChatMessage>(
    lead,
    history,
    settings.reminder,
    (message) => message.role === "user",
    (content) => ({ role: "user", content }),
    (message, reminder) =>
      message.role !== "user"
        ? message
        : typeof message.content === "string"
          ? { ...message, content: `${reminder}\n\n${message.content}` }
          : { ...message, content: [{ type: "text", text: reminder }, ...message.content] }
  )
  const tools: ReadonlyArray<ChatTool> = (settings.tools ?? []).map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema }
  }))
  const request: ChatCompletionsRequest = {
    model: settings.model,
    messages: items,
    ...(tools.length === 0 ? {} : { tools }),
    ...(settings.maxTokens === undefined
      ? {}
      : settings.tokenParam === "max_tokens"
        ? { max_tokens: settings.maxTokens }
        : { max_completion_tokens: settings.maxTokens }),
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    stream: true,
    stream_options: { include_usage: true }
  }
  return { request, stable }
}

/** Render a Chat Completions request; validates it. */
export const renderChat = (
  provider: string,
  sections: Sections,
  settings: Settings
): Either.Either<ChatCompletionsRequest, InvalidRequest> => {
  const history: Array<ChatMessage> = []
  for (const turn of sections.turns) {
    const rendered = chatTurn(provider, turn, settings)
    if (Either.isLeft(rendered)) return Either.left(rendered.left)
    history.push(...rendered.right)
  }
  const { request } = assembleChat(chatLead(sections, settings), history, settings)
  return Either.map(RequestValidator.chatCompletions(request, provider), () => request)
}

/** Items before history: identity, knowledge, then task state and signals as a user message. */
export const responsesLead = (
  sections: Omit<Sections, "turns">,
  settings: Settings
): ReadonlyArray<ResponsesInputItem> => {
  const input: Array<ResponsesInputItem> = systemTexts(sections, settings.mergeSystem).map((content) => ({
    type: "message",
    role: settings.systemRole,
    content
  }))
  if (sections.state !== undefined) input.push({ type: "message", role: "user", content: sections.state.text })
  return input
}

/** One history turn as Responses input items (every call is one turn rendered: `counters.turnsRendered`). */
export const responsesTurn = (
  turn: Turn,
  settings: Settings
): Either.Either<ReadonlyArray<ResponsesInputItem>, InvalidRequest> => {
  add(counters.turnsRendered)
  switch (turn._tag) {
    case "User": {
      const content = responsesContent(turn.content)
      return Either.right([
        typeof content === "string"
          ? { type: "message", role: "user", content }
          : { type: "message", role: "user", content }
      ])
    }
    case "Context":
      return Either.right([
        {
          type: "message",
          role: settings.contextRole,
          content:
            turn.kind === "chat" && settings.contextRole !== "user"
              ? turn.text
              : wrapContext(turn.kind === "chat" ? turn.role : turn.kind, turn.text)
        }
      ])
    case "Assistant": {
      const refused = refuseServerParts("openai", turn.messageId, turn.parts)
      if (refused !== undefined) return Either.left(refused)
      const input: Array<ResponsesInputItem> = []
      // Reasoning items go back before the output they led to, when the API gave them an id (with
      // `encrypted_content` for stateless use), or, with `statelessReasoning`, when they carry
      // `encrypted_content` without an id (Codex CLI's form); readable-only reasoning is not sent.
      if (turn.text.length > 0 || turn.calls.length > 0) {
        const rule = settings.statelessReasoning === true ? "item-or-encrypted" : "item"
        for (const part of turn.reasoning) {
          if (!sendsReasoning(rule, part)) continue
          input.push({
            type: "reasoning",
            ...(part.itemId === undefined ? {} : { id: part.itemId }),
            summary: part.text.length === 0 ? [] : [{ type: "summary_text", text: part.text }],
            ...(part.encryptedContent === undefined ? {} : { encrypted_content: part.encryptedContent })
          })
        }
      }
      if (turn.text.length > 0) input.push({ type: "message", role: "assistant", content: turn.text })
      for (const call of turn.calls) {
        input.push({
          type: "function_call",
          call_id: call.id,
          name: call.name,
          arguments: JSON.stringify(call.input)
        })
      }
      return Either.right(input)
    }
    case "Results":
      return Either.right(
        turn.results.map(
          ({ part }): ResponsesInputItem => ({
            type: "function_call_output",
            call_id: part.toolCallId,
            output: responsesToolOutput(part)
          })
        )
      )
  }
}

/** A Responses request from its lead and history items (not validated), and its stable prefix. */
export const assembleResponses = (
  lead: ReadonlyArray<ResponsesInputItem>,
  history: ReadonlyArray<ResponsesInputItem>,
  settings: Settings
): { readonly request: ResponsesRequest; readonly stable: number } => {
  const { items, stable } = withReminderAt<ResponsesInputItem>(
    lead,
    history,
    settings.reminder,
    (item) => item.type === "message" && item.role === "user",
    (content) => ({ type: "message", role: "user", content }),
    (item, reminder) =>
      item.type !== "message" || item.role !== "user"
        ? item
        : typeof item.content === "string"
          ? { ...item, role: "user", content: `${reminder}\n\n${item.content}` }
          : { ...item, role: "user", content: [{ type: "input_text", text: reminder }, ...item.content] }
  )
  const tools: ReadonlyArray<ResponsesTool> = (settings.tools ?? []).map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    parameters: tool.inputSchema
  }))
  const request: ResponsesRequest = {
    model: settings.model,
    input: items,
    ...(tools.length === 0 ? {} : { tools }),
    ...(settings.maxTokens === undefined ? {} : { max_output_tokens: settings.maxTokens }),
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    stream: true
  }
  return { request, stable }
}

/** Render a Responses request; validates it. */
export const renderResponses = (
  sections: Sections,
  settings: Settings
): Either.Either<ResponsesRequest, InvalidRequest> => {
  const history: Array<ResponsesInputItem> = []
  for (const turn of sections.turns) {
    const rendered = responsesTurn(turn, settings)
    if (Either.isLeft(rendered)) return Either.left(rendered.left)
    history.push(...rendered.right)
  }
  const { request } = assembleResponses(responsesLead(sections, settings), history, settings)
  return Either.map(RequestValidator.responses(request), () => request)
}
