/**
 * `LanguageModel` over an OpenAI-compatible Chat Completions endpoint (`POST {baseUrl}/chat/completions`):
 * OpenAI (`https://api.openai.com/v1`), Ollama (`http://localhost:11434/v1`), vLLM, llama.cpp server.
 * Plain `fetch`, always streamed with `stream_options.include_usage` (SSE via eventsource-parser; a
 * server that answers with one JSON document is read too), retries with exponential backoff on 429 /
 * 5xx that honour `Retry-After` / `retry-after-ms`, a response timeout and an idle timeout. Sends
 * requests built by {@link OpenAICtx}, {@link OllamaCtx} or {@link DefaultCtx} unchanged (`streamRequest`).
 *
 * @since 0.1.0
 */
import { LanguageModel, Tracing } from "@ctxlog/core"
import type * as ConfigError from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { InvalidRequest } from "./InvalidRequest.js"
import * as chatRender from "./internal/chatRender.js"
import * as http from "./internal/http.js"
import {
  clientMembers,
  httpSettings,
  openAIEnvironment,
  bearerHeaders,
  type Secret,
  trimSlash
} from "./internal/modelClient.js"
import * as openaiDecode from "./internal/openaiDecode.js"
import { fromModelRequest, messagesOfRequest } from "./internal/sections.js"
import type { ChatCompletionsRequest } from "./ProviderRequest.js"
import { isReasoningModel } from "./OpenAICtx.js"
import { serialize } from "./RenderRecord.js"
import * as RequestValidator from "./RequestValidator.js"
import type * as RetryPolicy from "./RetryPolicy.js"

/** Client settings. @since 0.1.0 */
export interface ClientConfig {
  /** The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer …` when given (local servers usually need none). */
  readonly apiKey?: Secret | undefined
  readonly model: string
  /** Name reported in responses and errors. Default `openai-compatible`. */
  readonly provider?: string | undefined
  /** Extra headers (e.g. `OpenAI-Organization`). */
  readonly headers?: { readonly [name: string]: string } | undefined
  /** Force reasoning-model rendering of port requests (`developer` role); detected from the name otherwise. */
  readonly reasoning?: boolean | undefined
  readonly maxOutputTokens?: number | undefined
  /** Default 120 s. */
  readonly timeoutMs?: number | undefined
  /** Longest wait between two stream events (pings and partial events do not count). Default 60 s. */
  readonly idleTimeoutMs?: number | undefined
  /** Longest time for the whole call, retries and the whole stream included. Default 10 min. */
  readonly deadlineMs?: number | undefined
  /** Most bytes read of a response body (a JSON body, or a whole event stream). Default 64 MiB. */
  readonly maxResponseBytes?: number | undefined
  readonly retry?: Partial<RetryPolicy.RetryPolicy> | undefined
}

/** The port plus sending of pre-built requests. @since 0.1.0 */
export interface Client extends LanguageModel.LanguageModel.Service {
  readonly toRequest: (request: LanguageModel.ModelRequest) => Either.Either<ChatCompletionsRequest, InvalidRequest>
  readonly streamRequest: (
    request: ChatCompletionsRequest
  ) => Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>
  readonly generateRequest: (
    request: ChatCompletionsRequest
  ) => Effect.Effect<LanguageModel.ModelResponse, LanguageModel.ProviderError>
}

/** Build the client. @since 0.1.0 */
export const make = (config: ClientConfig): Client => {
  const provider = config.provider ?? "openai-compatible"
  const settings = httpSettings(
    provider,
    `${trimSlash(config.baseUrl)}/chat/completions`,
    bearerHeaders(config.apiKey, config.headers),
    config
  )
  const reasoning = config.reasoning ?? isReasoningModel(config.model)
  const toRequest = (request: LanguageModel.ModelRequest): Either.Either<ChatCompletionsRequest, InvalidRequest> =>
    Either.flatMap(RequestValidator.history(provider, messagesOfRequest(request)), () =>
      chatRender.renderChat(provider, fromModelRequest(request), {
        model: config.model,
        systemRole: reasoning ? "developer" : "system",
        mergeSystem: false,
        contextRole: reasoning ? "developer" : "system",
        tokenParam: reasoning ? "max_completion_tokens" : "max_tokens",
        maxTokens: request.maxOutputTokens ?? config.maxOutputTokens,
        temperature: reasoning ? undefined : request.temperature,
        tools: request.tools,
        reminder: undefined
      })
    )
  const streamRequest = (
    request: ChatCompletionsRequest
  ): Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError> =>
    Stream.unwrap(
      Effect.map(http.post(settings, serialize(request)), (opened) =>
        openaiDecode.chunks(provider, opened, request.model, request.max_completion_tokens ?? request.max_tokens)
      )
    ).pipe(Tracing.modelStream(provider, request.model, config.baseUrl))
  return clientMembers(provider, config.model, toRequest, streamRequest, settings)
}

/** The client as the `LanguageModel` service. @since 0.1.0 */
export const layer = (config: ClientConfig): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.succeed(LanguageModel.LanguageModel, make(config))

/**
 * The client from the environment: `OPENAI_BASE_URL` (default `https://api.openai.com/v1`; Ollama:
 * `http://localhost:11434/v1`), `OPENAI_API_KEY` (optional), `OPENAI_MODEL` (required).
 * @since 0.1.0
 */
export const layerConfig: Layer.Layer<LanguageModel.LanguageModel, ConfigError.ConfigError> = Layer.effect(
  LanguageModel.LanguageModel,
  Effect.map(openAIEnvironment, ({ baseUrl, apiKey, model }) =>
    make({
      baseUrl,
      model,
      provider: baseUrl.includes("api.openai.com") ? "openai" : "openai-compatible",
      apiKey: Option.getOrUndefined(apiKey)
    })
  )
)
