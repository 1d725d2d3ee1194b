/**
 * LangChain messages (`BaseMessage[]` of `@langchain/core`) ⇄ ctxlog messages, tool calls included.
 * LangChain messages are classes, so this subpath imports `@langchain/core/messages` at run time:
 * install `@langchain/core` (an optional peer) to use it.
 *
 * - A tool result's error flag is `ToolMessage.status: "error"`.
 * - LangChain tool-call `args` are objects: a ctxlog tool input that is not an object travels as
 *   `{ input: value }` and comes back as that object.
 * - Other message types (chat, function, remove) and non-text content blocks are an `AdapterError`.
 *
 * @since 0.1.0
 */
import { Message } from "@ctxlog/core"
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages"
import * as Either from "effect/Either"
import { AdapterError, type AnyMessage, convertAll, jsonInput } from "../AdapterError.js"

/** @since 0.1.0 */
export { AdapterError }

const format = "LangChain"

const isObject = (value: Message.JsonValue): value is { readonly [key: string]: Message.JsonValue } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const args = (input: Message.JsonValue): Record<string, Message.JsonValue> =>
  isObject(input) ? { ...input } : { input }

/** ctxlog messages (e.g. `[...window.system, ...window.history]`) as LangChain messages. @since 0.1.0 */
export const toLangChain = (messages: ReadonlyArray<AnyMessage>): Array<BaseMessage> =>
  // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch covers every role and each case returns
  messages.flatMap((message): Array<BaseMessage> => {
    switch (message.role) {
      case "system":
        return [new SystemMessage({ content: Message.textOf(message) })]
      case "user":
        return [new HumanMessage({ content: Message.textOf(message) })]
      case "assistant":
        return [
          new AIMessage({
            content: Message.textOf(message),
            tool_calls: Message.toolCallsOf(message).map((call) => ({
              type: "tool_call" as const,
              id: call.id,
              name: call.name,
              args: args(call.input)
            }))
          })
        ]
      case "tool":
        return Message.toolResultsOf(message).map(
          (result) =>
            new ToolMessage({
              content: result.content,
              tool_call_id: result.toolCallId,
              status: result.isError ? "error" : "success"
            })
        )
    }
  })

const textOf = (index: number, message: BaseMessage): Either.Either<string, AdapterError> => {
  if (typeof message.content === "string") return Either.right(message.content)
  return Either.map(
    convertAll(message.content, (block) =>
      block.type === "text" && "text" in block && typeof block.text === "string"
        ? Either.right([block.text])
        : block.type === "reasoning" || block.type === "thinking"
          ? Either.right([])
          : Either.left(new AdapterError({ format, index, detail: `unsupported content block ${block.type}` }))
    ),
    (parts) => parts.join("\n")
  )
}

const textParts = (text: string): ReadonlyArray<Message.TextPart> => (text.length === 0 ? [] : [Message.text(text)])

/** LangChain messages as ctxlog message inputs. @since 0.1.0 */
export const fromLangChain = (
  messages: ReadonlyArray<BaseMessage>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertAll(
    messages,
    (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
      Either.flatMap(
        textOf(index, message),
        (text): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
          if (SystemMessage.isInstance(message)) return Either.right([{ role: "system", parts: textParts(text) }])
          if (HumanMessage.isInstance(message)) return Either.right([{ role: "user", parts: textParts(text) }])
          if (ToolMessage.isInstance(message)) {
            return Either.right([Message.tool(message.tool_call_id, text, message.status === "error")])
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
                { role: "assistant", parts: [...textParts(text), ...calls] }
              ]
            )
          }
          return Either.left(new AdapterError({ format, index, detail: `unsupported message type ${message.type}` }))
        }
      )
  )
