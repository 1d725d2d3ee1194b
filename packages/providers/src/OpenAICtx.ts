/**
 * The OpenAI strategy: `system` messages (`developer` for reasoning models: o1, o3, o4, gpt-5),
 * identity then stable knowledge then injected knowledge, task state and signals as a user message,
 * history as `tool_calls` / `tool` messages (each `tool` message right after the assistant message
 * that made the call). `makeResponses` renders the same window for the Responses API (`input` items:
 * `message`, `function_call`, `function_call_output`). OpenAI caches prompt prefixes automatically,
 * so the order is the only cache hint. Images go as `image_url` (`input_image`) parts, base64
 * documents as `file` (`input_file`) parts; Chat Completions takes no reasoning back, so reasoning
 * parts are dropped there; the Responses render sends a reasoning part that has an item id back as a
 * `reasoning` item (with its `encrypted_content`) before the output it led to, and with
 * `statelessReasoning` also one that has only `encrypted_content` (no id: Codex CLI's `store: false` form).
 *
 * @since 0.1.0
 */
import type { Window } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { makeChat } from "./DefaultCtx.js"
import type { InvalidRequest } from "./InvalidRequest.js"
import * as common from "./internal/builderCommon.js"
import { commonConfigFields, exact } from "./internal/configFields.js"
import type { BuildOptions, Built, CtxBuilder } from "./CtxBuilder.js"
import * as chatCache from "./internal/chatCache.js"
import * as chatRender from "./internal/chatRender.js"
import { fromWindow, slotsOf } from "./internal/sections.js"
import * as serverContext from "./internal/serverContext.js"
import type { ChatCompletionsRequest, ResponsesRequest } from "./ProviderRequest.js"
import * as RequestValidator from "./RequestValidator.js"
import * as SentTokens from "./SentTokens.js"

/** Request shapes of the OpenAI Chat Completions and Responses APIs. @since 0.1.0 */
export type {
  ChatCompletionsRequest,
  ChatContentPart,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  ResponsesContentPart,
  ResponsesInputItem,
  ResponsesRequest,
  ResponsesTool
} from "./ProviderRequest.js"

/** Settings of the OpenAI strategy. @since 0.1.0 */
export const Config = Schema.Struct({
  ...commonConfigFields,
  /** Which API to render for (`forProvider` reads it). Default `chat_completions`. */
  api: exact(Schema.Literal("chat_completions", "responses")),
  /** Force the reasoning-model rules (`developer` role, no temperature); detected from the name otherwise. */
  reasoning: exact(Schema.Boolean),
  /**
   * Responses: send reasoning back that carries `encrypted_content` but no item id (stateless use with
   * `store: false`, as Codex CLI does; its rollouts hold no reasoning ids). Default false: only reasoning
   * with an item id goes back, so renders recorded before this option rebuild unchanged.
   * @since 0.8.0
   */
  statelessReasoning: exact(Schema.Boolean)
})
/** @since 0.1.0 */
export type Config = typeof Config.Type

/** Default context window. @since 0.1.0 */
export const defaultContextWindow = 128_000

/** Output tokens reserved when neither the render nor the config sets a limit. @since 0.1.0 */
export const defaultOutputReserve = 4096

/** Default share of the budget one tool output may take (in tokens). @since 0.1.0 */
export const defaultToolOutputShare = 0.1

/** Whether a model is a reasoning model (o1, o3, o4, gpt-5 families). @since 0.1.0 */
export const isReasoningModel = (model: string): boolean => /^(o1|o3|o4|gpt-5)([-.]|$)/.test(model.toLowerCase())

const settingsFor =
  (config: Config) =>
  (options: BuildOptions): Omit<chatRender.Settings, "reminder" | "model"> => {
    const reasoning = config.reasoning ?? isReasoningModel(config.model)
    return {
      systemRole: reasoning ? "developer" : "system",
      mergeSystem: false,
      contextRole: reasoning ? "developer" : "system",
      tokenParam: reasoning ? "max_completion_tokens" : "max_tokens",
      maxTokens: options.maxOutputTokens,
      // Reasoning models reject `temperature`.
      temperature: reasoning ? undefined : options.temperature,
      tools: options.tools,
      documents: "file",
      ...(config.statelessReasoning === true ? { statelessReasoning: true } : {})
    }
  }

/** Build the Chat Completions strategy. @since 0.1.0 */
export const make = (config: Config): CtxBuilder<ChatCompletionsRequest> =>
  makeChat(config, {
    name: "openai",
    floor: 1024,
    defaultContextWindow,
    defaultOutputReserve,
    toolOutputShare: defaultToolOutputShare,
    settings: settingsFor(config)
  })

/** Build the Responses API strategy. @since 0.1.0 */
export const makeResponses = (config: Config): CtxBuilder<ResponsesRequest> => {
  const sizing: common.Sizing = {
    ctxWindow: common.clampBudget(config.contextWindow, defaultContextWindow, 1024, undefined),
    defaultOutputReserve,
    toolOutputShare: defaultToolOutputShare
  }
  const settings = settingsFor(config)
  // Reasoning items with their id (or, stateless, their encrypted content) go back; readable-only reasoning does not.
  const reasoningRule: SentTokens.ReasoningRule = config.statelessReasoning === true ? "item-or-encrypted" : "item"
  const unsentTokens = (window: Window.Window): number =>
    SentTokens.unsentTokens({ reasoning: reasoningRule, toolResultMedia: true }, window)
  const build = (
    window: Window.Window,
    options: BuildOptions = {}
  ): Either.Either<Built<ResponsesRequest>, InvalidRequest> => {
    const rendered: chatRender.Settings = {
      ...settings(options),
      model: config.model,
      maxTokens: options.maxOutputTokens ?? config.maxOutputTokens,
      reminder: options.turnReminder
    }
    // The render cache renders only what is new (see `makeChat`); `full` checks tool pairing and
    // renders from scratch.
    const full = () =>
      Either.flatMap(RequestValidator.history("openai-responses", window.history, window.completedToolIds), () =>
        chatRender.renderResponses(fromWindow(window, options.systemPrompt), rendered)
      )
    return Either.map(
      chatCache.renderResponses(slotsOf(window, options.systemPrompt), window.history, rendered, full),
      (request) => ({
        request: serverContext.responses(request, options.serverContext),
        stats: common.statsOf(window, common.budgetOf(sizing, config, options), 0, unsentTokens(window)),
        serverContext: options.serverContext
      })
    )
  }
  return {
    name: "openai-responses",
    model: config.model,
    build,
    unsentTokens,
    ...common.shared<ResponsesRequest>(sizing, config)
  }
}
