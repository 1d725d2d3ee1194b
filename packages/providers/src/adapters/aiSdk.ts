/**
 * Vercel AI SDK messages (`ModelMessage[]` of the `ai` package) ⇄ ctxlog messages, tool calls included.
 * Types only: `ai` is an optional peer, never loaded at run time.
 *
 * - A tool result's output is `{ type: "text" }`, or `{ type: "error-text" }` for an error; on the way
 *   in, `json` outputs are stringified and `content` outputs keep their text items.
 * - Reasoning parts are dropped on the way in (a window keeps no reasoning); images and files are an
 *   `AdapterError`.
 *
 * @since 0.1.0
 */
import { Message } from "@ctxlog/core"
import type { ModelMessage, TextPart, ToolCallPart, ToolResultPart } from "ai"
import * as Either from "effect/Either"
import { AdapterError, type AnyMessage, convertAll, jsonInput, toolNames } from "../AdapterError.js"

/** @since 0.1.0 */
export { AdapterError }

const format = "AI SDK"

/** ctxlog messages (e.g. `[...window.system, ...window.history]`) as AI SDK `ModelMessage`s. @since 0.1.0 */
export const toModelMessages = (messages: ReadonlyArray<AnyMessage>): Array<ModelMessage> => {
  const names = toolNames(messages)
  // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch covers every role and each case returns
  return messages.map((message): ModelMessage => {
    switch (message.role) {
      case "system":
        return { role: "system", content: Message.textOf(message) }
      case "user":
        return { role: "user", content: message.parts.flatMap((part) => (part.type === "text" ? [part] : [])) }
      case "assistant":
        return {
          role: "assistant",
          content: message.parts.flatMap(
            (part): Array<TextPart | ToolCallPart> =>
              part.type === "text"
                ? [{ type: "text", text: part.text }]
                : part.type === "tool_call"
                  ? [{ type: "tool-call", toolCallId: part.id, toolName: part.name, input: part.input }]
                  : []
          )
        }
      case "tool":
        return {
          role: "tool",
          content: Message.toolResultsOf(message).map(
            (result): ToolResultPart => ({
              type: "tool-result",
              toolCallId: result.toolCallId,
              toolName: names.get(result.toolCallId) ?? "unknown",
              output: { type: result.isError ? "error-text" : "text", value: result.content }
            })
          )
        }
    }
  })
}

const outputText = (index: number, output: ToolResultPart["output"]): Either.Either<string, AdapterError> => {
  switch (output.type) {
    case "text":
    case "error-text":
      return Either.right(output.value)
    case "json":
    case "error-json":
      // Checked before stringifying: a cycle, a BigInt or a deep nest is a typed error, not a throw.
      return Either.map(jsonInput(format, index, output.value), (value) => JSON.stringify(value))
    case "content":
      return Either.map(
        convertAll(output.value, (item) =>
          item.type === "text"
            ? Either.right([item.text])
            : Either.left(new AdapterError({ format, index, detail: `unsupported tool output item ${item.type}` }))
        ),
        (parts) => parts.join("\n")
      )
    default:
      return Either.left(new AdapterError({ format, index, detail: `unsupported tool output ${output.type}` }))
  }
}

type Part = Exclude<ModelMessage["content"], string>[number]

/** AI SDK `ModelMessage`s as ctxlog message inputs. @since 0.1.0 */
export const fromModelMessages = (
  messages: ReadonlyArray<ModelMessage>
): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> =>
  convertAll(messages, (message, index): Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError> => {
    if (typeof message.content === "string") {
      return Either.right([{ role: message.role, parts: [Message.text(message.content)] }])
    }
    const parts: Array<Message.Part> = []
    const results: Array<Message.MessageInput> = []
    const blocks: ReadonlyArray<Part> = message.content
    for (const part of blocks) {
      if (part.type === "text") parts.push(Message.text(part.text))
      else if (part.type === "reasoning") continue
      else if (part.type === "tool-call") {
        const input = jsonInput(format, index, part.input)
        if (Either.isLeft(input)) return Either.left(input.left)
        parts.push(Message.toolCall(part.toolCallId, part.toolName, input.right))
      } else if (part.type === "tool-result") {
        const text = outputText(index, part.output)
        if (Either.isLeft(text)) return Either.left(text.left)
        const isError = part.output.type === "error-text" || part.output.type === "error-json"
        results.push(Message.tool(part.toolCallId, text.right, isError))
      } else {
        return Either.left(new AdapterError({ format, index, detail: `unsupported ${message.role} part ${part.type}` }))
      }
    }
    return Either.right(parts.length === 0 ? results : [{ role: message.role, parts }, ...results])
  })
