/**
 * Vercel AI SDK messages (`ModelMessage[]` of the `ai` package, versions 6 and 7) ⇄ ctxlog messages.
 * Types only: `ai` is an optional peer, never loaded at run time.
 *
 * - Text, images and files (a file whose media type is `image/*` is an image, any other a document,
 *   its `filename` the document's title) both ways; binary data becomes base64.
 * - Reasoning parts both ways, with the provider data a later request needs (Anthropic `signature` /
 *   `redactedData`, OpenAI `itemId` / `reasoningEncryptedContent` in `providerOptions`).
 * - Tool results: `text` / `error-text`; `content` outputs (text, images, files) become a tool result
 *   made of parts and go back as `content`. `json` / `error-json` outputs are kept as their JSON text
 *   and `execution-denied` as an error result whose text is the reason; the output's type is kept
 *   (under the `ctxlog` namespace of the part's stored options, never sent) so each comes back as it
 *   came.
 * - Provider-executed tool calls (`providerExecuted: true`) and the tool results in an assistant
 *   message are `server_tool_call` / `server_tool_result` parts (never client tool calls) of the
 *   provider named by `options.provider` (default `ai-sdk`); they go back as they came.
 * - Tool approvals: `tool-approval-request` and `tool-approval-response` parts both ways.
 * - `providerOptions` (and the `providerMetadata` an answer carried, which the AI SDK hands back as
 *   `providerOptions`) are kept: every namespace ctxlog does not interpret (`openai.itemId` on text and
 *   tool calls, `google.thoughtSignature`, `anthropic.citations`, any other provider's) is stored opaque
 *   on the message or part it was on (core's `providerOptions`) and given back there, on messages,
 *   parts, tool outputs and the items of a `content` output. Interpreted: reasoning data (Anthropic
 *   `signature` / `redactedData`, OpenAI `itemId` / `reasoningEncryptedContent`, kept in ctxlog's
 *   reasoning fields for the provider builders, given back in the same place) and Anthropic
 *   `cacheControl`: a provider prompt's (`fromLanguageModelPrompt`) stays where it sits so
 *   `toAnthropic` places it; for history (`fromModelMessages`, or `cacheHints: "apart"`) it is a render
 *   option (`BuildOptions.cacheHints`, read with {@link cacheControlOf} wherever the AI SDK puts it),
 *   not message content (see `FromOptions.cacheHints`). A value that is not JSON is an
 *   `AdapterError` naming the part. Citations on ctxlog text (from another adapter) have no AI SDK
 *   form and are refused.
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

/** Options of {@link fromModelMessages} and {@link fromLanguageModelPrompt}. @since 0.4.0 */
export interface FromOptions {
  /** The provider that ran provider-executed tools (`anthropic`, `openai`, ...). Default `ai-sdk`. */
  readonly provider?: string
  /**
   * Where Anthropic cache hints (`providerOptions.anthropic.cacheControl`) go (since 0.9.0):
   *
   * - `"keep"`: on the converted message or part they sit on, so `toAnthropic` places them (a hint on
   *   a tool result's `output` on that tool result; a message-level hint on a tool message split into
   *   one ctxlog message per result on the last of them, the AI SDK's last block). For a prompt
   *   converted to be sent at once, never for history: stored, hints pile up past the API's 4
   *   breakpoints (`toAnthropic` refuses a fifth by name).
   * - `"apart"`: left off the converted messages; read them with {@link cacheControlOf} and pass them
   *   as a render option (`BuildOptions.cacheHints`), as the middleware and `prepareStep` do.
   *
   * Default: `"keep"` for {@link fromLanguageModelPrompt} (a provider prompt is one call's request),
   * `"apart"` for {@link fromModelMessages} (model messages are the conversation one stores).
   */
  readonly cacheHints?: "keep" | "apart"
}

/** How a conversion reads its input: a provider prompt's form, and whether cache hints stay. */
interface Mode {
  /** A provider prompt, whose media are all files (an image's file form is not noted). */
  readonly promptForm: boolean
  readonly keepHints: boolean
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

/** A JSON record (ctxlog's providerOptions, a namespace's values). */
type JsonRecord = { readonly [key: string]: Message.JsonValue }
const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The namespace ctxlog keeps its own notes in (a tool output's type and options); never sent. */
const own = "ctxlog"

/** Namespaces merged: `extra`'s keys over `base`'s, namespace by namespace. */
const mergeOptions = (
  base: Message.ProviderOptions | undefined,
  extra: Message.ProviderOptions | undefined
): Message.ProviderOptions | undefined => {
  if (extra === undefined) return base
  if (base === undefined) return extra
  const merged: { [namespace: string]: Message.JsonValue } = { ...base }
  for (const [namespace, values] of Object.entries(extra)) {
    const before = merged[namespace]
    merged[namespace] = isRecord(before) && isRecord(values) ? { ...before, ...values } : values
  }
  return merged
}

/** Stored options as the AI SDK's (`ctxlog`'s own notes left out), or undefined when none remain. */
const optionsOut = (options: Message.ProviderOptions | undefined): ProviderOptions | undefined => {
  if (options === undefined) return undefined
  const out = Object.fromEntries(Object.entries(options).filter(([namespace]) => namespace !== own))
  return Object.keys(out).length === 0 ? undefined : (out as ProviderOptions)
}

/** `{ providerOptions }` when there are any (the AI SDK's optionals are exact). */
const withOptions = (options: Message.ProviderOptions | undefined): { providerOptions?: ProviderOptions } => {
  const out = optionsOut(options)
  return out === undefined ? {} : { providerOptions: out }
}

const ownNotes = (options: Message.ProviderOptions | undefined): JsonRecord => {
  const notes = options?.[own]
  return isRecord(notes) ? notes : {}
}

const reasoningOptions = (part: Message.ReasoningPart): ProviderOptions | undefined => {
  const anthropic = {
    ...(part.signature === undefined ? {} : { signature: part.signature }),
    ...(part.redactedData === undefined ? {} : { redactedData: part.redactedData })
  }
  const openai = {
    ...(part.itemId === undefined ? {} : { itemId: part.itemId }),
    ...(part.encryptedContent === undefined ? {} : { reasoningEncryptedContent: part.encryptedContent })
  }
  const interpreted = {
    ...(Object.keys(anthropic).length === 0 ? {} : { anthropic }),
    ...(Object.keys(openai).length === 0 ? {} : { openai })
  }
  return optionsOut(mergeOptions(part.providerOptions, Object.keys(interpreted).length === 0 ? undefined : interpreted))
}

const mediaOut = (part: Message.ImagePart | Message.DocumentPart): ImagePart | FilePart => {
  const source = part.source
  const options = withOptions(part.providerOptions)
  const notes = ownNotes(part.providerOptions)
  const notedType = typeof notes.mediaType === "string" ? notes.mediaType : undefined
  if (notes.part === "file" || (part.type === "image" && notedType !== undefined)) {
    // A `file` part (an image given as a file, an image URL with its media type) comes back as it came.
    const mediaType = notedType ?? (part.type === "image" ? "image/*" : "application/octet-stream")
    const data =
      source.type === "url"
        ? new URL(source.url)
        : notes.dataUrl === true
          ? `data:${source.mediaType};base64,${source.data}`
          : source.data
    return {
      type: "file",
      data,
      mediaType,
      ...(typeof notes.filename === "string" ? { filename: notes.filename } : {}),
      ...options
    }
  }
  if (part.type === "image") {
    return source.type === "url"
      ? { type: "image", image: new URL(source.url), ...options }
      : { type: "image", image: source.data, mediaType: source.mediaType, ...options }
  }
  return {
    type: "file",
    data: source.type === "url" ? new URL(source.url) : source.data,
    mediaType: source.type === "url" ? (notedType ?? "application/octet-stream") : source.mediaType,
    ...(part.title === undefined ? {} : { filename: part.title }),
    ...options
  }
}

const contentItemOut = (part: Message.ToolResultContent): ContentItem => {
  const options = withOptions(part.providerOptions)
  if (part.type === "text") return { type: "text", text: part.text, ...options }
  const source = part.source
  const notes = ownNotes(part.providerOptions)
  if (source.type === "url") {
    // An item given as `file-url` (with its media type) or `image-url` comes back as it came.
    const asFile = notes.item === "file-url" || (notes.item === undefined && part.type === "document")
    const mediaType = typeof notes.mediaType === "string" ? { mediaType: notes.mediaType } : {}
    return asFile
      ? { type: "file-url", url: source.url, ...mediaType, ...options }
      : { type: "image-url", url: source.url, ...options }
  }
  if (part.type === "image" && notes.item !== "file-data") {
    return { type: "image-data", data: source.data, mediaType: source.mediaType, ...options }
  }
  return {
    type: "file-data",
    data: source.data,
    mediaType: source.mediaType,
    ...(part.type === "document" && part.title !== undefined ? { filename: part.title } : {}),
    ...options
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

const parsed = (text: string): JSONValue => {
  try {
    return JSON.parse(text) as JSONValue
  } catch {
    return text
  }
}

/** A tool result's output: of the type it came as (kept in the part's own notes), with its options. */
const outputOf = (part: Message.ToolResultPart): ToolResultPart["output"] => {
  const notes = ownNotes(part.providerOptions)
  const options = isRecord(notes.output) ? { providerOptions: notes.output as ProviderOptions } : {}
  switch (notes.outputType) {
    case "json":
    case "error-json":
      return { type: notes.outputType, value: parsed(part.content), ...options }
    case "execution-denied":
      return notes.reason === false
        ? { type: "execution-denied", ...options }
        : { type: "execution-denied", reason: part.content, ...options }
    default:
      break
  }
  const content = Message.toolResultContentOf(part)
  const only = content[0]
  if (content.length === 1 && only?.type === "text" && notes.outputType !== "content") {
    return { type: part.isError ? "error-text" : "text", value: only.text, ...options }
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
): Either.Either<Array<ModelMessage>, AdapterError> =>
  Either.map(eachToModelMessage(messages), (out) => joinTools(messages, out))

/**
 * The tool messages ctxlog split out of one AI SDK tool message (noted `joined` on all but the first)
 * joined back into one, so the messages come back as they came.
 */
const joinTools = <M extends { readonly role: string; readonly content: unknown }>(
  messages: ReadonlyArray<AnyMessage>,
  out: ReadonlyArray<M>
): Array<M> => {
  const joined: Array<M> = []
  out.forEach((message, index) => {
    const previous = joined.at(-1)
    const source = messages[index]
    if (
      previous !== undefined &&
      previous.role === "tool" &&
      message.role === "tool" &&
      ownNotes(source?.providerOptions).joined === true &&
      Array.isArray(previous.content) &&
      Array.isArray(message.content)
    ) {
      joined[joined.length - 1] = { ...previous, content: [...previous.content, ...message.content] }
    } else {
      joined.push(message)
    }
  })
  return joined
}

/** One AI SDK message per ctxlog message, in order (the `ai-sdk` format maps them back by index). */
const eachToModelMessage = (messages: ReadonlyArray<AnyMessage>): Either.Either<Array<ModelMessage>, AdapterError> => {
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
          return { role: "system", content: Message.textOf(message), ...withOptions(message.providerOptions) }
        case "user":
          return {
            role: "user",
            content: message.parts.flatMap(
              (part): Exclude<UserContent, string> =>
                part.type === "text"
                  ? [{ type: "text", text: part.text, ...withOptions(part.providerOptions) }]
                  : part.type === "image" || part.type === "document"
                    ? [mediaOut(part)]
                    : []
            ),
            ...withOptions(message.providerOptions)
          }
        case "assistant":
          return {
            role: "assistant",
            content: message.parts.flatMap((part): Exclude<AssistantContent, string> => {
              switch (part.type) {
                case "text":
                  return [{ type: "text", text: part.text, ...withOptions(part.providerOptions) }]
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
                  return [
                    {
                      type: "tool-call",
                      toolCallId: part.id,
                      toolName: part.name,
                      input: part.input,
                      ...withOptions(part.providerOptions)
                    }
                  ]
                case "server_tool_call":
                  return [
                    {
                      type: "tool-call",
                      toolCallId: part.id,
                      toolName: part.name,
                      input: part.input,
                      providerExecuted: true,
                      ...withOptions(part.providerOptions)
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
                        ? withOptions(part.providerOptions)
                        : {
                            providerOptions: {
                              ...optionsOut(part.providerOptions),
                              ctxlog: { resultType: part.resultType }
                            }
                          })
                    }
                  ]
                case "custom":
                  // ai 7's provider-specific part, back as it came (ai 6's types have no such part).
                  return [
                    { type: "custom", kind: part.kind, ...withOptions(part.providerOptions) } as unknown as Exclude<
                      AssistantContent,
                      string
                    >[number]
                  ]
                case "tool_approval_request":
                  return [
                    {
                      type: "tool-approval-request",
                      approvalId: part.approvalId,
                      toolCallId: part.toolCallId,
                      ...withOptions(part.providerOptions)
                    }
                  ]
                case "image":
                case "document": {
                  const media = mediaOut(part)
                  return [
                    media.type === "file"
                      ? media
                      : {
                          type: "file",
                          data: media.image,
                          mediaType: media.mediaType ?? "image/*",
                          ...withOptions(part.providerOptions)
                        }
                  ]
                }
                default:
                  return []
              }
            }),
            ...withOptions(message.providerOptions)
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
                    output: outputOf(part),
                    ...withOptions(part.providerOptions)
                  }
                ]
              }
              if (part.type === "tool_approval_response") {
                return [
                  {
                    type: "tool-approval-response",
                    approvalId: part.approvalId,
                    approved: part.approved,
                    ...(part.reason === undefined ? {} : { reason: part.reason }),
                    ...withOptions(part.providerOptions)
                  }
                ]
              }
              return []
            }),
            ...withOptions(message.providerOptions)
          }
      }
    })
  )
}

/**
 * The provider options ctxlog stores for a message or part: all of them but Anthropic's cache hint (a
 * render option, read by {@link cacheControlOf}; kept with `keepHints`), as JSON; `undefined` fields
 * are left out. A value
 * that is not JSON (a function, a BigInt, a cycle) is refused with its path.
 */
const keptOptions = (
  options: unknown,
  keepHints = false
): Either.Either<Message.ProviderOptions | undefined, string> => {
  if (options === undefined || options === null) return Either.right(undefined)
  if (!isRecord(options)) return Either.left("providerOptions is not an object")
  const kept: { [namespace: string]: Message.JsonValue } = {}
  for (const [namespace, values] of Object.entries(options as Record<string, unknown>)) {
    if (values === undefined) continue
    let value: unknown = values
    if (namespace === "anthropic" && isRecord(values) && !keepHints) {
      const { cacheControl: _hint, cache_control: _snake, ...rest } = values as Record<string, unknown>
      if (Object.keys(rest).length === 0) continue
      value = rest
    }
    const json = jsonValueOf(value)
    if (json === undefined) return Either.left(`provider option ${namespace} is not JSON`)
    kept[namespace] = json
  }
  return Either.right(Object.keys(kept).length === 0 ? undefined : kept)
}

/** A value as JSON (`undefined` fields left out), or undefined when it is not JSON. */
const jsonValueOf = (value: unknown): Message.JsonValue | undefined => {
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch {
    return undefined
  }
  if (text === undefined) return undefined
  const back: unknown = JSON.parse(text)
  return isJson(back) ? back : undefined
}

const stringOption = (options: ProviderOptions | undefined, provider: string, key: string): string | undefined => {
  const value = options?.[provider]?.[key]
  return typeof value === "string" ? value : undefined
}

/** Interpreted reasoning data (strings only) lifted out of `options`; the rest stays opaque. */
const reasoningIn = (part: ReasoningPart, kept: Message.ProviderOptions | undefined): Message.ReasoningPart => {
  const options = part.providerOptions
  const signature = stringOption(options, "anthropic", "signature")
  const redactedData = stringOption(options, "anthropic", "redactedData")
  const itemId = stringOption(options, "openai", "itemId")
  const encryptedContent = stringOption(options, "openai", "reasoningEncryptedContent")
  const lifted: Record<string, ReadonlyArray<string>> = {
    anthropic: [
      ...(signature === undefined ? [] : ["signature"]),
      ...(redactedData === undefined ? [] : ["redactedData"])
    ],
    openai: [
      ...(itemId === undefined ? [] : ["itemId"]),
      ...(encryptedContent === undefined ? [] : ["reasoningEncryptedContent"])
    ]
  }
  const rest: { [namespace: string]: Message.JsonValue } = {}
  for (const [namespace, values] of Object.entries(kept ?? {})) {
    const keys = lifted[namespace] ?? []
    if (keys.length === 0 || !isRecord(values)) {
      rest[namespace] = values
      continue
    }
    const remaining = Object.fromEntries(Object.entries(values).filter(([key]) => !keys.includes(key)))
    if (Object.keys(remaining).length > 0) rest[namespace] = remaining
  }
  const part_ = Message.reasoning(part.text, { signature, redactedData, itemId, encryptedContent })
  return Object.keys(rest).length === 0 ? part_ : { ...part_, providerOptions: rest }
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

/** `part` with `options` (stored options, possibly with ctxlog's own notes) when there are any. */
const withKept = <P extends object>(
  part: P,
  options: Message.ProviderOptions | undefined
): P & { readonly providerOptions?: Message.ProviderOptions } =>
  options === undefined || Object.keys(options).length === 0 ? part : { ...part, providerOptions: options }

const mediaIn = (
  index: number,
  path: string,
  part: ImagePart | FilePart,
  kept: Message.ProviderOptions | undefined,
  promptForm: boolean
): Either.Either<Message.ImagePart | Message.DocumentPart, AdapterError> => {
  const data = part.type === "image" ? part.image : part.data
  return Either.mapBoth(sourceOf(data, part.mediaType), {
    onLeft: (detail) => refuse(format, index, path, detail),
    onRight: (source): Message.ImagePart | Message.DocumentPart => {
      const isImage = part.type === "image" || part.mediaType.startsWith("image/")
      const title = part.type === "file" ? part.filename : undefined
      // How a `file` part came, noted where the default form would differ: an image given as a file
      // (a provider prompt's files are the norm: not noted), a URL's media type, a data URL.
      const asFile = part.type === "file" && isImage && !promptForm
      const defaultType = isImage ? "image/*" : "application/octet-stream"
      const urlType = source.type === "url" && part.mediaType !== undefined && part.mediaType !== defaultType
      const dataUrl = typeof data === "string" && data.startsWith("data:") && !promptForm
      const notes: { [key: string]: Message.JsonValue } = {
        ...(asFile ? { part: "file" } : {}),
        ...(asFile || urlType ? { mediaType: part.mediaType } : {}),
        ...(asFile && title !== undefined ? { filename: title } : {}),
        ...(dataUrl ? { dataUrl: true } : {})
      }
      const note = Object.keys(notes).length === 0 ? kept : mergeOptions(kept, { [own]: notes })
      if (isImage) return withKept({ type: "image", source }, note)
      return withKept({ type: "document", source, ...(title === undefined ? {} : { title }) }, note)
    }
  })
}

const contentItemIn = (
  index: number,
  path: string,
  item: ContentItem,
  keepHints: boolean
): Either.Either<Message.ToolResultContent, AdapterError> => {
  const options = keptOptions("providerOptions" in item ? item.providerOptions : undefined, keepHints)
  if (Either.isLeft(options)) return Either.left(refuse(format, index, path, options.left))
  const kept = options.right
  switch (item.type) {
    case "text":
      return Either.right(withKept(Message.text(item.text), kept))
    case "media":
    case "image-data":
    case "file-data": {
      const source: Message.MediaSource = { type: "base64", mediaType: item.mediaType, data: item.data }
      if (item.mediaType.startsWith("image/")) {
        // An image given as `file-data` comes back as `file-data` (a note of ctxlog's own, never sent).
        const note = item.type === "file-data" ? mergeOptions(kept, { [own]: { item: "file-data" } }) : kept
        return Either.right(withKept({ type: "image", source }, note))
      }
      const title = item.type === "file-data" ? item.filename : undefined
      return Either.right(withKept({ type: "document", source, ...(title === undefined ? {} : { title }) }, kept))
    }
    case "image-url":
      return Either.right(withKept(Message.imageUrl(item.url), kept))
    case "file-url": {
      const note = mergeOptions(kept, {
        [own]: { item: "file-url", ...(item.mediaType === undefined ? {} : { mediaType: item.mediaType }) }
      })
      return Either.right(
        withKept(
          item.mediaType?.startsWith("image/") === true ? Message.imageUrl(item.url) : Message.documentUrl(item.url),
          note
        )
      )
    }
    default:
      return Either.left(refuse(format, index, path, `unsupported tool output item ${item.type}`))
  }
}

/**
 * A tool result: its text or parts, and in its stored options (besides the part's own) ctxlog's notes
 * of the output's type, its options (where a cache hint is read by {@link cacheControlOf}) and of
 * a denial without a reason, so it goes back as it came.
 */
const resultIn = (
  index: number,
  path: string,
  part: ToolResultPart,
  partKept: Message.ProviderOptions | undefined,
  keepHints: boolean
): Either.Either<Message.ToolResultPart, AdapterError> => {
  const output = part.output
  const outputOptions = keptOptions("providerOptions" in output ? output.providerOptions : undefined)
  if (Either.isLeft(outputOptions)) return Either.left(refuse(format, index, `${path}.output`, outputOptions.left))
  // Kept hints: one on the output marks the tool result (Anthropic's `tool_result` block), unless the
  // part has its own.
  const outputHint = keepHints && "providerOptions" in output ? hintValueOf(output.providerOptions) : undefined
  const kept = outputHint === undefined ? partKept : withHint(partKept, outputHint)
  const notes = (type: string | undefined, extra: JsonRecord = {}) => {
    const note: { [key: string]: Message.JsonValue } = {
      ...(type === undefined ? {} : { outputType: type }),
      ...(outputOptions.right === undefined ? {} : { output: outputOptions.right }),
      ...extra
    }
    return Object.keys(note).length === 0 ? kept : mergeOptions(kept, { [own]: note })
  }
  switch (output.type) {
    case "text":
    case "error-text":
      return Either.right(
        withKept(Message.toolResult(part.toolCallId, output.value, output.type === "error-text"), notes(undefined))
      )
    case "json":
    case "error-json":
      // Checked before stringifying: a cycle, a BigInt or a deep nest is a typed error, not a throw.
      return Either.map(jsonInput(format, index, output.value), (value) =>
        withKept(
          Message.toolResult(part.toolCallId, JSON.stringify(value), output.type === "error-json"),
          notes(output.type)
        )
      )
    case "execution-denied":
      return Either.right(
        withKept(
          Message.toolResult(part.toolCallId, output.reason ?? "execution denied", true),
          notes("execution-denied", output.reason === undefined ? { reason: false } : {})
        )
      )
    case "content":
      return Either.map(
        convertAll(output.value, (item, itemIndex) =>
          Either.map(contentItemIn(index, `${path}.output.value[${itemIndex}]`, item, keepHints), (inner) => [inner])
        ),
        (parts) => {
          const result = Message.toolResultParts(part.toolCallId, parts)
          // One text item is held as plain text: it goes back as `content` all the same.
          return withKept(result, notes(result.parts === undefined ? "content" : undefined))
        }
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
  provider: string,
  mode: Mode
): Either.Either<Message.Part, AdapterError> => {
  const options = keptOptions("providerOptions" in part ? part.providerOptions : undefined, mode.keepHints)
  if (Either.isLeft(options)) return Either.left(refuse(format, index, path, options.left))
  const kept = options.right
  // ai 7's provider-specific part (`{ type: "custom", kind: "{provider}.{type}" }`); ai 6's types have none.
  const custom = part as { readonly type: string; readonly kind?: unknown }
  if (custom.type === "custom") {
    return typeof custom.kind === "string" && /^[^.]+\..+$/.test(custom.kind)
      ? Either.right(withKept({ type: "custom", kind: custom.kind }, kept))
      : Either.left(
          refuse(
            format,
            index,
            path,
            `a custom part's kind must be "{provider}.{type}", not ${JSON.stringify(custom.kind)}`
          )
        )
  }
  switch (part.type) {
    case "text":
      return Either.right(withKept(Message.text(part.text), kept))
    case "reasoning":
      return Either.right(reasoningIn(part, kept))
    case "image":
    case "file":
      return mediaIn(index, path, part, kept, mode.promptForm)
    case "tool-call":
      return Either.map(jsonInput(format, index, part.input), (input) =>
        part.providerExecuted === true
          ? withKept(Message.serverToolCall(provider, part.toolCallId, part.toolName, input), kept)
          : withKept(Message.toolCall(part.toolCallId, part.toolName, input), kept)
      )
    case "tool-result": {
      if (role === "assistant") {
        // A tool result in an assistant message is the result of a provider-executed call.
        // Its whole output is kept (`{ type, value }`), so it goes back exactly as it came; a result a
        // provider gave as its own block (ctxlog's `resultType`) keeps that block's content.
        const output: unknown = part.output
        const resultType = stringOption(part.providerOptions, own, "resultType")
        const rest = kept === undefined ? undefined : optionsOut(kept)
        return isJson(output)
          ? Either.right(
              withKept(
                Message.serverToolResult(
                  provider,
                  part.toolCallId,
                  resultType ?? "tool-result",
                  resultType === undefined ? output : "value" in part.output ? jsonOf(part.output.value) : output
                ),
                rest as Message.ProviderOptions | undefined
              )
            )
          : Either.left(refuse(format, index, path, "a provider-executed tool result is not JSON"))
      }
      return resultIn(index, path, part, kept, mode.keepHints)
    }
    case "tool-approval-request":
      return Either.right(withKept(Message.toolApprovalRequest(part.approvalId, part.toolCallId), kept))
    case "tool-approval-response":
      return Either.right(withKept(Message.toolApprovalResponse(part.approvalId, part.approved, part.reason), kept))
    default:
      return Either.left(
        refuse(
          format,
          index,
          path,
          `unsupported ${role} part ${JSON.stringify((part as { readonly type?: unknown }).type)}`
        )
      )
  }
}

/** AI SDK `ModelMessage`s as ctxlog message inputs. @since 0.1.0 */
export const fromModelMessages = (
  messages: ReadonlyArray<ModelMessage>,
  options: FromOptions = {}
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertIn(messages, options, { promptForm: false, keepHints: options.cacheHints === "keep" })

/** Messages in, read as `mode` says. */
const convertIn = (
  messages: ReadonlyArray<ModelMessage>,
  options: FromOptions,
  mode: Mode
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
  const provider = options.provider ?? "ai-sdk"
  return convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
    const role: string = message.role
    if (role !== "system" && role !== "user" && role !== "assistant" && role !== "tool") {
      return Either.left(refuse(format, index, "role", `unsupported role ${role}`))
    }
    // Message-level options are kept on the message (an Anthropic cache hint aside: a render option,
    // or, kept, on the message — on the last piece of a tool message split per result).
    const messageOptions = keptOptions(message.providerOptions)
    if (Either.isLeft(messageOptions)) {
      return Either.left(refuse(format, index, "providerOptions", messageOptions.left))
    }
    const messageHint = mode.keepHints ? hintValueOf(message.providerOptions) : undefined
    const hinted = (stored: Message.ProviderOptions | undefined) => {
      const withIt = messageHint === undefined ? stored : withHint(stored, messageHint)
      return withIt === undefined ? {} : { providerOptions: withIt }
    }
    const kept = hinted(messageOptions.right)
    if (typeof message.content === "string") {
      return Either.right([{ role: message.role, parts: [Message.text(message.content)], ...kept }])
    }
    const blocks: ReadonlyArray<AnyPart> = message.content
    return Either.map(
      convertAll(blocks, (part, partIndex) =>
        Either.map(partIn(index, `content[${partIndex}]`, message.role, part, provider, mode), (converted) => [
          converted
        ])
      ),
      (parts): ReadonlyArray<Message.MessageInput> => {
        if (message.role !== "tool") return [{ role: message.role, parts, ...kept }]
        // One ctxlog tool message per result (as `Message.tool` makes them); approvals travel together.
        const results = parts.filter((part) => part.type === "tool_result")
        const approvals = parts.filter((part) => part.type !== "tool_result")
        // All but the first are noted `joined` (ctxlog's own note): they go back as one tool message.
        const joined: Message.ProviderOptions = { ...messageOptions.right, [own]: { joined: true } }
        const split: Array<Message.MessageInput> = [
          ...(approvals.length === 0 ? [] : [{ role: "tool" as const, parts: approvals }]),
          ...results.map((part) => ({ role: "tool" as const, parts: [part] }))
        ]
        // A kept message-level hint goes on the last piece only (one breakpoint, where the AI SDK puts it).
        const last = split.length - 1
        const optionsAt = (at: number) => {
          const stored = at === 0 ? messageOptions.right : joined
          return at === last ? hinted(stored) : stored === undefined ? {} : { providerOptions: stored }
        }
        return split.map((input, at) => ({ ...input, ...optionsAt(at) }))
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
  Either.map(eachToLanguageModelMessage(messages), (out) => joinTools(messages, out))

/**
 * One language-model prompt message per ctxlog message, in order (what the `ai-sdk` format reads).
 * @since 0.8.0
 */
export const eachToLanguageModelMessage = (
  messages: ReadonlyArray<AnyMessage>
): Either.Either<LanguageModelPrompt, AdapterError> =>
  Either.map(eachToModelMessage(messages), (out) =>
    out.map((message) => {
      if (message.role === "system" || typeof message.content === "string") {
        return message.role === "system"
          ? { role: "system" as const, content: message.content }
          : { role: message.role, content: [{ type: "text", text: message.content }] }
      }
      const content: ReadonlyArray<{ readonly type: string }> = message.content.map((part) => {
        if (part.type === "image") {
          return {
            type: "file",
            data: part.image,
            mediaType: part.mediaType ?? "image/*",
            ...(part.providerOptions === undefined ? {} : { providerOptions: part.providerOptions })
          }
        }
        // The provider interface takes base64 or bytes or a URL: a data URL goes as its base64.
        if (part.type === "file" && typeof part.data === "string") {
          const base64 = /^data:[^;,]+;base64,(.*)$/s.exec(part.data)?.[1]
          return base64 === undefined ? part : { ...part, data: base64 }
        }
        return part
      })
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
  convertIn(prompt as unknown as ReadonlyArray<ModelMessage>, options, {
    promptForm: true,
    keepHints: options.cacheHints !== "apart"
  })

/** An Anthropic cache breakpoint as the AI SDK carries it (`providerOptions.anthropic.cacheControl`). @since 0.4.0 */
export interface CacheControlHint {
  readonly ttl?: "5m" | "1h"
}

/** The raw Anthropic cache hint in AI SDK provider options (`anthropic.cacheControl` or `cache_control`), as JSON. */
const hintValueOf = (options: unknown): Message.JsonValue | undefined => {
  if (!isRecord(options) || !isRecord(options.anthropic)) return undefined
  const control = options.anthropic.cacheControl ?? options.anthropic.cache_control
  return control === undefined || control === null ? undefined : jsonValueOf(control)
}

/** Stored options with an Anthropic cache hint set (as `anthropic.cacheControl`), unless they have one. */
const withHint = (options: Message.ProviderOptions | undefined, hint: Message.JsonValue): Message.ProviderOptions => {
  const anthropic = isRecord(options?.anthropic) ? options.anthropic : {}
  if (anthropic.cacheControl !== undefined || anthropic.cache_control !== undefined) return options ?? {}
  return { ...options, anthropic: { ...anthropic, cacheControl: hint } }
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
 * on the message (`providerOptions.anthropic.cacheControl`, or `cache_control`), on any of its parts, on
 * a tool result's output or on an item of a `content` output.
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
      // A tool result's output, and each item of a `content` output, may carry one too.
      const output: unknown = "output" in part ? part.output : undefined
      if (typeof output !== "object" || output === null) continue
      if ("providerOptions" in output) found = cacheControlIn(output.providerOptions) ?? found
      const items: unknown = "value" in output && "type" in output && output.type === "content" ? output.value : []
      for (const item of Array.isArray(items) ? items : []) {
        if (typeof item === "object" && item !== null && "providerOptions" in item) {
          found = cacheControlIn(item.providerOptions) ?? found
        }
      }
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
