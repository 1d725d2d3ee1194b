/**
 * OpenAI Chat Completions messages (`ChatCompletionMessageParam[]` of the `openai` SDK) ⇄ ctxlog messages,
 * tool calls included. Types only: the `openai` package is an optional peer, never loaded at run time.
 *
 * - A tool result's error flag has no field in this API: `toOpenAI` prefixes the content with
 *   `[tool error] ` (as the OpenAI renderer does) and `fromOpenAI` reads the prefix back.
 * - `developer` messages become system messages (and go back as `developer`); user images
 *   (`image_url`, detail kept) and files (`file_data`, the filename as the title) both ways; audio
 *   input, file ids, a legacy `function_call` and custom tool calls are an `AdapterError` naming them.
 * - Kept, never dropped (since 0.8.0): a message's `name` (the ctxlog message's `name`), and every field
 *   the adapter does not model — an assistant's `refusal` and `audio`, `refusal` content parts (text
 *   parts marked as such), `annotations`, anything else that is JSON — under the message's or part's
 *   `providerOptions.openaiChat`, given back in place by `toOpenAI`.
 * - Refused going out, with an `AdapterError` naming the part: a part its role's message has no place
 *   for (an image from the assistant, a tool call from the user), provider-executed tool parts, tool
 *   results made of images or documents, citations, and a tool message's `name` other than the called
 *   tool's. Reasoning and approvals are not sent (Chat Completions has no form for them).
 *
 * @since 0.1.0
 */
import { Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import type {
  ChatCompletionContentPart,
  ChatCompletionContentPartRefusal,
  ChatCompletionContentPartText,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall
} from "openai/resources/chat/completions"
import {
  AdapterError,
  type AnyMessage,
  convertAll,
  isJson,
  parseArguments,
  refuse,
  toolNames
} from "../AdapterError.js"
import { errorPrefix } from "../internal/chatRender.js"
import { dataUrlOf } from "../internal/sections.js"

/** @since 0.1.0 */
export { AdapterError }

const format = "OpenAI"

// Optional keys are spread, never set to `undefined`: going out they build the SDK's own types (exact
// optionals, compared whole by callers), coming in they build ctxlog message parts, where an undefined
// key would make a live window differ from its replay (ADR 0060).

// Fields of a chat message or content part that the adapter does not model (a response message's
// `refusal`, `audio`, `annotations`, the `developer` role, ...) are kept as JSON under this namespace of
// the message's or part's `providerOptions` and given back in place by `toOpenAI`.
const namespace = "openaiChat"

type Extras = { readonly [key: string]: Message.JsonValue }

/** The fields of `record` not in `known`, as JSON; an AdapterError names the first that is not JSON. */
const extrasOf = (
  index: number,
  path: string,
  record: object,
  known: ReadonlySet<string>
): Either.Either<Extras | undefined, AdapterError> => {
  const extras: { [key: string]: Message.JsonValue } = {}
  for (const [key, value] of Object.entries(record)) {
    if (known.has(key) || value === undefined) continue
    if (!isJson(value)) return Either.left(refuse(format, index, `${path}${key}`, "a field that is not JSON"))
    extras[key] = value
  }
  return Either.right(Object.keys(extras).length === 0 ? undefined : extras)
}

const optionsOf = (extras: Extras | undefined): { readonly providerOptions?: Message.ProviderOptions } =>
  extras === undefined ? {} : { providerOptions: { [namespace]: extras } }

/** The kept fields of a ctxlog message or part, to spread back (an `openaiChat` object), or none. */
const keptOf = (owner: { readonly providerOptions?: Message.ProviderOptions | undefined }): Extras => {
  const kept = owner.providerOptions?.[namespace]
  return typeof kept === "object" && kept !== null && !Array.isArray(kept) ? (kept as Extras) : {}
}

const withoutKeys = (record: Extras, ...keys: ReadonlyArray<string>): Extras =>
  Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)))

const nameOf = (message: AnyMessage): { readonly name?: string } =>
  message.name === undefined ? {} : { name: message.name }

/** The part kinds each role's chat message carries (reasoning and approvals are not sent: no form here). */
const carried: { readonly [R in Message.Role]: ReadonlySet<Message.Part["type"]> } = {
  system: new Set(["text"]),
  user: new Set(["text", "image", "document"]),
  assistant: new Set(["text", "tool_call", "reasoning", "tool_approval_request", "custom"]),
  tool: new Set(["tool_result", "tool_approval_response"])
}

/**
 * The parts Chat Completions cannot carry, named: a part its role's message has no place for (an image
 * from the assistant, a tool call from the user), provider-executed tool parts (they go back only to
 * the provider that ran them), citations, document URLs, tool results made of more than text, and a
 * tool message's name other than the name of the tool it answers (its only form is the call's name).
 */
const refused = (index: number, message: AnyMessage, names: ReadonlyMap<string, string>): AdapterError | undefined => {
  for (const [partIndex, part] of message.parts.entries()) {
    const path = `parts[${partIndex}]`
    if (part.type === "server_tool_call" || part.type === "server_tool_result") {
      return refuse(format, index, path, `a ${part.type} part ran by ${part.provider} goes back only to it`)
    }
    if (!carried[message.role].has(part.type)) {
      return refuse(format, index, path, `a ${message.role} chat message has no form for a ${part.type} part`)
    }
    if (part.type === "document" && part.source.type === "url") {
      return refuse(format, index, path, "chat file parts take data, not a URL")
    }
    if (part.type === "text" && part.citations !== undefined) {
      return refuse(format, index, path, "chat messages keep no citations")
    }
    if (part.type === "tool_result" && Message.toolResultContentOf(part).some((inner) => inner.type !== "text")) {
      return refuse(format, index, path, "a tool message takes text only, not images or documents")
    }
  }
  if (message.role === "tool" && message.name !== undefined) {
    const other = Message.toolResultsOf(message).find((result) => names.get(result.toolCallId) !== message.name)
    if (other !== undefined) {
      return refuse(format, index, "name", `a tool message has no name field (${message.name} is not the called tool)`)
    }
  }
  return undefined
}

/**
 * ctxlog messages (e.g. `[...window.system, ...window.history]`) as OpenAI chat messages, or an
 * `AdapterError` naming a part this API cannot carry.
 * @since 0.1.0
 */
export const toOpenAI = (
  messages: ReadonlyArray<AnyMessage>
): Either.Either<Array<ChatCompletionMessageParam>, AdapterError> => {
  const names = toolNames(messages)
  return Either.map(
    convertAll(messages, (message, index): Either.Either<ReadonlyArray<ChatCompletionMessageParam>, AdapterError> => {
      const error = refused(index, message, names)
      return error === undefined ? Either.right(convertOne(message)) : Either.left(error)
    }),
    (converted) => [...converted]
  )
}

type TextLike = ChatCompletionContentPartText | ChatCompletionContentPartRefusal

/** A text part as a chat content part: a kept refusal part comes back as one, kept fields in place. */
const textPartOut = (part: Message.TextPart): TextLike => {
  const kept = keptOf(part)
  return kept.type === "refusal"
    ? ({ ...withoutKeys(kept, "type"), type: "refusal", refusal: part.text } as ChatCompletionContentPartRefusal)
    : ({ ...kept, type: "text", text: part.text } as ChatCompletionContentPartText)
}

/** Text content: a string when it is one plain text part, else the parts in order. */
const textContent = (message: AnyMessage): string | Array<TextLike> | null => {
  const parts = message.parts.filter((part): part is Message.TextPart => part.type === "text")
  const only = parts[0]
  if (parts.length === 1 && only !== undefined && only.providerOptions?.[namespace] === undefined) return only.text
  return parts.length === 0 ? null : parts.map(textPartOut)
}

const convertOne = (message: AnyMessage): Array<ChatCompletionMessageParam> => {
  const kept = keptOf(message)
  switch (message.role) {
    case "system": {
      const role = kept.role === "developer" ? "developer" : "system"
      const content = textContent(message) ?? ""
      return [{ ...withoutKeys(kept, "role"), role, content, ...nameOf(message) } as ChatCompletionMessageParam]
    }
    case "user":
      return [
        { ...kept, role: "user", content: userContent(message), ...nameOf(message) } as ChatCompletionMessageParam
      ]
    case "assistant": {
      const calls = Message.toolCallsOf(message).map(
        (call): ChatCompletionMessageToolCall =>
          ({
            ...keptOf(call),
            id: call.id,
            type: "function",
            function: { name: call.name, arguments: JSON.stringify(call.input) }
          }) as ChatCompletionMessageToolCall
      )
      return [
        {
          ...kept,
          role: "assistant",
          content: textContent(message),
          ...(calls.length === 0 ? {} : { tool_calls: calls }),
          ...nameOf(message)
        } as ChatCompletionMessageParam
      ]
    }
    case "tool":
      return Message.toolResultsOf(message).map(
        (result) =>
          ({
            ...kept,
            role: "tool",
            tool_call_id: result.toolCallId,
            content: result.isError ? `${errorPrefix}${result.content}` : result.content
          }) as ChatCompletionMessageParam
      )
  }
}

/** A user message's content: text, or text, image and file parts in order. */
const userContent = (message: AnyMessage): string | Array<ChatCompletionContentPart> => {
  if (Message.mediaOf(message).length === 0) {
    const content = textContent(message) ?? ""
    return typeof content === "string" ? content : (content as Array<ChatCompletionContentPart>)
  }
  return message.parts.flatMap((part): Array<ChatCompletionContentPart> => {
    if (part.type === "text") return [textPartOut(part) as ChatCompletionContentPart]
    if (part.type === "image") {
      return [
        {
          ...keptOf(part),
          type: "image_url",
          image_url: { url: dataUrlOf(part.source), ...(part.detail === undefined ? {} : { detail: part.detail }) }
        } as ChatCompletionContentPart
      ]
    }
    if (part.type === "document") {
      return [
        {
          ...keptOf(part),
          type: "file",
          file: {
            file_data: dataUrlOf(part.source),
            ...(part.title === undefined ? {} : { filename: part.title })
          }
        } as ChatCompletionContentPart
      ]
    }
    return []
  })
}

const sourceOfUrl = (url: string): Message.MediaSource => {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  return data?.[1] !== undefined && data[2] !== undefined
    ? { type: "base64", mediaType: data[1], data: data[2] }
    : { type: "url", url }
}

interface ForeignPart {
  readonly type: string
  readonly text?: string
  readonly refusal?: string
  readonly image_url?: { readonly url: string; readonly detail?: "auto" | "low" | "high" }
  readonly file?: { readonly file_data?: string; readonly filename?: string; readonly file_id?: string }
}

type ContentPart = Message.TextPart | Message.ImagePart | Message.DocumentPart

const knownPart: { readonly [type: string]: ReadonlySet<string> } = {
  text: new Set(["type", "text"]),
  refusal: new Set(["type", "refusal"]),
  image_url: new Set(["type", "image_url"]),
  file: new Set(["type", "file"])
}

/** One content part; its fields beyond those modelled are kept. `media` says whether images and files are taken. */
const contentPart = (
  index: number,
  path: string,
  part: ForeignPart,
  media: boolean
): Either.Either<ContentPart, AdapterError> => {
  const known = knownPart[part.type]
  if (known === undefined) return Either.left(refuse(format, index, path, `unsupported content part ${part.type}`))
  return Either.flatMap(
    extrasOf(index, `${path}.`, part, known),
    (extras): Either.Either<ContentPart, AdapterError> => {
      if (part.type === "text" && typeof part.text === "string")
        return Either.right({ ...Message.text(part.text), ...optionsOf(extras) })
      if (part.type === "refusal" && typeof part.refusal === "string")
        return Either.right({ ...Message.text(part.refusal), ...optionsOf({ ...extras, type: "refusal" }) })
      if (!media) return Either.left(refuse(format, index, path, `this message takes text only, not ${part.type}`))
      const image = part.image_url
      if (part.type === "image_url" && image !== undefined) {
        const unknown = Object.keys(image).find((key) => key !== "url" && key !== "detail")
        if (unknown !== undefined) return Either.left(refuse(format, index, `${path}.image_url.${unknown}`, "not kept"))
        const detail = image.detail
        return Either.right({
          type: "image",
          source: sourceOfUrl(image.url),
          ...(detail === undefined ? {} : { detail }),
          ...optionsOf(extras)
        })
      }
      const file = part.file
      if (part.type === "file" && file?.file_data !== undefined) {
        const unknown = Object.keys(file).find((key) => key !== "file_data" && key !== "filename")
        if (unknown !== undefined) return Either.left(refuse(format, index, `${path}.file.${unknown}`, "not kept"))
        const title = file.filename
        return Either.right({
          type: "document",
          source: sourceOfUrl(file.file_data),
          ...(title === undefined ? {} : { title }),
          ...optionsOf(extras)
        })
      }
      return Either.left(refuse(format, index, path, `unsupported content part ${part.type} (a file by file_id?)`))
    }
  )
}

const contentParts = (
  index: number,
  value: string | ReadonlyArray<ForeignPart> | null | undefined,
  media: boolean
): Either.Either<ReadonlyArray<ContentPart>, AdapterError> => {
  if (value === null || value === undefined) return Either.right([])
  if (typeof value === "string") return Either.right(value.length === 0 ? [] : [Message.text(value)])
  return convertAll(value, (part, partIndex) =>
    Either.map(contentPart(index, `content[${partIndex}]`, part, media), (converted) => [converted])
  )
}

const onlyText = (parts: ReadonlyArray<ContentPart>): ReadonlyArray<Message.TextPart> =>
  parts.filter((part): part is Message.TextPart => part.type === "text")

const knownMessage = new Set(["role", "content", "name", "tool_calls", "tool_call_id"])
const knownCall = new Set(["id", "type", "function"])

/**
 * OpenAI chat messages as ctxlog message inputs, ready for `ContextService.appendMessages`. A message's
 * `name` is kept; fields the adapter does not model (an assistant's `refusal` and `audio`, a response's
 * `annotations`, the `developer` role) are kept under `providerOptions.openaiChat` and given back by
 * {@link toOpenAI}; a legacy `function_call`, a custom tool call, audio input, a file by id, or media in
 * a message that takes text only is an `AdapterError` naming the field.
 * @since 0.1.0
 */
export const fromOpenAI = (
  messages: ReadonlyArray<ChatCompletionMessageParam>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
    if (message.role === "function") {
      return Either.left(refuse(format, index, "role", "legacy function messages are not supported"))
    }
    if ("function_call" in message && message.function_call !== undefined && message.function_call !== null) {
      return Either.left(refuse(format, index, "function_call", "a legacy function call is not supported"))
    }
    const extras = extrasOf(index, "", message, knownMessage)
    if (Either.isLeft(extras)) return Either.left(extras.left)
    const kept = message.role === "developer" ? { ...extras.right, role: "developer" } : extras.right
    const own = {
      ...("name" in message && message.name !== undefined ? { name: message.name } : {}),
      ...optionsOf(kept)
    }
    const content = message.content as string | ReadonlyArray<ForeignPart> | null | undefined
    switch (message.role) {
      case "system":
      case "developer":
        return Either.map(contentParts(index, content, false), (parts) => [
          { role: "system", parts: onlyText(parts), ...own }
        ])
      case "user":
        return Either.map(contentParts(index, content, true), (parts) => [{ role: "user", parts, ...own }])
      case "assistant":
        return Either.flatMap(Either.map(contentParts(index, content, false), onlyText), (parts) =>
          Either.map(
            convertAll(message.tool_calls ?? [], (call, callIndex) => {
              const path = `tool_calls[${callIndex}]`
              if (call.type !== "function") {
                return Either.left(refuse(format, index, path, `unsupported tool call type ${call.type}`))
              }
              return Either.flatMap(extrasOf(index, `${path}.`, call, knownCall), (callExtras) =>
                Either.map(parseArguments(format, index, call.function.arguments), (input) => [
                  { ...Message.toolCall(call.id, call.function.name, input), ...optionsOf(callExtras) }
                ])
              )
            }),
            (calls): ReadonlyArray<Message.MessageInput> => [{ role: "assistant", parts: [...parts, ...calls], ...own }]
          )
        )
      case "tool":
        return Either.map(Either.map(contentParts(index, content, false), onlyText), (parts) => {
          const text = parts.map((part) => part.text).join("\n")
          const isError = text.startsWith(errorPrefix)
          return [
            { ...Message.tool(message.tool_call_id, isError ? text.slice(errorPrefix.length) : text, isError), ...own }
          ]
        })
    }
  })

// --- OpenAI Agents SDK items ------------------------------------------------------------------------

/**
 * An item of the OpenAI Agents SDK's history (`AgentInputItem` of `@openai/agents-core`, what a
 * `Session` stores), a JSON object of whatever kind. The adapter reads the keys of the kinds it models (messages,
 * reasoning, function calls and results, hosted tool calls) and keeps every item whole, whatever
 * its kind (see {@link fromAgentItems}).
 * @since 0.4.0
 */
export interface AgentItem {
  readonly type?: string
  readonly [key: string]: unknown
}

/** A content entry of an Agents SDK message or tool output. @since 0.4.0 */
export type AgentContent =
  | { readonly type: "input_text" | "output_text"; readonly text: string }
  | { readonly type: "input_image"; readonly image?: string | { readonly id: string }; readonly detail?: string }
  | {
      readonly type: "input_file"
      readonly file?: string | { readonly id: string } | { readonly url: string }
      readonly filename?: string
    }
  | { readonly type: "refusal"; readonly refusal: string }

/**
 * The `providerOptions` namespace under which a message keeps the Agents item it came from (on its
 * first part): `{ item }`, the item exactly as given. @since 0.8.0
 */
export const agentNamespace = "openaiAgents"

const agentFormat = "OpenAI Agents"

type Json = Message.JsonValue
type JsonObject = { readonly [key: string]: Json }

const isRecord = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const maxItemDepth = 64

/**
 * The item as plain JSON (keys whose value is `undefined` left out, as JSON does), or why it is not:
 * dates, maps, class instances, functions, BigInts, non-finite numbers, sparse arrays and cycles are
 * refused with their path.
 */
const jsonOf = (value: unknown, path: string, depth: number, seen: Set<object>): Either.Either<Json, string> => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return Either.right(value)
    case "number":
      return Number.isFinite(value) ? Either.right(value) : Either.left(`${path}: ${value} is not a JSON number`)
    case "object": {
      if (value === null) return Either.right(null)
      if (depth > maxItemDepth) return Either.left(`${path}: nested deeper than ${maxItemDepth} levels`)
      if (seen.has(value)) return Either.left(`${path}: circular reference`)
      seen.add(value)
      try {
        if (Array.isArray(value)) {
          const out: Array<Json> = []
          for (let index = 0; index < value.length; index++) {
            if (!(index in value)) return Either.left(`${path}[${index}]: a hole in a sparse array`)
            const entry = jsonOf(value[index], `${path}[${index}]`, depth + 1, seen)
            if (Either.isLeft(entry)) return entry
            out.push(entry.right)
          }
          return Either.right(out)
        }
        const prototype: unknown = Object.getPrototypeOf(value)
        if (prototype !== Object.prototype && prototype !== null) {
          return Either.left(`${path}: a ${value.constructor?.name ?? "class"} instance is not JSON`)
        }
        const out: { [key: string]: Json } = {}
        for (const key of Reflect.ownKeys(value)) {
          if (typeof key !== "string") return Either.left(`${path}: a symbol key is not JSON`)
          const descriptor = Object.getOwnPropertyDescriptor(value, key)
          if (descriptor === undefined || !descriptor.enumerable || !("value" in descriptor)) {
            return Either.left(`${path}.${key}: not a plain enumerable value`)
          }
          if (descriptor.value === undefined) continue
          const entry = jsonOf(descriptor.value, `${path}.${key}`, depth + 1, seen)
          if (Either.isLeft(entry)) return entry
          out[key] = entry.right
        }
        return Either.right(out)
      } finally {
        seen.delete(value)
      }
    }
    case "undefined":
      return Either.left(`${path}: undefined is not JSON`)
    default:
      return Either.left(`${path}: a ${typeof value} is not JSON`)
  }
}

/** An Agents item as plain JSON, or an AdapterError naming what in it is not JSON. @since 0.8.0 */
export const agentItemJson = (index: number, item: unknown): Either.Either<JsonObject, AdapterError> => {
  if (!isRecord(item)) {
    return Either.left(new AdapterError({ format: agentFormat, index, detail: "an item is a JSON object" }))
  }
  return Either.flatMap(
    Either.mapLeft(
      jsonOf(item, "item", 0, new Set()),
      (detail) => new AdapterError({ format: agentFormat, index, detail: `not JSON at ${detail}` })
    ),
    (json) =>
      isRecord(json)
        ? Either.right(json as JsonObject)
        : Either.left(new AdapterError({ format: agentFormat, index, detail: "an item is a JSON object" }))
  )
}

// Going out (ctxlog messages as items).

const agentMedia = (part: Message.ImagePart | Message.DocumentPart): AgentContent =>
  part.type === "image"
    ? {
        type: "input_image",
        image: dataUrlOf(part.source),
        ...(part.detail === undefined ? {} : { detail: part.detail })
      }
    : {
        type: "input_file",
        file: part.source.type === "url" ? { url: part.source.url } : dataUrlOf(part.source),
        ...(part.title === undefined ? {} : { filename: part.title })
      }

const agentContent = (parts: ReadonlyArray<Message.ToolResultContent>, textType: "input_text" | "output_text") =>
  parts.map((part): AgentContent => (part.type === "text" ? { type: textType, text: part.text } : agentMedia(part)))

/** A message's parts without the item record (what the record's own conversion is compared with). */
const withoutRecord = (parts: ReadonlyArray<Message.Part>): ReadonlyArray<Message.Part> =>
  parts.map((part) => {
    const options = part.providerOptions
    if (options === undefined || !(agentNamespace in options)) return part
    const { [agentNamespace]: _record, ...rest } = options
    const { providerOptions: _options, ...bare } = part
    return (Object.keys(rest).length === 0 ? bare : { ...bare, providerOptions: rest }) as Message.Part
  })

/** JSON text with object keys sorted (and `undefined` left out): equal for equal JSON values. */
export const stableJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    isRecord(inner)
      ? Object.fromEntries(
          Object.keys(inner)
            .sort()
            .map((key) => [key, inner[key]])
        )
      : inner
  ) ?? "null"

/**
 * The Agents item a message was made from ({@link fromAgentItems} keeps it on the first part, under
 * `providerOptions.openaiAgents.item`), exactly as it was given; `undefined` for a message made
 * otherwise (by ctxlog: a summary; by another writer).
 * @since 0.8.0
 */
export const storedAgentItem = (message: { readonly parts: ReadonlyArray<Message.Part> }): AgentItem | undefined => {
  const record = message.parts[0]?.providerOptions?.[agentNamespace]
  if (!isRecord(record)) return undefined
  const item = record.item
  return isRecord(item) ? (item as AgentItem) : undefined
}

const nativeItemsOf = (
  index: number,
  message: AnyMessage,
  names: ReadonlyMap<string, string>
): Either.Either<ReadonlyArray<AgentItem>, AdapterError> => {
  if (message.role === "system")
    return Either.right([{ type: "message", role: "system", content: Message.textOf(message) }])
  if (message.role === "user") {
    const media = Message.mediaOf(message).length > 0
    const parts = message.parts.filter(
      (part): part is Message.ToolResultContent =>
        part.type === "text" || part.type === "image" || part.type === "document"
    )
    return Either.right([
      { type: "message", role: "user", content: media ? agentContent(parts, "input_text") : Message.textOf(message) }
    ])
  }
  const items: Array<AgentItem> = []
  for (const [partIndex, part] of message.parts.entries()) {
    const path = `parts[${partIndex}]`
    switch (part.type) {
      case "text": {
        if (part.citations !== undefined)
          return Either.left(refuse(agentFormat, index, path, "Agents messages keep no citations"))
        if (part.text.length === 0) break
        const last = items[items.length - 1]
        if (last !== undefined && last.type === "message" && last.role === "assistant" && Array.isArray(last.content)) {
          items[items.length - 1] = { ...last, content: [...last.content, { type: "output_text", text: part.text }] }
        } else {
          items.push({
            type: "message",
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: part.text }]
          })
        }
        break
      }
      case "reasoning":
        if (part.signature !== undefined || part.redactedData !== undefined) {
          return Either.left(refuse(agentFormat, index, path, "Anthropic thinking has no Agents item"))
        }
        items.push({
          type: "reasoning",
          ...(part.itemId === undefined ? {} : { id: part.itemId }),
          content: part.text.length === 0 ? [] : [{ type: "input_text", text: part.text }],
          ...(part.encryptedContent === undefined ? {} : { providerData: { encryptedContent: part.encryptedContent } })
        })
        break
      case "tool_call":
        items.push({
          type: "function_call",
          callId: part.id,
          name: part.name,
          arguments: typeof part.input === "string" ? part.input : JSON.stringify(part.input),
          status: "completed"
        })
        break
      case "tool_result": {
        const content = Message.toolResultContentOf(part)
        const only = content[0]
        const text = content.length === 1 && only?.type === "text" ? only.text : undefined
        if (part.isError && text === undefined) {
          return Either.left(refuse(agentFormat, index, path, "an error result made of parts has no Agents form"))
        }
        items.push({
          type: "function_call_result",
          callId: part.toolCallId,
          name: names.get(part.toolCallId) ?? "unknown",
          status: "completed",
          output:
            text === undefined ? agentContent(content, "input_text") : part.isError ? `${errorPrefix}${text}` : text
        })
        break
      }
      case "server_tool_call": {
        const result = message.parts.find(
          (other): other is Message.ServerToolResultPart =>
            other.type === "server_tool_result" &&
            other.toolCallId === part.id &&
            other.resultType === "hosted_tool_call"
        )
        const output = result !== undefined && typeof result.content === "string" ? { output: result.content } : {}
        if (part.provider !== "openai" || typeof part.input !== "string") {
          return Either.left(
            refuse(agentFormat, index, path, `a ${part.type} part ran by ${part.provider} is not an Agents hosted call`)
          )
        }
        items.push({
          type: "hosted_tool_call",
          id: part.id,
          name: part.name,
          arguments: part.input,
          status: "completed",
          ...output
        })
        break
      }
      case "server_tool_result":
        // Travels inside its hosted call (above); one without its call cannot be sent.
        if (!message.parts.some((other) => other.type === "server_tool_call" && other.id === part.toolCallId)) {
          return Either.left(refuse(agentFormat, index, path, "a server tool result without its call"))
        }
        break
      case "image":
      case "document":
        return Either.left(refuse(agentFormat, index, path, "Agents assistant messages take no input media"))
      case "tool_approval_request":
      case "tool_approval_response":
        return Either.left(refuse(agentFormat, index, path, "Agents approvals are run-state interruptions, not items"))
      case "custom":
        // An AI SDK provider's own content: only the AI SDK sends it back; an Agents item has no form for it.
        break
    }
  }
  return Either.right(items)
}

/** The fields of an item that ctxlog models, by kind: what a changed message (a cut output) replaces. */
const modeledFields: { readonly [type: string]: ReadonlyArray<string> } = {
  message: ["content"],
  function_call: ["arguments"],
  function_call_result: ["output"],
  reasoning: ["content"],
  hosted_tool_call: ["arguments", "output"]
}

const kindOf = (item: AgentItem): string => item.type ?? "message"

/**
 * One message as items: the item it was made from, exactly, while its parts are still what that item
 * converts to; when ctxlog changed them (a tool output cut to fit, pruned) the item with its modeled
 * fields taken from the parts (ids, `providerData`, `phase`, status and every other field kept); a
 * message ctxlog made (or another writer) converted from its parts, with ids only where a part holds one.
 */
const itemsOfMessage = (
  index: number,
  message: AnyMessage,
  names: ReadonlyMap<string, string>
): Either.Either<ReadonlyArray<AgentItem>, AdapterError> => {
  const stored = storedAgentItem(message)
  if (stored !== undefined) {
    // Held opaquely (a kind ctxlog does not model, or an item the window's tool pairing could not take).
    const bare = withoutRecord(message.parts)
    if (bare.length === 1 && bare[0]?.type === "text" && bare[0].text.length === 0) return Either.right([stored])
    const expected = modeledPartsOf(0, stored)
    if (Either.isRight(expected) && stableJson(expected.right) === stableJson(withoutRecord(message.parts))) {
      return Either.right([stored])
    }
  }
  return Either.map(nativeItemsOf(index, { ...message, parts: withoutRecord(message.parts) }, names), (items) => {
    const only = items[0]
    if (stored === undefined || items.length !== 1 || only === undefined || kindOf(only) !== kindOf(stored)) {
      return items
    }
    const fields = modeledFields[kindOf(stored)] ?? []
    const changed: { [key: string]: unknown } = { ...stored }
    for (const field of fields) {
      if (field in only) changed[field] = only[field]
      else delete changed[field]
    }
    return [changed as AgentItem]
  })
}

/**
 * ctxlog messages as OpenAI Agents SDK items: each message made by {@link fromAgentItems} as the item
 * it was made from (exactly, or with the fields ctxlog changed: a cut tool output), others converted:
 * messages, reasoning, function calls and results (an error result's text carries the `[tool error] `
 * prefix, as in Chat Completions), hosted tool calls (`server_tool_call` of provider `openai` with its
 * `hosted_tool_call` result). No item gets an id it was not given (a reasoning part's `itemId` is one).
 * Refused, naming the part: citations, Anthropic thinking, approvals, server parts of other providers.
 * @since 0.4.0
 */
export const toAgentItems = (messages: ReadonlyArray<AnyMessage>): Either.Either<Array<AgentItem>, AdapterError> => {
  const names = toolNames(messages)
  return Either.map(
    convertAll(messages, (message, index) => itemsOfMessage(index, message, names)),
    (items) => [...items]
  )
}

// Coming in (items as ctxlog messages).

const agentPart = (content: unknown): ReadonlyArray<Message.ToolResultContent> => {
  if (!isRecord(content)) return []
  switch (content.type) {
    case "input_text":
    case "output_text":
    case "text":
      return typeof content.text === "string" ? [Message.text(content.text)] : []
    case "input_image":
    case "image": {
      const image = content.image ?? content.imageUrl ?? content.image_url
      if (typeof image !== "string") return []
      const detail = content.detail
      return [
        detail === "low" || detail === "high" || detail === "auto"
          ? { type: "image", source: sourceOfUrl(image), detail }
          : { type: "image", source: sourceOfUrl(image) }
      ]
    }
    case "input_file":
    case "file": {
      const file = content.file
      const title = typeof content.filename === "string" ? { title: content.filename } : {}
      if (typeof file === "string") return [{ type: "document", source: sourceOfUrl(file), ...title }]
      if (isRecord(file) && typeof file.url === "string")
        return [{ type: "document", source: { type: "url", url: file.url }, ...title }]
      return []
    }
    default:
      return []
  }
}

const contentEntries = (content: unknown): ReadonlyArray<unknown> =>
  typeof content === "string" ? [{ type: "input_text", text: content }] : Array.isArray(content) ? content : []

/** A message for an item ctxlog does not model: no text, no tokens; the item itself rides on its part. */
const opaque = (): ReadonlyArray<Message.Part> => [Message.text("")]

/**
 * The message an item stands for: its role and the parts ctxlog reads (texts, media, reasoning, a tool
 * call or result). Kinds ctxlog does not model (`compaction`, computer and shell calls, kinds newer
 * than this adapter) are assistant messages with one empty text part: they count no tokens and the
 * provider builders send nothing for them; the item itself goes back whole.
 */
const modeledOf = (
  index: number,
  item: AgentItem
): Either.Either<{ readonly role: Message.Role; readonly parts: ReadonlyArray<Message.Part> }, AdapterError> => {
  const nonEmpty = (parts: ReadonlyArray<Message.Part>) => (parts.length === 0 ? opaque() : parts)
  switch (kindOf(item)) {
    case "message": {
      const role = item.role
      const parts = contentEntries(item.content).flatMap(agentPart)
      if (role === "system" || role === "developer")
        return Either.right({ role: "system", parts: nonEmpty(parts.filter((part) => part.type === "text")) })
      if (role === "user" || role === "assistant") return Either.right({ role, parts: nonEmpty(parts) })
      return Either.right({ role: "assistant", parts: opaque() })
    }
    case "reasoning": {
      const texts = contentEntries(item.content).flatMap((entry) =>
        isRecord(entry) && typeof entry.text === "string" ? [entry.text] : []
      )
      const providerData = isRecord(item.providerData) ? item.providerData : {}
      const encrypted = providerData.encryptedContent ?? item.encrypted_content
      return Either.right({
        role: "assistant",
        parts: [
          Message.reasoning(texts.join("\n"), {
            itemId: typeof item.id === "string" ? item.id : undefined,
            encryptedContent: typeof encrypted === "string" ? encrypted : undefined
          })
        ]
      })
    }
    case "function_call": {
      if (typeof item.callId !== "string" || typeof item.name !== "string") {
        return Either.left(
          new AdapterError({ format: agentFormat, index, detail: "a function_call without callId or name" })
        )
      }
      const raw = typeof item.arguments === "string" ? item.arguments : ""
      // Arguments that are not JSON (models emit them) are kept as their text.
      const input = parseArguments(agentFormat, index, raw)
      return Either.right({
        role: "assistant",
        parts: [Message.toolCall(item.callId, item.name, Either.isRight(input) ? input.right : raw)]
      })
    }
    case "function_call_result": {
      if (typeof item.callId !== "string") {
        return Either.left(
          new AdapterError({ format: agentFormat, index, detail: "a function_call_result without callId" })
        )
      }
      const output = item.output
      if (
        typeof output === "string" ||
        (isRecord(output) && output.type === "text" && typeof output.text === "string")
      ) {
        const text = typeof output === "string" ? output : (output.text as string)
        const isError = text.startsWith(errorPrefix)
        return Either.right({
          role: "tool",
          parts: [Message.toolResult(item.callId, isError ? text.slice(errorPrefix.length) : text, isError)]
        })
      }
      const entries = Array.isArray(output) ? output.flatMap(agentPart) : isRecord(output) ? agentPart(output) : []
      return Either.right({
        role: "tool",
        parts: [
          entries.length > 0
            ? Message.toolResultParts(item.callId, entries)
            : Message.toolResult(item.callId, stableJson(output ?? null))
        ]
      })
    }
    case "hosted_tool_call": {
      if (typeof item.name !== "string") return Either.right({ role: "assistant", parts: opaque() })
      const id = typeof item.id === "string" ? item.id : `${item.name}-${index}`
      const args = typeof item.arguments === "string" ? item.arguments : ""
      const output = typeof item.output === "string" ? item.output : undefined
      return Either.right({
        role: "assistant",
        parts: [
          Message.serverToolCall("openai", id, item.name, args),
          ...(output === undefined ? [] : [Message.serverToolResult("openai", id, "hosted_tool_call", output)])
        ]
      })
    }
    default:
      return Either.right({ role: "assistant", parts: opaque() })
  }
}

const modeledPartsOf = (index: number, item: AgentItem) =>
  Either.map(modeledOf(index, item), (modeled) => modeled.parts)

/**
 * OpenAI Agents SDK items as ctxlog message inputs: one message per item, in order (never merged), each
 * keeping its item whole on its first part (`providerOptions.openaiAgents.item`), so
 * {@link storedAgentItem} and {@link toAgentItems} give back exactly what was given — ids where the
 * item had one (no message id is made from ctxlog's), `providerData`, `phase`, output shapes, and
 * kinds ctxlog does not model (the Responses `compaction` marker among them), kept opaquely. The
 * message's parts are what ctxlog counts and renders: texts, media, reasoning, the call or result.
 * Refused, naming where: an item that is not JSON (a date, a BigInt, a cycle, a class instance).
 * @since 0.4.0
 */
export const fromAgentItems = (
  items: ReadonlyArray<unknown>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertAll(
    items,
    (raw, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
      Either.flatMap(agentItemJson(index, raw), (item) =>
        Either.map(modeledOf(index, item as AgentItem), ({ role, parts }): ReadonlyArray<Message.MessageInput> => {
          const [first, ...rest] = parts
          if (first === undefined) return []
          const recorded = { ...first, providerOptions: { ...first.providerOptions, [agentNamespace]: { item } } }
          return [{ role, parts: [recorded as Message.Part, ...rest] }]
        })
      )
  )
