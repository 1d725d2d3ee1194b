/**
 * Policy sweeps (`ctxlog whatif --all --policy a.json --policy b.json`): every selected stream replayed
 * under each candidate policy through the same pipeline `whatif` uses ({@link Pipeline.run}: stored
 * events and stored token counts in, no model and no network), set beside the recorded run, call by
 * call. Per policy and stream: model calls, input tokens split uncached / cache-write / cache-read,
 * dollars (through a {@link Pricer}), compactions by tier, renders that overflowed the model's window,
 * and what the policy lost against the recording:
 *
 * - `tool-result`: a tool result that reached a recorded render whole and no what-if render whole;
 * - `user-message`: a user message whose text (verbatim, or quoted by a summary) reached a recorded
 *   render of its turn and no what-if render of that turn before the turn's answer;
 * - `identifier`: an identifier (path, URL, number, id, code name) a recorded answer uses that was in
 *   the recorded render the model answered and is not in the what-if render of the same call.
 *
 * Each lost item names its stream, its call (`turn.call`) and the what-if event that removed it from
 * the window (null when it never was in the what-if window in that form: cut on arrival, or left out by
 * the render). Losses are measured against the recording, so the recorded policy replayed loses nothing.
 *
 * Streams run in parallel on worker threads ({@link sweep}); one stream's analysis is
 * {@link sweepStream}, a pure function of its events.
 *
 * @since 0.5.0
 */
import { Message, Window, type WindowEvent } from "@ctxlog/core"
import { CacheModel, CacheTable, RenderRecord } from "@ctxlog/providers"
import type { Policy, Turn } from "@ctxlog/turn"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Pipeline from "./Pipeline.js"
import * as Queries from "./Queries.js"

// ---------------------------------------------------------------------------------------------------
// Pricing

/** One model call's input, split the way providers bill it, and its price. @since 0.5.0 */
export interface PricedCall {
  readonly promptTokens: number
  readonly uncached: number
  readonly cacheWrite: number
  readonly cacheRead: number
  /** USD. */
  readonly dollars: number
}

/** One model call of a run as the sweep saw it: what the pricer reads besides the events. @since 0.5.0 */
export interface RenderedCall {
  readonly version: number
  readonly provider: string
  readonly model: string
  readonly tokens: number
  /** The rebuilt request body, or null when the render could not be rebuilt. */
  readonly body: string | null
}

/**
 * Prices every model call of a run (one {@link PricedCall} per `PromptRendered`, in order). The sweep
 * calls nothing else for dollars, so a cache model plugs in here.
 * @since 0.5.0
 */
export interface Pricer {
  readonly name: string
  readonly price: (run: {
    readonly entries: ReadonlyArray<Queries.Entry>
    readonly calls: ReadonlyArray<RenderedCall>
    /** The renders the sweep already rebuilt, by version (a pricer that rebuilds may reuse them). @since 0.8.0 */
    readonly rebuilt?: (version: number) => Either.Either<RenderRecord.Rebuilt, RenderRecord.RenderMismatch> | undefined
    /**
     * The recording's unknown prefix (system prompt, tools the log lacks), for a replay that holds no
     * usage of its own to estimate it from; undefined: the pricer estimates it.
     * @since 0.8.0
     */
    readonly unknownPrefix?: CacheModel.UnknownPrefix | null
    /**
     * The window just before each render, by the render's version (the sweep folded the run once for its
     * trace): a pricer that folds the events to read the windows may take them from here.
     * @since 0.8.0
     */
    readonly windowAt?: (version: number) => Window.Window | undefined
  }) => ReadonlyArray<PricedCall>
}

/**
 * The pricing `whatif` has used so far: the share of a request equal to the previous request's prefix
 * (same provider and model) is read from the cache at the read price, the rest is uncached input; no
 * cache writes. `pricing` overrides the per-provider list prices ({@link Pipeline.defaultPricing}).
 * @since 0.5.0
 */
export const prefixPricer = (pricing?: Pipeline.Pricing): Pricer => ({
  name: "prefix-share",
  price: ({ calls }) => {
    const previous = new Map<string, string>()
    return calls.map((call) => {
      const key = `${call.provider}/${call.model}`
      let share = 0
      if (call.body !== null) {
        const before = previous.get(key)
        share =
          before === undefined || call.body.length === 0
            ? 0
            : Queries.commonPrefix(before, call.body) / call.body.length
        previous.set(key, call.body)
      }
      const price = pricing ?? Pipeline.defaultPricing(call.provider)
      const cacheRead = Math.round(call.tokens * share)
      const uncached = call.tokens - cacheRead
      return {
        promptTokens: call.tokens,
        uncached,
        cacheWrite: 0,
        cacheRead,
        dollars: (uncached * price.input + cacheRead * price.cacheRead) / 1_000_000
      }
    })
  }
})

/**
 * The cache model of `@ctxlog/providers` (`CacheModel.predict`, the table `CacheTable.current`): per
 * call, what the provider's prompt cache would read, write and leave uncached given the renders and
 * their times, priced per provider and model. `pricing` overrides the input and read prices.
 * @since 0.5.0
 */
export const cacheModelPricer = (pricing?: Pipeline.Pricing): Pricer => ({
  name: `cache-model (prices as of ${CacheTable.current.version})`,
  price: ({ entries, rebuilt, unknownPrefix, windowAt }) =>
    CacheModel.predict(entries, {
      ...(pricing === undefined ? {} : { pricing }),
      ...(rebuilt === undefined ? {} : { rebuilt }),
      ...(windowAt === undefined ? {} : { windowAt }),
      ...(unknownPrefix === undefined ? {} : { unknownPrefix: unknownPrefix ?? 0 })
    }).calls.map((call) => ({
      promptTokens: call.predicted.promptTokens,
      uncached: call.predicted.uncached,
      cacheWrite: call.predicted.cacheWrite,
      cacheRead: call.predicted.cacheRead,
      dollars: call.predicted.cost
    }))
})

// ---------------------------------------------------------------------------------------------------
// Identifiers

const identifierPatterns: ReadonlyArray<RegExp> = [
  // URLs
  /https?:\/\/[^\s"'<>`)\]}]+/g,
  // paths: a/b, ./a, /a/b.c
  /(?:\.{0,2}\/)?(?:[\w.-]+\/)+[\w.-]+/g,
  // file names with an extension
  /\b[\w-]+\.(?:py|ts|tsx|js|mjs|cjs|json|md|txt|go|rs|c|h|cc|cpp|java|rb|sh|ya?ml|toml|cfg|ini|html|css|sql|pl|cgi|php|lock|log|csv)\b/g,
  // numbers of three digits or more, decimals
  /\b\d+\.\d+\b|\b\d{3,}\b/g,
  // hex ids
  /\b(?=[0-9a-f]*\d)[0-9a-f]{7,}\b/g,
  // code names: snake_case, camelCase, PascalCase with two humps, a::b
  /\b[A-Za-z_]\w*_\w+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z0-9]+[A-Z]\w*\b|\b\w+::\w+\b/g
]

/** The identifiers in a text (paths, URLs, numbers, ids, code names), at least 3 characters each. @since 0.5.0 */
export const identifiersOf = (text: string): ReadonlyArray<string> => {
  const found = new Set<string>()
  for (const pattern of identifierPatterns) {
    for (const match of text.matchAll(pattern)) {
      const value = match[0].replace(/[.,;:]+$/, "")
      if (value.length >= 3) found.add(value)
    }
  }
  return [...found]
}

const stringsOf = (value: Message.JsonValue, into: Array<string>): void => {
  if (typeof value === "string") into.push(value)
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into)
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) stringsOf(item, into)
}

/** What an answer says: its text and the string values of its tool calls' inputs. */
const answerText = (parts: ReadonlyArray<Message.Part>): string => {
  const texts: Array<string> = []
  for (const part of parts) {
    if (part.type === "text") texts.push(part.text)
    else if (part.type === "tool_call") stringsOf(part.input, texts)
  }
  return texts.join("\n")
}

/** A text as it appears inside a JSON request body. */
const inBody = (text: string) => JSON.stringify(text).slice(1, -1)

/** How much of a user message's text must reach a render (verbatim, or quoted by a summary). */
const userProbeChars = 60

// ---------------------------------------------------------------------------------------------------
// One run

/** Tiers and kinds of compaction, as counted. @since 0.5.0 */
export type Compactions = Readonly<Record<string, number>>

interface TracedCall extends RenderedCall {
  readonly turn: number
  readonly call: number
  /** The compactor's own calls since the previous render, their input tokens, and that render's model. */
  readonly compactorCalls: number
  readonly compactorTokens: number
  readonly compactorTarget: { readonly provider: string; readonly model: string } | undefined
}

interface Trace {
  readonly calls: ReadonlyArray<TracedCall>
  /** Each render rebuilt, by version. */
  readonly rebuilt: ReadonlyMap<number, Either.Either<RenderRecord.Rebuilt, RenderRecord.RenderMismatch>>
  /** The window just before each render, by version (the cache model reads it instead of folding again). */
  readonly windows: ReadonlyMap<number, Window.Window>
  readonly overflows: ReadonlyArray<number>
  readonly compactions: Compactions
  /** Tool results whose content reached a render whole: toolCallId → the call index it first did. */
  readonly toolWhole: ReadonlyMap<string, number>
  /** User messages (by turn and text) that reached a render of their turn: key → call index. */
  readonly userReached: ReadonlyMap<string, number>
  /** Every tool result and user message seen: key → probe text (for attribution). */
  readonly probes: ReadonlyMap<string, string>
  /** The answer after each call (the next assistant message), if any. */
  readonly answers: ReadonlyArray<ReadonlyArray<Message.Part> | undefined>
}

const compactionKind = (event: WindowEvent.WindowEvent): string | undefined => {
  switch (event._tag) {
    case "Compacted":
      return event.tier
    case "ToolOutputPruned":
      return "prune"
    case "MediaPruned":
      return "media"
    case "UserAskCut":
      return "ask-cut"
    case "UnseenCut":
      return "unseen-cut"
    case "DeferredSummariesApplied":
      return "deferred"
    case "HistoryTrimmed":
      return "trim"
    case "SeamProduced":
      return "seam"
    default:
      return undefined
  }
}

/** A render the replay made, as a rebuild of its `PromptRendered` would give it. */
type Given = (event: WindowEvent.EventOf<"PromptRendered">, version: number) => RenderRecord.Rebuilt | undefined

/**
 * Fold a run's events once: rebuild each render (or take it from `given`: the renders the replay itself
 * made, matched by event id and hash), and record what reached it.
 */
const trace = (entries: ReadonlyArray<Queries.Entry>, given?: Given): Trace => {
  let window = Window.empty
  const blobs = new Map<string, string>()
  const calls: Array<TracedCall> = []
  const rebuiltAt = new Map<number, Either.Either<RenderRecord.Rebuilt, RenderRecord.RenderMismatch>>()
  const windows = new Map<number, Window.Window>()
  let compactorCalls = 0
  let compactorTokens = 0
  let lastTarget: { provider: string; model: string } | undefined
  const overflows: Array<number> = []
  const compactions: Record<string, number> = {}
  const toolWhole = new Map<string, number>()
  const userReached = new Map<string, number>()
  const probes = new Map<string, string>()
  const pendingTools = new Map<string, string>()
  const pendingUsers = new Map<string, string>()
  const answers: Array<ReadonlyArray<Message.Part> | undefined> = []
  let turn = 1
  let call = 0
  for (const entry of entries) {
    const event = entry.event
    const kind = compactionKind(event)
    if (kind !== undefined) compactions[kind] = (compactions[kind] ?? 0) + 1
    const summarized = Pipeline.compactorInput(window, event)
    if (summarized > 0) {
      compactorCalls++
      compactorTokens += summarized
    }
    switch (event._tag) {
      case "PromptRendered": {
        RenderRecord.collectBlobs([event], blobs)
        const made = given?.(event, entry.version)
        const rebuilt =
          made === undefined ? RenderRecord.rebuild(window, event, entry.version, blobs) : Either.right(made)
        rebuiltAt.set(entry.version, rebuilt)
        windows.set(entry.version, window)
        const body = Either.isRight(rebuilt) ? rebuilt.right.body : null
        if (Either.isRight(rebuilt) && !RenderRecord.fits(rebuilt.right.stats)) overflows.push(calls.length)
        call++
        const index = calls.length
        calls.push({
          version: entry.version,
          provider: event.provider,
          model: event.model,
          tokens: event.tokens.total,
          body,
          turn,
          call,
          compactorCalls,
          compactorTokens,
          compactorTarget: lastTarget
        })
        compactorCalls = 0
        compactorTokens = 0
        lastTarget = { provider: event.provider, model: event.model }
        answers.push(undefined)
        if (body !== null) {
          for (const [id, probe] of pendingTools) {
            if (body.includes(probe)) {
              toolWhole.set(id, index)
              pendingTools.delete(id)
            }
          }
          for (const [key, probe] of pendingUsers) {
            if (body.includes(probe)) {
              userReached.set(key, index)
              pendingUsers.delete(key)
            }
          }
        }
        break
      }
      case "MessageAppended": {
        const message = event.message
        if (message.kind !== "chat") break
        if (message.role === "assistant" && calls.length > 0 && answers[calls.length - 1] === undefined) {
          answers[calls.length - 1] = message.parts
        } else if (message.role === "tool") {
          for (const result of Message.toolResultsOf(message)) {
            if (result.content.length === 0) continue
            const probe = inBody(result.content)
            probes.set(`tool:${result.toolCallId}`, probe)
            pendingTools.set(result.toolCallId, probe)
          }
        } else if (message.role === "user") {
          const text = Message.textOf(message).trim()
          if (text.length > 0) {
            const probe = inBody(text.slice(0, userProbeChars))
            const key = `${turn}:${text.slice(0, userProbeChars)}`
            probes.set(`user:${key}`, probe)
            pendingUsers.set(key, probe)
          }
        }
        break
      }
      case "TurnCompleted":
        pendingUsers.clear()
        turn++
        call = 0
        break
      default:
        break
    }
    window = Window.evolve(window, event)
  }
  return { calls, rebuilt: rebuiltAt, windows, overflows, compactions, toolWhole, userReached, probes, answers }
}

/** Identifiers each recorded answer uses that its recorded render held. */
const neededOf = (recorded: Trace): ReadonlyArray<ReadonlyArray<string>> =>
  recorded.calls.map((call, index) => {
    const answer = recorded.answers[index]
    if (answer === undefined || call.body === null) return []
    const body = call.body
    return identifiersOf(answerText(answer)).filter((identifier) => body.includes(identifier))
  })

// ---------------------------------------------------------------------------------------------------
// Results

/** What a candidate lost, with where. @since 0.5.0 */
export interface LostItem {
  readonly kind: "tool-result" | "user-message" | "identifier"
  readonly stream: string
  /** `turn.call` of the call it went missing at, and that call's index (0-based) in the stream. */
  readonly call: string
  readonly callIndex: number
  /** The identifier, the tool call id, or the head of the user's message. */
  readonly item: string
  /** The what-if event that took it out of the window (null: never in the what-if window in that form). */
  readonly removedBy: { readonly version: number; readonly type: string } | null
}

/** Totals of one run (the recording, or a policy) over one stream or many. @since 0.5.0 */
export interface Totals {
  readonly streams: number
  readonly calls: number
  readonly promptTokens: number
  readonly uncached: number
  readonly cacheWrite: number
  readonly cacheRead: number
  /** USD: the model calls' input (the pricer's) and the compactor's own calls. */
  readonly dollars: number
  /**
   * The compactor's own model calls (one per compaction that produced a summary), their input tokens
   * (the messages summarized, sent uncached) and dollars (included in `dollars`).
   * @since 0.8.0
   */
  readonly compactor: { readonly calls: number; readonly tokens: number; readonly dollars: number }
  readonly compactions: Compactions
  /** Renders whose prompt plus output reserve exceeded the model's window. */
  readonly overflows: number
  readonly lost: { readonly toolResults: number; readonly userMessages: number; readonly identifiers: number }
  /** Streams the policy could not replay (an invalid policy, a render that cannot fit). */
  readonly failed: number
}

/** One model call of a run, priced: what the viewer's compare chart draws. @since 0.8.0 */
export interface CallDetail extends PricedCall {
  /** `turn.call`, and the version of the call's render in the run's own events. */
  readonly call: string
  readonly version: number
  /** The compactor's own calls since the previous render, and their dollars (not in `dollars`). */
  readonly compactorCalls: number
  readonly compactorDollars: number
}

/** One policy on one stream. @since 0.5.0 */
export interface Run {
  readonly policy: string
  readonly totals: Totals
  readonly lost: ReadonlyArray<LostItem>
  /** Why the replay failed, when it did. */
  readonly error: string | null
  /** Each model call, when asked for (`sweepStream`'s `calls` option). @since 0.8.0 */
  readonly calls?: ReadonlyArray<CallDetail>
}

/** One stream: the recording and each candidate. @since 0.5.0 */
export interface StreamResult {
  readonly stream: string
  readonly source: string
  readonly recorded: Run
  readonly candidates: ReadonlyArray<Run>
}

/** A candidate policy: its name (the file) and the fields that replace the recorded ones. @since 0.5.0 */
export interface Candidate {
  readonly name: string
  readonly settings: Pipeline.Settings
}

const noLoss = { toolResults: 0, userMessages: 0, identifiers: 0 }
const noCompactor = { calls: 0, tokens: 0, dollars: 0 }

/** The compactor's calls of a traced run, priced (`Pipeline.compactorDollars`, as `whatif` prices them). */
const compactorOf = (trace: Trace | undefined, pricing: Pipeline.Pricing | undefined): Totals["compactor"] =>
  trace === undefined
    ? noCompactor
    : trace.calls.reduce(
        (sum, call) => ({
          calls: sum.calls + call.compactorCalls,
          tokens: sum.tokens + call.compactorTokens,
          dollars:
            sum.dollars +
            (call.compactorTokens === 0
              ? 0
              : Pipeline.compactorDollars(call.compactorTokens, call.compactorTarget, pricing))
        }),
        noCompactor
      )

const totalsOf = (
  trace: Trace | undefined,
  priced: ReadonlyArray<PricedCall>,
  lost: ReadonlyArray<LostItem>,
  failed: boolean,
  pricing?: Pipeline.Pricing
): Totals => {
  const compactor = compactorOf(trace, pricing)
  return {
    streams: 1,
    calls: trace?.calls.length ?? 0,
    promptTokens: priced.reduce((sum, call) => sum + call.promptTokens, 0),
    uncached: priced.reduce((sum, call) => sum + call.uncached, 0),
    cacheWrite: priced.reduce((sum, call) => sum + call.cacheWrite, 0),
    cacheRead: priced.reduce((sum, call) => sum + call.cacheRead, 0),
    dollars: priced.reduce((sum, call) => sum + call.dollars, 0) + compactor.dollars,
    compactor,
    compactions: trace?.compactions ?? {},
    overflows: trace?.overflows.length ?? 0,
    lost: {
      toolResults: lost.filter((item) => item.kind === "tool-result").length,
      userMessages: lost.filter((item) => item.kind === "user-message").length,
      identifiers: lost.filter((item) => item.kind === "identifier").length
    },
    failed: failed ? 1 : 0
  }
}

/** The sum of totals (streams add up). @since 0.5.0 */
export const addTotals = (a: Totals, b: Totals): Totals => {
  const compactions: Record<string, number> = { ...a.compactions }
  for (const [kind, count] of Object.entries(b.compactions)) compactions[kind] = (compactions[kind] ?? 0) + count
  return {
    streams: a.streams + b.streams,
    calls: a.calls + b.calls,
    promptTokens: a.promptTokens + b.promptTokens,
    uncached: a.uncached + b.uncached,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cacheRead: a.cacheRead + b.cacheRead,
    dollars: a.dollars + b.dollars,
    compactor: {
      calls: a.compactor.calls + b.compactor.calls,
      tokens: a.compactor.tokens + b.compactor.tokens,
      dollars: a.compactor.dollars + b.compactor.dollars
    },
    compactions,
    overflows: a.overflows + b.overflows,
    lost: {
      toolResults: a.lost.toolResults + b.lost.toolResults,
      userMessages: a.lost.userMessages + b.lost.userMessages,
      identifiers: a.lost.identifiers + b.lost.identifiers
    },
    failed: a.failed + b.failed
  }
}

/** Totals of nothing. @since 0.5.0 */
export const emptyTotals: Totals = {
  streams: 0,
  calls: 0,
  promptTokens: 0,
  uncached: 0,
  cacheWrite: 0,
  cacheRead: 0,
  dollars: 0,
  compactor: noCompactor,
  compactions: {},
  overflows: 0,
  lost: noLoss,
  failed: 0
}

/**
 * The what-if event that took `probe` out of the window before render `beforeVersion`: the last event
 * after which fewer window messages held it. Null when no message held it.
 *
 * Messages are immutable values a window shares with the one before it, so an event changes the count
 * of messages holding a probe only through the messages it took out and the ones it put in: each probe
 * is checked against those (found by identity), never against the whole window again.
 * `counter`, when given, is told each message text checked against a probe (a work count for tests).
 * @since 0.8.0
 */
export const removers = (
  entries: ReadonlyArray<Queries.Entry>,
  wanted: ReadonlyArray<{ readonly probe: string; readonly beforeVersion: number }>,
  counter?: { checks: number }
): ReadonlyArray<{ readonly version: number; readonly type: string } | null> => {
  const found: Array<{ version: number; type: string } | null> = wanted.map(() => null)
  if (wanted.length === 0) return found
  const text = new WeakMap<Message.Message, string>()
  const textOf = (message: Message.Message) => {
    let value = text.get(message)
    if (value === undefined) {
      value = JSON.stringify(message.parts)
      text.set(message, value)
    }
    return value
  }
  const holdingOf = (messages: ReadonlyArray<Message.Message>, probe: string) => {
    let count = 0
    for (const message of messages) {
      if (counter !== undefined) counter.checks++
      if (textOf(message).includes(probe)) count++
    }
    return count
  }
  const last = Math.max(...wanted.map((item) => item.beforeVersion))
  let window = Window.empty
  for (const entry of entries) {
    if (entry.version >= last) break
    const event = entry.event
    const next = Window.evolve(window, event)
    const tag = event._tag
    if (tag !== "MessageAppended" && tag !== "PromptRendered" && tag !== "UsageReported" && tag !== "TurnCompleted") {
      const after = Window.messages(next)
      const kept = new Set(after)
      const removed = Window.messages(window).filter((message) => !kept.has(message))
      if (removed.length > 0) {
        const before = new Set(Window.messages(window))
        const added = after.filter((message) => !before.has(message))
        for (const [index, item] of wanted.entries()) {
          if (entry.version >= item.beforeVersion) continue
          if (holdingOf(added, item.probe) < holdingOf(removed, item.probe)) {
            found[index] = { version: entry.version, type: tag }
          }
        }
      }
    }
    window = next
  }
  return found
}

/**
 * A replay's events as entries, numbered from 1, each at the recorded time of the model call it
 * belongs to (the k-th render of the replay at the k-th recorded render's time): a cache model sees
 * the recording's gaps between calls, not the replay's.
 */
const entriesOf = (
  events: ReadonlyArray<WindowEvent.WindowEvent>,
  callTimes: ReadonlyArray<number>
): ReadonlyArray<Queries.Entry> => {
  let call = 0
  return events.map((event, index) => {
    const at = callTimes[Math.min(call, callTimes.length - 1)] ?? 0
    if (event._tag === "PromptRendered") call++
    return { version: index + 1, eventId: event.id, type: event._tag, schemaVersion: 0, recordedAt: at, event }
  })
}

/** The builder a stream records: its first policy, else the config of its last rebuildable render. */
const recordedFallback = (entries: ReadonlyArray<Queries.Entry>, input: Pipeline.Input): Policy.Policy | undefined => {
  const first = input.turns.find((turn) => turn.policy !== undefined)?.policy
  if (first !== undefined) return first
  const lastSpec = entries
    .flatMap((entry) =>
      entry.event._tag === "PromptRendered" && entry.event.render !== undefined ? [entry.event.render] : []
    )
    .at(-1)
  const builder = lastSpec === undefined ? undefined : RenderRecord.decodeConfig(lastSpec)
  return builder === undefined ? undefined : { builder }
}

/** How a sweep prices: a pricer per candidate's pricing override (none: list prices). @since 0.5.0 */
export type PricerFor = (pricing: Pipeline.Pricing | undefined) => Pricer

/** The pricer sweeps use: the cache model. @since 0.5.0 */
export const defaultPricer: PricerFor = cacheModelPricer

const detailsOf = (
  trace: Trace,
  priced: ReadonlyArray<PricedCall>,
  pricing: Pipeline.Pricing | undefined
): ReadonlyArray<CallDetail> =>
  trace.calls.map((call, index) => ({
    promptTokens: priced[index]?.promptTokens ?? call.tokens,
    uncached: priced[index]?.uncached ?? 0,
    cacheWrite: priced[index]?.cacheWrite ?? 0,
    cacheRead: priced[index]?.cacheRead ?? 0,
    dollars: priced[index]?.dollars ?? 0,
    call: `${call.turn}.${call.call}`,
    version: call.version,
    compactorCalls: call.compactorCalls,
    compactorDollars:
      call.compactorTokens === 0 ? 0 : Pipeline.compactorDollars(call.compactorTokens, call.compactorTarget, pricing)
  }))

/**
 * One stream under each candidate: the recording traced once, each candidate replayed and traced,
 * priced with `pricerFor`, and its losses against the recording listed. `options.calls`: each run
 * also lists its model calls ({@link CallDetail}).
 * @since 0.5.0
 */
export const sweepStream = (
  stream: string,
  source: string,
  entries: ReadonlyArray<Queries.Entry>,
  candidates: ReadonlyArray<Candidate>,
  pricerFor: PricerFor = defaultPricer,
  options: { readonly calls?: boolean } = {}
): Effect.Effect<StreamResult> =>
  Effect.gen(function* () {
    const recordedTrace = trace(entries)
    const recordedPricer = pricerFor(undefined)
    const recordedPriced = recordedPricer.price({
      entries,
      calls: recordedTrace.calls,
      rebuilt: (version) => recordedTrace.rebuilt.get(version),
      windowAt: (version) => recordedTrace.windows.get(version)
    })
    // A replay holds no usage of its own under another builder: it carries the recording's unknown prefix.
    // The first call decides it (from the usage reported after it): predicting up to there is enough.
    const firstRender = entries.findIndex((entry) => entry.event._tag === "PromptRendered")
    const decided = entries.findIndex(
      (entry, index) =>
        index > firstRender && (entry.event._tag === "UsageReported" || entry.event._tag === "PromptRendered")
    )
    const unknownPrefix = CacheModel.predict(entries.slice(0, decided === -1 ? entries.length : decided + 1), {
      rebuilt: (version) => recordedTrace.rebuilt.get(version),
      windowAt: (version) => recordedTrace.windows.get(version)
    }).unknownPrefix
    const recorded: Run = {
      policy: "recorded",
      totals: totalsOf(recordedTrace, recordedPriced, [], false),
      lost: [],
      error: null,
      ...(options.calls === true ? { calls: detailsOf(recordedTrace, recordedPriced, undefined) } : {})
    }
    const needed = neededOf(recordedTrace)
    const at = new Map(entries.map((entry) => [entry.version, entry.recordedAt]))
    const callTimes = recordedTrace.calls.map((call) => at.get(call.version) ?? 0)
    const input = Pipeline.inputOf(entries)
    const fallback = recordedFallback(entries, input)
    const runs: Array<Run> = []
    for (const candidate of candidates) {
      const { pricing, ...overrides } = candidate.settings
      const builder = overrides.builder ?? fallback?.builder
      if (builder === undefined) {
        runs.push({
          policy: candidate.name,
          totals: totalsOf(undefined, [], [], true),
          lost: [],
          error: `${candidate.name}: no "builder" given and the stream records no policy or rebuildable render to take it from`
        })
        continue
      }
      const policyOf = (recordedPolicy: Policy.Policy | undefined): Policy.Policy => ({
        ...(recordedPolicy ?? fallback ?? { builder }),
        ...overrides
      })
      const made = new Map<string, { readonly rendered: Turn.Rendered; readonly sha256: string }>()
      const replayed = yield* Effect.either(
        Pipeline.run(stream, input, policyOf, {
          onRender: (rendered) => {
            for (const event of rendered.events) {
              if (event._tag === "PromptRendered") made.set(event.id, { rendered, sha256: event.sha256 })
            }
          }
        })
      )
      if (Either.isLeft(replayed)) {
        runs.push({
          policy: candidate.name,
          totals: totalsOf(undefined, [], [], true),
          lost: [],
          error: replayed.left.message
        })
        continue
      }
      const whatifEntries = entriesOf(replayed.right, callTimes)
      // The replay's own renders: the request and the bytes it hashed (a rebuild would build them again).
      const whatif = trace(whatifEntries, (event, version) => {
        const found = made.get(event.id)
        if (found === undefined || found.sha256 !== event.sha256) return undefined
        return {
          version,
          request: found.rendered.built.request,
          body: found.rendered.body,
          sha256: event.sha256,
          recordedSha256: event.sha256,
          stats: found.rendered.built.stats
        }
      })
      const priced = pricerFor(pricing).price({
        entries: whatifEntries,
        calls: whatif.calls,
        rebuilt: (version) => whatif.rebuilt.get(version),
        windowAt: (version) => whatif.windows.get(version),
        unknownPrefix
      })
      const lost = lostItems(stream, recordedTrace, needed, whatif, whatifEntries)
      runs.push({
        policy: candidate.name,
        totals: totalsOf(whatif, priced, lost, false, pricing),
        lost,
        error: null,
        ...(options.calls === true ? { calls: detailsOf(whatif, priced, pricing) } : {})
      })
    }
    return { stream, source, recorded, candidates: runs }
  })

/** What the candidate's run lost against the recording. */
const lostItems = (
  stream: string,
  recorded: Trace,
  needed: ReadonlyArray<ReadonlyArray<string>>,
  whatif: Trace,
  whatifEntries: ReadonlyArray<Queries.Entry>
): ReadonlyArray<LostItem> => {
  const found: Array<Omit<LostItem, "removedBy"> & { probe: string }> = []
  const label = (index: number) => {
    const call = recorded.calls[index] ?? whatif.calls[index]
    return call === undefined ? "-" : `${call.turn}.${call.call}`
  }
  for (const [toolCallId, index] of recorded.toolWhole) {
    if (whatif.toolWhole.has(toolCallId)) continue
    found.push({
      kind: "tool-result",
      stream,
      call: label(index),
      callIndex: index,
      item: toolCallId,
      probe: recorded.probes.get(`tool:${toolCallId}`) ?? toolCallId
    })
  }
  for (const [key, index] of recorded.userReached) {
    if (whatif.userReached.has(key)) continue
    // At the turn's answer: the last call of its turn.
    const turn = recorded.calls[index]?.turn
    let answer = index
    while (recorded.calls[answer + 1] !== undefined && recorded.calls[answer + 1]?.turn === turn) answer++
    found.push({
      kind: "user-message",
      stream,
      call: label(answer),
      callIndex: answer,
      item: key.slice(key.indexOf(":") + 1),
      probe: recorded.probes.get(`user:${key}`) ?? key
    })
  }
  for (const [index, identifiers] of needed.entries()) {
    const body = whatif.calls[index]?.body
    if (body === undefined || body === null) continue
    for (const identifier of identifiers) {
      if (body.includes(identifier)) continue
      found.push({
        kind: "identifier",
        stream,
        call: label(index),
        callIndex: index,
        item: identifier,
        probe: identifier
      })
    }
  }
  const by = removers(
    whatifEntries,
    found.map((item) => ({
      probe: item.probe,
      beforeVersion: whatif.calls[item.callIndex]?.version ?? Number.MAX_SAFE_INTEGER
    }))
  )
  return found.map(({ probe: _probe, ...item }, index) => ({ ...item, removedBy: by[index] ?? null }))
}
