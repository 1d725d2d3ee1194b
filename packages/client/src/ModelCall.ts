/**
 * The chat span of a model call a framework makes with a ctxlog render (the AI SDK, the OpenAI Agents
 * SDK, LangGraph): the span is `Tracing.modelCall` of `@ctxlog/core`, the one every provider client
 * uses, around an answer the framework hands back later; the call is described by the turn module's
 * `ModelCallTrace.callOf` (conversation, provenance, parameters, input). Nothing here builds an
 * attribute.
 */
import { type LanguageModel, type Message, Tracing } from "@ctxlog/core"
import { ModelCallTrace } from "@ctxlog/turn"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Layer from "effect/Layer"
import type * as ManagedRuntime from "effect/ManagedRuntime"

/** Which model a framework called, and how. @since 0.8.0 */
export interface ModelCallTarget {
  /** The provider (`openai`, `anthropic`, or an AI SDK provider id such as `openai.chat`). */
  readonly provider: string
  readonly model: string
  /** The endpoint's base URL, when the integration knows it (`server.address`, `server.port`). */
  readonly endpoint?: string | undefined
  /** Whether the answer is streamed (`gen_ai.request.stream`). */
  readonly stream?: boolean | undefined
  /** Request parameters the framework set beside the render (`maxTokens`, `temperature`, ...). */
  readonly parameters?: Partial<{
    readonly maxTokens: number
    readonly temperature: number
    readonly topP: number
    readonly topK: number
    readonly stopSequences: ReadonlyArray<string>
    readonly frequencyPenalty: number
    readonly presencePenalty: number
    readonly seed: number
  }>
}

/** What the framework's model call answered. @since 0.8.0 */
export interface ModelCallAnswer {
  /** The provider's response id. */
  readonly id?: string | undefined
  /** The model that answered (when the framework does not say, the span names the requested model). */
  readonly model?: string | undefined
  /** The framework's finish reason (`stop`, `tool-calls`, `tool_calls`, `length`, `end_turn`, ...). */
  readonly finishReason: string
  readonly usage?: LanguageModel.Usage | undefined
  /** The answer's parts (for opt-in content capture). */
  readonly parts?: ReadonlyArray<Message.Part> | undefined
}

/** The open span of one model call: end it with the answer, or with the failure. @since 0.8.0 */
export interface ModelCallSpan {
  readonly end: (answer: ModelCallAnswer) => Promise<void>
  readonly fail: (error: unknown) => Promise<void>
}

/** A span that records nothing (tracing off). */
export const noSpan: ModelCallSpan = { end: async () => {}, fail: async () => {} }

const stopReasonOf = (reason: string): LanguageModel.StopReason => {
  switch (reason) {
    case "stop":
    case "end_turn":
    case "completed":
      return "end_turn"
    case "tool-calls":
    case "tool_calls":
    case "tool_use":
    case "tool_call":
      return "tool_use"
    case "length":
    case "max_tokens":
    case "incomplete":
      return "max_tokens"
    case "stop_sequence":
      return "stop_sequence"
    default:
      return "other"
  }
}

const noUsage: LanguageModel.Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }

/**
 * Open the chat span of a model call that sends `rendered` on `stream`. The span starts now (a child of
 * the active OpenTelemetry span, when there is one) and ends when {@link ModelCallSpan.end} or `fail`
 * is called; with tracing off (no tracer provider) nothing is started.
 */
export const openSpan = (
  runtime: ManagedRuntime.ManagedRuntime<never, unknown> | ManagedRuntime.ManagedRuntime<unknown, unknown>,
  traced: boolean,
  stream: string,
  rendered: ModelCallTrace.RenderedCall | undefined,
  target: ModelCallTarget
): ModelCallSpan => {
  if (!traced) return noSpan
  const described = rendered === undefined ? { conversationId: stream } : ModelCallTrace.callOf(stream, rendered)
  const call: Tracing.Call = {
    ...described,
    parameters: {
      ...described.parameters,
      ...target.parameters,
      ...(target.stream === true ? { stream: true } : {})
    }
  }
  const done = Deferred.unsafeMake<LanguageModel.ModelResponse, unknown>(FiberId.none)
  const span = Tracing.modelCall(Deferred.await(done), target.provider, target.model, target.endpoint).pipe(
    Tracing.withCall(call),
    Effect.exit
  )
  const fiber = (runtime as ManagedRuntime.ManagedRuntime<never, unknown>).runFork(span)
  const settle = async (exit: Exit.Exit<LanguageModel.ModelResponse, unknown>) => {
    Deferred.unsafeDone(done, exit)
    await Effect.runPromise(Fiber.await(fiber))
  }
  return {
    end: (answer) =>
      settle(
        Exit.succeed({
          provider: target.provider,
          model: answer.model ?? target.model,
          id: answer.id,
          parts: answer.parts ?? [],
          stopReason: stopReasonOf(answer.finishReason),
          usage: answer.usage ?? noUsage
        })
      ),
    fail: (error) => settle(Exit.fail(error))
  }
}

/** The layer that exports ctxlog's spans through a tracer provider (`@ctxlog/providers/otel`, loaded only when asked). */
export const tracerLayer = async (
  tracerProvider: unknown,
  serviceName: string | undefined
): Promise<Layer.Layer<never>> => {
  const Otel = await import("@ctxlog/providers/otel")
  return Otel.layer({
    tracerProvider: tracerProvider as Parameters<typeof Otel.layer>[0]["tracerProvider"],
    ...(serviceName === undefined ? {} : { serviceName })
  })
}
