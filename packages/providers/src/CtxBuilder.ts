/**
 * `CtxBuilder`: turns a window into the exact request a provider receives, purely. One strategy per
 * provider ({@link AnthropicCtx}, {@link OpenAICtx}, {@link OllamaCtx}, {@link DefaultCtx}), picked by
 * {@link forProvider}. Every `build` validates tool pairing first and the provider's own adjacency
 * rules after rendering, and returns a typed {@link InvalidRequest} rather than a request the
 * provider would reject.
 *
 * @since 0.1.0
 */
import * as AnthropicCtx from "./AnthropicCtx.js"
import * as DefaultCtx from "./DefaultCtx.js"
import type { CtxBuilder } from "./internal/builderTypes.js"
import type { AnthropicRequest, ChatCompletionsRequest, ResponsesRequest } from "./internal/wire.js"
import * as OllamaCtx from "./OllamaCtx.js"
import * as OpenAICtx from "./OpenAICtx.js"

/** Per-render options. @since 0.1.0 */
export type { BuildOptions } from "./internal/builderTypes.js"
/** What a render holds, by the window's own token counts. @since 0.1.0 */
export type { BuildStats } from "./internal/builderTypes.js"
/** A rendered request and its stats. @since 0.1.0 */
export type { Built } from "./internal/builderTypes.js"
/** History to fold into a summary: the compaction package's plan plus a transcript. @since 0.1.0 */
export type { CompressionPlan } from "./internal/builderTypes.js"
/** Renders windows for one provider. @since 0.1.0 */
export type { CtxBuilder } from "./internal/builderTypes.js"
/** Settings every builder takes. @since 0.1.0 */
export type { CommonConfig } from "./internal/builderTypes.js"

/** Any request a builder renders. @since 0.1.0 */
export type RenderedRequest = AnthropicRequest | ChatCompletionsRequest | ResponsesRequest

/** Which builder to use, with its settings. @since 0.1.0 */
export type ProviderConfig =
  | ({ readonly provider: "anthropic" } & AnthropicCtx.Config)
  | ({ readonly provider: "openai" } & OpenAICtx.Config)
  | ({ readonly provider: "ollama" } & OllamaCtx.Config)
  | ({ readonly provider: "default" } & DefaultCtx.Config)

/** Pick the builder for a provider. @since 0.1.0 */
export const forProvider = (config: ProviderConfig): CtxBuilder<RenderedRequest> => {
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
