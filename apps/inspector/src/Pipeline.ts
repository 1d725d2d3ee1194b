/**
 * The context pipeline run turn by turn on an in-memory log: append the turn's inputs, tiered
 * compaction (`@ctxlog/compaction`, template compactor: deterministic, no model), render with a
 * providers `CtxBuilder` and record the render (with its spec), complete the turn. `import --format
 * openai-chat` runs it once and copies the events into the database in one append; `whatif` runs it
 * under other settings and compares.
 *
 * @since 0.1.0
 */
import {
  ContextService,
  EventLog,
  Ids,
  Message,
  RecallSource,
  TokenCounter,
  Transcript,
  Window,
  type WindowEvent,
  WindowRepository
} from "@ctxlog/core"
import { TemplateCompactor, TieredCompaction } from "@ctxlog/compaction"
import { CtxBuilder, RenderRecord } from "@ctxlog/providers"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Queries from "./Queries.js"

/** One turn of input: what the agent loop appended before its render. @since 0.1.0 */
export interface Turn {
  readonly messages: ReadonlyArray<Message.MessageInput>
  readonly goal?: string | null
  readonly subgoals?: ReadonlyArray<string>
}

/** A conversation's inputs. @since 0.1.0 */
export interface Input {
  readonly system: string | null
  readonly knowledge: ReadonlyArray<string>
  readonly turns: ReadonlyArray<Turn>
}

/** Input-token prices in USD per million tokens. @since 0.1.0 */
export const Pricing = Schema.Struct({ input: Schema.Number, cacheRead: Schema.Number })
/** @since 0.1.0 */
export type Pricing = typeof Pricing.Type

/** List prices used when a config names none (USD per million input tokens). @since 0.1.0 */
export const defaultPricing = (provider: string): Pricing =>
  provider === "anthropic"
    ? { input: 3, cacheRead: 0.3 }
    : provider === "openai"
      ? { input: 2, cacheRead: 0.5 }
      : provider === "ollama"
        ? { input: 0, cacheRead: 0 }
        : { input: 1, cacheRead: 1 }

/** Tiered-compaction settings as a config file spells them. @since 0.1.0 */
export const CompactionSettings = Schema.Struct({
  budget: Schema.Int.pipe(Schema.positive()),
  softThreshold: Schema.optionalWith(Schema.Number, { exact: true }),
  hardThreshold: Schema.optionalWith(Schema.Number, { exact: true }),
  targetRatio: Schema.optionalWith(Schema.Number, { exact: true }),
  cooldownTurns: Schema.optionalWith(Schema.Int, { exact: true }),
  maxSummaryTokens: Schema.optionalWith(Schema.Int, { exact: true })
})

/** Per-render options as a config file spells them. @since 0.1.0 */
export const RenderSettings = Schema.Struct({
  systemPrompt: Schema.optionalWith(Schema.String, { exact: true }),
  turnReminder: Schema.optionalWith(Schema.String, { exact: true }),
  maxOutputTokens: Schema.optionalWith(Schema.Int, { exact: true })
})

/** The settings of one pipeline run. @since 0.1.0 */
export const Settings = Schema.Struct({
  builder: RenderRecord.ProviderConfigSchema,
  compaction: Schema.optionalWith(Schema.NullOr(CompactionSettings), { exact: true }),
  render: Schema.optionalWith(RenderSettings, { exact: true }),
  pricing: Schema.optionalWith(Pricing, { exact: true })
})
/** @since 0.1.0 */
export type Settings = typeof Settings.Type

/** The services a run uses, over a fresh in-memory log. @since 0.1.0 */
const runtime = ContextService.layer.pipe(
  Layer.provideMerge(TemplateCompactor.layer()),
  Layer.provideMerge(WindowRepository.layerReplay),
  Layer.provideMerge(EventLog.layerMemory),
  Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7, RecallSource.layerEmpty))
)

/** A run failed (an invalid render, a compaction error, a log error). @since 0.1.0 */
export class PipelineError extends Schema.TaggedError<PipelineError>()("PipelineError", {
  turn: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `pipeline failed at turn ${this.turn}: ${this.detail}`
  }
}

/** Run the pipeline over the inputs; returns the events written, in order. @since 0.1.0 */
export const run = (
  stream: string,
  input: Input,
  settings: Settings
): Effect.Effect<ReadonlyArray<WindowEvent.WindowEvent>, PipelineError> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const log = yield* EventLog.EventLog
    const config: CtxBuilder.ProviderConfig = settings.builder
    const builder = CtxBuilder.forProvider(config)
    const fail = (turn: number) => (error: { readonly message: string }) =>
      new PipelineError({ turn, detail: error.message })
    if (input.system !== null) yield* ctx.setSystemPrompt(stream, input.system).pipe(Effect.mapError(fail(0)))
    if (input.knowledge.length > 0) yield* ctx.setKnowledge(stream, input.knowledge).pipe(Effect.mapError(fail(0)))
    for (const [index, turn] of input.turns.entries()) {
      const number = index + 1
      if (turn.goal !== undefined) yield* ctx.setTaskGoal(stream, turn.goal).pipe(Effect.mapError(fail(number)))
      if (turn.subgoals !== undefined) {
        yield* ctx.setSubgoals(stream, turn.subgoals).pipe(Effect.mapError(fail(number)))
      }
      if (turn.messages.length > 0) {
        yield* ctx.appendMessages(stream, turn.messages).pipe(Effect.mapError(fail(number)))
      }
      if (settings.compaction !== undefined && settings.compaction !== null) {
        yield* TieredCompaction.maybeCompact(stream, settings.compaction).pipe(Effect.mapError(fail(number)))
      }
      const window = yield* ctx.load(stream).pipe(Effect.mapError(fail(number)))
      const options = settings.render ?? {}
      const built = builder.build(window, options)
      if (Either.isLeft(built)) return yield* fail(number)(built.left)
      yield* RenderRecord.recordRender(
        stream,
        built.right,
        { provider: config.provider, model: config.model },
        { config, options }
      ).pipe(Effect.mapError(fail(number)))
      yield* ctx.completeTurn(stream).pipe(Effect.mapError(fail(number)))
    }
    const envelopes = yield* Stream.runCollect(log.read(stream)).pipe(Effect.mapError(fail(input.turns.length)))
    return Chunk.toReadonlyArray(envelopes).map((envelope) => envelope.event)
  }).pipe(Effect.provide(runtime))

/**
 * Agent turns of a chat transcript: the system messages apart, then each assistant message with the
 * tool results that follow it (user messages join the turn of the next assistant message).
 * @since 0.1.0
 */
export const turnsOf = (messages: ReadonlyArray<Message.MessageInput>): Input => {
  const system = messages.filter((message) => message.role === "system")
  const turns: Array<Turn> = []
  let current: Array<Message.MessageInput> = []
  messages.forEach((message, index) => {
    if (message.role === "system") return
    current.push(message)
    const next = messages[index + 1]
    if (message.role !== "user" && next?.role !== "tool") {
      turns.push({ messages: current })
      current = []
    }
  })
  if (current.length > 0) turns.push({ messages: current })
  return {
    system: system.length === 0 ? null : system.map((message) => Message.textOf(message)).join("\n"),
    knowledge: [],
    turns
  }
}

const reasoningOf = (raw: unknown): string | undefined => {
  if (typeof raw !== "object" || raw === null) return undefined
  const value: unknown = Reflect.get(raw, "reasoning_content")
  return typeof value === "string" && value.trim().length > 0 ? value : undefined
}

/** The marker that starts a kept `reasoning_content` text part. @since 0.1.0 */
export const reasoningMarker = "[reasoning_content]"

/**
 * Read an OpenAI-chat transcript (`{ messages: [...] }` or a bare array). An assistant message's
 * non-standard `reasoning_content` is kept as a first text part starting with {@link reasoningMarker},
 * so it stays visible in the window, the log and the rendered request.
 * @since 0.1.0
 */
export const fromOpenAIChat = (json: unknown) =>
  Effect.gen(function* () {
    const raws: ReadonlyArray<unknown> = Array.isArray(json)
      ? json
      : typeof json === "object" && json !== null && "messages" in json && Array.isArray(json.messages)
        ? json.messages
        : yield* new Transcript.TranscriptError({ index: -1, detail: "expected an array or { messages: [...] }" })
    const inputs = yield* Transcript.fromOpenAIChat(raws)
    return inputs.map((input, index): Message.MessageInput => {
      const reasoning = reasoningOf(raws[index])
      // Core imports it as a reasoning part, which chat renders drop; here it stays marked text instead.
      const rest = input.parts.filter((part) => part.type !== "reasoning")
      return reasoning === undefined || input.role !== "assistant"
        ? input
        : { ...input, parts: [Message.text(`${reasoningMarker}\n${reasoning}`), ...rest] }
    })
  })

/**
 * The input events of a recorded stream, as pipeline input: the system prompt, stable knowledge, goals
 * and the conversation messages (not injected or derived ones), cut into turns at `TurnCompleted`.
 * @since 0.1.0
 */
export const inputOf = (entries: ReadonlyArray<Queries.Entry>): Input => {
  let system: string | null = null
  let knowledge: ReadonlyArray<string> = []
  const turns: Array<Turn> = []
  let messages: Array<Message.MessageInput> = []
  let goal: string | null | undefined
  let subgoals: ReadonlyArray<string> | undefined
  const flush = () => {
    turns.push({
      messages,
      ...(goal === undefined ? {} : { goal }),
      ...(subgoals === undefined ? {} : { subgoals })
    })
    messages = []
    goal = undefined
    subgoals = undefined
  }
  for (const { event } of entries) {
    switch (event._tag) {
      case "SystemPromptSet":
        system = event.messages.map((message) => Message.textOf(message)).join("\n")
        break
      case "KnowledgeSet":
        knowledge = event.messages.map((message) => Message.textOf(message))
        break
      case "TaskGoalSet":
        goal = event.goal
        break
      case "SubgoalsSet":
        subgoals = event.subgoals
        break
      case "MessageAppended":
        if (event.message.kind === "chat") {
          messages.push({ id: event.message.id, role: event.message.role, parts: event.message.parts })
        }
        break
      case "TurnCompleted":
        flush()
        break
      default:
        break
    }
  }
  if (messages.length > 0 || goal !== undefined || subgoals !== undefined) flush()
  return { system, knowledge, turns }
}

/** What one turn of a run cost. @since 0.1.0 */
export interface TurnStat {
  readonly turn: number
  /** Prompt tokens of the turn's renders (window tokens; tool schemas apart). */
  readonly tokensSent: number
  /** Compaction events in the turn (summaries, prunes, trims, applied deferred summaries). */
  readonly compactions: number
  /** Share of the request bytes equal to the previous request's prefix (same provider and model). */
  readonly prefixReuse: number | null
  /** Estimated input cost in USD: the reused share at the cache-read price, the rest at full price. */
  readonly cost: number
}

/**
 * Per-turn stats of a stream's events: renders are rebuilt from the log to measure prefix reuse (a
 * render that cannot be rebuilt counts as not reused, and `prefixReuse` is null).
 * @since 0.1.0
 */
export const turnStats = (entries: ReadonlyArray<Queries.Entry>, pricing: Pricing): ReadonlyArray<TurnStat> => {
  const stats: Array<TurnStat> = []
  let window = Window.empty
  let turn = 1
  let tokens = 0
  let compactions = 0
  let reuse: number | null = null
  let cost = 0
  const blobs = new Map<string, string>()
  const previous = new Map<string, string>()
  for (const entry of entries) {
    const event = entry.event
    if (Queries.compactionTypes.has(entry.type)) compactions++
    if (event._tag === "PromptRendered") {
      RenderRecord.collectBlobs([event], blobs)
      const rebuilt = RenderRecord.rebuild(window, event, entry.version, blobs)
      const key = `${event.provider}/${event.model}`
      let share = 0
      if (Either.isRight(rebuilt)) {
        const before = previous.get(key)
        share = before === undefined ? 0 : Queries.commonPrefix(before, rebuilt.right.body) / rebuilt.right.body.length
        previous.set(key, rebuilt.right.body)
        reuse = share
      }
      const cached = Math.round(event.tokens.total * share)
      tokens += event.tokens.total
      cost += ((event.tokens.total - cached) * pricing.input + cached * pricing.cacheRead) / 1_000_000
    }
    window = Window.evolve(window, event)
    if (event._tag === "TurnCompleted") {
      stats.push({ turn, tokensSent: tokens, compactions, prefixReuse: reuse, cost })
      turn++
      tokens = 0
      compactions = 0
      reuse = null
      cost = 0
    }
  }
  if (tokens > 0 || compactions > 0) stats.push({ turn, tokensSent: tokens, compactions, prefixReuse: reuse, cost })
  return stats
}
