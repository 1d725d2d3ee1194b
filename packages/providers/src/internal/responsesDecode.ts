/**
 * OpenAI Responses API answers → `ModelChunk`s: the semantic SSE events (`response.created`,
 * `response.output_item.added`, `response.output_text.delta`, `response.function_call_arguments.delta`,
 * `response.reasoning_summary_text.delta`, `response.output_item.done`, and a terminal `response.completed` / `response.incomplete` /
 * `response.failed`, or an `error` event) or a non-streamed JSON response object. There is no
 * `[DONE]` sentinel: the stream must end in a terminal event. `usage.input_tokens` already counts the
 * cached tokens (`input_tokens_details.cached_tokens`); the API reports no cache writes.
 *
 * A `reasoning` output item becomes a reasoning part in output order (before the text or call it led
 * to): its `id`, its `encrypted_content` (present when the request asked for it with `include`) and
 * its summary texts joined by a blank line. When streaming, the item of `response.output_item.done`
 * is the one kept: OpenAI documents that the `encrypted_content` of `output_item.added` may be
 * incomplete; summary deltas only fill the text until then.
 */
import type { LanguageModel } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { classify, type Opened, providerError } from "./http.js"
import { endedEarly, guarded, ResponseState } from "./responseState.js"

const Count = Schema.optional(Schema.NullOr(Schema.Number))

const Usage = Schema.Struct({
  input_tokens: Count,
  output_tokens: Count,
  input_tokens_details: Schema.optional(Schema.NullOr(Schema.Struct({ cached_tokens: Count })))
})
type Usage = typeof Usage.Type

const OutputItem = Schema.Struct({
  type: Schema.String,
  id: Schema.optional(Schema.String),
  call_id: Schema.optional(Schema.String),
  name: Schema.optional(Schema.String),
  arguments: Schema.optional(Schema.String),
  encrypted_content: Schema.optional(Schema.NullOr(Schema.String)),
  summary: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })))
  ),
  content: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })))
  )
})
type OutputItem = typeof OutputItem.Type

const ErrorBody = Schema.Struct({
  code: Schema.optional(Schema.NullOr(Schema.String)),
  message: Schema.optional(Schema.NullOr(Schema.String))
})

const Body = Schema.Struct({
  id: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  status: Schema.optional(Schema.NullOr(Schema.String)),
  output: Schema.optional(Schema.Array(OutputItem)),
  usage: Schema.optional(Schema.NullOr(Usage)),
  incomplete_details: Schema.optional(Schema.NullOr(Schema.Struct({ reason: Schema.optional(Schema.String) }))),
  error: Schema.optional(Schema.NullOr(ErrorBody))
})
type Body = typeof Body.Type

const Event = Schema.Struct({
  type: Schema.String,
  response: Schema.optional(Body),
  output_index: Schema.optional(Schema.Number),
  summary_index: Schema.optional(Schema.Number),
  item: Schema.optional(OutputItem),
  delta: Schema.optional(Schema.String),
  code: Schema.optional(Schema.NullOr(Schema.String)),
  message: Schema.optional(Schema.NullOr(Schema.String))
})
type Event = typeof Event.Type

/** The response ids a client has seen, for `previous_response_id` chains. */
export interface Observed {
  responseId: string | undefined
}

const setUsage = (state: ResponseState, usage: Usage | null | undefined): void => {
  if (usage === undefined || usage === null) return
  state.usage = {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    cacheReadTokens: usage.input_tokens_details?.cached_tokens ?? 0,
    cacheWriteTokens: 0
  }
}

/** An error code of the Responses API as the HTTP status it would have had. */
const statusOf = (code: string | null | undefined): number =>
  code === "rate_limit_exceeded" ? 429 : code === "server_is_overloaded" || code === "slow_down" ? 503 : 500

const failure = (provider: string, error: typeof ErrorBody.Type | null | undefined): LanguageModel.ProviderError =>
  classify(
    provider,
    statusOf(error?.code),
    JSON.stringify({ error: { type: error?.code ?? "server_error", message: error?.message ?? "response failed" } }),
    undefined
  )

/** Finish on a terminal body: usage, model, stop reason (tool_use when the model called a tool). */
const finish = (
  state: ResponseState,
  body: Body,
  observed: Observed,
  calls: boolean
): Either.Either<ReadonlyArray<LanguageModel.ModelChunk>, LanguageModel.ProviderError> => {
  if (body.model !== undefined) state.model = body.model
  if (body.id !== undefined) {
    observed.responseId = body.id
    state.responseId = body.id
  }
  setUsage(state, body.usage)
  const reason = body.incomplete_details?.reason
  state.stopReason =
    body.status === "incomplete"
      ? reason === "max_output_tokens"
        ? "max_tokens"
        : "other"
      : calls
        ? "tool_use"
        : "end_turn"
  state.finished = true
  return Either.map(state.response(), (response) => [{ _tag: "Done", response }])
}

const malformed = (provider: string, detail: string) => providerError(provider, "malformed_response", detail)

const decodeEvent = (provider: string, data: string): Either.Either<Event, LanguageModel.ProviderError> => {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch {
    return Either.left(malformed(provider, `event data is not JSON: ${data.slice(0, 200)}`))
  }
  return Either.mapLeft(Schema.decodeUnknownEither(Event)(value), (error) =>
    malformed(provider, `unexpected event shape: ${error.message.slice(0, 300)}`)
  )
}

/** A server compaction ran: its opaque `compaction` item is in the output. */
const countCompaction = (state: ResponseState, item: OutputItem | undefined): void => {
  if (item?.type !== "compaction") return
  const previous = state.contextEdits ?? { clearedInputTokens: 0, clearedToolUses: 0, compactions: 0 }
  state.contextEdits = { ...previous, compactions: previous.compactions + 1 }
}

/** The readable text of a reasoning item: its summary texts, a blank line between two. */
const summaryText = (item: OutputItem): string | undefined =>
  item.summary === undefined || item.summary === null
    ? undefined
    : item.summary
        .flatMap((part) => (part.type === "summary_text" && part.text !== undefined ? [part.text] : []))
        .join("\n\n")

/**
 * A reasoning item announced (`done` false: only its place and id) or finished (`done` true: id,
 * `encrypted_content` and summary as the API will take them back). An item without an id is kept
 * readable only (the render cannot send it back).
 */
const addReasoning = (state: ResponseState, key: string, item: OutputItem | undefined, done: boolean): void => {
  if (item?.type !== "reasoning") return
  const id = item.id === undefined || item.id.length === 0 ? undefined : item.id
  if (!done) {
    if (id !== undefined) state.reasoningItem(key, { itemId: id })
    return
  }
  const text = summaryText(item)
  const encrypted = item.encrypted_content
  state.reasoningItem(key, { itemId: id, encryptedContent: encrypted ?? undefined, text })
}

/** One output item announced or finished: function calls are keyed by their output index. */
const addCall = (
  state: ResponseState,
  key: string,
  item: OutputItem
): Extract<LanguageModel.ModelChunk, { readonly _tag: "ToolCallDelta" }> | undefined => {
  if (item.type !== "function_call") return undefined
  state.call(key, item.call_id ?? "", item.name ?? "")
  return { _tag: "ToolCallDelta", id: item.call_id ?? "", name: item.name ?? "", inputJson: "" }
}

/** Decode an opened response into chunks ending in `Done`; the response id goes to `observed`. */
export const chunks = (
  provider: string,
  opened: Opened,
  model: string,
  observed: Observed,
  maxOutputTokens?: number
): Stream.Stream<LanguageModel.ModelChunk, LanguageModel.ProviderError> =>
  Stream.suspend(() => {
    const state = new ResponseState(provider, model, maxOutputTokens)
    // Output indexes of function calls and whether their arguments arrived as deltas.
    const calls = new Map<string, { streamed: boolean }>()
    // Output indexes of reasoning items → the summary part their last summary delta belonged to.
    const summaries = new Map<string, number>()
    if (opened._tag === "Json") {
      return Stream.fromIterableEffect(
        Effect.gen(function* () {
          const body = yield* Either.mapLeft(Schema.decodeUnknownEither(Body)(opened.value), (error) =>
            malformed(provider, `unexpected response shape: ${error.message.slice(0, 300)}`)
          )
          if (body.status === "failed" || (body.error !== undefined && body.error !== null)) {
            return yield* Either.left(failure(provider, body.error))
          }
          if (body.output === undefined) return yield* Either.left(malformed(provider, "response has no output"))
          const out: Array<LanguageModel.ModelChunk> = []
          for (const [index, item] of body.output.entries()) {
            countCompaction(state, item)
            addReasoning(state, String(index), item, true)
            if (item.type === "message") {
              for (const content of item.content ?? []) {
                if (content.type === "output_text" && content.text !== undefined && content.text.length > 0) {
                  state.text(content.text)
                  out.push({ _tag: "TextDelta", text: content.text })
                }
              }
            }
            const announced = addCall(state, String(index), item)
            if (announced !== undefined) {
              calls.set(String(index), { streamed: true })
              state.callJson(String(index), item.arguments ?? "")
              out.push({ ...announced, inputJson: item.arguments ?? "" })
            }
          }
          return [...out, ...(yield* finish(state, body, observed, calls.size > 0))]
        })
      )
    }
    const step = (
      event: Event
    ): Either.Either<ReadonlyArray<LanguageModel.ModelChunk>, LanguageModel.ProviderError> => {
      const key = String(event.output_index ?? 0)
      switch (event.type) {
        case "response.created":
        case "response.in_progress":
          if (event.response?.model !== undefined) state.model = event.response.model
          if (event.response?.id !== undefined) {
            observed.responseId = event.response.id
            state.responseId = event.response.id
          }
          return Either.right([])
        case "response.output_item.added": {
          addReasoning(state, key, event.item, false)
          const announced = event.item === undefined ? undefined : addCall(state, key, event.item)
          if (announced === undefined) return Either.right([])
          calls.set(key, { streamed: false })
          return Either.right([announced])
        }
        case "response.output_text.delta":
          if (event.delta === undefined || event.delta.length === 0) return Either.right([])
          state.text(event.delta)
          return Either.right([{ _tag: "TextDelta", text: event.delta }])
        case "response.reasoning_summary_text.delta": {
          if (event.delta === undefined || event.delta.length === 0) return Either.right([])
          const part = event.summary_index ?? 0
          const previous = summaries.get(key)
          summaries.set(key, part)
          state.reasoning(key, {
            text: previous !== undefined && previous !== part ? `\n\n${event.delta}` : event.delta
          })
          return Either.right([])
        }
        case "response.function_call_arguments.delta": {
          const pending = calls.get(key)
          const call = pending === undefined ? undefined : state.callJson(key, event.delta ?? "")
          if (pending === undefined || call === undefined) {
            return Either.left(malformed(provider, `function_call_arguments.delta for unknown output ${key}`))
          }
          pending.streamed = true
          return Either.right([{ _tag: "ToolCallDelta", id: call.id, name: call.name, inputJson: event.delta ?? "" }])
        }
        case "response.output_item.done": {
          // A call whose arguments never streamed takes them from the finished item.
          const pending = calls.get(key)
          const item = event.item
          countCompaction(state, item)
          addReasoning(state, key, item, true)
          if (pending === undefined || pending.streamed || item?.arguments === undefined) return Either.right([])
          const call = state.callJson(key, item.arguments)
          pending.streamed = true
          return Either.right(
            call === undefined
              ? []
              : [{ _tag: "ToolCallDelta", id: call.id, name: call.name, inputJson: item.arguments }]
          )
        }
        case "response.completed":
        case "response.incomplete":
          if (event.response === undefined) return Either.left(malformed(provider, `${event.type} without a response`))
          return finish(state, event.response, observed, calls.size > 0)
        case "response.failed":
          return Either.left(failure(provider, event.response?.error))
        case "error":
          return Either.left(failure(provider, { code: event.code, message: event.message }))
        default:
          return Either.right([]) // content_part, *.done, summary parts, reasoning_text, future events
      }
    }
    return opened.events.pipe(
      Stream.mapConcatEffect((message) =>
        Effect.flatMap(decodeEvent(provider, message.data), (event) => guarded(state, step(event)))
      ),
      Stream.concat(
        Stream.suspend(() => (state.finished ? Stream.empty : Stream.fail(endedEarly(provider, "response.completed"))))
      )
    )
  })
