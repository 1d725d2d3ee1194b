/**
 * Request shapes of the provider APIs, as documented: Anthropic Messages, OpenAI Chat Completions
 * (also spoken by Ollama `/v1`, vLLM and llama.cpp server) and OpenAI Responses.
 */
import type { Message } from "@ctxlog/core"

/** JSON object. */
export type JsonObject = { readonly [key: string]: Message.JsonValue }

// --- Anthropic Messages API -------------------------------------------------------------------

export interface CacheControl {
  readonly type: "ephemeral"
  readonly ttl?: "5m" | "1h"
}

export interface AnthropicTextBlock {
  readonly type: "text"
  readonly text: string
  readonly cache_control?: CacheControl
}

export interface AnthropicToolUseBlock {
  readonly type: "tool_use"
  readonly id: string
  readonly name: string
  readonly input: JsonObject
  readonly cache_control?: CacheControl
}

export interface AnthropicToolResultBlock {
  readonly type: "tool_result"
  readonly tool_use_id: string
  readonly content: string
  readonly is_error?: boolean
  readonly cache_control?: CacheControl
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicToolUseBlock | AnthropicToolResultBlock

export interface AnthropicMessage {
  readonly role: "user" | "assistant"
  readonly content: ReadonlyArray<AnthropicContentBlock>
}

export interface AnthropicTool {
  readonly name: string
  readonly description: string
  readonly input_schema: JsonObject
  readonly cache_control?: CacheControl
}

/** The memory tool: a client-side tool whose schema the API supplies. */
export interface AnthropicMemoryTool {
  readonly type: "memory_20250818"
  readonly name: "memory"
  readonly cache_control?: CacheControl
}

/** Context editing that clears old tool results (`context-management-2025-06-27` beta). */
export interface AnthropicClearToolUsesEdit {
  readonly type: "clear_tool_uses_20250919"
  readonly trigger?: { readonly type: "input_tokens"; readonly value: number }
  readonly keep?: { readonly type: "tool_uses"; readonly value: number }
  readonly clear_at_least?: { readonly type: "input_tokens"; readonly value: number }
  readonly exclude_tools?: ReadonlyArray<string>
  readonly clear_tool_inputs?: boolean
}

export interface AnthropicRequest {
  readonly model: string
  readonly max_tokens: number
  readonly temperature?: number
  readonly system?: ReadonlyArray<AnthropicTextBlock>
  readonly tools?: ReadonlyArray<AnthropicTool | AnthropicMemoryTool>
  readonly messages: ReadonlyArray<AnthropicMessage>
  readonly context_management?: { readonly edits: ReadonlyArray<AnthropicClearToolUsesEdit> }
  readonly stream: true
}

// --- OpenAI Chat Completions ------------------------------------------------------------------

export interface ChatToolCall {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; readonly arguments: string }
}

export type ChatMessage =
  | { readonly role: "system" | "developer"; readonly content: string }
  | { readonly role: "user"; readonly content: string }
  | { readonly role: "assistant"; readonly content: string | null; readonly tool_calls?: ReadonlyArray<ChatToolCall> }
  | { readonly role: "tool"; readonly tool_call_id: string; readonly content: string }

export interface ChatTool {
  readonly type: "function"
  readonly function: { readonly name: string; readonly description: string; readonly parameters: JsonObject }
}

export interface ChatCompletionsRequest {
  readonly model: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly tools?: ReadonlyArray<ChatTool>
  readonly max_tokens?: number
  readonly max_completion_tokens?: number
  readonly temperature?: number
  readonly stream: true
  readonly stream_options: { readonly include_usage: true }
}

// --- OpenAI Responses -------------------------------------------------------------------------

export type ResponsesInputItem =
  | {
      readonly type: "message"
      readonly role: "system" | "developer" | "user" | "assistant"
      readonly content: string
    }
  | { readonly type: "function_call"; readonly call_id: string; readonly name: string; readonly arguments: string }
  | { readonly type: "function_call_output"; readonly call_id: string; readonly output: string }

export interface ResponsesTool {
  readonly type: "function"
  readonly name: string
  readonly description: string
  readonly parameters: JsonObject
}

export interface ResponsesRequest {
  readonly model: string
  readonly input: ReadonlyArray<ResponsesInputItem>
  readonly tools?: ReadonlyArray<ResponsesTool>
  readonly max_output_tokens?: number
  readonly temperature?: number
  /** Continue the server-held conversation of that response: `input` holds only what came after it. */
  readonly previous_response_id?: string
  readonly store?: boolean
  /** Server-side compaction once the rendered prompt passes `compact_threshold` tokens. */
  readonly context_management?: ReadonlyArray<{ readonly type: "compaction"; readonly compact_threshold: number }>
  readonly stream: true
}
