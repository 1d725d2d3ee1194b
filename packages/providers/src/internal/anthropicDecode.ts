/**
 * Anthropic Messages responses → `ModelChunk`s: the SSE events (`message_start`,
 * `content_block_start`, `content_block_delta`, `message_delta`, `message_stop`, `ping`, `error`) or a
 * non-streamed JSON message. `thinking` blocks (`thinking_delta` then one `signature_delta`) and
 * `redacted_thinking` blocks become reasoning parts of the response, signature and data kept byte
 * for byte (they stream no chunk of their own). Usage is normalized: the API splits the prompt into `input_tokens`,
 * `cache_creation_input_tokens` and `cache_read_input_tokens`; `inputTokens` is their sum.
 */
import type { LanguageModel } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { classify, type Opened, providerError } from "./http.js"
import { endedEarly, guarded, ResponseState } from "./responseState.js"

const provider = "anthropic"

const Count = Schema.optional(Schema.NullOr(Schema.Number))
const Usage = Schema.Struct({
  input_tokens: Count,
  output_tokens: Count,
  cache_creation_input_tokens: Count,
  cache_read_input_tokens: Count
})
type Usage = typeof Usage.Type

const Block = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String),
  thinking: Schema.optional(Schema.String),
  signature: Schema.optional(Schema.String),
  data: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  input: Schema.optional(Schema.Unknown)
})

/** `context_management.applied_edits` of a response edited by the API (context editing beta). */
const AppliedEdits = Schema.NullOr(
  Schema.Struct({
    applied_edits: Schema.optional(
      Schema.Array(Schema.Struct({ type: Schema.String, cleared_input_tokens: Count, cleared_tool_uses: Count }))
    )
  })
)
const ContextManagement = Schema.optional(AppliedEdits)
type ContextManagement = typeof AppliedEdits.Type | undefined

const setContextEdits = (state: ResponseState, management: ContextManagement): void => {
  const edits = management?.applied_edits
  if (edits === undefined || edits.length === 0) return
  state.contextEdits = {
    clearedInputTokens: edits.reduce((sum, edit) => sum + (edit.cleared_input_tokens ?? 0), 0),
    clearedToolUses: edits.reduce((sum, edit) => sum + (edit.cleared_tool_uses ?? 0), 0),
    compactions: 0
  }
}

const Event = Schema.Struct({
  type: Schema.String,
  index: Schema.optional(Schema.Number),
  message: Schema.optional(
    Schema.Struct({
      id: Schema.optional(Schema.String),
      model: Schema.optional(Schema.String),
      usage: Schema.optional(Usage)
    })
  ),
  content_block: Schema.optional(Block),
  delta: Schema.optional(
    Schema.Struct({
      type: Schema.optional(Schema.String),
      text: Schema.optional(Schema.String),
      thinking: Schema.optional(Schema.String),
      signature: Schema.optional(Schema.String),
      partial_json: Schema.optional(Schema.String),
      stop_reason: Schema.optional(Schema.NullOr(Schema.String))
    })
  ),
  usage: Schema.optional(Usage),
  context_management: ContextManagement,
  error: Schema.optional(Schema.Struct({ type: Schema.String, message: Schema.optional(Schema.String) }))
})
type Event = typeof Event.Type

const Full = Schema.Struct({
  id: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  content: Schema.Array(Block),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Usage,
  context_management: ContextManagement
})

const stopReason = (value: string | null | undefined): LanguageModel.StopReason =>
  value === "end_turn" || value === "tool_use" || value === "max_tokens" || value === "stop_sequence" ? value : "other"

const n = (value: number | null | undefined): number => value ?? 0

/** Merge reported usage into the running totals (later events repeat or extend earlier ones). */
const mergeUsage = (state: ResponseState, usage: Usage): void => {
  const previous = state.usage
  const cacheWrite =
    usage.cache_creation_input_tokens == null ? previous.cacheWriteTokens : usage.cache_creation_input_tokens
  const cacheRead = usage.cache_read_input_tokens == null ? previous.cacheReadTokens : usage.cache_read_input_tokens
  const uncached =
    usage.input_tokens == null
      ? previous.inputTokens - previous.cacheReadTokens - previous.cacheWriteTokens
      : usage.input_tokens
  state.usage = {
    inputTokens: n(uncached) + cacheRead + cacheWrite,
    outputTokens: usage.output_tokens == null ? previous.outputTokens : usage.output_tokens,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite
  }
}

const malformed = (detail: string) => providerError(provider, "malformed_response", detail)

const decodeJson = <A, I>(schema: Schema.Schema<A, I>, data: string): Either.Either<A, LanguageModel.ProviderError> => {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return Either.left(malformed(`event data is not JSON: ${data.slice(0, 200)}`))
  }
  return Either.mapLeft(Schema.decodeUnknownEither(schema)(value), (error) =>
    malformed(`unexpected event shape: ${error.message.slice(0, 300)}`)
  )
}

const step = (
  state: ResponseState,
  event: Event
): Either.Either<ReadonlyArray<LanguageModel.ModelChunk>, LanguageModel.ProviderError> => {
  const key = String(event.index ?? 0)
  switch (event.type) {
    case "message_start":
      if (event.message?.model !== undefined) state.model = event.message.model
      if (event.message?.id !== undefined) state.responseId = event.message.id
      if (event.message?.usage !== undefined) mergeUsage(state, event.message.usage)
      return Either.right([])
    case "content_block_start": {
      const block = event.content_block
      if (block?.type === "text" && block.text !== undefined && block.text.length > 0) {
        state.text(block.text)
        return Either.right([{ _tag: "TextDelta", text: block.text }])
      }
      if (block?.type === "thinking") {
        state.reasoning(key, {
          text: block.thinking,
          signature: block.signature === "" ? undefined : block.signature
        })
        return Either.right([])
      }
      if (block?.type === "redacted_thinking") {
        state.reasoning(key, { redactedData: block.data ?? "" })
        return Either.right([])
      }
      if (block?.type === "tool_use") {
        // Announce the call at once: a call with no input gets no input_json_delta.
        state.call(key, block.id ?? "", block.name ?? "")
        return Either.right([{ _tag: "ToolCallDelta", id: block.id ?? "", name: block.name ?? "", inputJson: "" }])
      }
      return Either.right([])
    }
    case "content_block_delta": {
      const delta = event.delta
      if (delta?.type === "text_delta" && delta.text !== undefined) {
        state.text(delta.text)
        return Either.right([{ _tag: "TextDelta", text: delta.text }])
      }
      if (delta?.type === "input_json_delta" && delta.partial_json !== undefined) {
        const call = state.callJson(key, delta.partial_json)
        if (call === undefined) return Either.left(malformed(`input_json_delta for unknown block ${key}`))
        return Either.right([{ _tag: "ToolCallDelta", id: call.id, name: call.name, inputJson: delta.partial_json }])
      }
      if (delta?.type === "thinking_delta" && delta.thinking !== undefined) {
        state.reasoning(key, { text: delta.thinking })
        return Either.right([])
      }
      if (delta?.type === "signature_delta" && delta.signature !== undefined) {
        state.reasoning(key, { signature: delta.signature })
        return Either.right([])
      }
      return Either.right([])
    }
    case "message_delta":
      if (event.delta?.stop_reason !== undefined) state.stopReason = stopReason(event.delta.stop_reason)
      if (event.usage !== undefined) mergeUsage(state, event.usage)
      setContextEdits(state, event.context_management)
      return Either.right([])
    case "message_stop": {
      state.finished = true
      return Either.map(state.response(), (response) => [{ _tag: "Done", response }])
    }
    case "error": {
      const type = event.error?.type ?? "api_error"
      const status = type === "overloaded_error" ? 529 : type === "rate_limit_error" ? 429 : 500
      return Either.left(classify(provider, status, JSON.stringify({ error: event.error }), undefined))
    }
    default:
      return Either.right([]) // ping, content_block_stop, future events
  }
}

/** Decode an opened response into chunks ending in `Done`, stopped far past `maxOutputTokens`. */
export const chunks = (
  opened: Opened,
  model: string,
  maxOutputTokens?: number
): Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError> =>
  Stream.suspend(() => {
    const state = new ResponseState(provider, model, maxOutputTokens)
    if (opened._tag === "Json") {
      return Stream.fromIterableEffect(
        Effect.flatMap(
          Either.mapLeft(Schema.decodeUnknownEither(Full)(opened.value), (error) =>
            malformed(`unexpected message shape: ${error.message.slice(0, 300)}`)
          ),
          (full) => {
            const out: Array<LanguageModel.ModelChunk> = []
            if (full.model !== undefined) state.model = full.model
            if (full.id !== undefined) state.responseId = full.id
            full.content.forEach((block, index) => {
              if (block.type === "text" && block.text !== undefined) {
                state.text(block.text)
                out.push({ _tag: "TextDelta", text: block.text })
              } else if (block.type === "thinking") {
                state.reasoning(String(index), {
                  text: block.thinking ?? "",
                  signature: block.signature
                })
              } else if (block.type === "redacted_thinking") {
                state.reasoning(String(index), { redactedData: block.data ?? "" })
              } else if (block.type === "tool_use") {
                const json = JSON.stringify(block.input ?? {})
                state.call(String(index), block.id ?? "", block.name ?? "")
                state.callJson(String(index), json)
                out.push({ _tag: "ToolCallDelta", id: block.id ?? "", name: block.name ?? "", inputJson: json })
              }
            })
            state.stopReason = stopReason(full.stop_reason)
            mergeUsage(state, full.usage)
            setContextEdits(state, full.context_management)
            return Either.map(state.response(), (response) => [...out, { _tag: "Done", response } as const])
          }
        )
      )
    }
    return opened.events.pipe(
      Stream.mapConcatEffect((message) =>
        Effect.flatMap(decodeJson(Event, message.data), (event) => guarded(state, step(state, event)))
      ),
      Stream.concat(
        Stream.suspend(() => (state.finished ? Stream.empty : Stream.fail(endedEarly(provider, "message_stop"))))
      )
    )
  })
