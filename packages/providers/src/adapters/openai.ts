/**
 * OpenAI Chat Completions messages (`ChatCompletionMessageParam[]` of the `openai` SDK) ⇄ ctxlog messages,
 * tool calls included. Types only: the `openai` package is an optional peer, never loaded at run time.
 *
 * - A tool result's error flag has no field in this API: `toOpenAI` prefixes the content with
 *   `[tool error] ` (as the OpenAI renderer does) and `fromOpenAI` reads the prefix back.
 * - `developer` messages become system messages; user images (`image_url`, detail kept) and files
 *   (`file_data`, the filename as the title) both ways; audio and file ids are an `AdapterError`.
 * - Refused going out, with an `AdapterError` naming the part: provider-executed tool parts and tool
 *   results made of images or documents. Reasoning, citations and approvals have no form here.
 *
 * @since 0.1.0
 */
import { Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import type {
  ChatCompletionContentPart,
  ChatCompletionContentPartText,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall
} from "openai/resources/chat/completions"
import { AdapterError, type AnyMessage, convertAll, parseArguments, refuse } from "../AdapterError.js"
import { errorPrefix } from "../internal/chatRender.js"
import { dataUrlOf } from "../internal/sections.js"

/** @since 0.1.0 */
export { AdapterError }

const format = "OpenAI"

const texts = (message: AnyMessage): ReadonlyArray<string> =>
  message.parts.flatMap((part) => (part.type === "text" ? [part.text] : []))

const content = (parts: ReadonlyArray<string>): string | Array<ChatCompletionContentPartText> =>
  parts.length === 1 && parts[0] !== undefined ? parts[0] : parts.map((text) => ({ type: "text", text }))

/**
 * The parts Chat Completions cannot carry: provider-executed tool parts (they go back only to the
 * provider that ran them) and tool results made of more than text (a `tool` message takes text only).
 */
const refused = (index: number, message: AnyMessage): AdapterError | undefined => {
  for (const [partIndex, part] of message.parts.entries()) {
    if (part.type === "server_tool_call" || part.type === "server_tool_result") {
      return refuse(
        format,
        index,
        `parts[${partIndex}]`,
        `a ${part.type} part ran by ${part.provider} goes back only to it`
      )
    }
    if (part.type === "document" && part.source.type === "url") {
      return refuse(format, index, `parts[${partIndex}]`, "chat file parts take data, not a URL")
    }
    if (part.type === "text" && part.citations !== undefined) {
      return refuse(format, index, `parts[${partIndex}]`, "chat messages keep no citations")
    }
    if (part.type === "tool_result" && Message.toolResultContentOf(part).some((inner) => inner.type !== "text")) {
      return refuse(format, index, `parts[${partIndex}]`, "a tool message takes text only, not images or documents")
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
): Either.Either<Array<ChatCompletionMessageParam>, AdapterError> =>
  Either.map(
    convertAll(messages, (message, index): Either.Either<ReadonlyArray<ChatCompletionMessageParam>, AdapterError> => {
      const error = refused(index, message)
      return error === undefined ? Either.right(convertOne(message)) : Either.left(error)
    }),
    (converted) => [...converted]
  )

const convertOne = (message: AnyMessage): Array<ChatCompletionMessageParam> => {
  switch (message.role) {
    case "system":
      return [{ role: "system", content: content(texts(message)) }]
    case "user":
      return [{ role: "user", content: userContent(message) }]
    case "assistant": {
      const calls = Message.toolCallsOf(message).map(
        (call): ChatCompletionMessageToolCall => ({
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.input) }
        })
      )
      const text = texts(message)
      return [
        {
          role: "assistant",
          content: text.length === 0 ? null : content(text),
          ...(calls.length === 0 ? {} : { tool_calls: calls })
        }
      ]
    }
    case "tool":
      return Message.toolResultsOf(message).map((result) => ({
        role: "tool",
        tool_call_id: result.toolCallId,
        content: result.isError ? `${errorPrefix}${result.content}` : result.content
      }))
  }
}

/** A user message's content: text, or text, image and file parts in order. */
const userContent = (message: AnyMessage): string | Array<ChatCompletionContentPart> => {
  if (Message.mediaOf(message).length === 0) return content(texts(message))
  return message.parts.flatMap((part): Array<ChatCompletionContentPart> => {
    if (part.type === "text") return [{ type: "text", text: part.text }]
    if (part.type === "image") {
      return [
        {
          type: "image_url",
          image_url: { url: dataUrlOf(part.source), ...(part.detail === undefined ? {} : { detail: part.detail }) }
        }
      ]
    }
    if (part.type === "document") {
      return [
        {
          type: "file",
          file: {
            file_data: dataUrlOf(part.source),
            ...(part.title === undefined ? {} : { filename: part.title })
          }
        }
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
  readonly image_url?: { readonly url: string; readonly detail?: "auto" | "low" | "high" }
  readonly file?: { readonly file_data?: string; readonly filename?: string; readonly file_id?: string }
}

const textParts = (
  index: number,
  value: string | ReadonlyArray<ForeignPart> | null | undefined
): Either.Either<ReadonlyArray<Message.TextPart | Message.ImagePart | Message.DocumentPart>, AdapterError> => {
  if (value === null || value === undefined) return Either.right([])
  if (typeof value === "string") return Either.right(value.length === 0 ? [] : [Message.text(value)])
  return convertAll(
    value,
    (
      part,
      partIndex
    ): Either.Either<ReadonlyArray<Message.TextPart | Message.ImagePart | Message.DocumentPart>, AdapterError> => {
      if (part.type === "text" && typeof part.text === "string") return Either.right([Message.text(part.text)])
      if (part.type === "refusal") return Either.right([])
      if (part.type === "image_url" && part.image_url !== undefined) {
        const detail = part.image_url.detail
        return Either.right([
          { type: "image", source: sourceOfUrl(part.image_url.url), ...(detail === undefined ? {} : { detail }) }
        ])
      }
      if (part.type === "file" && part.file?.file_data !== undefined) {
        const title = part.file.filename
        return Either.right([
          { type: "document", source: sourceOfUrl(part.file.file_data), ...(title === undefined ? {} : { title }) }
        ])
      }
      return Either.left(refuse(format, index, `content[${partIndex}]`, `unsupported content part ${part.type}`))
    }
  )
}

const onlyText = (
  parts: ReadonlyArray<Message.TextPart | Message.ImagePart | Message.DocumentPart>
): ReadonlyArray<Message.TextPart> => parts.filter((part): part is Message.TextPart => part.type === "text")

/** OpenAI chat messages as ctxlog message inputs, ready for `ContextService.appendMessages`. @since 0.1.0 */
export const fromOpenAI = (
  messages: ReadonlyArray<ChatCompletionMessageParam>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
    switch (message.role) {
      case "system":
      case "developer":
        return Either.map(textParts(index, message.content), (parts) => [{ role: "system", parts: onlyText(parts) }])
      case "user":
        return Either.map(textParts(index, message.content), (parts) => [{ role: "user", parts }])
      case "assistant":
        return Either.flatMap(Either.map(textParts(index, message.content), onlyText), (parts) =>
          Either.map(
            convertAll(message.tool_calls ?? [], (call) =>
              call.type === "function"
                ? Either.map(parseArguments(format, index, call.function.arguments), (input) => [
                    Message.toolCall(call.id, call.function.name, input)
                  ])
                : Either.left(new AdapterError({ format, index, detail: `unsupported tool call type ${call.type}` }))
            ),
            (calls): ReadonlyArray<Message.MessageInput> => [{ role: "assistant", parts: [...parts, ...calls] }]
          )
        )
      case "tool":
        return Either.map(Either.map(textParts(index, message.content), onlyText), (parts) => {
          const text = parts.map((part) => part.text).join("\n")
          const isError = text.startsWith(errorPrefix)
          return [Message.tool(message.tool_call_id, isError ? text.slice(errorPrefix.length) : text, isError)]
        })
      case "function":
        return Either.left(new AdapterError({ format, index, detail: "legacy function messages are not supported" }))
    }
  })
