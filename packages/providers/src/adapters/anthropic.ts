/**
 * Anthropic Messages (`MessageParam[]` and the `system` blocks of the `@anthropic-ai/sdk`) ⇄ ctxlog
 * messages. Types only: the SDK is an optional peer, never loaded at run time.
 *
 * - System messages go to `system` (one text block each); the results of a tool round go into one user
 *   message (the API wants them together), each with `is_error` when the result is an error.
 * - `thinking` and `redacted_thinking` blocks become `reasoning` parts (signature or data kept) both
 *   ways; images and documents (base64 PDF, plain text, URL; the title kept) become `image` /
 *   `document` parts both ways, and media the API does not take (a `video/mp4` image) is an
 *   `AdapterError` naming the part.
 * - A `tool_result` whose content is blocks becomes a tool result made of parts (text, images,
 *   documents) and goes back as the same blocks; text citations are kept both ways.
 * - Provider-executed tools (`server_tool_use` and the `*_tool_result` blocks that answer them) are
 *   `server_tool_call` / `server_tool_result` parts of provider `anthropic`; going out, server parts
 *   of another provider are an `AdapterError`. Tool approvals have no Anthropic form and are not sent.
 * - Refused coming in: `cache_control` and other request-side fields are not message content (cache
 *   hints are a render option: `BuildOptions.cacheHints`), so they are dropped; document `context` or
 *   `citations` settings, search results and container uploads are an `AdapterError`.
 *
 * @since 0.1.0
 */
import type {
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
  ToolResultBlockParam
} from "@anthropic-ai/sdk/resources/messages"
import { Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import { AdapterError, type AnyMessage, convertAll, isJson, jsonInput, refuse } from "../AdapterError.js"
import { mediaBlock } from "../internal/anthropicRender.js"
import type { AnthropicContentBlock } from "../ProviderRequest.js"

/** @since 0.1.0 */
export { AdapterError }

/** A request's `system` and `messages`. @since 0.1.0 */
export interface AnthropicMessages {
  readonly system: Array<TextBlockParam>
  readonly messages: Array<MessageParam>
}

const format = "Anthropic"

// Our wire shapes are the documented request shapes; the SDK types them the same way, with mutable
// arrays and closed unions of block types. One cast, here, instead of one per block kind.
const asParam = (block: AnthropicContentBlock): ContentBlockParam => block as unknown as ContentBlockParam

const textBlock = (part: Message.TextPart): ContentBlockParam =>
  asParam(
    part.citations === undefined || part.citations.length === 0
      ? { type: "text", text: part.text }
      : { type: "text", text: part.text, citations: part.citations }
  )

const media = (
  index: number,
  path: string,
  part: Message.ImagePart | Message.DocumentPart
): Either.Either<ContentBlockParam, AdapterError> =>
  Either.mapBoth(mediaBlock(part), { onLeft: (detail) => refuse(format, index, path, detail), onRight: asParam })

const partBlocks = (
  index: number,
  message: AnyMessage
): Either.Either<ReadonlyArray<ContentBlockParam>, AdapterError> =>
  convertAll(message.parts, (part, partIndex): Either.Either<ReadonlyArray<ContentBlockParam>, AdapterError> => {
    const path = `parts[${partIndex}]`
    switch (part.type) {
      case "text":
        return Either.right([textBlock(part)])
      case "tool_call":
        return Either.right([{ type: "tool_use", id: part.id, name: part.name, input: part.input }])
      case "reasoning":
        if (part.redactedData !== undefined)
          return Either.right([{ type: "redacted_thinking", data: part.redactedData }])
        return Either.right(
          part.signature === undefined ? [] : [{ type: "thinking", thinking: part.text, signature: part.signature }]
        )
      case "image":
      case "document":
        return Either.map(media(index, path, part), (block) => [block])
      case "tool_result": {
        const content = Message.toolResultContentOf(part)
        const only = content[0]
        const blocks =
          content.length === 1 && only?.type === "text" && only.citations === undefined
            ? Either.right<string | Array<ContentBlockParam>>(only.text)
            : Either.map(
                convertAll(content, (inner, innerIndex) =>
                  inner.type === "text"
                    ? Either.right([textBlock(inner)])
                    : Either.map(media(index, `${path}.parts[${innerIndex}]`, inner), (block) => [block])
                ),
                (list) => [...list]
              )
        return Either.map(
          blocks,
          (value): ReadonlyArray<ContentBlockParam> => [
            {
              type: "tool_result",
              tool_use_id: part.toolCallId,
              content: value as Exclude<ToolResultBlockParam["content"], undefined>,
              ...(part.isError ? { is_error: true as const } : {})
            }
          ]
        )
      }
      case "server_tool_call":
      case "server_tool_result":
        if (part.provider !== "anthropic") {
          return Either.left(
            refuse(format, index, path, `a ${part.type} part ran by ${part.provider} goes back only to it`)
          )
        }
        if (part.type === "server_tool_call") {
          return Either.right([asParam({ type: "server_tool_use", id: part.id, name: part.name, input: part.input })])
        }
        return part.resultType.endsWith("_tool_result") && part.resultType !== "tool_result"
          ? Either.right([
              asParam({
                type: part.resultType as `${string}_tool_result`,
                tool_use_id: part.toolCallId,
                content: part.content
              })
            ])
          : Either.left(
              refuse(format, index, path, `server tool result type ${part.resultType} is not an Anthropic block`)
            )
      case "tool_approval_request":
      case "tool_approval_response":
        return Either.right([])
    }
  })

/**
 * ctxlog messages (e.g. `[...window.system, ...window.history]`) as Anthropic `system` + `messages`,
 * or an `AdapterError` naming the part the API would refuse.
 * @since 0.1.0
 */
export const toAnthropic = (messages: ReadonlyArray<AnyMessage>): Either.Either<AnthropicMessages, AdapterError> => {
  const system: Array<TextBlockParam> = []
  const out: Array<MessageParam> = []
  for (const [index, message] of messages.entries()) {
    if (message.role === "system") {
      system.push({ type: "text", text: Message.textOf(message) })
      continue
    }
    const converted = partBlocks(index, message)
    if (Either.isLeft(converted)) return Either.left(converted.left)
    const blocks = [...converted.right]
    const role = message.role === "assistant" ? "assistant" : "user"
    const previous = out[out.length - 1]
    // Results of one round travel together, in the user message after the calls.
    if (
      message.role === "tool" &&
      previous !== undefined &&
      previous.role === "user" &&
      Array.isArray(previous.content)
    ) {
      const last = previous.content[previous.content.length - 1]
      if (last !== undefined && last.type === "tool_result") {
        previous.content.push(...blocks)
        continue
      }
    }
    if (blocks.length === 0) continue
    out.push({ role, content: blocks })
  }
  return Either.right({ system, messages: out })
}

const citationsOf = (
  index: number,
  path: string,
  block: TextBlockParam
): Either.Either<ReadonlyArray<Message.Citation> | undefined, AdapterError> => {
  const citations: ReadonlyArray<unknown> | null | undefined = block.citations
  if (citations === undefined || citations === null || citations.length === 0) return Either.right(undefined)
  return citations.every(
    (citation): citation is Message.Citation =>
      isJson(citation) && typeof citation === "object" && citation !== null && "type" in citation
  )
    ? Either.right(citations)
    : Either.left(refuse(format, index, path, "a citation is not JSON with a type"))
}

const textPart = (index: number, path: string, block: TextBlockParam): Either.Either<Message.TextPart, AdapterError> =>
  Either.map(citationsOf(index, path, block), (citations) =>
    citations === undefined ? Message.text(block.text) : { ...Message.text(block.text), citations }
  )

const encodeText = (text: string): string => {
  const bytes = new TextEncoder().encode(text)
  let binary = ""
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

const mediaPart = (
  index: number,
  path: string,
  block: ImageBlockParam | DocumentBlockParam
): Either.Either<Message.ImagePart | Message.DocumentPart, AdapterError> => {
  if (block.type === "image") {
    const source = block.source
    if (source.type === "base64") return Either.right(Message.imageBase64(source.media_type, source.data))
    if (source.type === "url") return Either.right(Message.imageUrl(source.url))
    return Either.left(refuse(format, index, path, `unsupported image source ${source.type}`))
  }
  if ((block.context ?? null) !== null || (block.citations ?? null) !== null) {
    return Either.left(refuse(format, index, path, "document context and citation settings are not kept"))
  }
  const extra = block.title === undefined || block.title === null ? {} : { title: block.title }
  const source = block.source
  switch (source.type) {
    case "base64":
      return Either.right(Message.documentBase64(source.media_type, source.data, extra))
    case "text":
      return Either.right(Message.documentBase64("text/plain", encodeText(source.data), extra))
    case "url":
      return Either.right(Message.documentUrl(source.url, extra))
    default:
      return Either.left(refuse(format, index, path, `unsupported document source ${source.type}`))
  }
}

const resultPart = (
  index: number,
  path: string,
  block: ToolResultBlockParam
): Either.Either<Message.ToolResultPart, AdapterError> => {
  const isError = block.is_error === true
  if (block.content === undefined) return Either.right(Message.toolResult(block.tool_use_id, "", isError))
  if (typeof block.content === "string")
    return Either.right(Message.toolResult(block.tool_use_id, block.content, isError))
  return Either.map(
    convertAll(
      block.content,
      (inner, innerIndex): Either.Either<ReadonlyArray<Message.ToolResultContent>, AdapterError> => {
        const where = `${path}.content[${innerIndex}]`
        if (inner.type === "text") return Either.map(textPart(index, where, inner), (part) => [part])
        if (inner.type === "image" || inner.type === "document") {
          return Either.map(mediaPart(index, where, inner), (part) => [part])
        }
        return Either.left(refuse(format, index, where, `unsupported tool result block ${inner.type}`))
      }
    ),
    (parts) => Message.toolResultParts(block.tool_use_id, parts, isError)
  )
}

/** Anthropic `messages` (and optional `system`) as ctxlog message inputs. @since 0.1.0 */
export const fromAnthropic = (
  messages: ReadonlyArray<MessageParam>,
  system?: string | ReadonlyArray<TextBlockParam>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
  const systemInputs: ReadonlyArray<Message.MessageInput> =
    system === undefined
      ? []
      : typeof system === "string"
        ? [Message.system(system)]
        : system.map((block) => Message.system(block.text))
  return Either.map(
    convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
      if (typeof message.content === "string") {
        return Either.right([{ role: message.role, parts: [Message.text(message.content)] }])
      }
      const results: Array<Message.ToolResultPart> = []
      const own: Array<Message.Part> = []
      for (const [blockIndex, block] of message.content.entries()) {
        const path = `content[${blockIndex}]`
        const push = (converted: Either.Either<Message.Part, AdapterError>) => {
          if (Either.isLeft(converted)) return converted.left
          own.push(converted.right)
          return undefined
        }
        let failed: AdapterError | undefined
        if (block.type === "text") failed = push(textPart(index, path, block))
        else if (block.type === "thinking") own.push(Message.reasoning(block.thinking, { signature: block.signature }))
        else if (block.type === "redacted_thinking") own.push(Message.reasoning("", { redactedData: block.data }))
        else if (block.type === "image" || block.type === "document") failed = push(mediaPart(index, path, block))
        else if (block.type === "tool_use" && message.role === "assistant") {
          failed = push(
            Either.map(jsonInput(format, index, block.input), (input) => Message.toolCall(block.id, block.name, input))
          )
        } else if (block.type === "server_tool_use" && message.role === "assistant") {
          failed = push(
            Either.map(jsonInput(format, index, block.input), (input) =>
              Message.serverToolCall("anthropic", block.id, block.name, input)
            )
          )
        } else if (
          message.role === "assistant" &&
          block.type !== "tool_result" &&
          block.type.endsWith("_tool_result") &&
          "tool_use_id" in block &&
          "content" in block
        ) {
          const content: unknown = block.content
          failed = isJson(content)
            ? push(Either.right(Message.serverToolResult("anthropic", block.tool_use_id, block.type, content)))
            : refuse(format, index, path, "server tool result content is not JSON")
        } else if (block.type === "tool_result" && message.role === "user") {
          const result = resultPart(index, path, block)
          if (Either.isLeft(result)) return Either.left(result.left)
          results.push(result.right)
        } else {
          failed = refuse(format, index, path, `unsupported ${message.role} block ${block.type}`)
        }
        if (failed !== undefined) return Either.left(failed)
      }
      const inputs: ReadonlyArray<Message.MessageInput> = results.map((result) => ({ role: "tool", parts: [result] }))
      // Tool results answer the previous assistant turn, so they come before any new user text.
      return Either.right(own.length === 0 ? inputs : [...inputs, { role: message.role, parts: own }])
    }),
    (converted) => [...systemInputs, ...converted]
  )
}
