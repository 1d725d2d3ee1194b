/**
 * Server-side context management as request fields: Anthropic context editing
 * (`context_management.edits`: `clear_thinking_20251015`, `clear_tool_uses_20250919`) and the memory tool; OpenAI Responses `previous_response_id` chains,
 * `store` and server compaction (`context_management: [{ type: "compaction", compact_threshold }]`).
 * With `store: false` the request also asks for `include: ["reasoning.encrypted_content"]`: the
 * server keeps nothing, so reasoning items can only go back with their encrypted content.
 * Applied after the render, so the render itself (and its validation) is the same with or without.
 */
// Request bodies: an optional key is spread, so the body (hashed, and compared whole in the golden
// tests) never carries an undefined one.
import type { WindowEvent } from "@ctxlog/core"
import type {
  AnthropicClearThinkingEdit,
  AnthropicClearToolUsesEdit,
  AnthropicRequest,
  ResponsesInputItem,
  ResponsesRequest
} from "../ProviderRequest.js"

/** The beta the Messages API needs for context editing and the memory tool. */
export const contextManagementBeta = "context-management-2025-06-27"

const clearToolUses = (settings: WindowEvent.ClearToolUses): AnthropicClearToolUsesEdit => ({
  type: "clear_tool_uses_20250919",
  ...(settings.triggerInputTokens === undefined
    ? {}
    : { trigger: { type: "input_tokens", value: settings.triggerInputTokens } }),
  ...(settings.keepToolUses === undefined ? {} : { keep: { type: "tool_uses", value: settings.keepToolUses } }),
  ...(settings.clearAtLeastInputTokens === undefined
    ? {}
    : { clear_at_least: { type: "input_tokens", value: settings.clearAtLeastInputTokens } }),
  ...(settings.excludeTools === undefined ? {} : { exclude_tools: settings.excludeTools }),
  ...(settings.clearToolInputs === undefined ? {} : { clear_tool_inputs: settings.clearToolInputs })
})

const clearThinking = (settings: WindowEvent.ClearThinking): AnthropicClearThinkingEdit => ({
  type: "clear_thinking_20251015",
  ...(settings.keepThinkingTurns === undefined
    ? {}
    : {
        keep:
          settings.keepThinkingTurns === "all"
            ? ("all" as const)
            : { type: "thinking_turns" as const, value: settings.keepThinkingTurns }
      })
})

/**
 * The Anthropic request with context editing and the memory tool, as asked. Thinking clearing goes
 * first in `edits`: Anthropic requires it first when strategies are combined.
 */
export const anthropic = (
  request: AnthropicRequest,
  context: WindowEvent.ServerContext | undefined
): AnthropicRequest => {
  if (context === undefined) return request
  const tools =
    context.memoryTool === true
      ? [...(request.tools ?? []), { type: "memory_20250818", name: "memory" } as const]
      : request.tools
  const edits = [
    ...(context.clearThinking === undefined ? [] : [clearThinking(context.clearThinking)]),
    ...(context.clearToolUses === undefined ? [] : [clearToolUses(context.clearToolUses)])
  ]
  return {
    ...request,
    ...(tools === undefined ? {} : { tools }),
    ...(edits.length === 0 ? {} : { context_management: { edits } })
  }
}

/** Whether a request needs the context-management beta header. */
export const needsBeta = (request: AnthropicRequest): boolean =>
  request.context_management !== undefined ||
  (request.tools ?? []).some((tool) => "type" in tool && tool.type === "memory_20250818")

const isModelOutput = (item: ResponsesInputItem): boolean =>
  item.type === "function_call" || (item.type === "message" && item.role === "assistant")

/**
 * The Responses request with a `previous_response_id` chain, `store` and server compaction. A chained
 * request sends only the items after the model's last output: the server holds everything before it.
 */
export const responses = (
  request: ResponsesRequest,
  context: WindowEvent.ServerContext | undefined
): ResponsesRequest => {
  if (context === undefined) return request
  let input = request.input
  if (context.previousResponseId !== undefined) {
    const last = input.findLastIndex(isModelOutput)
    if (last >= 0) input = input.slice(last + 1)
  }
  const { stream, ...rest } = request
  return {
    ...rest,
    input,
    ...(context.previousResponseId === undefined ? {} : { previous_response_id: context.previousResponseId }),
    ...(context.store === undefined ? {} : { store: context.store }),
    ...(context.store === false ? { include: ["reasoning.encrypted_content"] as const } : {}),
    ...(context.compactThreshold === undefined
      ? {}
      : { context_management: [{ type: "compaction", compact_threshold: context.compactThreshold }] }),
    stream
  }
}
