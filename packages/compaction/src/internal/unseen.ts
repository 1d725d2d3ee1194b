/** Which tool results the model has not seen yet. */
import { Message } from "@ctxlog/core"

/**
 * Tool call ids whose results the model has not seen yet: every result after the last assistant
 * message of history. An assistant message after a result is the proof the model read it; a result
 * rendered once but never answered counts as unseen, which only protects it longer.
 */
export const unseenToolCallIds = (history: ReadonlyArray<Message.Message>): ReadonlySet<string> => {
  const unseen = new Set<string>()
  for (let index = history.length - 1; index >= 0; index--) {
    const message = history[index]
    if (message === undefined) continue
    if (message.role === "assistant") break
    for (const result of Message.toolResultsOf(message)) unseen.add(result.toolCallId)
  }
  return unseen
}

/** Ids of the history messages that hold a tool result the model has not seen yet. */
export const unseenMessageIds = (history: ReadonlyArray<Message.Message>): ReadonlySet<string> => {
  const unseen = unseenToolCallIds(history)
  return new Set(
    history
      .filter((message) => Message.toolResultsOf(message).some((result) => unseen.has(result.toolCallId)))
      .map((message) => message.id)
  )
}
