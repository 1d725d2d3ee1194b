/**
 * Spans for window operations and model calls, through Effect's tracer (`Effect.fn` for an operation,
 * {@link fn}; `Effect.withSpan` for a model call's stream). Off by default: an operation checks one
 * context reference and runs untouched. `layer` turns them on; with
 * `@effect/opentelemetry`'s tracer layer (or `@ctxlog/providers/otel`, which provides both) they
 * are exported as OpenTelemetry spans. Spans wrap whole operations at the service boundary, never
 * single events, so the cost per operation is one span whatever it writes.
 *
 * Attributes: `ctxlog.stream`, `ctxlog.version`, `ctxlog.events`, `ctxlog.tokens.<partition>`,
 * `ctxlog.compaction.tier`, and the `gen_ai.*` usage attributes. A model call is a GenAI inference span
 * (`chat {model}`, kind client) whose attributes {@link GenAi} builds, with the conversation id and
 * the render's provenance the caller set with {@link withCall}; a compaction is a span of its own
 * (`compact {stream}`) with `gen_ai.conversation.compacted` and its receipt.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as GenAi from "./GenAi.js"
import type { ModelChunk, ModelResponse, Usage } from "./LanguageModel.js"
import type * as Message from "./Message.js"
import type { Window } from "./Window.js"
import type { WindowEvent } from "./WindowEvent.js"

/** Whether ctxlog creates spans. Defaults to off. @since 0.2.0 */
export class TracingEnabled extends Context.Reference<TracingEnabled>()("@ctxlog/core/TracingEnabled", {
  defaultValue: () => false
}) {}

/** Turns ctxlog's spans on (export them with an OpenTelemetry tracer layer). @since 0.2.0 */
export const layer: Layer.Layer<never> = Layer.succeed(TracingEnabled, true)

/**
 * Set one attribute on the current span, as `Effect.annotateCurrentSpan(key, value)` does (a span whose
 * propagation is disabled hands it to its parent), without its cost when there is no span to annotate:
 * `annotateCurrentSpan` then fails internally with an exception (a stack trace) it ignores, on every
 * call of every `Effect.fn` step a replay runs with the tracer off (ADR 0168).
 * @since 0.8.0
 */
export const annotate = (key: string, value: unknown): Effect.Effect<void> =>
  Effect.contextWith((context) => {
    let current = Context.getOption(context, Tracer.ParentSpan)
    while (
      Option.isSome(current) &&
      current.value._tag === "Span" &&
      Context.get(current.value.context, Tracer.DisablePropagation)
    ) {
      current = current.value.parent
    }
    if (Option.isSome(current) && current.value._tag === "Span") current.value.attribute(key, value)
  })

/** Span attributes (since 0.8.0 arrays too, as the GenAI conventions use them). @since 0.2.0 */
export type Attributes = GenAi.Attributes

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
  const attributes: Record<string, GenAi.AttributeValue> = {
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

/** Reported usage, as span attributes (the OpenTelemetry GenAI names, {@link GenAi.usageAttributes}). @since 0.2.0 */
export const usageAttributes = (usage: Usage): Attributes => GenAi.usageAttributes(usage)

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
  // The switch read off the running fiber's context: one effect around every operation, not three (a
  // reference's lookup is a service lookup, then a step to read it).
  Effect.withFiberRuntime<A, E, R>((fiber) =>
    Context.get(fiber.currentContext, TracingEnabled)
      ? Effect.withSpan(
          after === undefined ? self : Effect.tap(self, (value) => Effect.annotateCurrentSpan(after(value))),
          name,
          { attributes }
        )
      : self
  )

/**
 * An operation whose span is an `Effect.fn(name)`, made once here, run only when tracing is on: `start`
 * gives the attributes known from the arguments (set as the span starts), `after` those from the
 * result. With tracing off the call is `body(...args)` and nothing else: no span and no call-site
 * `Error`, which `Effect.fn` makes on every call (ADR 0162).
 * @since 0.8.0
 */
export const fn = <Args extends ReadonlyArray<unknown>, A, E, R>(
  name: string,
  body: (...args: Args) => Effect.Effect<A, E, R>,
  start: (...args: Args) => Attributes,
  after?: (value: A) => Attributes
): ((...args: Args) => Effect.Effect<A, E, R>) => {
  const traced = Effect.fn(name)(function* (...args: Args) {
    yield* Effect.annotateCurrentSpan(start(...args))
    const value = yield* body(...args)
    if (after !== undefined) yield* Effect.annotateCurrentSpan(after(value))
    return value
  })
  // The switch read off the running fiber's context, in one effect (as `span` does).
  return (...args) =>
    Effect.withFiberRuntime<A, E, R>((fiber) =>
      Context.get(fiber.currentContext, TracingEnabled) ? traced(...args) : body(...args)
    )
}

/**
 * What the caller of a model call knows and the provider does not: the conversation (the stream), the
 * render's provenance, the request's parameters and, for opt-in content capture, the messages sent.
 * Set with {@link withCall} around the call; the provider's span reads it.
 * @since 0.8.0
 */
export interface Call {
  readonly conversationId?: string | undefined
  readonly provenance?: GenAi.Provenance | undefined
  readonly parameters?: Partial<GenAi.ChatRequest> | undefined
  readonly input?: ReadonlyArray<Message.Message> | undefined
  readonly system?: ReadonlyArray<string> | undefined
}

/** The model call in progress, as its caller described it. Empty by default. @since 0.8.0 */
export class CurrentCall extends Context.Reference<CurrentCall>()("@ctxlog/core/Tracing/CurrentCall", {
  defaultValue: (): Call => ({})
}) {}

/** Describe the model call `self` makes (conversation, provenance, parameters, input). @since 0.8.0 */
export const withCall =
  (call: Call) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.provideService(self, CurrentCall, call)

/**
 * The attributes of a chat span when it starts: the request (operation, provider, model, parameters,
 * conversation), the provenance, and with content capture on the input messages. One function every
 * path calls (the providers here, the framework integrations through `@ctxlog/client`).
 * @since 0.8.0
 */
export const chatStartAttributes = (provider: string, model: string, call: Call, capture: boolean): Attributes => {
  const request = GenAi.requestAttributes({
    ...call.parameters,
    provider,
    model,
    conversationId: call.conversationId ?? call.parameters?.conversationId
  })
  const provenance = call.provenance === undefined ? {} : GenAi.provenanceAttributes(call.provenance)
  const content: Record<string, GenAi.AttributeValue> = {}
  if (capture && call.input !== undefined) content["gen_ai.input.messages"] = GenAi.inputMessages(call.input)
  if (capture && call.system !== undefined && call.system.length > 0)
    content["gen_ai.system_instructions"] = GenAi.systemInstructions(call.system)
  return { ...request, ...provenance, ...content }
}

/** The attributes of a chat span when its answer is complete (and, with capture on, the output messages). @since 0.8.0 */
export const chatEndAttributes = (response: ModelResponse, capture: boolean): Attributes => ({
  ...GenAi.responseAttributes({
    id: response.id,
    model: response.model,
    finishReasons: [response.stopReason],
    usage: response.usage
  }),
  ...(capture ? { "gen_ai.output.messages": GenAi.outputMessages(response.parts, response.stopReason) } : {})
})

const chatOptions = (provider: string, model: string, endpoint: string | undefined) =>
  Effect.map(Effect.all([CurrentCall, GenAi.CaptureContent]), ([call, capture]) => {
    const described =
      endpoint === undefined ? call : { ...call, parameters: { ...GenAi.serverOf(endpoint), ...call.parameters } }
    return {
      capture,
      name: GenAi.spanName(GenAi.chatOperation, model),
      options: { kind: "client" as const, attributes: chatStartAttributes(provider, model, described, capture) }
    }
  })

const annotateError = <E>(error: E) => Effect.annotateCurrentSpan("error.type", GenAi.errorType(error))

/** A model call that answers at once, in a GenAI chat span when tracing is on. @since 0.2.0 */
export const modelCall = <E, R>(
  self: Effect.Effect<ModelResponse, E, R>,
  provider: string,
  model: string,
  endpoint?: string
): Effect.Effect<ModelResponse, E, R> =>
  Effect.flatMap(TracingEnabled, (on) =>
    on
      ? Effect.flatMap(chatOptions(provider, model, endpoint), ({ capture, name, options }) =>
          Effect.withSpan(
            self.pipe(
              Effect.tap((response) => Effect.annotateCurrentSpan(chatEndAttributes(response, capture))),
              Effect.tapError(annotateError)
            ),
            name,
            options
          )
        )
      : self
  )

/**
 * A model call's stream in a GenAI chat span when tracing is on: the span lasts until the stream
 * ends, and the final response sets the response attributes (id, model, finish reasons, usage).
 * `endpoint` (the base URL) gives `server.address` and `server.port`.
 * @since 0.2.0
 */
export const modelStream =
  (provider: string, model: string, endpoint?: string) =>
  <E, R>(self: Stream.Stream<ModelChunk, E, R>): Stream.Stream<ModelChunk, E, R> =>
    Stream.unwrap(
      Effect.flatMap(TracingEnabled, (on) =>
        on
          ? Effect.map(chatOptions(provider, model, endpoint), ({ capture, name, options }) =>
              Stream.withSpan(
                self.pipe(
                  Stream.tap((chunk) =>
                    chunk._tag === "Done"
                      ? Effect.annotateCurrentSpan(chatEndAttributes(chunk.response, capture))
                      : Effect.void
                  ),
                  Stream.tapError(annotateError)
                ),
                name,
                { ...options, attributes: { ...options.attributes, "gen_ai.request.stream": true } }
              )
            )
          : Effect.succeed(self)
      )
    )

/**
 * The start of an operation, for {@link compactionSpans}: the clock and the current span, read only
 * when tracing is on.
 * @since 0.8.0
 */
export const operationStart: Effect.Effect<bigint | undefined> = Effect.flatMap(TracingEnabled, (on) =>
  on ? Clock.currentTimeNanos : Effect.succeed(undefined)
)

/**
 * One span per compaction an operation wrote (`Compacted`, `SeamProduced`, `SeamsRecompacted`), a child of the operation's span covering it
 * (`startTime` from {@link operationStart}): `compact {stream}`, with `gen_ai.conversation.compacted`
 * and the receipt (tokens before and after, what was replaced). Nothing when tracing is off.
 * @since 0.8.0
 */
export const compactionSpans = (
  stream: string,
  startTime: bigint | undefined,
  before: Window | undefined,
  outcome: { readonly window: Window; readonly events: ReadonlyArray<WindowEvent> }
): Effect.Effect<void> =>
  Effect.gen(function* () {
    if (startTime === undefined) return
    const compactions = outcome.events.flatMap((event) => {
      const compaction = GenAi.compactionOf(event)
      return compaction === undefined ? [] : [compaction]
    })
    if (compactions.length === 0) return
    const tracer = yield* Effect.tracer
    const parent = yield* Effect.option(Effect.currentSpan)
    const context = yield* Effect.context<never>()
    const end = yield* Clock.currentTimeNanos
    const after = outcome.window.tokens.total
    const tokensBefore = before?.tokens.total ?? after
    for (const event of compactions) {
      const span = tracer.span(
        GenAi.spanName(GenAi.compactOperation, stream),
        Option.map(parent, (span) => span),
        context,
        [],
        startTime,
        "internal"
      )
      for (const [key, value] of Object.entries(
        GenAi.compactionAttributes(event, stream, { before: tokensBefore, after })
      )) {
        span.attribute(key, value)
      }
      span.end(end, Exit.void)
    }
  })
