/**
 * OpenAI Chat Completions messages (`ChatCompletionMessageParam[]` of the `openai` SDK) ⇄ ctxlog messages,
 * tool calls included. Types only: the `openai` package is an optional peer, never loaded at run time.
 *
 * - A tool result's error flag has no field in this API: `toOpenAI` prefixes the content with
 *   `[tool error] ` (as the OpenAI renderer does) and `fromOpenAI` reads the prefix back.
 * - `developer` messages become system messages; images, audio and files are an `AdapterError`.
 *
 * @since 0.1.0
 */
import { Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import type {
  ChatCompletionContentPartText,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall
} from "openai/resources/chat/completions"
import { AdapterError, type AnyMessage, convertAll, parseArguments } from "../AdapterError.js"
import { errorPrefix } from "../internal/chatRender.js"

/** @since 0.1.0 */
export { AdapterError }

const format = "OpenAI"

const texts = (message: AnyMessage): ReadonlyArray<string> =>
  message.parts.flatMap((part) => (part.type === "text" ? [part.text] : []))

const content = (parts: ReadonlyArray<string>): string | Array<ChatCompletionContentPartText> =>
  parts.length === 1 && parts[0] !== undefined ? parts[0] : parts.map((text) => ({ type: "text", text }))

/** ctxlog messages (e.g. `[...window.system, ...window.history]`) as OpenAI chat messages. @since 0.1.0 */
export const toOpenAI = (messages: ReadonlyArray<AnyMessage>): Array<ChatCompletionMessageParam> =>
  // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch covers every role and each case returns
  messages.flatMap((message): Array<ChatCompletionMessageParam> => {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: content(texts(message)) }]
      case "user":
        return [{ role: "user", content: content(texts(message)) }]
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
  })

const textParts = (
  index: number,
  value: string | ReadonlyArray<{ readonly type: string; readonly text?: string }> | null | undefined
): Either.Either<ReadonlyArray<Message.TextPart>, AdapterError> => {
  if (value === null || value === undefined) return Either.right([])
  if (typeof value === "string") return Either.right(value.length === 0 ? [] : [Message.text(value)])
  return convertAll(value, (part) =>
    part.type === "text" && typeof part.text === "string"
      ? Either.right([Message.text(part.text)])
      : part.type === "refusal"
        ? Either.right([])
        : Either.left(new AdapterError({ format, index, detail: `unsupported content part ${part.type}` }))
  )
}

/** OpenAI chat messages as ctxlog message inputs, ready for `ContextService.appendMessages`. @since 0.1.0 */
export const fromOpenAI = (
  messages: ReadonlyArray<ChatCompletionMessageParam>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
    switch (message.role) {
      case "system":
      case "developer":
        return Either.map(textParts(index, message.content), (parts) => [{ role: "system", parts }])
      case "user":
        return Either.map(textParts(index, message.content), (parts) => [{ role: "user", parts }])
      case "assistant":
        return Either.flatMap(textParts(index, message.content), (parts) =>
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
        return Either.map(textParts(index, message.content), (parts) => {
          const text = parts.map((part) => part.text).join("\n")
          const isError = text.startsWith(errorPrefix)
          return [Message.tool(message.tool_call_id, isError ? text.slice(errorPrefix.length) : text, isError)]
        })
      case "function":
        return Either.left(new AdapterError({ format, index, detail: "legacy function messages are not supported" }))
    }
  })
