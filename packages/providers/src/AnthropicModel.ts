/**
 * `LanguageModel` over the Anthropic Messages API (`POST /v1/messages`, `anthropic-version` header),
 * with plain `fetch`: always streamed (SSE via eventsource-parser), usage normalized so `inputTokens`
 * is the whole prompt (uncached + cache read + cache write), retries with exponential backoff on
 * 429 / 5xx / 529 that honour `Retry-After`, a response timeout and an idle timeout between events.
 * Besides the port, the client sends requests built by {@link AnthropicCtx} unchanged
 * (`streamRequest`), so the bytes sent are the bytes `RenderRecord` hashed.
 *
 * @since 0.1.0
 */
import { LanguageModel, Tracing } from "@ctxlog/core"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { minCacheableTokensFor } from "./AnthropicCtx.js"
import type { InvalidRequest } from "./InvalidRequest.js"
import * as anthropicDecode from "./internal/anthropicDecode.js"
import * as anthropicRender from "./internal/anthropicRender.js"
import * as http from "./internal/http.js"
import { clientMembers, httpSettings, reveal, type Secret, trimSlash } from "./internal/modelClient.js"
import { fromModelRequest, messagesOfRequest } from "./internal/sections.js"
import * as serverContext from "./internal/serverContext.js"
import type { AnthropicRequest } from "./ProviderRequest.js"
import { serialize } from "./RenderRecord.js"
import * as RequestValidator from "./RequestValidator.js"
import type * as RetryPolicy from "./RetryPolicy.js"

/** Client settings. @since 0.1.0 */
export interface ClientConfig {
  readonly apiKey: Secret
  readonly model: string
  /** Default `https://api.anthropic.com`. */
  readonly baseUrl?: string | undefined
  /** Default `2023-06-01`. */
  readonly anthropicVersion?: string | undefined
  /** Values for the `anthropic-beta` header. */
  readonly betas?: ReadonlyArray<string> | undefined
  /** `max_tokens` when the request does not say. Default 4096. */
  readonly maxOutputTokens?: number | undefined
  /** Time to get the response headers (or a whole JSON body). Default 120 s. */
  readonly timeoutMs?: number | undefined
  /** Longest wait between two stream events (pings and partial events do not count). Default 60 s. */
  readonly idleTimeoutMs?: number | undefined
  /** Longest time for the whole call, retries and the whole stream included. Default 10 min. */
  readonly deadlineMs?: number | undefined
  /** Most bytes read of a response body (a JSON body, or a whole event stream). Default 64 MiB. */
  readonly maxResponseBytes?: number | undefined
  readonly retry?: Partial<RetryPolicy.RetryPolicy> | undefined
  /** Cache breakpoints for port requests: the minimum cacheable length (default by model). */
  readonly minCacheableTokens?: number | undefined
  /** Place cache breakpoints on port requests. Default true. */
  readonly promptCaching?: boolean | undefined
  /** Enable extended thinking on port requests with this budget (see `AnthropicCtx.Config.thinkingBudget`). */
  readonly thinkingBudget?: number | undefined
}

/** The port plus sending of pre-built requests. @since 0.1.0 */
export interface Client extends LanguageModel.LanguageModel.Service {
  /** Render a neutral request the way {@link AnthropicCtx} would. */
  readonly toRequest: (request: LanguageModel.ModelRequest) => Either.Either<AnthropicRequest, InvalidRequest>
  /** Send a built request byte for byte (`RenderRecord.serialize`). */
  readonly streamRequest: (
    request: AnthropicRequest
  ) => Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>
  readonly generateRequest: (
    request: AnthropicRequest
  ) => Effect.Effect<LanguageModel.ModelResponse, LanguageModel.ProviderError>
}

/** The Messages API version sent by default. @since 0.1.0 */
export const defaultVersion = "2023-06-01"

/** Build the client. @since 0.1.0 */
export const make = (config: ClientConfig): Client => {
  const settings = httpSettings(
    "anthropic",
    `${trimSlash(config.baseUrl ?? "https://api.anthropic.com")}/v1/messages`,
    {
      "x-api-key": reveal(config.apiKey),
      "anthropic-version": config.anthropicVersion ?? defaultVersion,
      accept: "text/event-stream",
      ...(config.betas === undefined || config.betas.length === 0 ? {} : { "anthropic-beta": config.betas.join(",") })
    },
    config
  )
  // Context editing and the memory tool need their beta; asked for by the request, not the config.
  const withBetas = (request: AnthropicRequest): http.Settings => {
    if (!serverContext.needsBeta(request) || (config.betas ?? []).includes(serverContext.contextManagementBeta)) {
      return settings
    }
    const betas = [...(config.betas ?? []), serverContext.contextManagementBeta]
    return { ...settings, headers: { ...settings.headers, "anthropic-beta": betas.join(",") } }
  }
  const toRequest = (request: LanguageModel.ModelRequest): Either.Either<AnthropicRequest, InvalidRequest> =>
    Either.flatMap(RequestValidator.history("anthropic", messagesOfRequest(request)), () =>
      Either.map(
        anthropicRender.render(fromModelRequest(request), {
          model: config.model,
          maxTokens: request.maxOutputTokens ?? config.maxOutputTokens ?? 4096,
          temperature: request.temperature,
          tools: request.tools,
          reminder: undefined,
          minCacheableTokens: config.minCacheableTokens ?? minCacheableTokensFor(config.model),
          cache: config.promptCaching ?? true,
          thinkingBudget: config.thinkingBudget
        }),
        (rendered) => rendered.request
      )
    )
  const streamRequest = (
    request: AnthropicRequest
  ): Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError> =>
    Stream.unwrap(
      Effect.map(http.post(withBetas(request), serialize(request)), (opened) =>
        anthropicDecode.chunks(opened, request.model, request.max_tokens)
      )
    ).pipe(Tracing.modelStream("anthropic", request.model, config.baseUrl ?? "https://api.anthropic.com"))
  return clientMembers("anthropic", config.model, toRequest, streamRequest, settings)
}

/** The client as the `LanguageModel` service. @since 0.1.0 */
export const layer = (config: ClientConfig): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.succeed(LanguageModel.LanguageModel, make(config))

/**
 * The client from the environment: `ANTHROPIC_API_KEY` (required), `ANTHROPIC_MODEL` (default
 * `claude-sonnet-4-5`), `ANTHROPIC_BASE_URL` (optional).
 * @since 0.1.0
 */
export const layerConfig: Layer.Layer<LanguageModel.LanguageModel, ConfigError.ConfigError> = Layer.effect(
  LanguageModel.LanguageModel,
  Effect.map(
    Config.all({
      apiKey: Config.redacted("ANTHROPIC_API_KEY"),
      model: Config.withDefault(Config.string("ANTHROPIC_MODEL"), "claude-sonnet-4-5"),
      baseUrl: Config.option(Config.string("ANTHROPIC_BASE_URL"))
    }),
    ({ apiKey, model, baseUrl }) => make({ apiKey, model, baseUrl: Option.getOrUndefined(baseUrl) })
  )
)
