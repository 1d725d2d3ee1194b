/**
 * The Ollama strategy (OpenAI-compatible `/v1/chat/completions`): small windows (the budget is
 * floored at 4K tokens even when configured lower, because Ollama's own minimum context is about
 * that and a smaller budget would trim everything), one merged system message (many local chat
 * templates honour only the first), system or injected messages in history sent as user text,
 * tool schemas trimmed (descriptions shortened, titles and examples dropped), tighter truncation.
 * Reasoning parts are not sent back; base64 images go as `image_url` data URLs (Ollama fetches no
 * image URLs: those, and documents, become a text line naming them).
 *
 * @since 0.1.0
 */
import type { LanguageModel, Message } from "@ctxlog/core"
import { makeChat } from "./DefaultCtx.js"
import * as Schema from "effect/Schema"
import type { CtxBuilder } from "./CtxBuilder.js"
import { commonConfigFields, exact } from "./internal/configFields.js"
import type { ChatCompletionsRequest } from "./ProviderRequest.js"

/** Settings of the Ollama strategy. @since 0.1.0 */
export const Config = Schema.Struct({
  ...commonConfigFields,
  /** Longest tool description kept (characters). Default 120. */
  toolDescriptionChars: exact(Schema.Number)
})
/** @since 0.1.0 */
export type Config = typeof Config.Type

/** The budget floor. @since 0.1.0 */
export const floorTokens = 4096

/** Default context window (Ollama's `num_ctx` is often 4K–8K). @since 0.1.0 */
export const defaultContextWindow = 8192

/** Output tokens reserved when neither the render nor the config sets a limit: small, as the windows are. @since 0.1.0 */
export const defaultOutputReserve = 1024

/**
 * Default share of the budget one tool output may take (in tokens): at the 4K floor, about 300
 * tokens; the limit follows the window, so it is far tighter than the hosted providers'.
 * @since 0.1.0
 */
export const defaultToolOutputShare = 0.1

/** Shorten to the first sentence, at most `max` characters. @since 0.1.0 */
export const shortenDescription = (description: string, max: number): string => {
  const sentence = /^[\s\S]*?[.!?](\s|$)/.exec(description)?.[0]?.trim() ?? description.trim()
  return sentence.length <= max ? sentence : `${sentence.slice(0, Math.max(0, max - 1)).trimEnd()}…`
}

const isObject = (value: Message.JsonValue): value is { readonly [key: string]: Message.JsonValue } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const droppedKeys = new Set(["title", "examples", "$schema", "$comment", "default"])

const trimSchema = (value: Message.JsonValue, max: number): Message.JsonValue => {
  if (Array.isArray(value)) return value.map((item: Message.JsonValue) => trimSchema(item, max))
  if (typeof value !== "object" || value === null) return value
  const out: { [key: string]: Message.JsonValue } = {}
  for (const [key, item] of Object.entries(value)) {
    if (droppedKeys.has(key)) continue
    out[key] = key === "description" && typeof item === "string" ? shortenDescription(item, max) : trimSchema(item, max)
  }
  return out
}

/** A tool schema trimmed for a small model's window. @since 0.1.0 */
export const trimTool = (tool: LanguageModel.ToolSpec, max = 120): LanguageModel.ToolSpec => {
  const schema = trimSchema(tool.inputSchema, Math.min(max, 80))
  return {
    name: tool.name,
    description: shortenDescription(tool.description, max),
    inputSchema: isObject(schema) ? schema : tool.inputSchema
  }
}

/** Build the Ollama strategy. @since 0.1.0 */
export const make = (config: Config): CtxBuilder<ChatCompletionsRequest> => {
  const toolsOf = (tools: ReadonlyArray<LanguageModel.ToolSpec> | undefined) =>
    tools?.map((tool) => trimTool(tool, config.toolDescriptionChars ?? 120))
  return makeChat(config, {
    name: "ollama",
    floor: floorTokens,
    defaultContextWindow,
    defaultOutputReserve,
    toolOutputShare: defaultToolOutputShare,
    toolsOf,
    settings: (options) => ({
      systemRole: "system",
      mergeSystem: true,
      contextRole: "user",
      tokenParam: "max_tokens",
      maxTokens: options.maxOutputTokens,
      temperature: options.temperature,
      tools: toolsOf(options.tools),
      imageUrls: false
    })
  })
}
