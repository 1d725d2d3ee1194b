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
 * - Refused (an `AdapterError` naming the part or block): other message types (chat, function,
 *   remove), other content blocks, and going out provider-executed tool parts, approvals, citations
 *   and encrypted reasoning, which LangChain messages cannot carry.
 *
 * @since 0.1.0
 */
import { Message } from "@ctxlog/core"
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages"
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

/** A ctxlog part as a LangChain content block (standard v1 blocks; Anthropic's thinking blocks). */
const blockOf = (part: Message.Part): ReadonlyArray<Block> => {
  switch (part.type) {
    case "text":
      return [{ type: "text", text: part.text }]
    case "reasoning":
      if (part.redactedData !== undefined) return [{ type: "redacted_thinking", data: part.redactedData }]
      if (part.signature !== undefined) return [{ type: "thinking", thinking: part.text, signature: part.signature }]
      return [{ type: "reasoning", reasoning: part.text, ...(part.itemId === undefined ? {} : { id: part.itemId }) }]
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

/** A message's content: a string when it is one text part (or none), else its blocks in order. */
const contentOf = (parts: ReadonlyArray<Message.Part>): string | Array<Block> => {
  const shown = parts.filter((part) => part.type !== "tool_call" && part.type !== "tool_result")
  const only = shown[0]
  if (shown.length === 0) return ""
  if (shown.length === 1 && only?.type === "text") return only.text
  return shown.flatMap(blockOf)
}

const idOf = (message: AnyMessage): { readonly id?: string } => (message.id === undefined ? {} : { id: message.id })

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
  switch (message.role) {
    case "system":
      return [new SystemMessage({ content: contentOf(message.parts), ...idOf(message) })]
    case "user":
      return [new HumanMessage({ content: contentOf(message.parts), ...idOf(message) })]
    case "assistant":
      return [
        new AIMessage({
          content: contentOf(message.parts),
          ...idOf(message),
          tool_calls: Message.toolCallsOf(message).map((call) => ({
            type: "tool_call" as const,
            id: call.id,
            name: call.name,
            args: args(call.input)
          }))
        })
      ]
    case "tool": {
      const results = Message.toolResultsOf(message)
      return results.map(
        (result) =>
          new ToolMessage({
            content: contentOf(Message.toolResultContentOf(result)),
            tool_call_id: result.toolCallId,
            status: result.isError ? "error" : "success",
            // One LangChain message per result: the id goes with the first (the message's own).
            ...(results.length === 1 ? idOf(message) : {})
          })
      )
    }
  }
}

const str = (block: Record<string, unknown>, key: string): string | undefined => {
  const value = block[key]
  return typeof value === "string" ? value : undefined
}

/** A LangChain content block as a ctxlog part. */
const partOf = (
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

/** LangChain messages as ctxlog message inputs, ids, text blocks and reasoning kept. @since 0.1.0 */
export const fromLangChain = (
  messages: ReadonlyArray<BaseMessage>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertAll(
    messages,
    (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
      Either.flatMap(
        partsOf(index, message),
        (parts): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
          if (SystemMessage.isInstance(message)) return Either.right([{ role: "system", parts, ...idIn(message) }])
          if (HumanMessage.isInstance(message)) return Either.right([{ role: "user", parts, ...idIn(message) }])
          if (ToolMessage.isInstance(message)) {
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
            return Either.right([{ role: "tool", parts: [result], ...idIn(message) }])
          }
          if (AIMessage.isInstance(message)) {
            return Either.map(
              convertAll(message.tool_calls ?? [], (call) =>
                call.id === undefined
                  ? Either.left(new AdapterError({ format, index, detail: `tool call ${call.name} has no id` }))
                  : Either.map(jsonInput(format, index, call.args), (input) => [
                      Message.toolCall(call.id ?? "", call.name, input)
                    ])
              ),
              (calls): ReadonlyArray<Message.MessageInput> => [
                { role: "assistant", parts: [...parts, ...calls], ...idIn(message) }
              ]
            )
          }
          return Either.left(new AdapterError({ format, index, detail: `unsupported message type ${message.type}` }))
        }
      )
  )

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
