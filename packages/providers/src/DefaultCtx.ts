/**
 * The generic strategy: an OpenAI-compatible Chat Completions request with plain `system` messages,
 * no model-specific rules and no cache hints. For servers that speak that format (vLLM, llama.cpp
 * server, LM Studio, gateways) when nothing better is known. Reasoning parts are not sent back
 * (most such servers reject `reasoning_content` in input); images go as `image_url` parts, documents
 * as a text line naming them.
 *
 * @since 0.1.0
 */
import type { Window } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { InvalidRequest } from "./InvalidRequest.js"
import type { LanguageModel } from "@ctxlog/core"
import * as common from "./internal/builderCommon.js"
import { commonConfigFields } from "./internal/configFields.js"
import type { BuildOptions, Built, CommonConfig, CtxBuilder } from "./CtxBuilder.js"
import * as chatCache from "./internal/chatCache.js"
import * as chatRender from "./internal/chatRender.js"
import { fromWindow, slotsOf } from "./internal/sections.js"
import type { ChatCompletionsRequest } from "./ProviderRequest.js"
import * as RequestValidator from "./RequestValidator.js"
import * as SentTokens from "./SentTokens.js"

/** Request shapes of the Chat Completions API. @since 0.1.0 */
export type { ChatCompletionsRequest, ChatMessage, ChatTool, ChatToolCall } from "./ProviderRequest.js"

/** Settings of the generic strategy: the common ones (ADR 0156). @since 0.1.0 */
export const Config = Schema.Struct(commonConfigFields)
/** @since 0.1.0 */
export type Config = typeof Config.Type

/** Default context window when none is configured. @since 0.1.0 */
export const defaultContextWindow = 32_768

/** Output tokens reserved when neither the render nor the config sets a limit. @since 0.1.0 */
export const defaultOutputReserve = 2048

/** Default share of the budget one tool output may take (in tokens). @since 0.1.0 */
export const defaultToolOutputShare = 0.1

/** How a chat-format strategy differs from the generic one. @since 0.1.0 */
export interface ChatVariant {
  readonly name: string
  readonly floor: number
  readonly defaultContextWindow: number
  /** Output tokens reserved when neither the render nor the config sets a limit. */
  readonly defaultOutputReserve: number
  /** Default share of the budget one tool output may take. */
  readonly toolOutputShare: number
  /** The tools as this provider sends them (default: unchanged). */
  readonly toolsOf?: (
    tools: ReadonlyArray<LanguageModel.ToolSpec> | undefined
  ) => ReadonlyArray<LanguageModel.ToolSpec> | undefined
  readonly settings: (options: BuildOptions) => Omit<chatRender.Settings, "reminder" | "model">
}

/** Build a chat-format strategy from a variant (shared by the OpenAI, Ollama and generic builders). @since 0.1.0 */
export const makeChat = (config: CommonConfig, variant: ChatVariant): CtxBuilder<ChatCompletionsRequest> => {
  const sizing: common.Sizing = {
    ctxWindow: common.clampBudget(config.contextWindow, variant.defaultContextWindow, variant.floor, undefined),
    defaultOutputReserve: variant.defaultOutputReserve,
    toolOutputShare: variant.toolOutputShare,
    toolsOf: variant.toolsOf
  }
  // Chat Completions, Ollama and generic servers take no reasoning back, and tool messages as text only.
  const unsentTokens = (window: Window.Window): number =>
    SentTokens.unsentTokens({ reasoning: "none", toolResultMedia: false }, window)
  const build = (
    window: Window.Window,
    options: BuildOptions = {}
  ): Either.Either<Built<ChatCompletionsRequest>, InvalidRequest> => {
    const variantSettings = variant.settings(options)
    const settings: chatRender.Settings = {
      ...variantSettings,
      model: config.model,
      maxTokens: variantSettings.maxTokens ?? config.maxOutputTokens,
      reminder: options.turnReminder
    }
    // The render cache renders only what is new since its last render of this history and falls
    // back to the render from scratch when it cannot prove the same result. Tool pairing is checked
    // there (the cache's own check of the new messages, given a valid earlier history, is stricter).
    const full = () =>
      Either.flatMap(RequestValidator.history(variant.name, window.history, window.completedToolIds), () =>
        chatRender.renderChat(variant.name, fromWindow(window, options.systemPrompt), settings)
      )
    return Either.map(
      chatCache.renderChat(variant.name, slotsOf(window, options.systemPrompt), window.history, settings, full),
      (request) => ({
        request,
        stats: common.statsOf(window, common.budgetOf(sizing, config, options), 0, unsentTokens(window))
      })
    )
  }
  return {
    name: variant.name,
    model: config.model,
    build,
    unsentTokens,
    ...common.shared<ChatCompletionsRequest>(sizing, config)
  }
}

/** Build the generic strategy. @since 0.1.0 */
export const make = (config: Config): CtxBuilder<ChatCompletionsRequest> =>
  makeChat(config, {
    name: "default",
    floor: 1024,
    defaultContextWindow,
    defaultOutputReserve,
    toolOutputShare: defaultToolOutputShare,
    settings: (options) => ({
      systemRole: "system",
      mergeSystem: false,
      contextRole: "system",
      tokenParam: "max_tokens",
      maxTokens: options.maxOutputTokens,
      temperature: options.temperature,
      tools: options.tools
    })
  })
