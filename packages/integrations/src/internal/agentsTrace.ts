/**
 * The chat span of an OpenAI Agents SDK model call: a `Model` wrapper that opens the span (the client's
 * `Context.modelCall`, with the render the session's `callModelInputFilter` made for this call) when
 * the runner calls the model, and ends it with the response's id, usage (cached input tokens as cache
 * reads) and finish reason, streamed or not. The SDK's own tracing (its trace processors) is left as
 * it is.
 */
import type { ModelCallAnswer, ModelCallSpan } from "@ctxlog/client"
import type { LanguageModel, Message } from "@ctxlog/core"
import { type AgentItem, fromAgentItems } from "@ctxlog/providers/openai"
import type { Model, ModelRequest, ModelResponse, StreamEvent } from "@openai/agents"
import * as Either from "effect/Either"

type Details = Readonly<Record<string, number>> | ReadonlyArray<Readonly<Record<string, number>>> | undefined

const sumOf = (details: Details, key: string): number =>
  (Array.isArray(details) ? details : details === undefined ? [] : [details]).reduce(
    (total: number, entry: Readonly<Record<string, number>>) => total + (entry[key] ?? 0),
    0
  )

/** The SDK's usage of one call (OpenAI reports cached input, not cache writes). */
const usageOf = (usage: {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly inputTokensDetails?: Details
}): LanguageModel.Usage => ({
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens,
  cacheReadTokens: sumOf(usage.inputTokensDetails, "cached_tokens"),
  cacheWriteTokens: 0
})

/** The answer of a response: its id, usage, parts, and a finish reason (a function call, else a stop). */
const answerOf = (response: {
  readonly responseId?: string | undefined
  readonly usage: Parameters<typeof usageOf>[0]
  readonly output: ReadonlyArray<unknown>
  readonly providerData?: Readonly<Record<string, unknown>> | undefined
}): ModelCallAnswer => {
  const items = response.output as ReadonlyArray<AgentItem>
  const converted = fromAgentItems(items)
  const parts: ReadonlyArray<Message.Part> = Either.isRight(converted)
    ? converted.right.flatMap((message) => message.parts)
    : []
  const called = items.some((item) => (item as { readonly type?: unknown }).type === "function_call")
  // The Responses model hands the raw response over as `providerData`: the model that answered is on it.
  const model = response.providerData?.model
  return {
    id: response.responseId,
    ...(typeof model === "string" ? { model } : {}),
    finishReason: called ? "tool_calls" : "stop",
    usage: usageOf(response.usage),
    parts
  }
}

/** `model`, with a chat span around each call; `open` opens it (with the render of this call). */
export const tracedModel = (model: Model, open: (request: ModelRequest, stream: boolean) => Promise<ModelCallSpan>) => {
  const traced: Model = {
    ...(model.supportsPromptModelSelection === undefined
      ? {}
      : { supportsPromptModelSelection: model.supportsPromptModelSelection }),
    getResponse: async (request: ModelRequest): Promise<ModelResponse> => {
      const span = await open(request, false)
      const response = await model.getResponse(request).then(undefined, async (error: unknown) => {
        await span.fail(error)
        throw error
      })
      await span.end(answerOf(response))
      return response
    },
    getStreamedResponse: (request: ModelRequest): AsyncIterable<StreamEvent> => ({
      async *[Symbol.asyncIterator]() {
        const span = await open(request, true)
        let ended = false
        try {
          for await (const event of model.getStreamedResponse(request)) {
            if (event.type === "response_done") {
              const done = event.response
              await span.end(
                answerOf({
                  responseId: done.id,
                  usage: done.usage,
                  output: done.output,
                  providerData: done.providerData
                })
              )
              ended = true
            }
            yield event
          }
        } catch (error) {
          if (!ended) await span.fail(error)
          ended = true
          throw error
        } finally {
          if (!ended) await span.fail(new Error("the stream ended without a response"))
        }
      }
    })
  }
  if (model.getRetryAdvice !== undefined) {
    const advice = model.getRetryAdvice.bind(model)
    return { ...traced, getRetryAdvice: advice } satisfies Model
  }
  return traced
}
