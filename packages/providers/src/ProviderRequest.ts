/**
 * Request shapes of the provider APIs, as documented: Anthropic Messages, OpenAI Chat Completions
 * (also spoken by Ollama `/v1`, vLLM and llama.cpp server) and OpenAI Responses. The builders render
 * them; `AnthropicCtx`, `OpenAICtx` and `DefaultCtx` re-export the ones a caller handles.
 *
 * @since 0.1.0
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
  /** Citations as the API gave them (sent back unchanged). */
  readonly citations?: ReadonlyArray<JsonObject>
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
  /** Text, or text, image and document blocks when the result is made of parts. */
  readonly content: string | ReadonlyArray<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock>
  readonly is_error?: boolean
  readonly cache_control?: CacheControl
}

/** A thinking block, sent back exactly as the API returned it (`signature` byte for byte). */
export interface AnthropicThinkingBlock {
  readonly type: "thinking"
  readonly thinking: string
  readonly signature: string
  /** The API refuses a breakpoint on a thinking block. */
  readonly cache_control?: never
}

/** A redacted thinking block: the API's encrypted `data`, sent back unchanged. */
export interface AnthropicRedactedThinkingBlock {
  readonly type: "redacted_thinking"
  readonly data: string
  readonly cache_control?: never
}

/** Where an image or document comes from. */
export type AnthropicSource =
  | { readonly type: "base64"; readonly media_type: string; readonly data: string }
  | { readonly type: "url"; readonly url: string }
  | { readonly type: "text"; readonly media_type: "text/plain"; readonly data: string }

export interface AnthropicImageBlock {
  readonly type: "image"
  readonly source: AnthropicSource
  readonly cache_control?: CacheControl
}

export interface AnthropicDocumentBlock {
  readonly type: "document"
  readonly source: AnthropicSource
  readonly title?: string
  readonly cache_control?: CacheControl
}

/** A tool call the API ran itself (`web_search`, `code_execution`, ...), sent back as it came. */
export interface AnthropicServerToolUseBlock {
  readonly type: "server_tool_use"
  readonly id: string
  readonly name: string
  readonly input: Message.JsonValue
  readonly cache_control?: CacheControl
}

/** The result of a server tool call (`web_search_tool_result`, ...), sent back as it came. */
export interface AnthropicServerToolResultBlock {
  readonly type: `${string}_tool_result`
  readonly tool_use_id: string
  readonly content: Message.JsonValue
  readonly cache_control?: CacheControl
}

export type AnthropicContentBlock =
  | AnthropicTextBlock
  | AnthropicServerToolUseBlock
  | AnthropicServerToolResultBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicImageBlock
  | AnthropicDocumentBlock

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

/** Anthropic thinking-block clearing: keep the thinking of the newest N assistant turns, or all. */
export interface AnthropicClearThinkingEdit {
  readonly type: "clear_thinking_20251015"
  readonly keep?: { readonly type: "thinking_turns"; readonly value: number } | "all"
}

export interface AnthropicRequest {
  readonly model: string
  readonly max_tokens: number
  readonly temperature?: number
  readonly system?: ReadonlyArray<AnthropicTextBlock>
  readonly tools?: ReadonlyArray<AnthropicTool | AnthropicMemoryTool>
  readonly messages: ReadonlyArray<AnthropicMessage>
  /** Extended thinking, when enabled. */
  readonly thinking?: { readonly type: "enabled"; readonly budget_tokens: number }
  readonly context_management?: {
    readonly edits: ReadonlyArray<AnthropicClearThinkingEdit | AnthropicClearToolUsesEdit>
  }
  readonly stream: true
}

// --- OpenAI Chat Completions ------------------------------------------------------------------

export interface ChatToolCall {
  readonly id: string
  readonly type: "function"
  readonly function: { readonly name: string; readonly arguments: string }
}

/** A part of a user message's content (text, an image, a file). */
export type ChatContentPart =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "image_url"
      readonly image_url: { readonly url: string; readonly detail?: "auto" | "low" | "high" }
    }
  | { readonly type: "file"; readonly file: { readonly filename?: string; readonly file_data: string } }

export type ChatMessage =
  | { readonly role: "system" | "developer"; readonly content: string }
  | { readonly role: "user"; readonly content: string | ReadonlyArray<ChatContentPart> }
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

/** A part of a Responses user message's content. */
export type ResponsesContentPart =
  | { readonly type: "input_text"; readonly text: string }
  | { readonly type: "input_image"; readonly image_url: string; readonly detail: "auto" | "low" | "high" }
  | { readonly type: "input_file"; readonly filename?: string; readonly file_data: string }
  | { readonly type: "input_file"; readonly file_url: string }

export type ResponsesInputItem =
  | {
      readonly type: "message"
      readonly role: "system" | "developer" | "user" | "assistant"
      readonly content: string
    }
  | { readonly type: "message"; readonly role: "user"; readonly content: ReadonlyArray<ResponsesContentPart> }
  | {
      readonly type: "reasoning"
      /** Absent in the stateless form (`encrypted_content` without an id, `store: false`). */
      readonly id?: string
      readonly summary: ReadonlyArray<{ readonly type: "summary_text"; readonly text: string }>
      readonly encrypted_content?: string
    }
  | { readonly type: "function_call"; readonly call_id: string; readonly name: string; readonly arguments: string }
  | {
      readonly type: "function_call_output"
      readonly call_id: string
      /** Text, or input parts when the result is made of parts (images, files). */
      readonly output: string | ReadonlyArray<ResponsesContentPart>
    }

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
  /** Extra output to return: `reasoning.encrypted_content` makes reasoning items sendable back without `store`. */
  readonly include?: ReadonlyArray<"reasoning.encrypted_content">
  /** Server-side compaction once the rendered prompt passes `compact_threshold` tokens. */
  readonly context_management?: ReadonlyArray<{ readonly type: "compaction"; readonly compact_threshold: number }>
  readonly stream: true
}
