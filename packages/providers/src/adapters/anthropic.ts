/**
 * Anthropic Messages (`MessageParam[]` and the `system` blocks of the `@anthropic-ai/sdk`) ⇄ ctxlog
 * messages, tool calls included. Types only: the SDK is an optional peer, never loaded at run time.
 *
 * - System messages go to `system` (one text block each); the results of a tool round go into one user
 *   message (the API wants them together), each with `is_error` when the result is an error.
 * - `thinking` and `redacted_thinking` blocks become `reasoning` parts (signature or data kept) both
 *   ways; base64 and URL images become `image` parts both ways; documents and server-tool blocks
 *   coming in are an `AdapterError`, and a document going out is sent as its source.
 *
 * @since 0.1.0
 */
import type {
  ContentBlockParam,
  MessageParam,
  TextBlockParam,
  ToolResultBlockParam
} from "@anthropic-ai/sdk/resources/messages"
import { Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import { AdapterError, type AnyMessage, convertAll, jsonInput } from "../AdapterError.js"

/** @since 0.1.0 */
export { AdapterError }

/** A request's `system` and `messages`. @since 0.1.0 */
export interface AnthropicMessages {
  readonly system: Array<TextBlockParam>
  readonly messages: Array<MessageParam>
}

const format = "Anthropic"

const imageMediaTypes = ["image/jpeg", "image/png", "image/gif", "image/webp"] as const

const imageMediaType = (value: string): (typeof imageMediaTypes)[number] | undefined =>
  imageMediaTypes.find((known) => known === value)

/** ctxlog messages (e.g. `[...window.system, ...window.history]`) as Anthropic `system` + `messages`. @since 0.1.0 */
export const toAnthropic = (messages: ReadonlyArray<AnyMessage>): AnthropicMessages => {
  const system: Array<TextBlockParam> = []
  const out: Array<MessageParam> = []
  for (const message of messages) {
    if (message.role === "system") {
      system.push({ type: "text", text: Message.textOf(message) })
      continue
    }
    const blocks = message.parts.flatMap((part): ReadonlyArray<ContentBlockParam> => {
      if (part.type === "text") return [{ type: "text", text: part.text }]
      if (part.type === "tool_call") return [{ type: "tool_use", id: part.id, name: part.name, input: part.input }]
      if (part.type === "reasoning") {
        if (part.redactedData !== undefined) return [{ type: "redacted_thinking", data: part.redactedData }]
        return part.signature === undefined
          ? []
          : [{ type: "thinking", thinking: part.text, signature: part.signature }]
      }
      if (part.type === "image" || part.type === "document") {
        const source = part.source
        if (source.type === "url") return [{ type: part.type, source: { type: "url", url: source.url } }]
        if (part.type === "document") {
          return [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: source.data } }]
        }
        const mediaType = imageMediaType(source.mediaType)
        return mediaType === undefined
          ? [{ type: "text", text: `[image: ${source.mediaType}]` }]
          : [{ type: "image", source: { type: "base64", media_type: mediaType, data: source.data } }]
      }
      return [
        {
          type: "tool_result",
          tool_use_id: part.toolCallId,
          content: part.content,
          ...(part.isError ? { is_error: true } : {})
        }
      ]
    })
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
    out.push({ role, content: blocks })
  }
  return { system, messages: out }
}

const resultText = (index: number, block: ToolResultBlockParam): Either.Either<string, AdapterError> => {
  if (block.content === undefined) return Either.right("")
  if (typeof block.content === "string") return Either.right(block.content)
  return Either.map(
    convertAll(block.content, (part) =>
      part.type === "text"
        ? Either.right([part.text])
        : Either.left(new AdapterError({ format, index, detail: `unsupported tool result part ${part.type}` }))
    ),
    (parts) => parts.join("\n")
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
      const inputs: Array<Message.MessageInput> = []
      const own: Array<Message.Part> = []
      for (const block of message.content) {
        if (block.type === "text") own.push(Message.text(block.text))
        else if (block.type === "thinking") own.push(Message.reasoning(block.thinking, { signature: block.signature }))
        else if (block.type === "redacted_thinking") own.push(Message.reasoning("", { redactedData: block.data }))
        else if (block.type === "image" && block.source.type === "base64") {
          own.push(Message.imageBase64(block.source.media_type, block.source.data))
        } else if (block.type === "image" && block.source.type === "url") own.push(Message.imageUrl(block.source.url))
        else if (block.type === "tool_use" && message.role === "assistant") {
          const input = jsonInput(format, index, block.input)
          if (Either.isLeft(input)) return Either.left(input.left)
          own.push(Message.toolCall(block.id, block.name, input.right))
        } else if (block.type === "tool_result" && message.role === "user") {
          const text = resultText(index, block)
          if (Either.isLeft(text)) return Either.left(text.left)
          inputs.push(Message.tool(block.tool_use_id, text.right, block.is_error === true))
        } else {
          return Either.left(
            new AdapterError({ format, index, detail: `unsupported ${message.role} block ${block.type}` })
          )
        }
      }
      // Tool results answer the previous assistant turn, so they come before any new user text.
      return Either.right(own.length === 0 ? inputs : [...inputs, { role: message.role, parts: own }])
    }),
    (converted) => [...systemInputs, ...converted]
  )
}
