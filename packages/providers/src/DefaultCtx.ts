/**
 * The generic strategy: an OpenAI-compatible Chat Completions request with plain `system` messages,
 * no model-specific rules and no cache hints. For servers that speak that format (vLLM, llama.cpp
 * server, LM Studio, gateways) when nothing better is known.
 *
 * @since 0.1.0
 */
import type { Window } from "@ctxlog/core"
import * as Either from "effect/Either"
import type { BuildOptions, Built, CommonConfig, CtxBuilder } from "./CtxBuilder.js"
import type { InvalidRequest } from "./InvalidRequest.js"
import * as common from "./internal/builderCommon.js"
import * as chatRender from "./internal/chatRender.js"
import { fromWindow } from "./internal/sections.js"
import type { ChatCompletionsRequest } from "./internal/wire.js"
import * as RequestValidator from "./RequestValidator.js"
import * as Truncation from "./Truncation.js"

/** Request shapes of the Chat Completions API. @since 0.1.0 */
export type { ChatCompletionsRequest, ChatMessage, ChatTool, ChatToolCall } from "./internal/wire.js"

/** Settings of the generic strategy. @since 0.1.0 */
export interface Config extends CommonConfig {}

/** Default context window when none is configured. @since 0.1.0 */
export const defaultContextWindow = 32_768

/** Default tool-output limits (characters). @since 0.1.0 */
export const defaultToolOutputLimits: Truncation.Limits = { defaultChars: 20_000 }

/** How a chat-format strategy differs from the generic one. @since 0.1.0 */
export interface ChatVariant {
  readonly name: string
  readonly floor: number
  readonly defaultContextWindow: number
  readonly limits: Truncation.Limits
  readonly settings: (options: BuildOptions) => Omit<chatRender.Settings, "reminder" | "model">
}

/** Build a chat-format strategy from a variant (shared by the OpenAI, Ollama and generic builders). @since 0.1.0 */
export const makeChat = (config: CommonConfig, variant: ChatVariant): CtxBuilder<ChatCompletionsRequest> => {
  const ctxWindow = common.clampBudget(config.contextWindow ?? variant.defaultContextWindow, variant.floor, undefined)
  const limits = config.toolOutputLimits ?? variant.limits
  const threshold = config.compressionThreshold ?? 0.8
  const build = (
    window: Window.Window,
    options: BuildOptions = {}
  ): Either.Either<Built<ChatCompletionsRequest>, InvalidRequest> =>
    Either.flatMap(RequestValidator.history(variant.name, window.history, window.completedToolIds), () => {
      const settings = variant.settings(options)
      return Either.map(
        chatRender.renderChat(variant.name, fromWindow(window, options.systemPrompt), {
          ...settings,
          model: config.model,
          maxTokens: settings.maxTokens ?? config.maxOutputTokens,
          reminder: options.turnReminder
        }),
        (request) => ({ request, stats: common.statsOf(window, settings.tools, ctxWindow, 0) })
      )
    })
  return {
    name: variant.name,
    model: config.model,
    ctxWindow,
    build,
    needsCompression: (window) => common.needsCompression(window, ctxWindow, threshold),
    compressionPlan: common.compressionPlan,
    truncateToolOutput: (result, toolName) => Truncation.truncateToolOutput(result, toolName, limits)
  }
}

/** Build the generic strategy. @since 0.1.0 */
export const make = (config: Config): CtxBuilder<ChatCompletionsRequest> =>
  makeChat(config, {
    name: "default",
    floor: 1024,
    defaultContextWindow,
    limits: defaultToolOutputLimits,
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
