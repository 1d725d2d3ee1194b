/**
 * OpenAI-compatible Chat Completions responses → `ModelChunk`s: SSE chunks (`choices[].delta`,
 * `finish_reason`, a final usage chunk when `stream_options.include_usage` is set, `[DONE]`) or a
 * non-streamed JSON completion. A `reasoning_content` field (DeepSeek, Qwen, vLLM reasoning parsers)
 * becomes a reasoning part leading the response. `prompt_tokens` already counts cached tokens
 * (`prompt_tokens_details.cached_tokens`); these APIs report no cache writes.
 */
import type { LanguageModel } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { classify, type Opened, providerError } from "./http.js"
import { endedEarly, guarded, ResponseState } from "./responseState.js"

const Count = Schema.optional(Schema.NullOr(Schema.Number))
const Usage = Schema.NullOr(
  Schema.Struct({
    prompt_tokens: Count,
    completion_tokens: Count,
    prompt_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ cached_tokens: Count })))
  })
)
type Usage = typeof Usage.Type

const ToolCallDelta = Schema.Struct({
  index: Schema.optional(Schema.Number),
  id: Schema.optional(Schema.NullOr(Schema.String)),
  function: Schema.optional(
    Schema.Struct({
      name: Schema.optional(Schema.NullOr(Schema.String)),
      arguments: Schema.optional(Schema.NullOr(Schema.String))
    })
  )
})

const Message = Schema.Struct({
  content: Schema.optional(Schema.NullOr(Schema.String)),
  reasoning_content: Schema.optional(Schema.NullOr(Schema.String)),
  tool_calls: Schema.optional(Schema.NullOr(Schema.Array(ToolCallDelta)))
})

const ErrorBody = Schema.Struct({
  message: Schema.optional(Schema.String),
  type: Schema.optional(Schema.NullOr(Schema.String)),
  code: Schema.optional(Schema.Unknown)
})

const Chunk = Schema.Struct({
  id: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  choices: Schema.optional(
    Schema.Array(
      Schema.Struct({
        delta: Schema.optional(Message),
        message: Schema.optional(Message),
        finish_reason: Schema.optional(Schema.NullOr(Schema.String))
      })
    )
  ),
  usage: Schema.optional(Usage),
  error: Schema.optional(ErrorBody)
})
type Chunk = typeof Chunk.Type

const stopReason = (value: string | null | undefined): LanguageModel.StopReason =>
  value === "stop"
    ? "end_turn"
    : value === "tool_calls" || value === "function_call"
      ? "tool_use"
      : value === "length"
        ? "max_tokens"
        : "other"

const setUsage = (state: ResponseState, usage: Usage | undefined): void => {
  if (usage === undefined || usage === null) return
  state.usage = {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    cacheReadTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: 0
  }
}

const decodeChunk = (provider: string, data: string): Either.Either<Chunk, LanguageModel.ProviderError> => {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return Either.left(providerError(provider, "malformed_response", `chunk is not JSON: ${data.slice(0, 200)}`))
  }
  return Either.mapLeft(Schema.decodeUnknownEither(Chunk)(value), (error) =>
    providerError(provider, "malformed_response", `unexpected chunk shape: ${error.message.slice(0, 300)}`)
  )
}

const apply = (
  provider: string,
  state: ResponseState,
  chunk: Chunk,
  seen: { finish: boolean }
): Either.Either<ReadonlyArray<LanguageModel.ModelChunk>, LanguageModel.ProviderError> => {
  if (chunk.error !== undefined) {
    return Either.left(classify(provider, 500, JSON.stringify({ error: chunk.error }), undefined))
  }
  if (chunk.model !== undefined) state.model = chunk.model
  if (chunk.id !== undefined && chunk.id.length > 0) state.responseId = chunk.id
  setUsage(state, chunk.usage)
  const out: Array<LanguageModel.ModelChunk> = []
  for (const choice of chunk.choices ?? []) {
    const delta = choice.delta ?? choice.message
    const thought = delta?.reasoning_content
    if (thought !== undefined && thought !== null && thought.length > 0) state.reasoning("chat", { text: thought })
    if (delta?.content !== undefined && delta.content !== null && delta.content.length > 0) {
      state.text(delta.content)
      out.push({ _tag: "TextDelta", text: delta.content })
    }
    for (const [position, call] of (delta?.tool_calls ?? []).entries()) {
      const key = String(call.index ?? position)
      state.call(key, call.id ?? "", call.function?.name ?? "")
      const args = call.function?.arguments ?? ""
      const pending = state.callJson(key, args)
      // Announce a new call (it carries the id) even before any arguments arrive.
      if (pending !== undefined && (args.length > 0 || (call.id ?? "").length > 0)) {
        out.push({ _tag: "ToolCallDelta", id: pending.id, name: pending.name, inputJson: args })
      }
    }
    if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
      state.stopReason = stopReason(choice.finish_reason)
      seen.finish = true
    }
  }
  return Either.right(out)
}

const done = (state: ResponseState) =>
  Either.map(state.response(), (response): ReadonlyArray<LanguageModel.ModelChunk> => [{ _tag: "Done", response }])

/** Decode an opened response into chunks ending in `Done`, stopped far past `maxOutputTokens`. */
export const chunks = (
  provider: string,
  opened: Opened,
  model: string,
  maxOutputTokens?: number
): Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError> =>
  Stream.suspend(() => {
    const state = new ResponseState(provider, model, maxOutputTokens)
    const seen = { finish: false }
    if (opened._tag === "Json") {
      return Stream.fromIterableEffect(
        Effect.gen(function* () {
          const chunk = yield* Either.mapLeft(Schema.decodeUnknownEither(Chunk)(opened.value), (error) =>
            providerError(provider, "malformed_response", `unexpected completion shape: ${error.message.slice(0, 300)}`)
          )
          if (chunk.error === undefined && (chunk.choices ?? []).length === 0) {
            return yield* Either.left(providerError(provider, "malformed_response", "completion has no choices"))
          }
          const out = yield* apply(provider, state, chunk, seen)
          return [...out, ...(yield* done(state))]
        })
      )
    }
    return opened.events.pipe(
      Stream.takeWhile((message) => message.data.trim() !== "[DONE]"),
      Stream.mapConcatEffect((message) =>
        Effect.flatMap(decodeChunk(provider, message.data), (chunk) =>
          guarded(state, apply(provider, state, chunk, seen))
        )
      ),
      // `[DONE]` (or the end of the stream after a finish_reason) completes the response.
      Stream.concat(
        Stream.suspend(() =>
          seen.finish
            ? Stream.fromIterableEffect(done(state))
            : Stream.fail(endedEarly(provider, "a choice with a finish_reason"))
        )
      )
    )
  })
