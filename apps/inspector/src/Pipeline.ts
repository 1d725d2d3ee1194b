/**
 * Replays through the turn module (`@ctxlog/turn`), the one pipeline the agent runs: the same steps,
 * prepare → (render → complete) per recorded model call, on an in-memory log with the template
 * compactor. `import --format openai-chat` runs a transcript through it once (each assistant message
 * a model call) and copies the events into the database in one append; `whatif` replays a recorded
 * stream's inputs under its recorded policy, or under another, and compares them model call by model
 * call: the replay makes exactly as many calls as the recording did, so like is compared with like.
 *
 * What a replay takes from the log as input, not re-decides: the user's messages, the model's answers,
 * the tool results, signals, the reported usage (only under the recorded builder), recall injections
 * (a recall index is outside the log), and the system prompt, knowledge and goal.
 *
 * @since 0.1.0
 */
import {
  ContextService,
  EventLog,
  type LanguageModel,
  Lru,
  Message,
  TokenCounter,
  Transcript,
  Window,
  type WindowEvent
} from "@ctxlog/core"
import { CacheModel, CacheTable, RenderRecord } from "@ctxlog/providers"
import { Policy, TemplateCompactor, Turn } from "@ctxlog/turn"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Queries from "./Queries.js"

/** One model call of a turn: what the model answered and what its tools returned. @since 0.4.0 */
export interface Call {
  readonly answer: ReadonlyArray<Message.Part>
  readonly results: ReadonlyArray<Message.ToolResultPart>
  readonly signals: ReadonlyArray<string>
  readonly usage?: LanguageModel.Usage | undefined
  readonly estimatedInputTokens?: number | undefined
  /**
   * The turn reminder the recorded render carried when it was its own (an environment snapshot), not
   * the policy's: input, replayed as recorded.
   */
  readonly turnReminder?: string | undefined
}

/** One user turn of input. @since 0.1.0 */
export interface TurnInput {
  /** The policy recorded for this turn, when the log holds one (`TurnPolicySet`). */
  readonly policy?: Policy.Policy | undefined
  /** Set before the turn, as the recording set them. */
  readonly system?: ReadonlyArray<Message.MessageInput> | undefined
  readonly knowledge?: ReadonlyArray<Message.MessageInput> | undefined
  readonly goal?: string | null | undefined
  /** The messages the turn started with. */
  readonly messages: ReadonlyArray<Message.MessageInput>
  /** Recall (and placed skills) as the recording injected it, by kind. */
  readonly injected: ReadonlyArray<{
    readonly kind: Message.InjectedKind
    readonly messages: ReadonlyArray<Message.MessageInput>
  }>
  readonly calls: ReadonlyArray<Call>
}

/** A conversation's inputs. @since 0.1.0 */
export interface Input {
  readonly turns: ReadonlyArray<TurnInput>
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

/**
 * A what-if config: each top-level field of the turn policy replaces the recorded one (`builder`,
 * `render`, `compaction`, `seams`, `deferred`, `inputShare`, ...), and `pricing` prices both runs.
 * An empty config replays the recorded policy.
 * @since 0.1.0
 */
export const Settings = Schema.partialWith(Schema.Struct({ ...Policy.Policy.fields, pricing: Pricing }), {
  exact: true
})
/** @since 0.1.0 */
export type Settings = typeof Settings.Type

/** The services a run uses, over a fresh in-memory log. */
/** Texts remembered by the replay's counter before its memo starts over. */
const replayMemoTexts = 20_000

/**
 * The counter every replay in this thread shares: `gpt-tokenizer`'s o200k_base (what
 * `ContextService.layerMemory` counts with by default), each whole text and each message input counted
 * once. A replay re-appends the recording's messages, and a sweep replays each stream once per policy:
 * the same texts and the same message objects come back, and a count depends on the text alone.
 */
const replayCounter: TokenCounter.TokenCounter.Service = (() => {
  const base = TokenCounter.gpt("o200k_base")
  const messages = new WeakMap<object, number>()
  const count = TokenCounter.rememberTexts(base.count, Lru.make(replayMemoTexts))
  const counting = TokenCounter.make(base.name, count, "openai")
  return {
    name: base.name,
    count,
    countMessage: (message) => {
      let tokens = messages.get(message)
      if (tokens === undefined) {
        tokens = counting.countMessage(message)
        messages.set(message, tokens)
      }
      return tokens
    }
  }
})()

const runtime = (policy: Policy.Policy) =>
  Layer.merge(
    // A scratch log: the replay's steps made every event; they are read back once, at the end.
    ContextService.layerMemory({
      tokenCounter: Layer.succeed(TokenCounter.TokenCounter, replayCounter),
      scratch: true
    }),
    TemplateCompactor.layer({ maxBytes: policy.compactor?.maxBytes ?? 4096 })
  )

/** A run failed (an invalid policy, a render that cannot fit, a log error). @since 0.1.0 */
export class PipelineError extends Schema.TaggedError<PipelineError>()("PipelineError", {
  turn: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `pipeline failed at turn ${this.turn}: ${this.detail}`
  }
}

/** Options of {@link run}. @since 0.8.0 */
export interface RunOptions {
  /**
   * Told each render the run made, in order (the k-th `PromptRendered` of the events returned): its
   * request, the bytes it hashed, and its stats. A sweep reads these instead of rebuilding each render
   * from the events again.
   */
  readonly onRender?: ((rendered: Turn.Rendered) => void) | undefined
}

/**
 * Run the turn module over the inputs: each turn under `policyOf(its recorded policy)`; returns the
 * events written, in order.
 * @since 0.1.0
 */
export const run = (
  stream: string,
  input: Input,
  policyOf: (recorded: Policy.Policy | undefined) => Policy.Policy,
  options: RunOptions = {}
): Effect.Effect<ReadonlyArray<WindowEvent.WindowEvent>, PipelineError> => {
  // One policy object per recorded policy: the turn encodes, hashes and checks a policy once per object
  // (a fresh object per turn would be encoded and checked again every turn), and the builder comparison
  // is made once too.
  const policies = new Map<
    Policy.Policy | undefined,
    { readonly policy: Policy.Policy; readonly sameBuilder: boolean }
  >()
  const policyFor = (recorded: Policy.Policy | undefined) => {
    let known = policies.get(recorded)
    if (known === undefined) {
      const policy = policyOf(recorded)
      // Under the recorded builder the reported usage is the recording's; under another it is unknown.
      const sameBuilder = recorded !== undefined && JSON.stringify(recorded.builder) === JSON.stringify(policy.builder)
      known = { policy, sameBuilder }
      policies.set(recorded, known)
    }
    return known
  }
  const first = policyFor(input.turns[0]?.policy).policy
  return Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const log = yield* EventLog.EventLog
    let recorded: Policy.Policy | undefined
    for (const [index, turn] of input.turns.entries()) {
      const number = index + 1
      const fail = (error: { readonly message: string }) => new PipelineError({ turn: number, detail: error.message })
      if (turn.policy !== undefined) recorded = turn.policy
      const { policy, sameBuilder } = policyFor(recorded)
      const step = Effect.gen(function* () {
        if (turn.system !== undefined) yield* ctx.setSystemPrompt(stream, turn.system)
        if (turn.knowledge !== undefined) yield* ctx.setKnowledge(stream, turn.knowledge)
        if (turn.goal !== undefined) yield* ctx.setTaskGoal(stream, turn.goal)
        const reminder = turn.calls[0]?.turnReminder
        yield* Turn.prepare(
          stream,
          {
            messages: turn.messages,
            injected: turn.injected,
            turnReminder: reminder
          },
          policy
        )
        for (const [iteration, call] of turn.calls.entries()) {
          const rendered = yield* Turn.render(stream, policy, {
            iteration,
            turnReminder: call.turnReminder
          })
          options.onRender?.(rendered)
          yield* Turn.complete(
            stream,
            {
              answer: call.answer,
              results: call.results,
              signals: call.signals,
              usage: sameBuilder ? call.usage : undefined,
              estimatedInputTokens: rendered.built.stats.total,
              endTurn: iteration === turn.calls.length - 1,
              turnReminder: call.turnReminder
            },
            policy
          )
        }
        // A turn with no model call (a transcript ending on a user message) still completes.
        if (turn.calls.length === 0) yield* ctx.completeTurn(stream)
      })
      yield* Effect.mapError(step, fail)
    }
    const envelopes = yield* Stream.runCollect(log.read(stream)).pipe(
      Effect.mapError((error) => new PipelineError({ turn: input.turns.length, detail: error.message }))
    )
    return Chunk.toReadonlyArray(envelopes).map((envelope) => envelope.event)
    // A replay exports no spans (it makes no model call to trace): its steps' spans are no-ops.
  }).pipe(Effect.provide(runtime(first)), Effect.withTracerEnabled(false))
}

/** The policy of a transcript import: the builder, and compaction when a budget is given. @since 0.4.0 */
export const importPolicy = (builder: Policy.Policy["builder"], compaction: boolean): Policy.Policy => ({
  builder,
  ...(compaction ? { compaction: {} } : {})
})

/**
 * Agent turns of a chat transcript: the system messages apart, then each assistant message is one
 * model call and ends a turn, answered by the tool results that follow it (user messages, and tool
 * messages that answer no call, start the turn of the next assistant message). Agent transcripts
 * rarely mark where a user turn ends, so each model call is its own turn, as `render --turn K` counts.
 * @since 0.1.0
 */
export const turnsOf = (messages: ReadonlyArray<Message.MessageInput>): Input => {
  const system = messages.filter((message) => message.role === "system")
  const turns: Array<TurnInput> = []
  let opening: Array<Message.MessageInput> = []
  let call: Call | undefined
  const flush = () => {
    if (call === undefined && opening.length === 0) return
    turns.push({ messages: opening, injected: [], calls: call === undefined ? [] : [call] })
    opening = []
    call = undefined
  }
  for (const message of messages) {
    if (message.role === "system") continue
    const results = message.role === "tool" ? Message.toolResultsOf(message) : []
    if (message.role === "assistant") {
      // The messages before it open this call's turn; a previous call ends its own.
      if (call !== undefined) flush()
      call = { answer: message.parts, results: [], signals: [] }
      continue
    }
    if (call !== undefined && results.length > 0 && results.length === message.parts.length) {
      call = { ...call, results: [...call.results, ...results] }
      continue
    }
    // A user message (or a stray tool message) after a model call opens the next turn.
    if (call !== undefined) flush()
    opening.push(message)
  }
  flush()
  const head = turns[0]
  if (head !== undefined && system.length > 0) {
    turns[0] = {
      ...head,
      system: [{ role: "system", parts: [Message.text(system.map((message) => Message.textOf(message)).join("\n"))] }]
    }
  }
  return { turns }
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

const asInput = (message: Message.Message): Message.MessageInput => ({
  id: message.id,
  role: message.role,
  parts: message.parts,
  ...(message.pinned === true ? { pinned: true } : {})
})

// The kinds a turn's prepare injects, set again as recorded on replay: recall, and the skills the turn
// placed for its query (ADR 0126).
const recallKinds: ReadonlySet<string> = new Set(["recall", "cross_session", "skill"])

/**
 * The inputs of a recorded stream, cut into turns at `TurnCompleted` and into model calls at
 * `PromptRendered`: per turn its recorded policy, the system prompt, knowledge and goal set before it,
 * the messages it started with, recall as it was injected, and per call the answer, the tool results,
 * signals and usage.
 * @since 0.1.0
 */
export const inputOf = (entries: ReadonlyArray<Queries.Entry>): Input => {
  const turns: Array<TurnInput> = []
  type Draft = {
    policy?: Policy.Policy
    system?: ReadonlyArray<Message.MessageInput>
    knowledge?: ReadonlyArray<Message.MessageInput>
    goal?: string | null
    messages: Array<Message.MessageInput>
    injected: Map<Message.InjectedKind, Array<Message.MessageInput>>
    calls: Array<{
      answer: ReadonlyArray<Message.Part>
      results: Array<Message.ToolResultPart>
      signals: Array<string>
      usage?: LanguageModel.Usage
      estimatedInputTokens?: number
      turnReminder?: string | undefined
    }>
    rendered: number
    reminder?: string | undefined
  }
  const fresh = (): Draft => ({ messages: [], injected: new Map(), calls: [], rendered: 0 })
  let turn = fresh()
  // The policy in force (the last recorded), to tell a render's own reminder from the policy's.
  let policyReminder: string | undefined
  const flush = () => {
    if (turn.messages.length === 0 && turn.calls.length === 0 && turn.rendered === 0) return
    turns.push({
      policy: turn.policy,
      system: turn.system,
      knowledge: turn.knowledge,
      goal: turn.goal,
      messages: turn.messages,
      injected: [...turn.injected].map(([kind, messages]) => ({ kind, messages })),
      calls: turn.calls
    })
    turn = fresh()
  }
  for (const { event } of entries) {
    switch (event._tag) {
      case "TurnPolicySet": {
        const decoded = Policy.validate(event.policy)
        if (Either.isRight(decoded)) {
          turn.policy = decoded.right
          policyReminder = decoded.right.render?.turnReminder
        }
        break
      }
      case "SystemPromptSet":
        turn.system = event.messages.map(asInput)
        break
      case "KnowledgeSet":
        turn.knowledge = event.messages.map(asInput)
        break
      case "TaskGoalSet":
        turn.goal = event.goal
        break
      case "MessagesInjected":
        if (recallKinds.has(event.kind) && turn.rendered === 0) {
          const kept = turn.injected.get(event.kind) ?? []
          kept.push(
            ...event.messages.map((message): Message.MessageInput => ({ role: message.role, parts: message.parts }))
          )
          turn.injected.set(event.kind, kept)
        }
        break
      case "MessagesRemoved": {
        const kind = event.reason.startsWith("kind:") ? event.reason.slice(5) : ""
        if (recallKinds.has(kind) && turn.rendered === 0 && Schema.is(Message.InjectedKind)(kind)) {
          if (!turn.injected.has(kind)) turn.injected.set(kind, [])
        }
        break
      }
      case "PromptRendered": {
        turn.rendered++
        const reminder = event.render?.turnReminder
        turn.reminder = reminder === policyReminder ? undefined : reminder
        break
      }
      case "MessageAppended": {
        const message = event.message
        if (message.kind !== "chat") break
        const call = turn.calls.at(-1)
        if (turn.rendered === 0) turn.messages.push(asInput(message))
        else if (message.role === "assistant" && turn.calls.length < turn.rendered) {
          turn.calls.push({
            answer: message.parts,
            results: [],
            signals: [],
            turnReminder: turn.reminder
          })
        } else if (call !== undefined && message.role === "tool") call.results.push(...Message.toolResultsOf(message))
        break
      }
      case "SignalRaised":
        turn.calls.at(-1)?.signals.push(event.signal.text)
        break
      case "UsageReported": {
        const call = turn.calls.at(-1)
        if (call !== undefined) {
          call.usage = {
            inputTokens: event.inputTokens,
            outputTokens: event.outputTokens,
            cacheReadTokens: event.cacheReadTokens,
            cacheWriteTokens: event.cacheWriteTokens,
            ...(event.cacheWrite1hTokens === undefined ? {} : { cacheWrite1hTokens: event.cacheWrite1hTokens })
          }
          call.estimatedInputTokens = event.estimatedInputTokens
        }
        break
      }
      case "TurnCompleted":
        flush()
        break
      default:
        break
    }
  }
  flush()
  return { turns }
}

/** What one model call of a run cost. @since 0.4.0 */
export interface CallStat {
  readonly turn: number
  /** 1-based within its turn. */
  readonly call: number
  /** Prompt tokens of the render (window tokens; tool schemas apart). */
  readonly tokensSent: number
  /** Compaction events since the previous render (summaries, prunes, trims, applied deferred summaries). */
  readonly compactions: number
  /** Messages that left the window since the previous render. */
  readonly dropped: number
  /** Share of the request bytes equal to the previous request's prefix (same provider and model). */
  readonly prefixReuse: number | null
  /** Predicted prompt-cache reads and writes of the call (the cache model, `CacheModel`). */
  readonly cacheRead: number
  readonly cacheWrite: number
  /**
   * Input cost in USD as the cache model prices it (uncached, cache writes at their TTL's price, cache
   * reads), plus the compactor's own model calls since the previous render.
   */
  readonly cost: number
  /** The part of `cost` spent by the compactor's own calls (each summary's input, uncached). */
  readonly compactorCost: number
}

/**
 * The input tokens of the compactor's own model call an event stands for: a compaction that produced a
 * summary read the messages it replaced (`before` is the window just before the event; a replay's
 * template compactor is priced alike). 0 for every other event. `callStats` and the sweeps price the
 * compactor through this and {@link compactorDollars}.
 * @since 0.8.0
 */
export const compactorInput = (before: Window.Window, event: WindowEvent.WindowEvent): number =>
  event._tag === "Compacted" && event.summary !== null
    ? event.removedIds.reduce((sum, id) => sum + (Window.findMessage(before, id)?.tokens ?? 0), 0)
    : 0

/**
 * What a compactor call of `tokens` input costs: uncached input at the price of the model of the last
 * render before it (the summarizer's own model is not recorded), or the default provider's.
 * @since 0.8.0
 */
export const compactorDollars = (
  tokens: number,
  target: { readonly provider: string; readonly model: string } | undefined,
  pricing: Pricing | undefined
): number => {
  const at = target ?? { provider: "default", model: "unknown" }
  return (tokens * CacheTable.resolve(at.provider, at.model, pricing).input) / 1_000_000
}

/** Options of {@link callStats}. @since 0.5.0 */
export interface StatOptions {
  /** Overrides the table's input and read prices. */
  readonly pricing?: Pricing | undefined
  /** The time of each call, by index (a replay has no times of its own: it takes the recording's). */
  readonly times?: ReadonlyArray<number> | undefined
  /** The unknown prefix the recording was estimated to carry (a replay holds no first usage of its own). */
  readonly unknownPrefix?: CacheModel.UnknownPrefix | null | undefined
}

/**
 * Per-model-call stats of a stream's events: renders are rebuilt from the log to measure prefix reuse
 * (a render that cannot be rebuilt counts as not reused, and `prefixReuse` is null), and priced with
 * the cache model from the renders and their times. A compaction that produced a summary is one model
 * call of the compactor's: its input is the messages it summarized, sent uncached at the input price.
 * @since 0.4.0
 */
export const callStats = (
  entries: ReadonlyArray<Queries.Entry>,
  options: StatOptions = {}
): ReadonlyArray<CallStat> => {
  const renders = entries.filter((entry) => entry.event._tag === "PromptRendered")
  const timed = entries.map((entry) => {
    if (entry.event._tag !== "PromptRendered" || options.times === undefined) return entry
    const index = renders.indexOf(entry)
    return { ...entry, recordedAt: options.times[index] ?? options.times.at(-1) ?? entry.recordedAt }
  })
  const report = CacheModel.predict(timed, {
    ...(options.pricing === undefined ? {} : { pricing: options.pricing }),
    ...(options.unknownPrefix === undefined ? {} : { unknownPrefix: options.unknownPrefix ?? 0 })
  })
  const stats: Array<CallStat> = []
  let window = Window.empty
  let turn = 1
  let call = 0
  let compactions = 0
  let compactor = 0
  let lastIds = new Set<string>()
  let lastTarget: { provider: string; model: string } | undefined
  const blobs = new Map<string, string>()
  const previous = new Map<string, string>()
  for (const entry of entries) {
    const event = entry.event
    if (Queries.compactionTypes.has(entry.type)) compactions++
    const summarized = compactorInput(window, event)
    if (summarized > 0) compactor += compactorDollars(summarized, lastTarget, options.pricing)
    if (event._tag === "PromptRendered") {
      lastTarget = { provider: event.provider, model: event.model }
      RenderRecord.collectBlobs([event], blobs)
      const rebuilt = RenderRecord.rebuild(window, event, entry.version, blobs)
      const key = `${event.provider}/${event.model}`
      let reuse: number | null = null
      if (Either.isRight(rebuilt)) {
        const before = previous.get(key)
        reuse = before === undefined ? 0 : Queries.commonPrefix(before, rebuilt.right.body) / rebuilt.right.body.length
        previous.set(key, rebuilt.right.body)
      }
      const ids = new Set(Window.messages(window).map((message) => message.id))
      let dropped = 0
      for (const id of lastIds) if (!ids.has(id)) dropped++
      lastIds = ids
      const predicted = report.calls[stats.length]?.predicted
      call++
      stats.push({
        turn,
        call,
        tokensSent: event.tokens.total,
        compactions,
        dropped,
        prefixReuse: reuse,
        cacheRead: predicted?.cacheRead ?? 0,
        cacheWrite: predicted?.cacheWrite ?? 0,
        cost: (predicted?.cost ?? 0) + compactor,
        compactorCost: compactor
      })
      compactions = 0
      compactor = 0
    }
    window = Window.evolve(window, event)
    if (event._tag === "TurnCompleted") {
      turn++
      call = 0
    }
  }
  return stats
}
