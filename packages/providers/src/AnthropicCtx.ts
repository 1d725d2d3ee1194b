/**
 * The Anthropic Messages API strategy. Identity, then knowledge (stable `chat` knowledge first, then
 * injected kinds) as system blocks; task state and signals as the first user turn; history as
 * `tool_use` / `tool_result` blocks with strict role alternation; the turn reminder in the last user
 * message, right before its newest text (tool results must lead, so never before them). At most
 * four `cache_control` breakpoints, in this order of value: the conversation prefix (end of the
 * message before the last user message), end of injected knowledge, end of stable knowledge, end of
 * identity, end of tools. A breakpoint whose cached prefix is shorter
 * than the model's minimum cacheable length is skipped: the API would silently not cache it.
 * A render given the caller's `cacheHints` places those instead (the last block of each hinted
 * message, with its TTL) and none of its own; they are recorded with the render (`PromptRendered` v5).
 * Reasoning parts with a signature (or redacted data) go back as `thinking` (`redacted_thinking`)
 * blocks leading their assistant turn, unchanged; images and documents as `image` / `document`
 * blocks in their user turn.
 *
 * @since 0.1.0
 */
import type { Window } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { InvalidRequest } from "./InvalidRequest.js"
import * as anthropicRender from "./internal/anthropicRender.js"
import * as renderCache from "./internal/renderCache.js"
import * as serverContext from "./internal/serverContext.js"
import * as common from "./internal/builderCommon.js"
import { commonConfigFields, exact } from "./internal/configFields.js"
import type { BuildOptions, Built, CtxBuilder } from "./CtxBuilder.js"
import { fromWindow, slotsOf } from "./internal/sections.js"
import type { AnthropicRequest } from "./ProviderRequest.js"
import * as RequestValidator from "./RequestValidator.js"
import * as SentTokens from "./SentTokens.js"

/** Request shapes of the Anthropic Messages API. @since 0.1.0 */
export type {
  AnthropicContentBlock,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicRedactedThinkingBlock,
  AnthropicRequest,
  AnthropicSource,
  AnthropicTextBlock,
  AnthropicThinkingBlock,
  AnthropicTool,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
  CacheControl
} from "./ProviderRequest.js"

/** Settings of the Anthropic strategy. @since 0.1.0 */
export const Config = Schema.Struct({
  ...commonConfigFields,
  /** Minimum cacheable prompt length for this model (default from {@link minCacheableTokensFor}). */
  minCacheableTokens: exact(Schema.Number),
  /** Cache lifetime of every breakpoint: `5m` (the API default) or `1h`. */
  cacheTtl: exact(Schema.Literal("5m", "1h")),
  /** Set false to place no breakpoints. Default true. */
  promptCaching: exact(Schema.Boolean),
  /**
   * Where the conversation's breakpoint goes: `prefix` (default: the builder's own placement, above) or
   * `last-message` (one breakpoint, on the last block of the last history message: Claude Code's
   * placement, which writes each call's whole prompt and lets the next call read it all; what an
   * imported Claude Code session records, so that a replay under its policy caches as it did).
   * A render given `cacheHints` places those instead.
   * @since 0.8.0
   */
  cacheBreakpoints: exact(Schema.Literal("prefix", "last-message")),
  /**
   * Which assistant turns send their signed thinking back: `all` (default: a turn renders the same
   * bytes as it ages, so cached prefixes hold) or `current` (only the turn whose tool calls the
   * request answers, the one the API requires).
   */
  thinking: exact(Schema.Literal("all", "current")),
  /**
   * Enable extended thinking with this budget (tokens, at least 1024 and below the output limit):
   * the request carries `thinking: { type: "enabled", budget_tokens }` and no `temperature`.
   */
  thinkingBudget: exact(Schema.Number)
})
/** @since 0.1.0 */
export type Config = typeof Config.Type

/** Default context window of Claude models. @since 0.1.0 */
export const defaultContextWindow = 200_000

/**
 * The request's `max_tokens` (and the budget's output reserve) when neither render nor config sets
 * one, at most a quarter of the context window.
 * @since 0.1.0
 */
export const defaultOutputReserve = 4096

/** Default share of the budget one tool output may take (in tokens). @since 0.1.0 */
export const defaultToolOutputShare = 0.1

/**
 * The documented minimum cacheable prompt length by model family: 4096 for Opus 4.5+ and Haiku 4.5,
 * 2048 for older Haiku, 1024 otherwise (Sonnet, Opus 4/4.1, Claude 3.x). Override it in the config
 * when Anthropic changes it.
 * @since 0.1.0
 */
export const minCacheableTokensFor = (model: string): number => {
  const name = model.toLowerCase()
  if (/opus-4-[5-9]|haiku-4/.test(name)) return 4096
  if (name.includes("haiku")) return 2048
  return 1024
}

/** Build the Anthropic strategy. @since 0.1.0 */
export const make = (config: Config): CtxBuilder<AnthropicRequest> => {
  const sizing: common.Sizing = {
    ctxWindow: common.clampBudget(config.contextWindow, defaultContextWindow, 1024, undefined),
    defaultOutputReserve,
    toolOutputShare: defaultToolOutputShare
  }
  // Signed thinking goes back (every turn's, or with `thinking: "current"` the current turn's only).
  const unsentTokens = (window: Window.Window): number =>
    SentTokens.unsentTokens({ reasoning: "signed", toolResultMedia: true }, window, config.thinking === "current")
  const build = (
    window: Window.Window,
    options: BuildOptions = {}
  ): Either.Either<Built<AnthropicRequest>, InvalidRequest> => {
    const last = window.history.at(-1)
    const cacheHints =
      options.cacheHints ??
      (config.cacheBreakpoints === "last-message" && config.promptCaching !== false && last !== undefined
        ? [{ messageId: last.id }]
        : undefined)
    const settings: anthropicRender.Settings = {
      model: config.model,
      maxTokens: common.outputLimitOf(sizing, config, options),
      temperature: options.temperature,
      tools: options.tools,
      reminder: options.turnReminder,
      minCacheableTokens: config.minCacheableTokens ?? minCacheableTokensFor(config.model),
      cacheTtl: config.cacheTtl,
      cache: config.promptCaching ?? true,
      thinking: config.thinking,
      thinkingBudget: config.thinkingBudget,
      cacheHints
    }
    // From scratch: tool pairing on the history, then the render. The cache renders only what is new
    // since its last render of this history and falls back to this when it cannot prove the same result.
    const full = () =>
      Either.flatMap(RequestValidator.history("anthropic", window.history, window.completedToolIds), () =>
        anthropicRender.render(fromWindow(window, options.systemPrompt), settings)
      )
    return Either.map(
      // A render with the caller's cache hints marks blocks the cache keeps unmarked: it renders from scratch.
      cacheHints === undefined || cacheHints.length === 0
        ? renderCache.renderAnthropic(slotsOf(window, options.systemPrompt), window.history, settings, full)
        : full(),
      ({ request, breakpoints }) => ({
        request: serverContext.anthropic(request, options.serverContext),
        stats: common.statsOf(window, common.budgetOf(sizing, config, options), breakpoints, unsentTokens(window)),
        serverContext: options.serverContext
      })
    )
  }
  return {
    name: "anthropic",
    model: config.model,
    build,
    unsentTokens,
    ...common.shared<AnthropicRequest>(sizing, config)
  }
}
