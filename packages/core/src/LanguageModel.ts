/**
 * The port to a language model. Implementations (Anthropic, OpenAI-compatible, the offline scripted
 * model) live in `@ctxlog/providers`; compactors and summarizers depend only on this tag.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Stream from "effect/Stream"
import { JsonValue, type Part, type Role } from "./Message.js"

/**
 * A tool the model may call: `inputSchema` is the JSON Schema of its input. The one declaration of a
 * tool spec (the turn policy's render settings and the render specs decode with it). The schema since 0.8.0.
 * @since 0.1.0
 */
export const ToolSpec = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  inputSchema: Schema.Record({ key: Schema.String, value: JsonValue })
})
/** @since 0.1.0 */
export interface ToolSpec extends Schema.Schema.Type<typeof ToolSpec> {}

/** A provider-neutral chat message. @since 0.1.0 */
export interface ChatMessage {
  readonly role: Role
  readonly parts: ReadonlyArray<Part>
}

/** A provider-neutral request. @since 0.1.0 */
export interface ModelRequest {
  readonly system?: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly tools?: ReadonlyArray<ToolSpec>
  readonly maxOutputTokens?: number
  readonly temperature?: number
}

/** Token usage as the provider reported it. `inputTokens` counts the whole prompt, cached tokens included. @since 0.1.0 */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadTokens: number
  readonly cacheWriteTokens: number
  /** The part of `cacheWriteTokens` written with a 1-hour TTL, when the provider says (Anthropic). */
  readonly cacheWrite1hTokens?: number | undefined
}

/** Why the model stopped. @since 0.1.0 */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "other"

/**
 * What the provider removed from the prompt on its side before the model read it (Anthropic context
 * editing, OpenAI server compaction). The reported `inputTokens` count the prompt after these edits.
 * @since 0.2.0
 */
export interface ContextEdits {
  /** Input tokens the edits removed (0 when the provider does not say). */
  readonly clearedInputTokens: number
  /** Tool uses whose results (or inputs) were cleared. */
  readonly clearedToolUses: number
  /** Server compactions that ran (their saving is not reported). */
  readonly compactions: number
}

/**
 * A tool call the output limit cut inside its arguments (Anthropic `stop_reason: max_tokens`, OpenAI
 * `finish_reason: length` / `incomplete_details.reason: max_output_tokens`). The call stays in the
 * response's `parts` with the input `{}` (so the message and its tool pairs stay well-formed); it must
 * not be run: answer it with an error tool result (or ask again with a larger output limit).
 * @since 0.2.0
 */
export interface CutToolCall {
  readonly id: string
  readonly name: string
  /** Characters of the arguments' JSON that arrived before the cut. */
  readonly receivedChars: number
}

/** A complete model response. @since 0.1.0 */
export interface ModelResponse {
  readonly provider: string
  readonly model: string
  /** The provider's id of the response (`msg_…`, `chatcmpl-…`, `resp_…`), when it gave one (since 0.8.0). */
  readonly id?: string | undefined
  /** The assistant message: text and tool calls. */
  readonly parts: ReadonlyArray<Part>
  readonly stopReason: StopReason
  readonly usage: Usage
  /** Present when the provider edited the context on its side for this call. */
  readonly contextEdits?: ContextEdits
  /** Present when the output limit cut tool calls inside their arguments (`stopReason` is `max_tokens`). */
  readonly cutToolCalls?: ReadonlyArray<CutToolCall>
}

/** A streamed piece of a response; the last one is `done` with the whole response. @since 0.1.0 */
export type ModelChunk =
  | { readonly _tag: "TextDelta"; readonly text: string }
  | { readonly _tag: "ToolCallDelta"; readonly id: string; readonly name: string; readonly inputJson: string }
  | { readonly _tag: "Done"; readonly response: ModelResponse }

/** Why a provider call failed. @since 0.1.0 */
export const ProviderErrorReason = Schema.Literal(
  "rate_limited",
  "overloaded",
  "auth",
  "bad_request",
  "network",
  "timeout",
  "malformed_response",
  "server"
)
/** @since 0.1.0 */
export type ProviderErrorReason = typeof ProviderErrorReason.Type

/** A provider call failed (after any retries). @since 0.1.0 */
export class ProviderError extends Schema.TaggedError<ProviderError>()("ProviderError", {
  provider: Schema.String,
  reason: ProviderErrorReason,
  detail: Schema.String,
  status: Schema.optional(Schema.Number),
  retryAfterMs: Schema.optional(Schema.Number),
  /**
   * Set when the provider layer's retry policy gave up: the calls it made. Such a failure is final
   * (`RetryPolicy.isRetryable` is false for it), so no caller retries it again.
   */
  attempts: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    return `${this.provider}: ${this.reason}${this.status === undefined ? "" : ` (HTTP ${this.status})`}: ${this.detail}`
  }
}

/** A language model. @since 0.1.0 */
export class LanguageModel extends Context.Tag("@ctxlog/core/LanguageModel")<LanguageModel, LanguageModel.Service>() {}

/** @since 0.1.0 */
export declare namespace LanguageModel {
  /** @since 0.1.0 */
  export interface Service {
    readonly provider: string
    readonly model: string
    readonly generate: (request: ModelRequest) => Effect.Effect<ModelResponse, ProviderError>
    readonly stream: (request: ModelRequest) => Stream.Stream<ModelChunk, ProviderError>
  }
}
