/**
 * Checks of ctxlog's OpenTelemetry GenAI spans, shared by every test that traces a model call (the
 * agent, the AI SDK middleware, the OpenAI Agents session, LangGraph): the required and recommended
 * attributes of a `chat {model}` span (the GenAI conventions as `@ctxlog/core`'s `GenAi` implements
 * them), ctxlog's context provenance on it, and the `compact {stream}` span of each compaction. Spans
 * are taken reduced to name, kind and attributes, so an in-memory exporter's spans and spans decoded
 * from OTLP/HTTP are checked the same way.
 *
 * @since 0.8.0
 */
import { assert } from "vitest"

/** A span reduced to what the checks read (`ReadableSpan` of the OpenTelemetry SDK fits). @since 0.8.0 */
export interface SpanLike {
  readonly name: string
  /** The SDK's `SpanKind` (0 internal, 1 server, 2 client). */
  readonly kind: number
  readonly attributes: Readonly<Record<string, unknown>>
}

/** An event of the stream, by the fields the checks read. @since 0.8.0 */
export interface EventLike {
  readonly _tag: string
  readonly id: string
}

/** The attributes the conventions require (or conditionally require) on a chat span that ctxlog knows. @since 0.8.0 */
export const requiredChat: ReadonlyArray<string> = [
  "gen_ai.operation.name",
  "gen_ai.provider.name",
  "gen_ai.request.model",
  "gen_ai.conversation.id"
]

/** The recommended attributes of a chat span that ctxlog records. @since 0.8.0 */
export const recommendedChat: ReadonlyArray<string> = [
  "gen_ai.request.stream",
  "gen_ai.request.max_tokens",
  "gen_ai.response.id",
  "gen_ai.response.model",
  "gen_ai.response.finish_reasons",
  "gen_ai.usage.input_tokens",
  "gen_ai.usage.output_tokens",
  "gen_ai.usage.cache_read.input_tokens",
  "gen_ai.usage.cache_creation.input_tokens",
  "server.address",
  "server.port"
]

/** ctxlog's provenance attributes (docs/otel-genai-provenance.md). @since 0.8.0 */
export const provenanceKeys: ReadonlyArray<string> = [
  "ctxlog.render.id",
  "ctxlog.render.version",
  "ctxlog.render.sha256",
  "ctxlog.context.element.count",
  "ctxlog.context.element.ids",
  "ctxlog.context.element.sources",
  "ctxlog.context.element.kinds",
  "ctxlog.context.element.reasons",
  "ctxlog.context.element.tokens"
]

/** What a chat span must say. @since 0.8.0 */
export interface ChatExpectation {
  readonly provider: string
  readonly model: string
  /** The stream: `gen_ai.conversation.id`. */
  readonly stream: string
  /** The stream's events: the render id must be one of its `PromptRendered`, every element source one of them. */
  readonly events: ReadonlyArray<EventLike>
  /** The `PromptRendered` this call sent, when the test knows it. */
  readonly renderId?: string | undefined
  /** Recommended keys this path cannot know, each with the reason (the test says why). */
  readonly absent?: Readonly<Record<string, string>> | undefined
}

/**
 * One chat span: kind CLIENT, every required, recommended and provenance attribute (but the ones
 * `absent` names), the operation, provider, model and conversation, and provenance arrays that agree
 * (one entry per element, sources that are events of the stream, a `PromptRendered` as the render).
 * Content is opt-in: no input or output messages. Returns the element kinds and reasons.
 * @since 0.8.0
 */
export const assertChatSpan = (
  span: SpanLike,
  expected: ChatExpectation
): { readonly kinds: ReadonlyArray<string>; readonly reasons: ReadonlyArray<string> } => {
  const a = span.attributes
  assert.strictEqual(span.kind, 2, `${span.name}: SpanKind.CLIENT`)
  assert.strictEqual(span.name, `chat ${expected.model}`)
  const absent = expected.absent ?? {}
  for (const key of [...requiredChat, ...recommendedChat, ...provenanceKeys]) {
    if (key in absent) assert.notProperty(a, key, `${key}: ${absent[key]}`)
    else assert.property(a, key)
  }
  assert.strictEqual(a["gen_ai.operation.name"], "chat")
  assert.strictEqual(a["gen_ai.provider.name"], expected.provider)
  assert.strictEqual(a["gen_ai.request.model"], expected.model)
  assert.strictEqual(a["gen_ai.conversation.id"], expected.stream)
  const reasons = a["gen_ai.response.finish_reasons"]
  assert.isTrue(Array.isArray(reasons) && reasons.length > 0, "finish reasons are a non-empty array")
  for (const key of ["input_tokens", "output_tokens", "cache_read.input_tokens", "cache_creation.input_tokens"]) {
    const value = a[`gen_ai.usage.${key}`]
    assert.isTrue(Number.isInteger(value) && Number(value) >= 0, `gen_ai.usage.${key} = ${String(value)}`)
  }
  const renders = expected.events.filter((event) => event._tag === "PromptRendered").map((event) => event.id)
  assert.include(renders, a["ctxlog.render.id"], "the render is a PromptRendered of the stream")
  if (expected.renderId !== undefined) assert.strictEqual(a["ctxlog.render.id"], expected.renderId)
  assert.match(String(a["ctxlog.render.sha256"]), /^[0-9a-f]{64}$/)
  const ids = a["ctxlog.context.element.ids"] as ReadonlyArray<string>
  const kinds = a["ctxlog.context.element.kinds"] as ReadonlyArray<string>
  const elementReasons = a["ctxlog.context.element.reasons"] as ReadonlyArray<string>
  const sources = a["ctxlog.context.element.sources"] as ReadonlyArray<string>
  const tokens = a["ctxlog.context.element.tokens"] as ReadonlyArray<number>
  assert.strictEqual(a["ctxlog.context.element.count"], ids.length)
  for (const list of [kinds, elementReasons, sources, tokens]) assert.strictEqual(list.length, ids.length)
  assert.isTrue(tokens.every((count) => Number.isInteger(count) && count >= 0))
  const eventIds = new Set(expected.events.map((event) => event.id))
  const known = sources.filter((source) => source !== "")
  assert.isAbove(known.length, 0, "some element names its source event")
  for (const source of known) assert.isTrue(eventIds.has(source), `source ${source} is an event of the stream`)
  assert.notProperty(a, "gen_ai.input.messages")
  assert.notProperty(a, "gen_ai.output.messages")
  return { kinds, reasons: elementReasons }
}

/** The events that record a compaction (each has a `compact {stream}` span). @since 0.8.0 */
export const compactionTags: ReadonlyArray<string> = ["Compacted", "SeamProduced", "SeamsRecompacted"]

/**
 * The compaction spans of a stream: one per compaction event, in order, each with
 * `gen_ai.conversation.compacted`, the conversation, the event id and the receipt (fewer tokens after
 * than before, what was replaced, the summary). Returns how many there were (at least one).
 * @since 0.8.0
 */
export const assertCompactionSpans = (
  spans: ReadonlyArray<SpanLike>,
  stream: string,
  events: ReadonlyArray<EventLike>
): number => {
  const compactions = spans.filter((span) => span.name === `compact ${stream}`)
  const compacted = events.filter((event) => compactionTags.includes(event._tag))
  assert.isAbove(compacted.length, 0, "the stream compacted")
  assert.strictEqual(compactions.length, compacted.length)
  for (const [i, span] of compactions.entries()) {
    const a = span.attributes
    assert.strictEqual(a["gen_ai.operation.name"], "compact")
    assert.strictEqual(a["gen_ai.conversation.id"], stream)
    assert.strictEqual(a["gen_ai.conversation.compacted"], true)
    assert.strictEqual(a["ctxlog.compaction.event_id"], compacted[i]?.id)
    assert.isAbove(Number(a["ctxlog.compaction.tokens_before"]), Number(a["ctxlog.compaction.tokens_after"]))
    assert.isAbove(Number(a["ctxlog.compaction.replaced.count"]), 0)
    assert.strictEqual(
      (a["ctxlog.compaction.replaced.ids"] as ReadonlyArray<string>).length,
      a["ctxlog.compaction.replaced.count"]
    )
    assert.isNotEmpty(a["ctxlog.compaction.summary.id"])
    assert.isAbove(Number(a["ctxlog.compaction.summary.tokens"]), 0)
  }
  return compactions.length
}

/**
 * The model calls of a traced run: the stream's `PromptRendered` events and the exported `chat` spans,
 * checked to be `calls` of each, in order (span `i` is the call of render `i`).
 * @since 0.8.0
 */
export const modelCalls = <E extends EventLike, S extends SpanLike>(
  events: ReadonlyArray<E>,
  spans: ReadonlyArray<S>,
  calls: number
): { readonly renders: ReadonlyArray<E>; readonly chats: ReadonlyArray<S> } => {
  const renders = events.filter((event) => event._tag === "PromptRendered")
  assert.strictEqual(renders.length, calls, "renders")
  const chats = spans.filter((span) => span.name.startsWith("chat "))
  assert.strictEqual(chats.length, calls, spans.map((span) => span.name).join(", "))
  return { renders, chats }
}

/** The usage a provider reported for one call, as a chat span carries it. @since 0.8.0 */
export interface UsageExpectation {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

/** A chat span's `gen_ai.usage.*` attributes, cache read and write included. @since 0.8.0 */
export const assertUsage = (span: SpanLike, usage: UsageExpectation): void => {
  const a = span.attributes
  assert.strictEqual(a["gen_ai.usage.input_tokens"], usage.input, "gen_ai.usage.input_tokens")
  assert.strictEqual(a["gen_ai.usage.output_tokens"], usage.output, "gen_ai.usage.output_tokens")
  assert.strictEqual(a["gen_ai.usage.cache_read.input_tokens"], usage.cacheRead, "cache_read")
  assert.strictEqual(a["gen_ai.usage.cache_creation.input_tokens"], usage.cacheWrite, "cache_creation")
}
