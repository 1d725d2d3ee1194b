/**
 * LangChain messages (`BaseMessage[]` of `@langchain/core`) ⇄ ctxlog messages, tool calls included.
 * LangChain messages are classes, so this subpath imports `@langchain/core/messages` at run time:
 * install `@langchain/core` (an optional peer) to use it.
 *
 * - A tool result's error flag is `ToolMessage.status: "error"`.
 * - LangChain tool-call `args` are objects: a ctxlog tool input that is not an object travels as
 *   `{ input: value }` and comes back as that object.
 * - Message ids are kept both ways; content blocks are kept in order (text blocks are not joined):
 *   text, reasoning (`reasoning`, or Anthropic's `thinking` with its signature and `redacted_thinking`),
 *   images and files (standard v1 blocks, a document's title as `metadata.title`); a tool result made
 *   of parts goes as blocks.
 * - A message's `name` is the ctxlog message's `name`, both ways.
 * - What LangChain messages hold that ctxlog does not model is kept opaque under
 *   `providerOptions.langchain` and given back in place: a message's `additional_kwargs`,
 *   `response_metadata`, `usage_metadata`, `invalid_tool_calls`, a tool message's `artifact` and
 *   `metadata`, the class of a `ChatMessage` (its `role`) and of an `AIMessageChunk` (its
 *   `tool_call_chunks`), content given as blocks where one string would do, and each content
 *   block's keys beyond those read (`id`, `cache_control`, ...) on its part. A value in them that is
 *   not JSON is refused by name; a key whose value is `undefined` is no value.
 * - Refused (an `AdapterError` naming the part or block): other message types (function, remove,
 *   a chat role that is not user/assistant/system), other content blocks, and going out
 *   provider-executed tool parts, approvals, citations and encrypted reasoning, which LangChain
 *   messages cannot carry.
 *
 * @since 0.1.0
 */
import { Message, Validation } from "@ctxlog/core"
import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage
} from "@langchain/core/messages"
import * as Either from "effect/Either"
import { AdapterError, type AnyMessage, convertAll, jsonInput, refuse } from "../AdapterError.js"
import type { LangChainMessageJson } from "../formats/langchain.js"

/** @since 0.1.0 */
export { AdapterError }

/** LangChain's `trimMessages` over ctxlog messages (convert with `fromLangChain` / `toLangChain`). @since 0.4.0 */
export { splitLines, TrimOptionsError, trimMessages } from "../TrimMessages.js"

const format = "LangChain"

// Optional keys are spread, never set to `undefined`: going out they build the SDK's own types (exact
// optionals, compared whole by callers), coming in they build ctxlog message parts, where an undefined
// key would make a live window differ from its replay (ADR 0060).

const isObject = (value: Message.JsonValue): value is { readonly [key: string]: Message.JsonValue } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const args = (input: Message.JsonValue): Record<string, Message.JsonValue> =>
  isObject(input) ? { ...input } : { input }

type Block = Record<string, unknown> & { readonly type: string }

/** The namespace of `providerOptions` the LangChain fields ctxlog does not model are kept under. @since 0.8.0 */
export const namespace = "langchain"

type JsonObject = { readonly [key: string]: Message.JsonValue }

/** The LangChain fields kept with a part or message (`providerOptions.langchain`). */
const keptOf = (holder: { readonly providerOptions?: Message.ProviderOptions | undefined }): JsonObject => {
  const kept = holder.providerOptions?.[namespace]
  return kept !== undefined && isObject(kept) ? kept : {}
}

/** `providerOptions` holding `kept` under the LangChain namespace (besides any other namespace), or nothing. */
const withKept = (
  providerOptions: Message.ProviderOptions | undefined,
  kept: JsonObject
): { readonly providerOptions?: Message.ProviderOptions } =>
  Object.keys(kept).length === 0 ? {} : { providerOptions: { ...providerOptions, [namespace]: kept } }

/** A ctxlog part as a LangChain content block, with the block's keys kept from LangChain given back. */
const blockOf = (part: Message.Part): ReadonlyArray<Block> => {
  const extra = keptOf(part).block
  return baseBlockOf(part).map((block) => (extra !== undefined && isObject(extra) ? { ...extra, ...block } : block))
}

/** A ctxlog part as a LangChain content block (standard v1 blocks; Anthropic's thinking blocks). */
const baseBlockOf = (part: Message.Part): ReadonlyArray<Block> => {
  switch (part.type) {
    case "text":
      return [{ type: "text", text: part.text }]
    case "reasoning":
      if (part.redactedData !== undefined) return [{ type: "redacted_thinking", data: part.redactedData }]
      if (part.signature !== undefined) return [{ type: "thinking", thinking: part.text, signature: part.signature }]
      return [{ type: "reasoning", reasoning: part.text, ...(part.itemId === undefined ? {} : { id: part.itemId }) }]
    case "tool_call":
      // A call a provider package gave as a content block too (ChatAnthropic's `tool_use`) goes back there.
      return keptOf(part).inContent === "tool_use"
        ? [{ type: "tool_use", id: part.id, name: part.name, input: part.input }]
        : []
    case "image":
    case "document": {
      const type = part.type === "image" ? "image" : "file"
      const title = part.type === "document" && part.title !== undefined ? { metadata: { title: part.title } } : {}
      return part.source.type === "url"
        ? [{ type, url: part.source.url, ...title }]
        : [{ type, data: part.source.data, mimeType: part.source.mediaType, ...title }]
    }
    default:
      return []
  }
}

/**
 * A message's content: a string when it is one text part (or none) that came as a string, else its
 * blocks in order.
 */
const contentOf = (parts: ReadonlyArray<Message.Part>, asBlocks = false): string | Array<Block> => {
  const shown = parts.filter(
    (part) => (part.type !== "tool_call" || keptOf(part).inContent === "tool_use") && part.type !== "tool_result"
  )
  const only = shown[0]
  if (!asBlocks && shown.length === 0) return ""
  if (!asBlocks && shown.length === 1 && only?.type === "text" && keptOf(only).block === undefined) return only.text
  return shown.flatMap(blockOf)
}

const idOf = (message: AnyMessage): { readonly id?: string } => (message.id === undefined ? {} : { id: message.id })
const nameOf = (message: AnyMessage): { readonly name?: string } =>
  message.name === undefined ? {} : { name: message.name }

/** The message-level LangChain fields kept under `providerOptions.langchain`, given back as fields. */
const fieldsOf = (kept: JsonObject, keys: ReadonlyArray<string>): Record<string, Message.JsonValue> => {
  const out: Record<string, Message.JsonValue> = {}
  for (const key of keys) {
    const value = kept[key]
    if (value !== undefined) out[key] = value
  }
  return out
}

/**
 * The parts LangChain messages cannot carry: provider-executed tool parts, approvals, citations and
 * OpenAI's encrypted reasoning. Refused with an `AdapterError` naming the part.
 */
const refused = (index: number, message: AnyMessage): AdapterError | undefined => {
  for (const [partIndex, part] of message.parts.entries()) {
    const path = `parts[${partIndex}]`
    if (part.type === "server_tool_call" || part.type === "server_tool_result") {
      return refuse(format, index, path, `a ${part.type} part ran by ${part.provider} goes back only to it`)
    }
    if (part.type === "tool_approval_request" || part.type === "tool_approval_response") {
      return refuse(format, index, path, "LangChain messages have no tool approvals")
    }
    if (part.type === "text" && part.citations !== undefined) {
      return refuse(format, index, path, "LangChain text blocks keep no citations")
    }
    if (part.type === "reasoning" && part.encryptedContent !== undefined) {
      return refuse(format, index, path, "LangChain reasoning blocks keep no encrypted content")
    }
  }
  return undefined
}

/**
 * ctxlog messages (e.g. `[...window.system, ...window.history]`) as LangChain messages, ids, text
 * blocks and reasoning kept; or an `AdapterError` naming a part LangChain cannot carry.
 * @since 0.1.0
 */
export const toLangChain = (messages: ReadonlyArray<AnyMessage>): Either.Either<Array<BaseMessage>, AdapterError> =>
  Either.map(
    convertAll(messages, (message, index): Either.Either<ReadonlyArray<BaseMessage>, AdapterError> => {
      const error = refused(index, message)
      return error === undefined ? Either.right(convertOne(message)) : Either.left(error)
    }),
    (converted) => [...converted]
  )

const convertOne = (message: AnyMessage): Array<BaseMessage> => {
  const kept = keptOf(message)
  const asBlocks = kept.content === "blocks"
  const common = {
    content: contentOf(message.parts, asBlocks),
    ...nameOf(message),
    ...fieldsOf(kept, ["additional_kwargs", "response_metadata"])
  }
  switch (message.role) {
    case "system":
      return [kept.class === "chat" ? chatMessage(common, kept) : new SystemMessage({ ...common, ...idOf(message) })]
    case "user":
      return [kept.class === "chat" ? chatMessage(common, kept) : new HumanMessage({ ...common, ...idOf(message) })]
    case "assistant": {
      if (kept.class === "chat") return [chatMessage({ ...common, ...idOf(message) }, kept)]
      // In the order of LangChain's `ToolCall` (name, args, id, type); a call LangChain gave without
      // its `type` comes back without it.
      const calls = Message.toolCallsOf(message).map((call) => ({
        name: call.name,
        args: args(call.input),
        id: call.id,
        ...(keptOf(call).untyped === true ? {} : { type: "tool_call" as const })
      }))
      const fields = {
        ...common,
        ...idOf(message),
        ...(calls.length === 0 ? {} : { tool_calls: calls }),
        ...fieldsOf(kept, ["usage_metadata", "invalid_tool_calls", "tool_call_chunks"])
      }
      // The fields come from LangChain's own message (kept as JSON): its constructor takes them back.
      const init = fields as ConstructorParameters<typeof AIMessage>[0] & object
      return [kept.class === "ai_chunk" ? new AIMessageChunk(init) : new AIMessage(init)]
    }
    case "tool": {
      const results = Message.toolResultsOf(message)
      return results.map(
        (result) =>
          new ToolMessage({
            ...common,
            content: contentOf(Message.toolResultContentOf(result), asBlocks),
            tool_call_id: result.toolCallId,
            // The status LangChain gave, else the error flag's.
            ...(kept.status === "success" || kept.status === "error"
              ? { status: kept.status }
              : result.isError
                ? { status: "error" as const }
                : {}),
            ...fieldsOf(kept, ["artifact", "metadata"]),
            // One LangChain message per result: the id goes with the first (the message's own).
            ...(results.length === 1 ? idOf(message) : {})
          })
      )
    }
  }
}

const chatMessage = (
  common: { readonly content: string | Array<Block>; readonly id?: string },
  kept: JsonObject
): BaseMessage => new ChatMessage({ ...common, role: typeof kept.role === "string" ? kept.role : "user" })

const str = (block: Record<string, unknown>, key: string): string | undefined => {
  const value = block[key]
  return typeof value === "string" ? value : undefined
}

/** The keys of each content block the adapter reads (the rest are kept on the part). */
const readKeys: Record<string, ReadonlyArray<string>> = {
  text: ["type", "text"],
  reasoning: ["type", "reasoning", "id"],
  thinking: ["type", "thinking", "signature"],
  redacted_thinking: ["type", "data"],
  tool_use: ["type", "id", "name", "input"],
  image: ["type", "url", "data", "mimeType", "mime_type"],
  file: ["type", "url", "data", "mimeType", "mime_type", "metadata"]
}

/** A value as JSON, keys holding `undefined` left out (no value); else where and why it is not JSON. */
const jsonOf = (value: unknown): Either.Either<Message.JsonValue, string> => {
  const defined = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(defined)
    if (typeof item === "object" && item !== null && Object.getPrototypeOf(item) === Object.prototype) {
      return Object.fromEntries(
        Object.entries(item).flatMap(([key, inner]) => (inner === undefined ? [] : [[key, defined(inner)]]))
      )
    }
    return item
  }
  const cleaned = defined(value)
  const problem = Validation.valueProblem(cleaned, "value")
  return problem === undefined
    ? Either.right(cleaned as Message.JsonValue)
    : Either.left(`${problem.path}: ${problem.detail}`)
}

/** The block's keys beyond those read, as the part's `providerOptions.langchain.block`. */
const withExtras = (
  index: number,
  path: string,
  block: Block,
  parts: ReadonlyArray<Message.Part>
): Either.Either<ReadonlyArray<Message.Part>, AdapterError> => {
  const read = readKeys[block.type] ?? ["type"]
  const extras = Object.fromEntries(
    Object.entries(block).filter(([key, value]) => !read.includes(key) && value !== undefined)
  )
  if (Object.keys(extras).length === 0) return Either.right(parts)
  const json = jsonOf(extras)
  if (Either.isLeft(json)) {
    return Either.left(refuse(format, index, path, `a ${block.type} block's field is not JSON at ${json.left}`))
  }
  return Either.right(
    parts.map((part) => ({
      ...part,
      providerOptions: { ...part.providerOptions, [namespace]: { ...keptOf(part), block: json.right } }
    }))
  )
}

/** A LangChain content block as a ctxlog part. */
const partOf = (index: number, path: string, block: Block): Either.Either<ReadonlyArray<Message.Part>, AdapterError> =>
  Either.flatMap(basePartOf(index, path, block), (parts) => withExtras(index, path, block, parts))

/** A LangChain content block as a ctxlog part, the keys it reads. */
const basePartOf = (
  index: number,
  path: string,
  block: Block
): Either.Either<ReadonlyArray<Message.Part>, AdapterError> => {
  const text = str(block, "text")
  switch (block.type) {
    case "text":
      return text === undefined
        ? Either.left(refuse(format, index, path, "a text block without text"))
        : Either.right([Message.text(text)])
    case "reasoning": {
      const itemId = str(block, "id")
      return Either.right([Message.reasoning(str(block, "reasoning") ?? "", { itemId })])
    }
    case "thinking": {
      const signature = str(block, "signature")
      return Either.right([Message.reasoning(str(block, "thinking") ?? "", { signature })])
    }
    case "redacted_thinking":
      return Either.right([Message.reasoning("", { redactedData: str(block, "data") ?? "" })])
    case "tool_use": {
      // A provider package's own tool call block (ChatAnthropic puts Anthropic's `tool_use` in `content`
      // beside `tool_calls`): the call, in its place; `tool_calls`' entry with its id is the same call.
      const id = str(block, "id")
      const name = str(block, "name")
      if (id === undefined || id.length === 0 || name === undefined || name.length === 0) {
        return Either.left(refuse(format, index, path, "a tool_use block without its id or name"))
      }
      return Either.map(jsonInput(format, index, block.input ?? {}), (input) => [
        { ...Message.toolCall(id, name, input), providerOptions: { [namespace]: { inContent: "tool_use" } } }
      ])
    }
    case "image":
    case "file": {
      const url = str(block, "url")
      const data = str(block, "data")
      const mediaType = str(block, "mimeType") ?? str(block, "mime_type")
      const source: Message.MediaSource | undefined =
        url !== undefined
          ? { type: "url", url }
          : data !== undefined && mediaType !== undefined
            ? { type: "base64", mediaType, data }
            : undefined
      if (source === undefined)
        return Either.left(refuse(format, index, path, `a ${block.type} block without url or data`))
      const metadata = block.metadata
      const title =
        typeof metadata === "object" && metadata !== null && "title" in metadata && typeof metadata.title === "string"
          ? metadata.title
          : undefined
      return Either.right([
        block.type === "image"
          ? { type: "image", source }
          : { type: "document", source, ...(title === undefined ? {} : { title }) }
      ])
    }
    default:
      return Either.left(refuse(format, index, path, `unsupported content block ${block.type}`))
  }
}

const partsOf = (index: number, message: BaseMessage): Either.Either<ReadonlyArray<Message.Part>, AdapterError> => {
  if (typeof message.content === "string") {
    return Either.right(message.content.length === 0 ? [] : [Message.text(message.content)])
  }
  const blocks: ReadonlyArray<Block> = message.content as ReadonlyArray<Block>
  return convertAll(blocks, (block, blockIndex) => partOf(index, `content[${blockIndex}]`, block))
}

const idIn = (message: BaseMessage): { readonly id?: string } =>
  typeof message.id === "string" && message.id.length > 0 ? { id: message.id } : {}
const nameIn = (message: BaseMessage): { readonly name?: string } =>
  typeof message.name === "string" ? { name: message.name } : {}

const isEmpty = (value: unknown): boolean =>
  value === undefined ||
  (Array.isArray(value) && value.length === 0) ||
  (typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)

/** The ctxlog role of a `ChatMessage` role, when it has one. */
const chatRoles: Record<string, "user" | "assistant" | "system"> = {
  human: "user",
  user: "user",
  ai: "assistant",
  assistant: "assistant",
  system: "system"
}

/**
 * The fields of a LangChain message ctxlog does not model, as JSON to keep under
 * `providerOptions.langchain`; or an error naming the field that is not JSON.
 */
const keptIn = (index: number, message: BaseMessage): Either.Either<JsonObject, AdapterError> => {
  const fields: Record<string, unknown> = {
    additional_kwargs: message.additional_kwargs,
    response_metadata: message.response_metadata
  }
  if (AIMessage.isInstance(message) || AIMessageChunk.isInstance(message)) {
    fields.usage_metadata = message.usage_metadata
    fields.invalid_tool_calls = message.invalid_tool_calls
  }
  if (AIMessageChunk.isInstance(message)) {
    fields.class = "ai_chunk"
    fields.tool_call_chunks = message.tool_call_chunks
  }
  if (ToolMessage.isInstance(message)) {
    fields.artifact = message.artifact
    fields.metadata = message.metadata
    fields.status = message.status
  }
  if (ChatMessage.isInstance(message)) {
    fields.class = "chat"
    fields.role = message.role
  }
  // Content given as blocks where the parts would come back as one string (one text block, or none).
  if (Array.isArray(message.content)) {
    const blocks: ReadonlyArray<unknown> = message.content
    const only = blocks[0]
    if (
      blocks.length === 0 ||
      (blocks.length === 1 && typeof only === "object" && only !== null && Reflect.get(only, "type") === "text")
    ) {
      fields.content = "blocks"
    }
  }
  const kept: Record<string, Message.JsonValue> = {}
  for (const [key, value] of Object.entries(fields)) {
    if (isEmpty(value)) continue
    const json = jsonOf(value)
    if (Either.isLeft(json)) return Either.left(refuse(format, index, key, `not JSON at ${json.left}`))
    kept[key] = json.right
  }
  return Either.right(kept)
}

const roleIn = (message: BaseMessage): Message.Role | undefined => {
  if (ChatMessage.isInstance(message)) return chatRoles[message.role]
  if (SystemMessage.isInstance(message)) return "system"
  if (HumanMessage.isInstance(message)) return "user"
  if (ToolMessage.isInstance(message)) return "tool"
  if (AIMessage.isInstance(message) || AIMessageChunk.isInstance(message)) return "assistant"
  return undefined
}

/**
 * LangChain messages as ctxlog message inputs: ids, names, text blocks, reasoning and tool calls
 * kept, and what ctxlog does not model kept opaque under `providerOptions.langchain` (given back by
 * `toLangChain`). A message or field it cannot carry is refused, named.
 * @since 0.1.0
 */
export const fromLangChain = (
  messages: ReadonlyArray<BaseMessage>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
    const role = roleIn(message)
    if (role === undefined) {
      const detail = ChatMessage.isInstance(message)
        ? `unsupported chat role ${message.role} (a ChatMessage goes as user, assistant or system)`
        : `unsupported message type ${message.type}`
      return Either.left(new AdapterError({ format, index, detail }))
    }
    return Either.flatMap(keptIn(index, message), (kept) =>
      Either.flatMap(
        partsOf(index, message),
        (parts): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
          const common = { ...idIn(message), ...nameIn(message), ...withKept(undefined, kept) }
          if (role === "system" || role === "user") return Either.right([{ role, parts, ...common }])
          if (role === "tool" && ToolMessage.isInstance(message)) {
            const content = parts.filter(
              (part): part is Message.ToolResultContent =>
                part.type === "text" || part.type === "image" || part.type === "document"
            )
            if (content.length !== parts.length) {
              return Either.left(
                refuse(format, index, "content", "a tool message holds a block that is not text or media")
              )
            }
            const result =
              content.length === 0
                ? Message.toolResult(message.tool_call_id, "", message.status === "error")
                : Message.toolResultParts(message.tool_call_id, content, message.status === "error")
            return Either.right([{ role: "tool", parts: [result], ...common }])
          }
          const calls = AIMessage.isInstance(message) || AIMessageChunk.isInstance(message) ? message.tool_calls : []
          return Either.map(
            convertAll(calls ?? [], (call) =>
              call.id === undefined
                ? Either.left(new AdapterError({ format, index, detail: `tool call ${call.name} has no id` }))
                : Either.map(jsonInput(format, index, call.args), (input) => [
                    call.type === undefined
                      ? {
                          ...Message.toolCall(call.id ?? "", call.name, input),
                          providerOptions: { [namespace]: { untyped: true } }
                        }
                      : Message.toolCall(call.id ?? "", call.name, input)
                  ])
            ),
            (toolCalls): ReadonlyArray<Message.MessageInput> => {
              // A call already in the content (a `tool_use` block) is not added again.
              const inContent = new Set(Message.toolCallsOf({ parts }).map((call) => call.id))
              const rest = toolCalls.filter((call) => call.type !== "tool_call" || !inContent.has(call.id))
              return [{ role: "assistant", parts: [...parts, ...rest], ...common }]
            }
          )
        }
      )
    )
  })

/** The `langchain` framework format's JSON (see `FrameworkFormat`). @since 0.8.0 */
export type { LangChainMessageJson, LangChainRequest, LangChainToolCall } from "../formats/langchain.js"

/**
 * The messages of a render in the `langchain` format (`{ format: "langchain", messages }`, what
 * `ctxlog render` rebuilds) as LangChain messages: each JSON message becomes the class its `type`
 * names, with exactly its fields. What a pre-model hook hands the model.
 * @since 0.8.0
 */
export const fromLangChainFormat = (messages: ReadonlyArray<LangChainMessageJson>): Array<BaseMessage> =>
  messages.map((message): BaseMessage => {
    switch (message.type) {
      case "system":
        return new SystemMessage({ id: message.id, content: message.content })
      case "human":
        return new HumanMessage({
          id: message.id,
          content: typeof message.content === "string" ? message.content : message.content.map((part) => ({ ...part }))
        })
      case "ai":
        return new AIMessage({
          id: message.id,
          content: message.content,
          tool_calls: message.tool_calls.map((call) => ({ ...call, args: { ...call.args } }))
        })
      default:
        return new ToolMessage({ id: message.id, content: message.content, tool_call_id: message.tool_call_id })
    }
  })
