/**
 * A LangChain message of a `messages` channel as a ctxlog window message: converted by
 * `@ctxlog/providers/langchain` (ids, names, text blocks, reasoning and tool calls kept, the fields ctxlog
 * does not model under `providerOptions.langchain`), its tokens counted
 * once here. A message the adapter refuses (a block LangChain-to-ctxlog cannot carry) still enters the
 * window, as text naming what it holds, so the window's conversation has no holes; the exact message is
 * in the checkpoint's own value.
 */
import { Message, type TokenCounter } from "@ctxlog/core"
import { fromLangChain } from "@ctxlog/providers/langchain"
import { type BaseMessage, isBaseMessage as isLangChainMessage } from "@langchain/core/messages"
import * as Either from "effect/Either"

/** Whether a value is a LangChain message. */
export const isBaseMessage = (value: unknown): value is BaseMessage => isLangChainMessage(value)

const roleOf = (message: BaseMessage): Message.Role => {
  switch (message.getType()) {
    case "system":
    case "developer":
      return "system"
    case "ai":
      return "assistant"
    default:
      return "user"
  }
}

/** The window message for a LangChain message (`fallbackId` when it has no id). */
export const toWindowMessage = (
  value: unknown,
  fallbackId: string,
  counter: TokenCounter.TokenCounter.Service
): Message.Message => {
  const id = isBaseMessage(value) && typeof value.id === "string" && value.id !== "" ? value.id : fallbackId
  const converted = isBaseMessage(value) ? fromLangChain([value]) : undefined
  const input =
    converted !== undefined && Either.isRight(converted) && converted.right.length === 1
      ? converted.right[0]
      : undefined
  if (input !== undefined) {
    return {
      id,
      role: input.role,
      kind: "chat",
      parts: input.parts,
      // An event: an undefined key would make the live window differ from its replay.
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.providerOptions === undefined ? {} : { providerOptions: input.providerOptions }),
      tokens: counter.countMessage(input)
    }
  }
  const role = isBaseMessage(value) ? roleOf(value) : "user"
  const detail =
    converted !== undefined && Either.isLeft(converted) ? converted.left.message : "not a LangChain message"
  const content = isBaseMessage(value) ? value.content : value
  const parts = [Message.text(`[${detail}] ${typeof content === "string" ? content : JSON.stringify(content)}`)]
  return { id, role, kind: "chat", parts, tokens: counter.countMessage({ parts }) }
}
