/**
 * Vercel AI SDK messages (`ModelMessage[]` of the `ai` package, versions 6 and 7) ⇄ ctxlog messages.
 * Types only: `ai` is an optional peer, never loaded at run time.
 *
 * - Text, images and files (a file whose media type is `image/*` is an image, any other a document,
 *   its `filename` the document's title) both ways; binary data becomes base64.
 * - Reasoning parts both ways, with the provider data a later request needs (Anthropic `signature` /
 *   `redactedData`, OpenAI `itemId` / `reasoningEncryptedContent` in `providerOptions`).
 * - Tool results: `text` / `error-text`; `content` outputs (text, images, files) become a tool result
 *   made of parts and go back as `content`. Rules by which ctxlog differs: `json` / `error-json`
 *   outputs are kept as their JSON text (and come back as `text`); `execution-denied` becomes an error
 *   result whose text is the reason.
 * - Provider-executed tool calls (`providerExecuted: true`) and the tool results in an assistant
 *   message are `server_tool_call` / `server_tool_result` parts (never client tool calls) of the
 *   provider named by `options.provider` (default `ai-sdk`); they go back as they came.
 * - Tool approvals: `tool-approval-request` and `tool-approval-response` parts both ways.
 * - `providerOptions` other than reasoning data are not message content: Anthropic `cacheControl`
 *   hints are a render option (`BuildOptions.cacheHints`, read with {@link cacheControlOf}) and are
 *   not part of the messages; any other is an `AdapterError` naming the part. Citations on ctxlog text
 *   have no AI SDK form and are not sent.
 *
 * @since 0.1.0
 */
import { Message } from "@ctxlog/core"
import type {
  AssistantContent,
  FilePart,
  ImagePart,
  JSONValue,
  ModelMessage,
  TextPart,
  ToolContent,
  ToolResultPart,
  UserContent
} from "ai"
import * as Either from "effect/Either"
import { AdapterError, type AnyMessage, convertAll, isJson, jsonInput, refuse, toolNames } from "../AdapterError.js"

/** @since 0.1.0 */
export { AdapterError }

const format = "AI SDK"

// Optional keys are spread, never set to `undefined`: going out they build the SDK's own types (exact
// optionals, compared whole by callers), coming in they build ctxlog message parts, where an undefined
// key would make a live window differ from its replay (ADR 0060).

/** Options of {@link fromModelMessages}. @since 0.4.0 */
export interface FromOptions {
  /** The provider that ran provider-executed tools (`anthropic`, `openai`, ...). Default `ai-sdk`. */
  readonly provider?: string
}

type ProviderOptions = NonNullable<TextPart["providerOptions"]>
type ReasoningPart = Extract<Exclude<AssistantContent, string>[number], { type: "reasoning" }>
// ctxlog's JSON is readonly; the AI SDK's is the same data, typed mutable.
const jsonOut = (value: Message.JsonValue): JSONValue => value as JSONValue
const jsonOf = (value: unknown): Message.JsonValue => (isJson(value) ? value : null)
type ContentItem = Extract<ToolResultPart["output"], { type: "content" }>["value"][number]

const base64Of = (bytes: Uint8Array): string => {
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

const reasoningOptions = (part: Message.ReasoningPart): ProviderOptions | undefined => {
  if (part.signature !== undefined) return { anthropic: { signature: part.signature } }
  if (part.redactedData !== undefined) return { anthropic: { redactedData: part.redactedData } }
  if (part.itemId !== undefined) {
    return {
      openai: {
        itemId: part.itemId,
        ...(part.encryptedContent === undefined ? {} : { reasoningEncryptedContent: part.encryptedContent })
      }
    }
  }
  return undefined
}

const mediaOut = (part: Message.ImagePart | Message.DocumentPart): ImagePart | FilePart => {
  const source = part.source
  if (part.type === "image") {
    return source.type === "url"
      ? { type: "image", image: new URL(source.url) }
      : { type: "image", image: source.data, mediaType: source.mediaType }
  }
  return {
    type: "file",
    data: source.type === "url" ? new URL(source.url) : source.data,
    mediaType: source.type === "url" ? "application/octet-stream" : source.mediaType,
    ...(part.title === undefined ? {} : { filename: part.title })
  }
}

const contentItemOut = (part: Message.ToolResultContent): ContentItem => {
  if (part.type === "text") return { type: "text", text: part.text }
  const source = part.source
  if (part.type === "image") {
    return source.type === "url"
      ? { type: "image-url", url: source.url }
      : { type: "image-data", data: source.data, mediaType: source.mediaType }
  }
  return source.type === "url"
    ? { type: "file-url", url: source.url }
    : {
        type: "file-data",
        data: source.data,
        mediaType: source.mediaType,
        ...(part.title === undefined ? {} : { filename: part.title })
      }
}

/** A server result's output: as the AI SDK gave it, else its JSON (an Anthropic block's content). */
const serverOutput = (part: Message.ServerToolResultPart): ToolResultPart["output"] => {
  const content = part.content
  if (part.resultType === "tool-result" && typeof content === "object" && content !== null && "type" in content) {
    return content as unknown as ToolResultPart["output"]
  }
  return part.isError === true
    ? { type: "error-json", value: jsonOut(content) }
    : { type: "json", value: jsonOut(content) }
}

const outputOf = (part: Message.ToolResultPart): ToolResultPart["output"] => {
  const content = Message.toolResultContentOf(part)
  const only = content[0]
  if (content.length === 1 && only?.type === "text") {
    return { type: part.isError ? "error-text" : "text", value: only.text }
  }
  return { type: "content", value: content.map(contentItemOut) }
}

/** Citations have no AI SDK message form: a text part carrying them is refused, named. */
const refused = (index: number, message: AnyMessage): AdapterError | undefined => {
  const partIndex = message.parts.findIndex((part) => part.type === "text" && part.citations !== undefined)
  return partIndex === -1
    ? undefined
    : refuse(format, index, `parts[${partIndex}]`, "AI SDK text parts keep no citations")
}

/**
 * ctxlog messages (e.g. `[...window.system, ...window.history]`) as AI SDK `ModelMessage`s, or an
 * `AdapterError` naming a part the AI SDK cannot carry.
 * @since 0.1.0
 */
export const toModelMessages = (
  messages: ReadonlyArray<AnyMessage>
): Either.Either<Array<ModelMessage>, AdapterError> => {
  const names = toolNames(messages)
  const name = (id: string) => names.get(id) ?? "unknown"
  for (const [index, message] of messages.entries()) {
    const error = refused(index, message)
    if (error !== undefined) return Either.left(error)
  }
  return Either.right(
    // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch covers every role and each case returns
    messages.map((message): ModelMessage => {
      switch (message.role) {
        case "system":
          return { role: "system", content: Message.textOf(message) }
        case "user":
          return {
            role: "user",
            content: message.parts.flatMap(
              (part): Exclude<UserContent, string> =>
                part.type === "text"
                  ? [{ type: "text", text: part.text }]
                  : part.type === "image" || part.type === "document"
                    ? [mediaOut(part)]
                    : []
            )
          }
        case "assistant":
          return {
            role: "assistant",
            content: message.parts.flatMap((part): Exclude<AssistantContent, string> => {
              switch (part.type) {
                case "text":
                  return [{ type: "text", text: part.text }]
                case "reasoning": {
                  const providerOptions = reasoningOptions(part)
                  return [
                    {
                      type: "reasoning",
                      text: part.text,
                      ...(providerOptions === undefined ? {} : { providerOptions })
                    }
                  ]
                }
                case "tool_call":
                  return [{ type: "tool-call", toolCallId: part.id, toolName: part.name, input: part.input }]
                case "server_tool_call":
                  return [
                    {
                      type: "tool-call",
                      toolCallId: part.id,
                      toolName: part.name,
                      input: part.input,
                      providerExecuted: true
                    }
                  ]
                case "server_tool_result":
                  return [
                    {
                      type: "tool-result",
                      toolCallId: part.toolCallId,
                      toolName: name(part.toolCallId),
                      output: serverOutput(part),
                      // The provider's own block type (an Anthropic `web_search_tool_result`) comes back with it.
                      ...(part.resultType === "tool-result"
                        ? {}
                        : { providerOptions: { ctxlog: { resultType: part.resultType } } })
                    }
                  ]
                case "tool_approval_request":
                  return [{ type: "tool-approval-request", approvalId: part.approvalId, toolCallId: part.toolCallId }]
                case "image":
                case "document": {
                  const media = mediaOut(part)
                  return [
                    media.type === "file"
                      ? media
                      : {
                          type: "file",
                          data: media.image,
                          mediaType: media.mediaType ?? "image/*"
                        }
                  ]
                }
                default:
                  return []
              }
            })
          }
        case "tool":
          return {
            role: "tool",
            content: message.parts.flatMap((part): ToolContent => {
              if (part.type === "tool_result") {
                return [
                  {
                    type: "tool-result",
                    toolCallId: part.toolCallId,
                    toolName: name(part.toolCallId),
                    output: outputOf(part)
                  }
                ]
              }
              if (part.type === "tool_approval_response") {
                return [
                  {
                    type: "tool-approval-response",
                    approvalId: part.approvalId,
                    approved: part.approved,
                    ...(part.reason === undefined ? {} : { reason: part.reason })
                  }
                ]
              }
              return []
            })
          }
      }
    })
  )
}

/** Provider options ctxlog keeps nowhere: anything but Anthropic cache hints is refused. */
const foreignOptions = (options: ProviderOptions | undefined): string | undefined => {
  if (options === undefined) return undefined
  for (const [provider, values] of Object.entries(options)) {
    for (const key of Object.keys(values)) {
      const kept =
        (provider === "anthropic" && key === "cacheControl") || (provider === "ctxlog" && key === "resultType")
      if (!kept) return `${provider}.${key}`
    }
  }
  return undefined
}

const stringOption = (options: ProviderOptions | undefined, provider: string, key: string): string | undefined => {
  const value = options?.[provider]?.[key]
  return typeof value === "string" ? value : undefined
}

const reasoningIn = (part: ReasoningPart): Message.ReasoningPart => {
  const options = part.providerOptions
  const signature = stringOption(options, "anthropic", "signature")
  const redactedData = stringOption(options, "anthropic", "redactedData")
  const itemId = stringOption(options, "openai", "itemId")
  const encryptedContent = stringOption(options, "openai", "reasoningEncryptedContent")
  return Message.reasoning(part.text, { signature, redactedData, itemId, encryptedContent })
}

type Data = ImagePart["image"]

/** Media data as a ctxlog source: a URL, a data URL, base64 text or bytes. */
const sourceOf = (data: Data, mediaType: string | undefined): Either.Either<Message.MediaSource, string> => {
  if (data instanceof URL) return Either.right({ type: "url", url: data.href })
  if (typeof data === "string") {
    const dataUrl = /^data:([^;,]+);base64,(.*)$/s.exec(data)
    if (dataUrl?.[1] !== undefined && dataUrl[2] !== undefined) {
      return Either.right({ type: "base64", mediaType: dataUrl[1], data: dataUrl[2] })
    }
    if (/^https?:\/\//.test(data)) return Either.right({ type: "url", url: data })
    return mediaType === undefined
      ? Either.left("base64 data without a media type")
      : Either.right({ type: "base64", mediaType, data })
  }
  if (mediaType === undefined) return Either.left("binary data without a media type")
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data)
  return Either.right({ type: "base64", mediaType, data: base64Of(bytes) })
}

const mediaIn = (
  index: number,
  path: string,
  part: ImagePart | FilePart
): Either.Either<Message.ImagePart | Message.DocumentPart, AdapterError> => {
  const data = part.type === "image" ? part.image : part.data
  return Either.mapBoth(sourceOf(data, part.mediaType), {
    onLeft: (detail) => refuse(format, index, path, detail),
    onRight: (source): Message.ImagePart | Message.DocumentPart => {
      const isImage = part.type === "image" || part.mediaType.startsWith("image/")
      if (isImage) return { type: "image", source }
      const title = part.type === "file" ? part.filename : undefined
      return { type: "document", source, ...(title === undefined ? {} : { title }) }
    }
  })
}

const contentItemIn = (
  index: number,
  path: string,
  item: ContentItem
): Either.Either<Message.ToolResultContent, AdapterError> => {
  switch (item.type) {
    case "text":
      return Either.right(Message.text(item.text))
    case "media":
    case "image-data":
    case "file-data": {
      const source: Message.MediaSource = { type: "base64", mediaType: item.mediaType, data: item.data }
      if (item.mediaType.startsWith("image/")) return Either.right({ type: "image", source })
      const title = item.type === "file-data" ? item.filename : undefined
      return Either.right({ type: "document", source, ...(title === undefined ? {} : { title }) })
    }
    case "image-url":
      return Either.right(Message.imageUrl(item.url))
    case "file-url":
      return Either.right(
        item.mediaType?.startsWith("image/") === true ? Message.imageUrl(item.url) : Message.documentUrl(item.url)
      )
    default:
      return Either.left(refuse(format, index, path, `unsupported tool output item ${item.type}`))
  }
}

const resultIn = (
  index: number,
  path: string,
  part: ToolResultPart
): Either.Either<Message.ToolResultPart, AdapterError> => {
  const output = part.output
  switch (output.type) {
    case "text":
    case "error-text":
      return Either.right(Message.toolResult(part.toolCallId, output.value, output.type === "error-text"))
    case "json":
    case "error-json":
      // Checked before stringifying: a cycle, a BigInt or a deep nest is a typed error, not a throw.
      return Either.map(jsonInput(format, index, output.value), (value) =>
        Message.toolResult(part.toolCallId, JSON.stringify(value), output.type === "error-json")
      )
    case "execution-denied":
      return Either.right(Message.toolResult(part.toolCallId, output.reason ?? "execution denied", true))
    case "content":
      return Either.map(
        convertAll(output.value, (item, itemIndex) =>
          Either.map(contentItemIn(index, `${path}.output.value[${itemIndex}]`, item), (inner) => [inner])
        ),
        (parts) => Message.toolResultParts(part.toolCallId, parts)
      )
    default:
      return Either.left(refuse(format, index, path, "unsupported tool output"))
  }
}

type AnyPart = Exclude<ModelMessage["content"], string>[number]

const partIn = (
  index: number,
  path: string,
  role: ModelMessage["role"],
  part: AnyPart,
  provider: string
): Either.Either<Message.Part, AdapterError> => {
  const foreign =
    "providerOptions" in part && part.type !== "reasoning" ? foreignOptions(part.providerOptions) : undefined
  if (foreign !== undefined) return Either.left(refuse(format, index, path, `provider option ${foreign} is not kept`))
  switch (part.type) {
    case "text":
      return Either.right(Message.text(part.text))
    case "reasoning":
      return Either.right(reasoningIn(part))
    case "image":
    case "file":
      return mediaIn(index, path, part)
    case "tool-call":
      return Either.map(jsonInput(format, index, part.input), (input) =>
        part.providerExecuted === true
          ? Message.serverToolCall(provider, part.toolCallId, part.toolName, input)
          : Message.toolCall(part.toolCallId, part.toolName, input)
      )
    case "tool-result": {
      if (role === "assistant") {
        // A tool result in an assistant message is the result of a provider-executed call.
        // Its whole output is kept (`{ type, value }`), so it goes back exactly as it came; a result a
        // provider gave as its own block (ctxlog's `resultType`) keeps that block's content.
        const output: unknown = part.output
        const resultType = stringOption(part.providerOptions, "ctxlog", "resultType")
        return isJson(output)
          ? Either.right(
              Message.serverToolResult(
                provider,
                part.toolCallId,
                stringOption(part.providerOptions, "ctxlog", "resultType") ?? "tool-result",
                resultType === undefined ? output : "value" in part.output ? jsonOf(part.output.value) : output
              )
            )
          : Either.left(refuse(format, index, path, "a provider-executed tool result is not JSON"))
      }
      return resultIn(index, path, part)
    }
    case "tool-approval-request":
      return Either.right(Message.toolApprovalRequest(part.approvalId, part.toolCallId))
    case "tool-approval-response":
      return Either.right(Message.toolApprovalResponse(part.approvalId, part.approved, part.reason))
    default:
      return Either.left(refuse(format, index, path, `unsupported ${role} part`))
  }
}

/** AI SDK `ModelMessage`s as ctxlog message inputs. @since 0.1.0 */
export const fromModelMessages = (
  messages: ReadonlyArray<ModelMessage>,
  options: FromOptions = {}
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
  const provider = options.provider ?? "ai-sdk"
  return convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
    const role: string = message.role
    if (role !== "system" && role !== "user" && role !== "assistant" && role !== "tool") {
      return Either.left(refuse(format, index, "role", `unsupported role ${role}`))
    }
    // Message-level options follow the rule of part-level ones: only Anthropic cache hints (a render option).
    const foreign = foreignOptions(message.providerOptions)
    if (foreign !== undefined) {
      return Either.left(refuse(format, index, "providerOptions", `provider option ${foreign} is not kept`))
    }
    if (typeof message.content === "string") {
      return Either.right([{ role: message.role, parts: [Message.text(message.content)] }])
    }
    const blocks: ReadonlyArray<AnyPart> = message.content
    return Either.map(
      convertAll(blocks, (part, partIndex) =>
        Either.map(partIn(index, `content[${partIndex}]`, message.role, part, provider), (converted) => [converted])
      ),
      (parts): ReadonlyArray<Message.MessageInput> => {
        if (message.role !== "tool") return [{ role: message.role, parts }]
        // One ctxlog tool message per result (as `Message.tool` makes them); approvals travel together.
        const results = parts.filter((part) => part.type === "tool_result")
        const approvals = parts.filter((part) => part.type !== "tool_result")
        return [
          ...(approvals.length === 0 ? [] : [{ role: "tool" as const, parts: approvals }]),
          ...results.map((part) => ({ role: "tool" as const, parts: [part] }))
        ]
      }
    )
  })
}

/**
 * A language-model prompt of the AI SDK provider interface (`LanguageModelV3Prompt` of
 * `@ai-sdk/provider`, what a middleware's `transformParams` sees in `params.prompt`), by its minimal
 * structural shape: messages like `ModelMessage`s whose media are all `file` parts.
 * @since 0.4.0
 */
export type LanguageModelPrompt = ReadonlyArray<
  | { readonly role: "system"; readonly content: string }
  | { readonly role: "user" | "assistant" | "tool"; readonly content: ReadonlyArray<{ readonly type: string }> }
>

/**
 * ctxlog messages as a language-model prompt (`LanguageModelV3Prompt`): `toModelMessages`, with images
 * as `file` parts (the provider interface has no image part) and system text as a string.
 * @since 0.4.0
 */
export const toLanguageModelPrompt = (
  messages: ReadonlyArray<AnyMessage>
): Either.Either<LanguageModelPrompt, AdapterError> =>
  Either.map(toModelMessages(messages), (out) =>
    out.map((message) => {
      if (message.role === "system" || typeof message.content === "string") {
        return message.role === "system"
          ? { role: "system" as const, content: message.content }
          : { role: message.role, content: [{ type: "text", text: message.content }] }
      }
      const content: ReadonlyArray<{ readonly type: string }> = message.content.map((part) =>
        part.type === "image"
          ? {
              type: "file",
              data: part.image,
              mediaType: part.mediaType ?? "image/*",
              ...(part.providerOptions === undefined ? {} : { providerOptions: part.providerOptions })
            }
          : part
      )
      return { role: message.role, content }
    })
  )

/**
 * A language-model prompt (`LanguageModelV3Prompt`) as ctxlog message inputs: its messages are
 * `ModelMessage`s in shape (files, reasoning, tool calls and results, approvals), read by
 * `fromModelMessages`.
 * @since 0.4.0
 */
export const fromLanguageModelPrompt = (
  prompt: LanguageModelPrompt,
  options: FromOptions = {}
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  // The provider prompt is a subset of ModelMessage's shape (every part kind it has, ModelMessage has).
  fromModelMessages(prompt as unknown as ReadonlyArray<ModelMessage>, options)

/** An Anthropic cache breakpoint as the AI SDK carries it (`providerOptions.anthropic.cacheControl`). @since 0.4.0 */
export interface CacheControlHint {
  readonly ttl?: "5m" | "1h"
}

const cacheControlIn = (options: unknown): CacheControlHint | undefined => {
  if (typeof options !== "object" || options === null || !("anthropic" in options)) return undefined
  const anthropic: unknown = options.anthropic
  if (typeof anthropic !== "object" || anthropic === null) return undefined
  const control: unknown =
    "cacheControl" in anthropic
      ? anthropic.cacheControl
      : "cache_control" in anthropic
        ? anthropic.cache_control
        : undefined
  if (typeof control !== "object" || control === null) return undefined
  const ttl: unknown = "ttl" in control ? control.ttl : undefined
  return ttl === "5m" || ttl === "1h" ? { ttl } : {}
}

/**
 * The cache breakpoint a caller set on an AI SDK message (`ModelMessage` or a provider-prompt message):
 * on the message (`providerOptions.anthropic.cacheControl`, or `cache_control`) or on any of its parts.
 * ctxlog places a breakpoint at the end of a message (`WindowEvent.CacheHint`): a hint on a part
 * before the message's last is a hint on the message (the cached prefix runs to the message's end).
 * The last hint of the message decides its TTL. Undefined when there is none.
 * @since 0.4.0
 */
export const cacheControlOf = (message: {
  readonly providerOptions?: unknown
  readonly content: string | ReadonlyArray<object>
}): CacheControlHint | undefined => {
  let found = cacheControlIn(message.providerOptions)
  if (typeof message.content !== "string") {
    for (const part of message.content) {
      if ("providerOptions" in part) found = cacheControlIn(part.providerOptions) ?? found
    }
  }
  return found
}

/**
 * `messages` with the message at each index of `hints` carrying that cache breakpoint
 * (`providerOptions.anthropic.cacheControl`), the form the AI SDK's Anthropic provider sends.
 * @since 0.4.0
 */
export const withCacheControl = <M extends object>(
  messages: ReadonlyArray<M>,
  hints: ReadonlyMap<number, CacheControlHint>
): Array<M> =>
  messages.map((message, index) => {
    const hint = hints.get(index)
    if (hint === undefined) return message
    const cacheControl = hint.ttl === undefined ? { type: "ephemeral" } : { type: "ephemeral", ttl: hint.ttl }
    return { ...message, providerOptions: { anthropic: { cacheControl } } }
  })
