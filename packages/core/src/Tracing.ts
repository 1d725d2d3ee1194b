/**
 * Spans for window operations and model calls, through Effect's tracer (`Effect.withSpan`). Off by
 * default: an operation checks one context reference and runs untouched. `layer` turns them on; with
 * `@effect/opentelemetry`'s tracer layer (or `@ctxlog/providers/otel`, which provides both) they
 * are exported as OpenTelemetry spans. Spans wrap whole operations at the service boundary, never
 * single events, so the cost per operation is one span whatever it writes.
 *
 * Attributes: `ctxlog.stream`, `ctxlog.version`, `ctxlog.events`, `ctxlog.tokens.<partition>`,
 * `ctxlog.compaction.tier`, and for model calls the `gen_ai.*` usage attributes plus
 * `ctxlog.usage.cache_read_tokens` / `ctxlog.usage.cache_write_tokens`.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { ModelChunk, ModelResponse, Usage } from "./LanguageModel.js"
import type { Window } from "./Window.js"
import type { WindowEvent } from "./WindowEvent.js"

/** Whether ctxlog creates spans. Defaults to off. @since 0.2.0 */
export class TracingEnabled extends Context.Reference<TracingEnabled>()("@ctxlog/core/TracingEnabled", {
  defaultValue: () => false
}) {}

/** Turns ctxlog's spans on (export them with an OpenTelemetry tracer layer). @since 0.2.0 */
export const layer: Layer.Layer<never> = Layer.succeed(TracingEnabled, true)

/** Span attributes. @since 0.2.0 */
export type Attributes = Readonly<Record<string, string | number | boolean>>

/** Tokens per partition of a window, as span attributes. @since 0.2.0 */
export const windowAttributes = (window: Window): Attributes => ({
  "ctxlog.version": window.version,
  "ctxlog.tokens.system": window.tokens.system,
  "ctxlog.tokens.knowledge": window.tokens.knowledge,
  "ctxlog.tokens.task_state": window.tokens.taskState,
  "ctxlog.tokens.signals": window.tokens.signals,
  "ctxlog.tokens.history": window.tokens.history,
  "ctxlog.tokens.total": window.tokens.total
})

/**
 * What an operation did, as span attributes: the window after it, the events written, the tier of a
 * compaction among them and the usage a `UsageReported` among them carried.
 * @since 0.2.0
 */
export const outcomeAttributes = (outcome: {
  readonly window: Window
  readonly events: ReadonlyArray<WindowEvent>
}): Attributes => {
  const attributes: Record<string, string | number | boolean> = {
    ...windowAttributes(outcome.window),
    "ctxlog.events": outcome.events.length
  }
  for (const event of outcome.events) {
    if (event._tag === "Compacted" || event._tag === "CompactionFailed") {
      attributes["ctxlog.compaction.tier"] = event.tier
    }
    if (event._tag === "UsageReported") Object.assign(attributes, usageAttributes(event))
  }
  return attributes
}

/** Reported usage, as span attributes (OpenTelemetry GenAI names where they exist). @since 0.2.0 */
export const usageAttributes = (usage: Usage): Attributes => ({
  "gen_ai.usage.input_tokens": usage.inputTokens,
  "gen_ai.usage.output_tokens": usage.outputTokens,
  "ctxlog.usage.cache_read_tokens": usage.cacheReadTokens,
  "ctxlog.usage.cache_write_tokens": usage.cacheWriteTokens
})

/**
 * Run `self` in a span when tracing is on; `after` adds attributes from its result.
 * @since 0.2.0
 */
export const span = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  name: string,
  attributes: Attributes,
  after?: (value: A) => Attributes
): Effect.Effect<A, E, R> =>
  Effect.flatMap(TracingEnabled, (on) =>
    on
      ? Effect.withSpan(
          after === undefined ? self : Effect.tap(self, (value) => Effect.annotateCurrentSpan(after(value))),
          name,
          { attributes }
        )
      : self
  )

const modelAttributes = (provider: string, model: string): Attributes => ({
  "gen_ai.system": provider,
  "gen_ai.request.model": model
})

const responseAttributes = (response: ModelResponse): Attributes => ({
  "gen_ai.response.model": response.model,
  "ctxlog.stop_reason": response.stopReason,
  ...usageAttributes(response.usage)
})

/** A model call that answers at once, in a span when tracing is on. @since 0.2.0 */
export const modelCall = <E, R>(
  self: Effect.Effect<ModelResponse, E, R>,
  provider: string,
  model: string
): Effect.Effect<ModelResponse, E, R> =>
  span(self, "ctxlog.model.call", modelAttributes(provider, model), responseAttributes)

/**
 * A model call's stream in a span when tracing is on: the span lasts until the stream ends, and the
 * final response sets the response model, stop reason and usage attributes.
 * @since 0.2.0
 */
export const modelStream =
  (provider: string, model: string) =>
  <E, R>(self: Stream.Stream<ModelChunk, E, R>): Stream.Stream<ModelChunk, E, R> =>
    Stream.unwrap(
      Effect.map(TracingEnabled, (on) =>
        on
          ? Stream.withSpan(
              Stream.tap(self, (chunk) =>
                chunk._tag === "Done" ? Effect.annotateCurrentSpan(responseAttributes(chunk.response)) : Effect.void
              ),
              "ctxlog.model.call",
              { attributes: modelAttributes(provider, model) }
            )
          : self
      )
    )
