/**
 * `CtxBuilder`: turns a window into the exact request a provider receives, purely. One strategy per
 * provider ({@link AnthropicCtx}, {@link OpenAICtx}, {@link OllamaCtx}, {@link DefaultCtx}), picked by
 * {@link forProvider}. Every `build` validates tool pairing first and the provider's own adjacency
 * rules after rendering, and returns a typed {@link InvalidRequest} rather than a request the
 * provider would reject.
 *
 * @since 0.1.0
 */
import {
  type Budget,
  type CompressionPlan as Planner,
  LanguageModel,
  type Message,
  type Window,
  WindowEvent
} from "@ctxlog/core"
import type * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as AnthropicCtx from "./AnthropicCtx.js"
import * as DefaultCtx from "./DefaultCtx.js"
import * as FrameworkFormat from "./FrameworkFormat.js"
import type { InvalidRequest } from "./InvalidRequest.js"
import * as OllamaCtx from "./OllamaCtx.js"
import * as OpenAICtx from "./OpenAICtx.js"
import type { AnthropicRequest, ChatCompletionsRequest, ResponsesRequest } from "./ProviderRequest.js"
import { commonConfigFields } from "./internal/configFields.js"

/**
 * Per-render options: one schema, the type derived from it (ADR 0156). A turn policy's `render` is its
 * `systemPrompt`, `turnReminder`, `tools`, `maxOutputTokens` and `temperature` (`BuildOptions.pick`).
 * @since 0.1.0
 */
export const BuildOptions = Schema.Struct({
  /** Replaces the window's identity partition for this render. */
  systemPrompt: Schema.optional(Schema.String),
  /** Prepended to the last user message only, so the cached prefix stays byte-stable. */
  turnReminder: Schema.optional(Schema.String),
  /** Tools the model may call. */
  tools: Schema.optional(Schema.Array(LanguageModel.ToolSpec)),
  maxOutputTokens: Schema.optional(Schema.Int.pipe(Schema.positive())),
  temperature: Schema.optional(Schema.Number),
  /**
   * Context management the provider does on its side (Anthropic: `clearThinking`, `clearToolUses`, `memoryTool`;
   * OpenAI Responses: `previousResponseId`, `store`, `compactThreshold`). Recorded in `PromptRendered`.
   */
  serverContext: Schema.optional(WindowEvent.ServerContext),
  /**
   * Cache breakpoints the caller sets, by window message (Anthropic: instead of the builder's own;
   * other builders place none). Recorded in `PromptRendered` (v5) so a rebuild places them again.
   */
  cacheHints: Schema.optional(Schema.Array(WindowEvent.CacheHint))
})
/** @since 0.1.0 */
export type BuildOptions = typeof BuildOptions.Type

/** What a render holds, by the window's own token counts. @since 0.1.0 */
export interface BuildStats {
  /** Tokens per partition, as the log counted them (the shape `PromptRendered` records). */
  readonly tokens: Window.Tokens
  /** A rough count of the tool schemas (the log does not count them). */
  readonly toolTokens: number
  /** A rough count of the turn reminder. */
  readonly reminderTokens: number
  /**
   * Tokens the window counts that this render does not send: reasoning its provider does not take back
   * (`SentTokens`). Since 0.8.0.
   */
  readonly unsentTokens: number
  /** `tokens.total - unsentTokens + toolTokens`: the uncalibrated estimate of the prompt this render sends. */
  readonly total: number
  /** The prompt budget of this render: context window − output reserve − tool schemas − reminder. */
  readonly budget: number
  /** The model's context window after clamps ({@link CtxBuilder.ctxWindow}). */
  readonly contextWindow: number
  /** Tokens reserved for the answer: this render's output limit. */
  readonly outputReserve: number
  /** `cache_control` breakpoints placed (Anthropic only; 0 elsewhere). */
  readonly cacheBreakpoints: number
}

/** A rendered request and its stats. @since 0.1.0 */
export interface Built<R> {
  readonly request: R
  readonly stats: BuildStats
  /** The server-side context management the request asks for, when any (what `PromptRendered` records). */
  readonly serverContext?: WindowEvent.ServerContext | undefined
}

/**
 * History to fold into a summary: core's compaction plan (`CompressionPlan.Plan`, the one planner
 * compaction uses too), plus the removed messages as a transcript.
 * @since 0.1.0
 */
export interface CompressionPlan extends Planner.Plan {
  /** The removed messages as a plain transcript, for a summarizer. */
  readonly content: string
  /** Tokens of the removed messages (`removedTokens`). */
  readonly tokens: number
}

/** Renders windows for one provider. @since 0.1.0 */
export interface CtxBuilder<R> {
  /** The strategy's name, e.g. `anthropic`. */
  readonly name: string
  readonly model: string
  /** The model's context window after clamps (Ollama floors it at 4K). */
  readonly ctxWindow: number
  /** The output limit reserved when neither the render nor the config sets one (this provider's default, at most a quarter of the window). */
  readonly defaultOutputReserve: number
  readonly build: (window: Window.Window, options?: BuildOptions) => Either.Either<Built<R>, InvalidRequest>
  /**
   * The budget of a render with these options: the context window, the output reserve (the render's
   * output limit, else the config's, else the provider default), the tool schemas and the reminder.
   * Pass it to compaction (`TieredCompaction.Config.budget`) so every decision uses the same number.
   */
  readonly budget: (options?: BuildOptions) => Budget.Budget
  /**
   * Whether the window passed the compression threshold of the budget: by `exactTokens` (the prompt
   * size from `ExactTokenCounter.countWindow`) when given, else by the calibrated estimate.
   */
  readonly needsCompression: (window: Window.Window, options?: BuildOptions, exactTokens?: number) => boolean
  /**
   * Tokens of a window this builder would not send (reasoning its provider does not take back,
   * `SentTokens`): what a render's `stats.unsentTokens` holds, for decisions taken before a render.
   * Since 0.8.0.
   */
  readonly unsentTokens: (window: Window.Window) => number
  /** The oldest history to summarize so that at most `keepCeiling` tokens of history stay. */
  readonly compressionPlan: (window: Window.Window, keepCeiling: number) => CompressionPlan
  /**
   * Head + tail truncation of a tool output: at most `toolOutputShare` of the budget (in tokens), or
   * the configured per-tool character limits.
   */
  readonly truncateToolOutput: (result: Message.ToolResultPart, toolName: string) => Message.ToolResultPart
}

/**
 * Settings every builder takes (`model`, `contextWindow`, `compressionThreshold`, `toolOutputLimits`,
 * `toolOutputShare`, `maxOutputTokens`, `format`): one schema, the type derived from it (ADR 0156).
 * @since 0.1.0
 */
export const CommonConfig = Schema.Struct(commonConfigFields)
/** @since 0.1.0 */
export type CommonConfig = typeof CommonConfig.Type

/** Any request a builder renders. @since 0.1.0 */
export type RenderedRequest = AnthropicRequest | ChatCompletionsRequest | ResponsesRequest

/** A provider request, or a render in a framework's form (a config with `format`). @since 0.8.0 */
export type AnyRequest = RenderedRequest | FrameworkFormat.FrameworkRequest

/** Whether a render is a provider's request body (its config set no framework `format`). @since 0.8.0 */
export const isProviderRequest = (request: AnyRequest): request is RenderedRequest =>
  !("format" in request && FrameworkFormat.formats.some((format) => format === request.format))

/**
 * Which builder to use, with its settings: one schema (each provider's `Config` with its `provider` tag),
 * the type derived from it (ADR 0156). A render spec and a turn policy record it in this shape.
 * @since 0.1.0
 */
export const ProviderConfig = Schema.Union(
  Schema.Struct({ provider: Schema.Literal("anthropic"), ...AnthropicCtx.Config.fields }),
  Schema.Struct({ provider: Schema.Literal("openai"), ...OpenAICtx.Config.fields }),
  Schema.Struct({ provider: Schema.Literal("ollama"), ...OllamaCtx.Config.fields }),
  Schema.Struct({ provider: Schema.Literal("default"), ...DefaultCtx.Config.fields })
)
/** @since 0.1.0 */
export type ProviderConfig = typeof ProviderConfig.Type

/** The type of an optional field of a config, `undefined` when the config has no such key. */
type OptionalOf<C, K extends string> = K extends keyof C ? C[K] : undefined

/** The provider body a config's builder renders (its framework `format` aside). */
type BodyOf<C extends ProviderConfig> = C extends { readonly provider: "anthropic" }
  ? AnthropicRequest
  : C extends { readonly provider: "openai" }
    ? C extends { readonly api: "responses" }
      ? ResponsesRequest
      : OptionalOf<C, "api"> extends "chat_completions" | undefined
        ? ChatCompletionsRequest
        : ChatCompletionsRequest | ResponsesRequest
    : ChatCompletionsRequest

/**
 * The request {@link forProvider} renders for a config: Anthropic's Messages body, OpenAI's
 * Responses body (`api: "responses"`), a Chat Completions body (OpenAI chat, Ollama, the default
 * builder), or a framework's form when the config sets `format`. A config whose provider is not known
 * statically gives the union ({@link AnyRequest} for `ProviderConfig` itself).
 * @since 0.8.0
 */
export type RequestOf<C extends ProviderConfig> = C extends unknown
  ? C extends { readonly format: FrameworkFormat.FrameworkFormat }
    ? FrameworkFormat.FrameworkRequest
    : OptionalOf<C, "format"> extends undefined
      ? BodyOf<C>
      : BodyOf<C> | FrameworkFormat.FrameworkRequest
  : never

/** Pick the builder for a provider. @since 0.1.0 */
export function forProvider(config: ProviderConfig & { readonly format?: undefined }): CtxBuilder<RenderedRequest>
export function forProvider(config: ProviderConfig): CtxBuilder<AnyRequest>
export function forProvider(config: ProviderConfig): CtxBuilder<AnyRequest> {
  const builder = providerBuilder(config)
  return config.format === undefined ? builder : FrameworkFormat.wrap(builder, config.format)
}

const providerBuilder = (config: ProviderConfig): CtxBuilder<RenderedRequest> => {
  switch (config.provider) {
    case "anthropic":
      return AnthropicCtx.make(config)
    case "openai":
      return config.api === "responses" ? OpenAICtx.makeResponses(config) : OpenAICtx.make(config)
    case "ollama":
      return OllamaCtx.make(config)
    case "default":
      return DefaultCtx.make(config)
  }
}
