/**
 * OpenTelemetry GenAI semantic conventions, built in one place: the attributes of a model-call span
 * (`chat {model}`), of a compaction span, the opt-in content capture, and ctxlog's context provenance
 * (a proposed extension, `docs/otel-genai-provenance.md`). Every path that makes or sees a model call
 * (the providers through {@link Tracing}, the turn module, the framework integrations) takes its
 * attributes from here; none writes a `gen_ai.*` key of its own.
 *
 * Implements the GenAI conventions as published in `@opentelemetry/semantic-conventions` 1.45.0
 * (the inference span, `gen_ai.usage.cache_read.input_tokens` / `cache_creation.input_tokens`,
 * the input and output messages JSON schemas) plus two additions of the newer development registry
 * of `open-telemetry/semantic-conventions-genai`: `gen_ai.conversation.compacted` and the
 * `compaction` message part. See {@link conventions}.
 *
 * @since 0.8.0
 */
import * as Context from "effect/Context"
import type { StopReason, Usage } from "./LanguageModel.js"
import type * as Message from "./Message.js"
import type { Window } from "./Window.js"
import type { WindowEvent } from "./WindowEvent.js"

/** The conventions this module implements. @since 0.8.0 */
export const conventions = {
  /** The published registry the names come from. */
  published: "@opentelemetry/semantic-conventions 1.45.0 (GenAI inference span, development status)",
  /** Names taken from the newer development registry, not in the published package yet. */
  development: "open-telemetry/semantic-conventions-genai: gen_ai.conversation.compacted, the compaction message part",
  /** ctxlog's proposed extension (`ctxlog.context.*`), drafted in docs/otel-genai-provenance.md. */
  extension: "ctxlog.context.* (proposed, docs/otel-genai-provenance.md)"
} as const

/** A span attribute value as OpenTelemetry takes it (primitive or homogeneous array). @since 0.8.0 */
export type AttributeValue = string | number | boolean | ReadonlyArray<string> | ReadonlyArray<number>

/** Span attributes. @since 0.8.0 */
export type Attributes = Readonly<Record<string, AttributeValue>>

/** `gen_ai.operation.name` of a model call. @since 0.8.0 */
export const chatOperation = "chat"

/** The operation name ctxlog gives a compaction span (a custom value the conventions allow). @since 0.8.0 */
export const compactOperation = "compact"

/** The span name the conventions give an inference span: `{gen_ai.operation.name} {gen_ai.request.model}`. @since 0.8.0 */
export const spanName = (operation: string, model: string | undefined): string =>
  model === undefined || model.length === 0 ? operation : `${operation} ${model}`

/**
 * `gen_ai.provider.name` for a ctxlog provider id: the conventions' well-known value where one applies
 * (`openai` for the Chat Completions, Responses and compatible clients, `anthropic`), else the id.
 * An AI SDK provider id (`openai.chat`, `anthropic.messages`) maps by its prefix.
 * @since 0.8.0
 */
export const providerName = (provider: string): string => {
  const head = (provider.split(".")[0] ?? provider).toLowerCase()
  if (head === "openai" || head === "openai-responses" || head === "openai-compatible") return "openai"
  if (head === "azure" || head === "azure-openai") return "azure.ai.openai"
  if (head === "google" || head === "gemini") return "gcp.gemini"
  if (head === "bedrock" || head === "amazon-bedrock") return "aws.bedrock"
  if (head === "mistral") return "mistral_ai"
  if (head === "xai") return "x_ai"
  return head
}

/** What a model call asked for: who, which model, in which conversation, with which parameters. @since 0.8.0 */
export interface ChatRequest {
  readonly provider: string
  readonly model: string
  /** The ctxlog stream: `gen_ai.conversation.id`. */
  readonly conversationId?: string | undefined
  readonly stream?: boolean | undefined
  readonly maxTokens?: number | undefined
  readonly temperature?: number | undefined
  readonly topP?: number | undefined
  readonly topK?: number | undefined
  readonly stopSequences?: ReadonlyArray<string> | undefined
  readonly frequencyPenalty?: number | undefined
  readonly presencePenalty?: number | undefined
  readonly seed?: number | undefined
  readonly choiceCount?: number | undefined
  readonly serverAddress?: string | undefined
  readonly serverPort?: number | undefined
}

const put = (into: Record<string, AttributeValue>, key: string, value: AttributeValue | undefined): void => {
  if (value !== undefined) into[key] = value
}

/**
 * The request attributes of a chat span, set when the span starts (the conventions name the
 * sampling-relevant ones: operation, provider, request model, server address and port).
 * @since 0.8.0
 */
export const requestAttributes = (request: ChatRequest): Attributes => {
  const out: Record<string, AttributeValue> = {
    "gen_ai.operation.name": chatOperation,
    "gen_ai.provider.name": providerName(request.provider),
    "gen_ai.request.model": request.model
  }
  put(out, "gen_ai.conversation.id", request.conversationId)
  if (request.stream === true) out["gen_ai.request.stream"] = true
  put(out, "gen_ai.request.max_tokens", request.maxTokens)
  put(out, "gen_ai.request.temperature", request.temperature)
  put(out, "gen_ai.request.top_p", request.topP)
  put(out, "gen_ai.request.top_k", request.topK)
  if (request.stopSequences !== undefined && request.stopSequences.length > 0)
    out["gen_ai.request.stop_sequences"] = [...request.stopSequences]
  put(out, "gen_ai.request.frequency_penalty", request.frequencyPenalty)
  put(out, "gen_ai.request.presence_penalty", request.presencePenalty)
  put(out, "gen_ai.request.seed", request.seed)
  if (request.choiceCount !== undefined && request.choiceCount !== 1)
    out["gen_ai.request.choice.count"] = request.choiceCount
  put(out, "server.address", request.serverAddress)
  if (request.serverAddress !== undefined) put(out, "server.port", request.serverPort)
  return out
}

/** `server.address` and `server.port` of an endpoint URL (the port the scheme implies when none is written). @since 0.8.0 */
export const serverOf = (url: string): Pick<ChatRequest, "serverAddress" | "serverPort"> => {
  try {
    const parsed = new URL(url)
    const port = parsed.port === "" ? (parsed.protocol === "https:" ? 443 : 80) : Number(parsed.port)
    return { serverAddress: parsed.hostname, serverPort: port }
  } catch {
    return {}
  }
}

/** The request parameters a rendered provider body carries (`max_tokens`, `temperature`, ...), read structurally. @since 0.8.0 */
export const parametersOf = (body: unknown): Partial<ChatRequest> => {
  if (typeof body !== "object" || body === null) return {}
  const field = (key: string): unknown => (body as Record<string, unknown>)[key]
  const num = (...keys: ReadonlyArray<string>): number | undefined => {
    for (const key of keys) {
      const value = field(key)
      if (typeof value === "number" && Number.isFinite(value)) return value
    }
    return undefined
  }
  const stop = field("stop_sequences") ?? field("stop")
  const stopSequences =
    typeof stop === "string"
      ? [stop]
      : Array.isArray(stop) && stop.every((item) => typeof item === "string")
        ? (stop as ReadonlyArray<string>)
        : undefined
  return {
    stream: field("stream") === true ? true : undefined,
    maxTokens: num("max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens"),
    temperature: num("temperature"),
    topP: num("top_p", "topP"),
    topK: num("top_k", "topK"),
    stopSequences,
    frequencyPenalty: num("frequency_penalty", "frequencyPenalty"),
    presencePenalty: num("presence_penalty", "presencePenalty"),
    seed: num("seed"),
    choiceCount: num("n")
  }
}

/**
 * A finish reason in the conventions' words (the values OpenAI uses, which the output-messages schema
 * lists: `stop`, `length`, `content_filter`, `tool_call`, `error`).
 * @since 0.8.0
 */
export const finishReason = (reason: StopReason | string): string => {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
    case "stop":
      return "stop"
    case "max_tokens":
    case "length":
      return "length"
    case "tool_use":
    case "tool_calls":
    case "tool-calls":
    case "tool_call":
      return "tool_call"
    case "content_filter":
    case "content-filter":
      return "content_filter"
    case "error":
      return "error"
    default:
      return reason
  }
}

/** What a model call answered. @since 0.8.0 */
export interface ChatResponse {
  readonly id?: string | undefined
  readonly model?: string | undefined
  readonly finishReasons: ReadonlyArray<string>
  readonly usage?: Usage | undefined
}

/** Usage as the conventions name it: input (cache included), output, cache read and cache creation. @since 0.8.0 */
export const usageAttributes = (usage: Usage): Attributes => ({
  "gen_ai.usage.input_tokens": usage.inputTokens,
  "gen_ai.usage.output_tokens": usage.outputTokens,
  "gen_ai.usage.cache_read.input_tokens": usage.cacheReadTokens,
  "gen_ai.usage.cache_creation.input_tokens": usage.cacheWriteTokens
})

/** The response attributes of a chat span, set when the answer is complete. @since 0.8.0 */
export const responseAttributes = (response: ChatResponse): Attributes => {
  const out: Record<string, AttributeValue> = {
    "gen_ai.response.finish_reasons": response.finishReasons.map(finishReason)
  }
  put(out, "gen_ai.response.id", response.id)
  put(out, "gen_ai.response.model", response.model)
  return response.usage === undefined ? out : { ...out, ...usageAttributes(response.usage) }
}

/** `error.type` of a failed call: the provider error's reason, else the error's tag, else `_OTHER`. @since 0.8.0 */
export const errorType = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const reason = (error as { readonly reason?: unknown }).reason
    if (typeof reason === "string" && reason.length > 0) return reason
    const tag = (error as { readonly _tag?: unknown })._tag
    if (typeof tag === "string" && tag.length > 0) return tag
    const name = (error as { readonly name?: unknown }).name
    if (typeof name === "string" && name.length > 0 && name !== "Error") return name
  }
  return "_OTHER"
}

// ---------------------------------------------------------------------------------------------------
// Content capture (opt-in)

/**
 * Whether chat spans carry content (`gen_ai.input.messages`, `gen_ai.output.messages`,
 * `gen_ai.system_instructions`): the conventions make them opt-in. Off unless set, or unless
 * `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` is in the environment (the switch the
 * OpenTelemetry GenAI instrumentations read).
 * @since 0.8.0
 */
export class CaptureContent extends Context.Reference<CaptureContent>()("@ctxlog/core/GenAi/CaptureContent", {
  defaultValue: (): boolean => captureFromEnv(typeof process === "undefined" ? {} : process.env)
}) {}

/** The content switch as the environment sets it. @since 0.8.0 */
export const captureFromEnv = (env: Readonly<Record<string, string | undefined>>): boolean =>
  (env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT ?? "").trim().toLowerCase() === "true"

/** A message part in the conventions' JSON schema. */
type JsonPart = Readonly<Record<string, Message.JsonValue>>

const partOf = (part: Message.Part, compaction: boolean): JsonPart => {
  switch (part.type) {
    case "text":
      return compaction ? { type: "compaction", content: part.text } : { type: "text", content: part.text }
    case "reasoning":
      return { type: "reasoning", content: part.text }
    case "tool_call":
      return { type: "tool_call", id: part.id, name: part.name, arguments: part.input }
    case "tool_result":
      return { type: "tool_call_response", id: part.toolCallId, response: part.content }
    case "server_tool_call":
      return { type: "server_tool_call", id: part.id, name: part.name }
    case "server_tool_result":
      return { type: "server_tool_call_response", id: part.toolCallId }
    default:
      // Images, documents, approvals, provider-specific parts: the part's type only (no bytes on a span).
      return { type: part.type }
  }
}

const roleOf = (role: Message.Role): string => role

/**
 * Messages as `gen_ai.input.messages` (the input-messages JSON schema, as a JSON string: span
 * attributes are not structured in the OpenTelemetry JS API). The text of a summary or a seam (what
 * a compaction left in place of the history it replaced) is a `compaction` part.
 * @since 0.8.0
 */
export const inputMessages = (
  messages: ReadonlyArray<Pick<Message.Message, "role" | "parts"> & { readonly kind?: Message.MessageKind }>
): string =>
  JSON.stringify(
    messages.map((message) => ({
      role: roleOf(message.role),
      parts: message.parts.map((part) => partOf(part, message.kind === "summary" || message.kind === "seam"))
    }))
  )

/** An answer as `gen_ai.output.messages` (one choice, with its finish reason). @since 0.8.0 */
export const outputMessages = (parts: ReadonlyArray<Message.Part>, reason: string): string =>
  JSON.stringify([
    { role: "assistant", parts: parts.map((part) => partOf(part, false)), finish_reason: finishReason(reason) }
  ])

/** System text as `gen_ai.system_instructions`. @since 0.8.0 */
export const systemInstructions = (texts: ReadonlyArray<string>): string =>
  JSON.stringify(texts.map((content) => ({ type: "text", content })))

// ---------------------------------------------------------------------------------------------------
// Context provenance (proposed extension)

/** The kind of a window element, as the provenance attributes name it. @since 0.8.0 */
export type ElementKind = "system" | "knowledge" | "recall" | "summary" | "seam" | "history" | "task_state" | "signal"

/** One element of a rendered window: where it came from and why it is there. No content. @since 0.8.0 */
export interface Element {
  /** The message id (or signal id, or `task_state`). */
  readonly id: string
  /** The id of the event that put it in the window (`ctxlog explain` / blame), empty when unknown. */
  readonly source: string
  readonly kind: ElementKind
  readonly reason: string
  readonly tokens: number
}

/** The provenance of one render: its event, the hash of its bytes, and every element. @since 0.8.0 */
export interface Provenance {
  /** The `PromptRendered` event's id. */
  readonly renderId: string
  /** The stream version of that event: `ctxlog render STREAM --at VERSION` rebuilds the request. */
  readonly renderVersion: number
  /** SHA-256 of the exact request body (`PromptRendered.sha256`). */
  readonly sha256: string
  readonly elements: ReadonlyArray<Element>
}

const recallKinds: ReadonlySet<string> = new Set([
  "recall",
  "cross_session",
  "session_digest",
  "document_rag",
  "graph_facts",
  "persona_facts",
  "trajectory_hints",
  "tree_memory",
  "reasoning_strategies",
  "code_context",
  "lsp",
  "correction"
])

/** Kind and reason of a window message, from its partition and its message kind. */
const classify = (
  partition: "system" | "knowledge" | "history",
  message: Message.Message,
  unseen: ReadonlySet<string>
): { readonly kind: ElementKind; readonly reason: string } => {
  if (partition === "system") return { kind: "system", reason: "system_prompt" }
  if (message.kind === "summary") return { kind: "summary", reason: "compaction_summary" }
  if (message.kind === "seam" || message.kind === "briefing") return { kind: "seam", reason: `seam:${message.kind}` }
  if (recallKinds.has(message.kind)) return { kind: "recall", reason: `injected:${message.kind}` }
  // Skills the turn chose for its query are knowledge (what the agent can do), injected per turn.
  if (message.kind === "skill") return { kind: "knowledge", reason: "injected:skill" }
  if (partition === "knowledge") return { kind: "knowledge", reason: "knowledge" }
  if (message.pinned === true) return { kind: "history", reason: "pinned" }
  if (unseen.has(message.id)) return { kind: "history", reason: "unseen_tool_result" }
  return { kind: "history", reason: `recent_${message.role}` }
}

/**
 * The elements of a window in render order (system, knowledge, task state, signals, history), each
 * with its source event, kind, reason and tokens. `unseen` are the history messages holding results
 * the model had not read when the render was made. O(elements).
 * @since 0.8.0
 */
export const elementsOf = (window: Window, unseen: ReadonlySet<string> = new Set()): ReadonlyArray<Element> => {
  const out: Array<Element> = []
  const message = (partition: "system" | "knowledge" | "history") => (item: Message.Message) => {
    const { kind, reason } = classify(partition, item, unseen)
    out.push({ id: item.id, source: item.origin?.eventId ?? "", kind, reason, tokens: item.tokens })
  }
  window.system.forEach(message("system"))
  window.knowledge.forEach(message("knowledge"))
  const task = window.taskState.goalTokens + window.taskState.subgoalTokens
  if (task > 0) out.push({ id: "task_state", source: "", kind: "task_state", reason: "task_goal", tokens: task })
  for (const signal of window.signals) {
    out.push({ id: signal.id, source: "", kind: "signal", reason: "runtime_signal", tokens: signal.tokens })
  }
  window.history.forEach(message("history"))
  return out
}

/**
 * Provenance as span attributes, without content: the render's id, version and hash, and the
 * elements as parallel arrays (index i of each array is element i, in render order), with per-kind
 * token totals. See docs/otel-genai-provenance.md.
 * @since 0.8.0
 */
export const provenanceAttributes = (provenance: Provenance): Attributes => {
  const totals: Record<string, number> = {}
  for (const element of provenance.elements) totals[element.kind] = (totals[element.kind] ?? 0) + element.tokens
  const out: Record<string, AttributeValue> = {
    "ctxlog.render.id": provenance.renderId,
    "ctxlog.render.version": provenance.renderVersion,
    "ctxlog.render.sha256": provenance.sha256,
    "ctxlog.context.element.count": provenance.elements.length,
    "ctxlog.context.element.ids": provenance.elements.map((element) => element.id),
    "ctxlog.context.element.sources": provenance.elements.map((element) => element.source),
    "ctxlog.context.element.kinds": provenance.elements.map((element) => element.kind),
    "ctxlog.context.element.reasons": provenance.elements.map((element) => element.reason),
    "ctxlog.context.element.tokens": provenance.elements.map((element) => element.tokens)
  }
  for (const [kind, tokens] of Object.entries(totals)) out[`ctxlog.context.tokens.${kind}`] = tokens
  return out
}

/**
 * The provenance of the render a step recorded: its `PromptRendered` event (the last one among
 * `events`, the events of one append that left `window`) and the window's elements. Undefined when
 * the events hold no render. The window is the one after the append: `PromptRendered` clears the
 * signals, so signals the render carried are not among the elements (their tokens are in the
 * render's stats).
 * @since 0.8.0
 */
export const provenanceOfRender = (
  window: Window,
  events: ReadonlyArray<WindowEvent>,
  unseen: ReadonlySet<string> = new Set()
): Provenance | undefined => {
  const at = events.findLastIndex((event) => event._tag === "PromptRendered")
  const render = events[at]
  if (render === undefined || render._tag !== "PromptRendered") return undefined
  return {
    renderId: render.id,
    renderVersion: window.version - (events.length - 1 - at),
    sha256: render.sha256,
    elements: elementsOf(window, unseen)
  }
}

// ---------------------------------------------------------------------------------------------------
// Compaction

/**
 * What a compaction event replaced and with what: a tiered compaction (`Compacted`: its summary, the
 * history it removed) or a seam (`SeamProduced` / `SeamsRecompacted`: the seam message, the messages
 * it folded in). Undefined for any other event.
 * @since 0.8.0
 */
export interface Compaction {
  readonly eventId: string
  /** `hard`, `soft`, `manual`, ... for a tiered compaction; `seam-{level}` for a seam. */
  readonly tier: string
  readonly replacedIds: ReadonlyArray<string>
  readonly summary: Message.Message | null
  readonly throughVersion?: number | undefined
}

/** The compaction an event records, if it records one. @since 0.8.0 */
export const compactionOf = (event: WindowEvent): Compaction | undefined => {
  switch (event._tag) {
    case "Compacted":
      return {
        eventId: event.id,
        tier: event.tier,
        replacedIds: event.removedIds,
        summary: event.summary,
        throughVersion: event.throughVersion
      }
    case "SeamProduced":
    case "SeamsRecompacted":
      return { eventId: event.id, tier: `seam-${event.level}`, replacedIds: event.replacedIds, summary: event.message }
    default:
      return undefined
  }
}

/**
 * The receipt of a compaction as the attributes of its span: `gen_ai.conversation.compacted`, tokens
 * before and after, and what was replaced by what.
 * @since 0.8.0
 */
export const compactionAttributes = (
  compaction: Compaction,
  stream: string,
  tokens: { readonly before: number; readonly after: number }
): Attributes => {
  const out: Record<string, AttributeValue> = {
    "gen_ai.operation.name": compactOperation,
    "gen_ai.conversation.id": stream,
    "gen_ai.conversation.compacted": true,
    "ctxlog.compaction.event_id": compaction.eventId,
    "ctxlog.compaction.tier": compaction.tier,
    "ctxlog.compaction.tokens_before": tokens.before,
    "ctxlog.compaction.tokens_after": tokens.after,
    "ctxlog.compaction.replaced.count": compaction.replacedIds.length,
    "ctxlog.compaction.replaced.ids": [...compaction.replacedIds],
    "ctxlog.compaction.summary.id": compaction.summary?.id ?? "",
    "ctxlog.compaction.summary.tokens": compaction.summary?.tokens ?? 0
  }
  put(out, "ctxlog.compaction.through_version", compaction.throughVersion)
  return out
}
