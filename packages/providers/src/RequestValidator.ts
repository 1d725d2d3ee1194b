/**
 * The request validator every builder runs: first on the window's history (provider-neutral tool
 * pairing), then on the rendered request (the adjacency rules of each API). An invalid window is a
 * typed {@link InvalidRequest} naming the message or tool call, never a request the provider rejects.
 *
 * @since 0.1.0
 */
import { Message, ToolPairs } from "@ctxlog/core"
import * as Either from "effect/Either"
import { type InvalidRequest, make as invalid } from "./InvalidRequest.js"
import type { AnthropicRequest, ChatCompletionsRequest, ChatMessage, ResponsesRequest } from "./ProviderRequest.js"

/** Anthropic's limit on `cache_control` breakpoints in one request. @since 0.1.0 */
export const maxCacheBreakpoints = 4

/** Tool use ids the Messages API accepts. @since 0.1.0 */
export const anthropicIdPattern = /^[a-zA-Z0-9_-]+$/

const ok: Either.Either<void, InvalidRequest> = Either.right(undefined)

/**
 * Provider-neutral checks on history: no result without an earlier call, no call answered twice, no
 * completed call whose result left the window, and no call still waiting for its result.
 * @since 0.1.0
 */
export const history = (
  provider: string,
  messages: ReadonlyArray<Message.Message>,
  completedToolIds: ReadonlyArray<string> = []
): Either.Either<void, InvalidRequest> => {
  const problem = ToolPairs.problems(messages, completedToolIds)[0]
  if (problem !== undefined) {
    const detail =
      problem._tag === "OrphanResult"
        ? "tool result has no earlier tool call in the window (was the call trimmed away?)"
        : problem._tag === "DuplicateResult"
          ? "tool call is answered more than once"
          : "tool call lost its result (the result left the window but the call stayed)"
    return Either.left(invalid(provider, detail, problem))
  }
  const pending = ToolPairs.pendingCalls(messages)[0]
  if (pending !== undefined) {
    const owner = messages.find((message) => Message.toolCallsOf(message).some((call) => call.id === pending))
    return Either.left(
      invalid(provider, "tool call has no result yet: append its result before rendering", {
        messageId: owner?.id,
        toolCallId: pending
      })
    )
  }
  for (const message of messages) {
    if (Message.toolCallsOf(message).length > 0 && message.role !== "assistant") {
      return Either.left(invalid(provider, "only assistant messages can make tool calls", { messageId: message.id }))
    }
  }
  return ok
}

/** Count `cache_control` markers anywhere in an Anthropic request. @since 0.1.0 */
export const cacheControlCount = (request: AnthropicRequest): number =>
  (request.system ?? []).filter((block) => block.cache_control !== undefined).length +
  (request.tools ?? []).filter((tool) => tool.cache_control !== undefined).length +
  request.messages.reduce(
    (total, message) => total + message.content.filter((block) => block.cache_control !== undefined).length,
    0
  )

/**
 * The Messages API rules: at least one message, roles alternate, every `tool_use` is answered in the
 * very next (user) message and every `tool_result` answers a `tool_use` of the message right before,
 * tool results lead their message, no empty text, at most 4 cache breakpoints; `thinking` and
 * `redacted_thinking` blocks only in assistant messages, before their text and tool_use blocks,
 * with their signature (or data) and no `cache_control` (an error names `messages[i].content[j]`).
 * @since 0.1.0
 */
export const anthropic = (request: AnthropicRequest): Either.Either<void, InvalidRequest> => {
  const fail = (detail: string, toolCallId?: string) =>
    Either.left(invalid("anthropic", detail, { toolCallId, messageId: undefined }))
  if (request.messages.length === 0) return fail("a request needs at least one message")
  if (request.thinking !== undefined) {
    const budget = request.thinking.budget_tokens
    if (!Number.isInteger(budget) || budget < 1024 || budget >= request.max_tokens) {
      return fail(`thinking budget_tokens ${budget} must be an integer, at least 1024 and below max_tokens`)
    }
  }
  const breakpoints = cacheControlCount(request)
  if (breakpoints > maxCacheBreakpoints) {
    return fail(`${breakpoints} cache_control breakpoints (the API allows ${maxCacheBreakpoints})`)
  }
  const seenIds = new Set<string>()
  for (let index = 0; index < request.messages.length; index++) {
    const problem = anthropicMessage(request.messages, index, seenIds)
    if (problem !== undefined) return problem
  }
  return ok
}

/**
 * The Messages API rules for message `index` (its neighbours included); `seenIds` holds the tool_use
 * ids of the messages before it and gets this message's. Undefined when it passes.
 * @since 0.2.0
 */
export const anthropicMessage = (
  messages: AnthropicRequest["messages"],
  index: number,
  seenIds: Set<string>
): Either.Either<never, InvalidRequest> | undefined => {
  const fail = (detail: string, toolCallId?: string) =>
    Either.left(invalid("anthropic", detail, { toolCallId, messageId: undefined }))
  const message = messages[index]
  if (message === undefined) return undefined
  const previous = index > 0 ? messages[index - 1] : undefined
  const next = messages[index + 1]
  if (previous !== undefined && previous.role === message.role) {
    return fail(`messages #${index} and #${index + 1} both have role "${message.role}"`)
  }
  if (message.content.length === 0) return fail(`message #${index + 1} has no content`)
  let leading = true
  let beforeThinking = true
  for (const [blockIndex, block] of message.content.entries()) {
    if (block.type === "thinking" || block.type === "redacted_thinking") {
      const at = { messageIndex: index, blockIndex, messageId: undefined }
      if (message.role !== "assistant") {
        return Either.left(invalid("anthropic", `${block.type} block outside an assistant message`, at))
      }
      if (!beforeThinking) {
        return Either.left(
          invalid("anthropic", `${block.type} block after text or tool_use: thinking must lead its message`, at)
        )
      }
      if (block.type === "thinking" && block.signature.length === 0) {
        return Either.left(invalid("anthropic", "thinking block without its signature", at))
      }
      if (block.type === "redacted_thinking" && block.data.length === 0) {
        return Either.left(invalid("anthropic", "redacted_thinking block without its data", at))
      }
      if ("cache_control" in block) {
        return Either.left(invalid("anthropic", `${block.type} block cannot carry cache_control`, at))
      }
      continue
    }
    beforeThinking = false
    if (block.type === "text" && block.text.trim().length === 0) {
      return fail(`message #${index + 1} has an empty (or whitespace-only) text block`)
    }
    if (block.type === "tool_use") {
      if (message.role !== "assistant") return fail("tool_use outside an assistant message", block.id)
      if (!anthropicIdPattern.test(block.id)) {
        return fail("tool_use id must match ^[a-zA-Z0-9_-]+$ for the Messages API", block.id)
      }
      if (seenIds.has(block.id)) return fail("tool_use id is used twice", block.id)
      seenIds.add(block.id)
      const answered = next?.content.some((item) => item.type === "tool_result" && item.tool_use_id === block.id)
      if (answered !== true) return fail("tool_use is not answered by a tool_result in the next message", block.id)
    }
    if (block.type === "tool_result") {
      if (message.role !== "user") return fail("tool_result outside a user message", block.tool_use_id)
      if (!leading) return fail("tool_result blocks must come before other content", block.tool_use_id)
      const asked = previous?.content.some((item) => item.type === "tool_use" && item.id === block.tool_use_id)
      if (asked !== true) {
        return fail("tool_result does not answer a tool_use of the previous message", block.tool_use_id)
      }
    } else {
      leading = false
    }
  }
  return undefined
}

const callIdsOf = (message: ChatMessage): ReadonlyArray<string> =>
  message.role === "assistant" ? (message.tool_calls ?? []).map((call) => call.id) : []

/**
 * The Chat Completions rules: each `tool` message follows the assistant message whose `tool_calls`
 * holds its id, with only `tool` messages between; every tool call is answered before the next
 * non-tool message; no call is answered twice.
 * @since 0.1.0
 */
export const chatCompletions = (
  request: ChatCompletionsRequest,
  provider = "openai"
): Either.Either<void, InvalidRequest> => {
  const fail = (detail: string, toolCallId?: string) =>
    Either.left(invalid(provider, detail, { toolCallId, messageId: undefined }))
  if (request.messages.length === 0) return fail("a request needs at least one message")
  let open = new Set<string>()
  let owner = -1
  for (const [index, message] of request.messages.entries()) {
    if (message.role === "tool") {
      if (!open.has(message.tool_call_id)) {
        return fail(
          `tool message #${index + 1} does not follow the assistant message with its tool call`,
          message.tool_call_id
        )
      }
      open.delete(message.tool_call_id)
      continue
    }
    const missing = [...open][0]
    if (missing !== undefined) {
      return fail(`tool call of message #${owner + 1} is not answered before message #${index + 1}`, missing)
    }
    open = new Set(callIdsOf(message))
    owner = index
  }
  const missing = [...open][0]
  if (missing !== undefined) return fail(`tool call of message #${owner + 1} is never answered`, missing)
  return ok
}

/**
 * The Responses rules: every `function_call_output` comes after the `function_call` with its
 * `call_id`, once; every `function_call` is answered before the next message item; a `reasoning`
 * item is followed by the `function_call` or assistant message it led to.
 * @since 0.1.0
 */
export const responses = (request: ResponsesRequest): Either.Either<void, InvalidRequest> => {
  const fail = (detail: string, toolCallId?: string) =>
    Either.left(invalid("openai-responses", detail, { toolCallId, messageId: undefined }))
  if (request.input.length === 0) return fail("a request needs at least one input item")
  const open = new Set<string>()
  const seen = new Set<string>()
  for (const [index, item] of request.input.entries()) {
    if (item.type === "reasoning") {
      const following = request.input[index + 1]
      const answered =
        following !== undefined &&
        (following.type === "function_call" || (following.type === "message" && following.role === "assistant"))
      if (!answered) {
        return Either.left(
          invalid("openai-responses", "reasoning item is not followed by the function_call or message it led to", {
            messageIndex: index
          })
        )
      }
    }
    if (item.type === "function_call") {
      if (seen.has(item.call_id)) return fail("function_call id is used twice", item.call_id)
      seen.add(item.call_id)
      open.add(item.call_id)
    } else if (item.type === "function_call_output") {
      if (!open.has(item.call_id)) return fail("function_call_output has no open function_call", item.call_id)
      open.delete(item.call_id)
    } else {
      const missing = [...open][0]
      if (missing !== undefined) return fail("function_call is not answered before the next message", missing)
    }
  }
  const missing = [...open][0]
  if (missing !== undefined) return fail("function_call is never answered", missing)
  return ok
}
