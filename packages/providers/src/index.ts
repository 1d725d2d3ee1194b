/**
 * @ctxlog/providers — per-provider rendering of ctxlog windows (CtxBuilder) and LanguageModel clients.
 *
 * @since 0.1.0
 */

/** The Anthropic Messages strategy. @since 0.1.0 */
export * as AnthropicCtx from "./AnthropicCtx.js"
/** The builder interface and `forProvider`. @since 0.1.0 */
export * as CtxBuilder from "./CtxBuilder.js"
/** A builder config and the client call that sends what it renders, as one typed value. @since 0.8.0 */
export * as ProviderPair from "./ProviderPair.js"
/** Framework formats: a render in the AI SDK's, OpenAI Agents' or LangChain's own form. @since 0.8.0 */
export * as FrameworkFormat from "./FrameworkFormat.js"
/** The environment snapshot and its rendering as the turn reminder. @since 0.1.0 */
export * as EnvSnapshot from "./EnvSnapshot.js"
/** The generic OpenAI-compatible strategy. @since 0.1.0 */
export * as DefaultCtx from "./DefaultCtx.js"
/** The typed error for requests a provider would reject. @since 0.1.0 */
export * as InvalidRequest from "./InvalidRequest.js"
/** The Ollama strategy. @since 0.1.0 */
export * as OllamaCtx from "./OllamaCtx.js"
/** The OpenAI strategies (Chat Completions, Responses). @since 0.1.0 */
export * as OpenAICtx from "./OpenAICtx.js"
/** `PromptRendered` / `UsageReported` recording. @since 0.1.0 */
export * as RenderRecord from "./RenderRecord.js"
/** Prompt-cache rules and input prices per provider and model, dated, as data. @since 0.5.0 */
export * as CacheTable from "./CacheTable.js"
/** Predicted prompt-cache reads and writes per call, beside the recorded usage, and why a call missed. @since 0.5.0 */
export * as CacheModel from "./CacheModel.js"
/** What a builder leaves out of what the window counts: reasoning its provider does not take back. @since 0.8.0 */
export * as SentTokens from "./SentTokens.js"
/** Tool pairing and adjacency checks. @since 0.1.0 */
export * as RequestValidator from "./RequestValidator.js"
/** Prompt sizes, exact where the provider offers a count (`count_tokens`, o200k/cl100k). @since 0.2.0 */
export * as ExactTokenCounter from "./ExactTokenCounter.js"
/** Usage-calibrated token estimates. @since 0.1.0 */
export * as TokenEstimate from "./TokenEstimate.js"
/** Head + tail truncation of tool outputs. @since 0.1.0 */
export * as Truncation from "./Truncation.js"
/** `LanguageModel` over the Anthropic Messages API. @since 0.1.0 */
export * as AnthropicModel from "./AnthropicModel.js"
/** A deterministic scripted `LanguageModel`. @since 0.1.0 */
export * as OfflineModel from "./OfflineModel.js"
/** `LanguageModel` over OpenAI-compatible Chat Completions (OpenAI, Ollama, vLLM, llama.cpp). @since 0.1.0 */
export * as OpenAICompatibleModel from "./OpenAICompatibleModel.js"
/** `LanguageModel` over the OpenAI Responses API, streamed. @since 0.2.0 */
export * as OpenAIResponsesModel from "./OpenAIResponsesModel.js"
/** The typed error of the message adapters (subpaths `./ai-sdk`, `./langchain`, `./openai`, `./anthropic`). @since 0.1.0 */
export * as AdapterError from "./AdapterError.js"
/** Retry policy and schedule of the clients. @since 0.1.0 */
export * as RetryPolicy from "./RetryPolicy.js"
/** LangChain's `trimMessages` (strategy, partial messages, `startOn` / `endOn`, system) over ctxlog messages. @since 0.4.0 */
export * as TrimMessages from "./TrimMessages.js"
