/**
 * `LanguageModel` over the OpenAI Responses API (`POST {baseUrl}/responses`): plain `fetch`, always
 * streamed (semantic SSE events via eventsource-parser; a server that answers with one JSON response
 * object is read too), retries with exponential backoff on 429 / 5xx that honour `Retry-After` /
 * `retry-after-ms`, a response timeout, an idle timeout between events, an overall deadline and a
 * size cap (the limits every client shares). Sends requests built by `OpenAICtx.makeResponses`
 * unchanged (`streamRequest`), so the bytes sent are the bytes `RenderRecord` hashed. `reasoning`
 * output items become reasoning parts (id, `encrypted_content`, summary) that the Responses render
 * sends back before the output they led to.
 *
 * @since 0.2.0
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
  bearerHeaders,
  clientMembers,
  collect,
  httpSettings,
  openAIEnvironment,
  type Secret,
  trimSlash
} from "./internal/modelClient.js"
import * as responsesDecode from "./internal/responsesDecode.js"
import { fromModelRequest, messagesOfRequest } from "./internal/sections.js"
import * as serverContext from "./internal/serverContext.js"
import type { ResponsesRequest } from "./ProviderRequest.js"
import { isReasoningModel } from "./OpenAICtx.js"
import { serialize } from "./RenderRecord.js"
import * as RequestValidator from "./RequestValidator.js"
import type * as RetryPolicy from "./RetryPolicy.js"

/** Client settings. @since 0.2.0 */
export interface ClientConfig {
  readonly apiKey?: Secret | undefined
  readonly model: string
  /** The API root. Default `https://api.openai.com/v1`. */
  readonly baseUrl?: string | undefined
  /** Name reported in responses and errors. Default `openai`. */
  readonly provider?: string | undefined
  /** Extra headers (e.g. `OpenAI-Organization`). */
  readonly headers?: { readonly [name: string]: string } | undefined
  /** Force reasoning-model rendering of port requests (`developer` role); detected from the name otherwise. */
  readonly reasoning?: boolean | undefined
  readonly maxOutputTokens?: number | undefined
  /**
   * `false`: stateless use (`store: false`); requests built by `toRequest` then ask for
   * `include: ["reasoning.encrypted_content"]`, so reasoning items come back sendable. Unset: the
   * API default (stored).
   */
  readonly store?: boolean | undefined
  /** Time to get the response headers (or a whole JSON body). Default 120 s. */
  readonly timeoutMs?: number | undefined
  /** Longest wait between two stream events (partial events do not count). Default 60 s. */
  readonly idleTimeoutMs?: number | undefined
  /** Longest time for the whole call, retries and the whole stream included. Default 10 min. */
  readonly deadlineMs?: number | undefined
  /** Most bytes read of a response body (a JSON body, or a whole event stream). Default 64 MiB. */
  readonly maxResponseBytes?: number | undefined
  readonly retry?: Partial<RetryPolicy.RetryPolicy> | undefined
}

/** A response with the id the server gave it (the `previous_response_id` of a next call). @since 0.2.0 */
export interface Sent {
  readonly response: LanguageModel.ModelResponse
  readonly responseId: string | undefined
}

/** The port plus sending of pre-built requests. @since 0.2.0 */
export interface Client extends LanguageModel.LanguageModel.Service {
  /** Render a neutral request the way `OpenAICtx.makeResponses` would. */
  readonly toRequest: (request: LanguageModel.ModelRequest) => Either.Either<ResponsesRequest, InvalidRequest>
  /** Send a built request byte for byte (`RenderRecord.serialize`). */
  readonly streamRequest: (
    request: ResponsesRequest
  ) => Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError>
  readonly generateRequest: (
    request: ResponsesRequest
  ) => Effect.Effect<LanguageModel.ModelResponse, LanguageModel.ProviderError>
  /** `generateRequest`, also returning the server's response id. */
  readonly send: (request: ResponsesRequest) => Effect.Effect<Sent, LanguageModel.ProviderError>
}

/** Build the client. @since 0.2.0 */
export const make = (config: ClientConfig): Client => {
  const provider = config.provider ?? "openai"
  const settings = httpSettings(
    provider,
    `${trimSlash(config.baseUrl ?? "https://api.openai.com/v1")}/responses`,
    bearerHeaders(config.apiKey, config.headers),
    config
  )
  const reasoning = config.reasoning ?? isReasoningModel(config.model)
  const toRequest = (request: LanguageModel.ModelRequest): Either.Either<ResponsesRequest, InvalidRequest> =>
    Either.flatMap(RequestValidator.history("openai-responses", messagesOfRequest(request)), () =>
      chatRender
        .renderResponses(fromModelRequest(request), {
          model: config.model,
          systemRole: reasoning ? "developer" : "system",
          mergeSystem: false,
          contextRole: reasoning ? "developer" : "system",
          tokenParam: "max_tokens",
          maxTokens: request.maxOutputTokens ?? config.maxOutputTokens,
          temperature: reasoning ? undefined : request.temperature,
          tools: request.tools,
          reminder: undefined
        })
        .pipe(
          Either.map((rendered) =>
            config.store === undefined ? rendered : serverContext.responses(rendered, { store: config.store })
          )
        )
    )
  const streamObserved = (
    request: ResponsesRequest,
    observed: responsesDecode.Observed
  ): Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError> =>
    Stream.unwrap(
      Effect.map(http.post(settings, serialize(request)), (opened) =>
        responsesDecode.chunks(provider, opened, request.model, observed, request.max_output_tokens)
      )
    ).pipe(Tracing.modelStream(provider, request.model, config.baseUrl ?? "https://api.openai.com/v1"))
  const streamRequest = (request: ResponsesRequest) => streamObserved(request, { responseId: undefined })
  return {
    ...clientMembers(provider, config.model, toRequest, streamRequest, settings),
    send: (request) =>
      Effect.suspend(() => {
        const observed: responsesDecode.Observed = { responseId: undefined }
        return Effect.map(collect(provider, streamObserved(request, observed)), (response) => ({
          response,
          responseId: observed.responseId
        }))
      })
  }
}

/** The client as the `LanguageModel` service. @since 0.2.0 */
export const layer = (config: ClientConfig): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.succeed(LanguageModel.LanguageModel, make(config))

/**
 * The client from the environment: `OPENAI_API_KEY` (optional for local servers), `OPENAI_MODEL`
 * (required), `OPENAI_BASE_URL` (default `https://api.openai.com/v1`).
 * @since 0.2.0
 */
export const layerConfig: Layer.Layer<LanguageModel.LanguageModel, ConfigError.ConfigError> = Layer.effect(
  LanguageModel.LanguageModel,
  Effect.map(openAIEnvironment, ({ baseUrl, apiKey, model }) =>
    make({
      baseUrl,
      model,
      apiKey: Option.getOrUndefined(apiKey)
    })
  )
)
