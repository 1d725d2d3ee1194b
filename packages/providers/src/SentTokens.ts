/**
 * What a builder leaves out of what the window counts (issue 37, "count what is sent"). The log counts a
 * message once, when it enters (`TokenCounter.countMessage`): its reasoning too. A builder sends back only
 * the reasoning its provider takes back — Anthropic thinking with its signature (or redacted data), a
 * Responses reasoning item with its id, nothing at all on Chat Completions, Ollama or a generic server —
 * and only ahead of text or tool calls. Chat Completions tool messages take text only: an image or a
 * document a tool returned is named in a line, not sent. The rest is counted and never sent: a budget
 * compared against the count fills early. Each builder names what it drops here ({@link Drops}), and its
 * render's stats (`BuildStats.unsentTokens`, `BuildStats.total`), the turn's tiers and its fit all take
 * these tokens off.
 *
 * A message's unsent reasoning is its counted tokens (less the per-message overhead) in proportion of the
 * characters of the reasoning dropped to the characters the counter counted; dropped tool-result media are
 * priced by OpenAI's formula (the chat builders' providers; `MediaTokens`). No counter is needed (a builder
 * is pure), and each message is weighed once (kept by identity: messages never change), so a render costs
 * a lookup per message and the weighing of the messages new since the last one.
 *
 * @since 0.8.0
 */
import { Caches, MediaTokens, Message, TokenCounter, type Window } from "@ctxlog/core"

/**
 * Which reasoning a builder sends back: `signed` (Anthropic: a signature or redacted data), `item`
 * (OpenAI Responses: a reasoning item id), `item-or-encrypted` (OpenAI Responses with stateless reasoning:
 * an item id or `encrypted_content`), `none` (Chat Completions, Ollama, generic servers).
 * @since 0.8.0
 */
export type ReasoningRule = "signed" | "item" | "item-or-encrypted" | "none"

/** Whether a rule sends this reasoning part back (ahead of a message that sends text or tool calls). @since 0.8.0 */
export const sendsReasoning = (rule: ReasoningRule, part: Message.ReasoningPart): boolean => {
  switch (rule) {
    case "signed":
      return (
        (part.redactedData !== undefined && part.redactedData.length > 0) ||
        (part.signature !== undefined && part.signature.length > 0)
      )
    case "item":
      return part.itemId !== undefined
    case "item-or-encrypted":
      return part.itemId !== undefined || (part.encryptedContent !== undefined && part.encryptedContent.length > 0)
    case "none":
      return false
  }
}

/**
 * What a builder drops of what the window counts: reasoning by its {@link ReasoningRule}; media inside tool
 * results when its tool messages take text only (Chat Completions, Ollama, generic servers).
 * @since 0.8.0
 */
export interface Drops {
  readonly reasoning: ReasoningRule
  readonly toolResultMedia: boolean
}

/** What a builder sends of a message besides reasoning: text, tool calls. Reasoning alone goes nowhere. */
const carriesOutput = (message: Message.Message): boolean =>
  message.parts.some((part) => (part.type === "text" && part.text.length > 0) || part.type === "tool_call")

// One weak memo per drop rules (4 reasoning rules x 2 media rules: the 8 the LRU holds, so none leaves).
const weighed = Caches.lru<string, WeakMap<Message.Message, number>>("providers.SentTokens.weighed", 8)
const weighedFor = (drops: Drops): WeakMap<Message.Message, number> => {
  const key = `${drops.reasoning}/${drops.toolResultMedia}`
  let found = weighed.peek(key)
  if (found === undefined) {
    found = new WeakMap()
    weighed.set(key, found)
  }
  return found
}

/** Media inside the tool results of a message, priced by OpenAI's formula, at most what the message counts. */
const toolResultMediaOf = (message: Message.Message): number => {
  const results = message.parts.filter((part) => part.type === "tool_result" && (part.parts?.length ?? 0) > 0)
  if (results.length === 0) return 0
  const media = MediaTokens.mediaTokensOf(results, "openai", (text) => TokenCounter.estimate(text))
  return Math.min(Math.max(0, message.tokens - TokenCounter.messageOverhead), media)
}

/**
 * The tokens of a message its builder does not send: for an assistant message, its counted tokens
 * (overhead aside) times the share of the counted characters that are reasoning the rule drops; for a
 * tool message, the media of its results when the builder drops them. 0 otherwise.
 * @since 0.8.0
 */
export const unsentOfMessage = (drops: Drops, message: Message.Message): number => {
  if (message.role === "tool") return drops.toolResultMedia ? 0 : toolResultMediaOf(message)
  if (message.role !== "assistant") return 0
  const memo = weighedFor(drops)
  const known = memo.get(message)
  if (known !== undefined) return known
  const rule = drops.reasoning
  let dropped = 0
  let reasoning = false
  const output = carriesOutput(message)
  for (const part of message.parts) {
    if (part.type !== "reasoning") continue
    reasoning = true
    if (!output || !sendsReasoning(rule, part)) dropped += part.text.length
  }
  let unsent = 0
  if (reasoning && dropped > 0) {
    const counted = Message.tokenTextOf(message).length
    const textTokens = Math.max(0, message.tokens - TokenCounter.messageOverhead)
    unsent = counted === 0 ? 0 : Math.min(textTokens, Math.round((textTokens * dropped) / counted))
  }
  memo.set(message, unsent)
  return unsent
}

/**
 * The tokens of a window its builder does not send: the history's reasoning the rule drops. With
 * `currentOnly` (Anthropic `thinking: "current"`) signed reasoning is sent only in the turn whose tool
 * calls the request answers (the last assistant message, when only tool results follow it).
 * @since 0.8.0
 */
export const unsentTokens = (drops: Drops, window: Window.Window, currentOnly = false): number => {
  const history = window.history
  const rule = drops.reasoning
  const effective: Drops = currentOnly ? { ...drops, reasoning: "none" } : drops
  let total = 0
  for (const message of history) {
    if (message.role === "assistant" || (message.role === "tool" && !drops.toolResultMedia)) {
      total += unsentOfMessage(effective, message)
    }
  }
  if (currentOnly && rule !== "none") {
    // The current turn: the last assistant message with tool calls, followed by tool results only.
    for (let index = history.length - 1; index >= 0; index--) {
      const message = history[index]
      if (message === undefined) break
      if (message.role === "tool") continue
      if (message.role === "assistant" && Message.toolCallsOf(message).length > 0) {
        total -= unsentOfMessage(effective, message) - unsentOfMessage(drops, message)
      }
      break
    }
  }
  return total
}
