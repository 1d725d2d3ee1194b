/**
 * One turn of an agent's context pipeline, as a module every caller uses (the sample agent, the
 * inspector's what-if, the Promise API, the framework integrations). The policy is data
 * ({@link Policy.Policy}); a turn is three steps, and each step loads the window once and writes its
 * events in one append (`ContextService.batch`: one transaction, all or nothing):
 *
 * - {@link prepare}: recall for the input, the input appended (one long message cut to its head and
 *   tail), the compaction tiers (soft, hard);
 * - {@link render}: between the model calls of a turn the soft tier (and a trim when it is not enough),
 *   the seam pipeline, then the **fit**: the request is built with the policy's builder and, when the
 *   render plus its output reserve would not fit the context window, escalated — prune seen tool
 *   outputs (soft), summarize (hard), cut the results the model has not seen (truncate), trim the
 *   oldest history, and last, when the user's latest ask alone does not fit, cut it to its head and tail
 *   (the whole text in the file store: `UserAskCut`) — until it does; the
 *   `PromptRendered` event records everything needed to rebuild the request byte for byte;
 * - {@link complete}: the answer and the tool results (cut to the builder's limits), signals, the
 *   usage the provider reported, deferred tool-pair summaries, subgoals, and at the end of the turn the
 *   proactive tier and `TurnCompleted`.
 *
 * The guarantees live here, once, for every path: every render plus its output reserve fits the
 * context window, or the render fails with {@link WindowOverflow} and writes nothing; the newest tool
 * results the model has not seen are in the next render (whole, or cut to fit, never summarized or
 * dropped); every render can be rebuilt from the log.
 *
 * @since 0.4.0
 */
import {
  CompactionStatus,
  DeferredSummaries,
  type SummaryGuard,
  TaskGoalRefresh,
  TieredCompaction,
  ToolOutputPruning
} from "@ctxlog/compaction"
import { createHash } from "node:crypto"
import {
  Budget,
  Caches,
  type Compactor,
  ContextService,
  EventLog,
  type LanguageModel,
  Message,
  type RecallSource,
  TokenCounter,
  ToolPairs,
  Tracing,
  type Window,
  type WindowEvent
} from "@ctxlog/core"
import { ContextAssembly, FileStore, FullTextRecall } from "@ctxlog/memory"
import { CtxBuilder, type ProviderPair, RenderRecord, Truncation } from "@ctxlog/providers"
import { Briefing, SeamConfig, SeamHost } from "@ctxlog/seam"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import * as AskCut from "./internal/askCut.js"
import * as Policy from "./Policy.js"

/** What the turn runs on: the window service, a token counter, the compactor and a recall source. @since 0.4.0 */
export type Requirements =
  | ContextService.ContextService
  | TokenCounter.TokenCounter
  | Compactor.Compactor
  | RecallSource.RecallSource

/** The request could not be built (tool pairing or the provider's rules). @since 0.4.0 */
export class RenderFailed extends Schema.TaggedError<RenderFailed>()("RenderFailed", {
  stream: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}": the request could not be rendered: ${this.detail}`
  }
}

/**
 * Every tier ran and the render still does not fit: what is left (the system prompt, knowledge, pinned
 * messages, the messages the model has not seen, cut as far as they go) is larger than the budget.
 * Nothing was written.
 * @since 0.4.0
 */
export class WindowOverflow extends Schema.TaggedError<WindowOverflow>()("WindowOverflow", {
  stream: Schema.String,
  promptTokens: Schema.Number,
  outputReserve: Schema.Number,
  contextWindow: Schema.Number
}) {
  override get message(): string {
    return (
      `stream "${this.stream}": the prompt needs ${this.promptTokens} tokens and the answer ${this.outputReserve}, ` +
      `more than the ${this.contextWindow}-token context window after every compaction tier; ` +
      `shorten the system prompt or knowledge, unpin messages, or use a model with a larger window`
    )
  }
}

/** Every failure of a step. @since 0.4.0 */
export type TurnError =
  | Policy.InvalidPolicy
  | RenderFailed
  | WindowOverflow
  | ContextService.ContextError
  | TieredCompaction.Failure
  | SeamHost.PipelineError
  | ContextAssembly.PrepareContextError
  | Compactor.CompactionError
  | SeamConfig.InvalidSeamConfig
  | Briefing.InvalidBriefingCap
  | TaskGoalRefresh.ExtractionError
  | FileStore.InvalidFileRequest
  | EventLog.OwnerMismatch
  | EventLog.StoreError

/** The input of a turn. @since 0.4.0 */
export interface Input {
  /** The messages the turn starts with (the user's words; tool results of a resumed call). */
  readonly messages: ReadonlyArray<Message.MessageInput>
  /** What recall looks up (default: the text of the messages). */
  readonly query?: string | undefined
  /**
   * Injected context to set instead of looking it up (a replay sets what the recorded turn injected):
   * each kind named here has its messages replaced by these.
   */
  readonly injected?: ReadonlyArray<{
    readonly kind: Message.InjectedKind
    readonly messages: ReadonlyArray<Message.MessageInput>
  }>
  /**
   * The turn reminder this turn's renders will carry (an environment snapshot, say), so the tiers run
   * against the budget the renders have; default the policy's.
   */
  readonly turnReminder?: string | undefined
  /**
   * The skills the caller's matcher scored against this turn's query: the turn chooses among them
   * (`Policy.SkillSettings`) and places the choice as the `skill` kind, replacing the last turn's; an
   * empty list removes them. Without it the skills the window holds stay. Since 0.8.0.
   */
  readonly skills?: ReadonlyArray<ContextAssembly.SkillMatch> | undefined
}

/** Compaction tiers, seam actions and fit stages a step ran, in order (`soft`, `hard`, `trim`, `seam-produced`, `fit-…`). @since 0.4.0 */
export type Tiers = ReadonlyArray<string>

/** What a step did: the window after its one append, the events it wrote and the tiers that ran. @since 0.4.0 */
export interface Step extends ContextService.Outcome {
  readonly tiers: Tiers
}

/**
 * A rendered request, recorded. `R` is the request type of the policy's builder (`ProviderPair.RequestOf`):
 * a {@link Session} opened on a builder config whose provider is known statically renders that provider's body.
 * @since 0.4.0
 */
export interface Rendered<R = CtxBuilder.AnyRequest> extends Step {
  readonly built: CtxBuilder.Built<R>
  /** The exact bytes to send (`RenderRecord.serialize`); `PromptRendered.sha256` is their hash. */
  readonly body: string
  readonly budget: Budget.Budget
}

/** What the model answered, and what the tools it called returned. @since 0.4.0 */
export interface Completion {
  /** The answer's parts (text, reasoning, tool calls). */
  readonly answer: ReadonlyArray<Message.Part>
  /** The answer message's id, when the caller has one to keep (an Agents SDK item id); else a fresh one. */
  readonly answerId?: string | undefined
  /** Tool results answering the answer's calls; each is cut to the builder's tool-output limit. */
  readonly results?: ReadonlyArray<Message.ToolResultPart> | undefined
  /** Runtime notes for the next render (a failed command, say). */
  readonly signals?: ReadonlyArray<string> | undefined
  /** What the provider reported for the call. */
  readonly usage?: LanguageModel.Usage | undefined
  /** The uncalibrated local estimate of the prompt the usage is for (the render's `built.stats.total`). */
  readonly estimatedInputTokens?: number | undefined
  readonly contextEdits?: LanguageModel.ContextEdits | undefined
  /** The last call of the user turn: run the proactive tier and complete the turn. */
  readonly endTurn: boolean
  /** The turn reminder the render carried, so the tiers run against its budget; default the policy's. */
  readonly turnReminder?: string | undefined
}

/** The log metadata of each step's append: `actor` names the step (what a replay reads back). @since 0.4.0 */
export const actors = {
  prepare: "turn.prepare",
  render: "turn.render",
  complete: "turn.complete",
  reload: "turn.reload"
} as const

/** A policy as JSON (what `TurnPolicySet` records), the hash of its text, and its check: once per policy object. */
interface Prepared {
  readonly json: { readonly [key: string]: Message.JsonValue }
  readonly hash: string
  readonly valid: Either.Either<Policy.Policy, Policy.InvalidPolicy>
}
const preparedPolicies = Caches.weak<Policy.Policy, Prepared>("turn.Turn.preparedPolicies")
const preparedOf = (policy: Policy.Policy): Prepared => {
  const known = preparedPolicies.get(policy)
  if (known !== undefined) return known
  const json = Policy.toJson(policy)
  const fresh = { json, hash: policyHash(json), valid: Policy.validate(json) }
  preparedPolicies.set(policy, fresh)
  return fresh
}

/** What two policies are compared by: the SHA-256 of their JSON text. */
const policyHash = (json: { readonly [key: string]: Message.JsonValue }): string =>
  createHash("sha256").update(JSON.stringify(json)).digest("hex")

// A caller passes the same policy object to every step of a turn: it is encoded and checked once.
const checked = (policy: Policy.Policy) =>
  Either.match(preparedOf(policy).valid, { onLeft: Effect.fail, onRight: Effect.succeed })

const targetOf = (policy: Policy.Policy): RenderRecord.Target =>
  policy.target ?? { provider: policy.builder.provider, model: policy.builder.model }

// The hash of the policy each stream last recorded, per window service: a step appends `TurnPolicySet`
// only when its policy differs from it. A process learns it from the log's tail on its first step on a
// stream (see `lastRecorded`), so a new process under the same policy records nothing either. The
// hashes live in the `Records` service ({@link layer}); a caller without it (the inspector's replay)
// keeps them per window service here.
const recordedPolicies = Caches.weak<object, Map<string, string>>("turn.Turn.recordedPolicies")

/**
 * The hash of the policy each stream last recorded (`TurnPolicySet`), for the window service it is
 * provided with: what lets a step skip recording a policy the log already holds. Provide
 * {@link layer} beside the `ContextService`; {@link open} requires it.
 * @since 0.8.0
 */
export class Records extends Context.Tag("@ctxlog/turn/Records")<Records, { readonly hashes: Map<string, string> }>() {}

/** The turn's cache ({@link Records}): one per window service, made with the runtime. @since 0.8.0 */
export const layer: Layer.Layer<Records> = Layer.sync(Records, () => ({ hashes: new Map<string, string>() }))

/** The recorded hashes: the `Records` service's when provided, else per window service. */
const recordsOf = (ctx: ContextService.ContextService.Service): Effect.Effect<Map<string, string>> =>
  Effect.map(Effect.serviceOption(Records), (found) => {
    if (Option.isSome(found)) return found.value.hashes
    const byStream = recordedPolicies.get(ctx) ?? new Map<string, string>()
    recordedPolicies.set(ctx, byStream)
    return byStream
  })

/** How many of a stream's newest events a process reads, on its first step on it, for the last `TurnPolicySet`. */
export const policyLookback = 256
const lookbackChunk = 32

/**
 * The hash of the policy `stream` last recorded, read from the newest events of its log (at most
 * {@link policyLookback}, newest chunk first, stopping at the first `TurnPolicySet`). Undefined when
 * none is there, when no `EventLog` is in context, or when the read fails: the step then records its
 * policy, as it always may (an equal `TurnPolicySet` changes nothing a replay reads).
 */
const lastRecorded = (stream: EventLog.StreamId): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    const found = yield* Effect.serviceOption(EventLog.EventLog)
    if (Option.isNone(found)) return undefined
    const log = found.value
    const version = yield* log.version(stream)
    const oldest = Math.max(1, version - policyLookback + 1)
    for (let to = version; to >= oldest; to -= lookbackChunk) {
      const from = Math.max(oldest, to - lookbackChunk + 1)
      const chunk = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream, { from, to })))
      for (let at = chunk.length - 1; at >= 0; at--) {
        const event = chunk[at]?.event
        if (event?._tag === "TurnPolicySet") return policyHash(event.policy)
      }
    }
    return undefined
  }).pipe(Effect.orElseSucceed(() => undefined))

/**
 * Append `TurnPolicySet` inside a step's batch when the policy differs from the one last recorded.
 * Returns what marks it recorded, to run once the batch committed: a step that fails rolls its
 * `TurnPolicySet` back with everything else, and the next step must record it again.
 */
const recordPolicy = (stream: EventLog.StreamId, policy: Policy.Policy) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const { json, hash } = preparedOf(policy)
    const byStream = yield* recordsOf(ctx)
    if (!byStream.has(stream)) {
      // What the log holds is committed: it stands whatever this step does.
      const last = yield* lastRecorded(stream)
      if (last !== undefined) byStream.set(stream, last)
    }
    if (byStream.get(stream) === hash) return () => {}
    yield* ctx.run(stream, () => Either.right([{ _tag: "TurnPolicySet" as const, policy: json }]))
    return () => {
      byStream.set(stream, hash)
    }
  })

/** Characters one input message may keep: `inputShare` of the budget, at ~4 characters a token. */
const inputChars = (policy: Policy.Policy, budget: Budget.Budget): number =>
  Math.max(2_000, Math.floor(Budget.available(budget) * (policy.inputShare ?? 0.25) * 4))

const cutInput = (message: Message.MessageInput, maxChars: number): Message.MessageInput => ({
  ...message,
  parts: message.parts.map((part) =>
    part.type === "text" && part.text.length > maxChars
      ? { ...part, text: Truncation.headTail(part.text, maxChars) }
      : part
  )
})

/**
 * The skill choice of a turn: the caller's matches within the policy's share of the budget. Undefined
 * (the skill kind is left alone) when the caller gave no matches or the policy turns skills off.
 */
const skillPolicyOf = (
  policy: Policy.Policy,
  input: Input,
  available: number
): ContextAssembly.SkillPolicy | undefined => {
  const settings = policy.skills
  if (input.skills === undefined || settings === null) return undefined
  return {
    matches: input.skills,
    budget: Math.floor(available * (settings?.share ?? Policy.defaultSkillShare)),
    ...(settings?.minScore === undefined ? {} : { minScore: settings.minScore }),
    ...(settings?.explorationMargin === undefined ? {} : { explorationMargin: settings.explorationMargin })
  }
}

const tierOf = (result: TieredCompaction.Result): string | undefined =>
  result._tag === "NoChange" ? undefined : result._tag === "SoftCompacted" ? "soft" : result.tier

/**
 * The tier evaluations of one step that did not act, folded into one `CompactionDecided` in the step's
 * append (ADR 0128): nothing is written when every tier acted or none was evaluated.
 */
const recordDecisions = (
  stream: EventLog.StreamId,
  step: WindowEvent.EventOf<"CompactionDecided">["step"],
  budgetTokens: number,
  decisions: ReadonlyArray<WindowEvent.TierDecision>
) =>
  decisions.length === 0
    ? Effect.void
    : Effect.flatMap(ContextService.ContextService, (ctx) =>
        // Inside the step's batch: `run` joins its unit, so the decision rides in the step's one append.
        ctx.run(stream, () => Either.right([{ _tag: "CompactionDecided" as const, step, budgetTokens, decisions }]))
      )

/** The decision a tier's result carries, when it evaluated and did not act. */
const decisionsOf = (result: TieredCompaction.Result | undefined): ReadonlyArray<WindowEvent.TierDecision> =>
  result === undefined || result._tag === "Compacted" || result.decision === undefined ? [] : [result.decision]

/**
 * Prepare a turn: recall for its input (replacing what the last turn injected), the input appended,
 * the compaction tiers. One load, one append.
 * @since 0.4.0
 */
export const prepare: (
  stream: EventLog.StreamId,
  input: Input,
  policy: Policy.Policy
) => Effect.Effect<Step, TurnError, Requirements> = Effect.fn("ctxlog.turn.prepare")(function* (
  stream: EventLog.StreamId,
  input: Input,
  policy: Policy.Policy
) {
  yield* Tracing.annotate("ctxlog.stream", stream)
  const valid = yield* checked(policy)
  const ctx = yield* ContextService.ContextService
  const budget = Policy.budgetOf(valid, input.turnReminder)
  const available = Budget.available(budget)
  const tiers: Array<string> = []
  let recorded = () => {}
  const done = yield* ctx.batch(
    stream,
    Effect.gen(function* () {
      recorded = yield* recordPolicy(stream, valid)
      const query = input.query ?? input.messages.map((message) => Message.textOf(message)).join("\n")
      const skills = skillPolicyOf(valid, input, available)
      let chosen: ReadonlyArray<ContextAssembly.ChosenSkill> | undefined
      if (input.injected !== undefined) {
        for (const { kind, messages } of input.injected) {
          yield* ctx.removeKind(stream, kind)
          if (messages.length > 0) yield* ctx.inject(stream, kind, messages)
        }
      } else if (valid.recall !== undefined && valid.recall !== null) {
        const recall = valid.recall
        const owner = recall.owner
        const recallBudget = Math.floor(available * (recall.recallShare ?? 0))
        const crossBudget =
          recall.crossSessionShare === undefined ? undefined : Math.floor(available * recall.crossSessionShare)
        // Both look up the same query at one state of the index (nothing is appended before the batch
        // ends): with both budgets, one search answers them (one statement on SQLite).
        const shared: ReadonlyArray<FullTextRecall.SharedKind> =
          recallBudget > 0 && crossBudget !== undefined && crossBudget > 0 ? ["recall", "cross_session"] : []
        yield* Effect.gen(function* () {
          const delta = yield* ContextAssembly.prepareContext(stream, query, {
            budgets: { recall: recallBudget, graphFacts: 0 },
            owner,
            dedupe: true,
            ...(skills === undefined ? {} : { skills })
          })
          chosen = delta.skills
          if (crossBudget !== undefined) yield* ctx.injectCrossSessionContext(stream, query, crossBudget, owner)
        }).pipe(FullTextRecall.together(shared))
      } else if (skills !== undefined) {
        chosen = yield* ContextAssembly.selectSkills(query, skills)
      }
      // The skills `prepareContext` (or `selectSkills`) chose are placed, replacing the last turn's.
      if (chosen !== undefined && skills !== undefined) yield* ContextAssembly.placeSkills(stream, chosen)
      const maxChars = inputChars(valid, budget)
      if (input.messages.length > 0) {
        yield* ctx.appendMessages(
          stream,
          input.messages.map((message) => cutInput(message, maxChars))
        )
      }
      const tiered = Policy.tieredOf(valid, budget)
      if (tiered !== undefined) {
        const result = yield* nextTierOnRefusal(TieredCompaction.maybeCompact(stream, tiered), "hard", tiers)
        const tier = result === undefined ? undefined : tierOf(result)
        if (tier !== undefined) tiers.push(tier)
        yield* recordDecisions(
          stream,
          "prepare",
          TieredCompaction.thresholds(tiered).budget,
          result === undefined ? yield* refusedDecision(stream, tiered, tiers) : decisionsOf(result)
        )
      }
    }),
    { actor: actors.prepare }
  )
  recorded()
  return { window: done.window, events: done.events, tiers }
})

/** Options of one render. @since 0.4.0 */
export interface RenderOptions {
  /** 0 for the first model call of a user turn; the soft tier between calls runs from 1 on. */
  readonly iteration?: number
  /** This render's turn reminder (an environment snapshot, say), instead of the policy's. */
  readonly turnReminder?: string | undefined
  /** Server-side context management for this request (recorded in `PromptRendered`). */
  readonly serverContext?: WindowEvent.ServerContext | undefined
  /** The caller's cache breakpoints for this request, by window message (recorded in `PromptRendered` v5). */
  readonly cacheHints?: ReadonlyArray<WindowEvent.CacheHint> | undefined
  /**
   * The agent's state a cycle's briefing restates (mode, working set, todos, plan, sub-agents; the
   * workspace defaults to the seam policy's): passed to the seam pipeline as its state text (issue 39).
   */
  readonly briefing?: Briefing.BriefingState | undefined
}

const seamConfigOf = (policy: Policy.Policy, budget: Budget.Budget) => {
  const seams = policy.seams
  if (seams === undefined || seams === null) return undefined
  return SeamConfig.make(SeamConfig.inputAt(seams, Budget.available(budget)))
}

/**
 * A summary a guard refused (`SummaryGuard`): the tier recorded the refusal (`CompactionFailed`, reason
 * `guard:…`) and wrote no summary; the turn notes it (`<tier>-refused:<reason>`) and goes on to its
 * next tier instead of failing the step (issue 39). `undefined` when refused.
 */
const nextTierOnRefusal = <A, R>(
  effect: Effect.Effect<A, TieredCompaction.Failure, R>,
  tier: string,
  tiers: Array<string>
) =>
  Effect.catchTag(effect, "SummaryRefused", (refused: SummaryGuard.SummaryRefused) =>
    Effect.sync((): A | undefined => {
      tiers.push(`${tier}-refused:${refused.reason}`)
      return undefined
    })
  )

/** The hard tier's summary a guard refused (the reason `nextTierOnRefusal` noted last), as a decision. */
const refusedDecision = (stream: EventLog.StreamId, tiered: TieredCompaction.Config, tiers: ReadonlyArray<string>) =>
  Effect.map(
    Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load(stream)),
    (window): ReadonlyArray<WindowEvent.TierDecision> => {
      const noted = tiers.findLast((tier) => tier.startsWith("hard-refused:"))
      return [
        {
          tier: "hard",
          reason: "guard-refused",
          usedTokens: TieredCompaction.sentTokens(window, tiered),
          thresholdTokens: TieredCompaction.thresholds(tiered).hard.tokens,
          ...(noted === undefined ? {} : { detail: noted.slice("hard-refused:".length) })
        }
      ]
    }
  )

/** Prompt tokens of a render: the window, the tool schemas and the reminder, as the budget counts them. */
const promptTokens = (built: CtxBuilder.Built<unknown>): number => built.stats.total + built.stats.reminderTokens

/** Whether a render plus its output reserve fits the context window: the one check every render passes. @since 0.4.0 */
export const fits = (built: CtxBuilder.Built<unknown>): boolean => RenderRecord.fits(built.stats)

/**
 * Render the next request: (between calls) the soft tier, the seams, the fit, the builder, and a
 * rebuildable `PromptRendered`. One load, one append; nothing is written when the render fails.
 * @since 0.4.0
 */
export const render: (
  stream: EventLog.StreamId,
  policy: Policy.Policy,
  options?: RenderOptions
) => Effect.Effect<Rendered, TurnError, Requirements> = Effect.fn("ctxlog.turn.render")(function* (
  stream: EventLog.StreamId,
  policy: Policy.Policy,
  options: RenderOptions = {}
) {
  yield* Tracing.annotate("ctxlog.stream", stream)
  const valid = yield* checked(policy)
  const ctx = yield* ContextService.ContextService
  const counter = yield* TokenCounter.TokenCounter
  const builder = CtxBuilder.forProvider(valid.builder)
  const buildOptions: CtxBuilder.BuildOptions = {
    ...Policy.buildOptions(valid, options.turnReminder),
    ...(options.serverContext === undefined ? {} : { serverContext: options.serverContext }),
    ...(options.cacheHints === undefined ? {} : { cacheHints: options.cacheHints })
  }
  const budget = builder.budget(buildOptions)
  const available = Budget.available(budget)
  const tiered = Policy.tieredOf(valid, budget)
  const seamConfig = seamConfigOf(valid, budget)
  const host = seamConfig === undefined ? undefined : yield* SeamHost.make(yield* seamConfig)
  const tiers: Array<string> = []
  const build = (window: Window.Window) =>
    Either.match(builder.build(window, buildOptions), {
      onLeft: (error) => Effect.fail(new RenderFailed({ stream, detail: error.message })),
      onRight: Effect.succeed
    })
  let recorded = () => {}
  const done = yield* ctx.batch(
    stream,
    Effect.gen(function* () {
      recorded = yield* recordPolicy(stream, valid)
      // The evaluations that did not act, per attempt of the batch (a conflict runs it again).
      const declined: Array<WindowEvent.TierDecision> = []
      // Between the calls of a turn: the soft tier only (no summary stalls the tool loop); when it is
      // not enough, the oldest history is trimmed to the soft threshold (it stays in the log).
      if ((options.iteration ?? 0) > 0 && tiered !== undefined && valid.compaction?.midIteration !== false) {
        const soft = yield* TieredCompaction.maybeSoftCompactMidIteration(stream, tiered)
        if (soft._tag !== "NoChange") tiers.push("soft-mid")
        declined.push(...decisionsOf(soft))
        if (TieredCompaction.pressure(soft.window, tiered) === "Hard") {
          // To the soft threshold of what is sent: the reasoning the builder drops is added back.
          const trimmed = yield* ctx.trimToBudget(
            stream,
            Math.floor(available * (valid.compaction?.softThreshold ?? TieredCompaction.defaults.softThreshold)) +
              builder.unsentTokens(soft.window)
          )
          if (trimmed.events.length > 0) tiers.push("trim")
        }
      }
      if (host !== undefined) {
        const workspace = valid.seams?.workspace
        const state = Briefing.stateText({ ...(workspace === undefined ? {} : { workspace }), ...options.briefing })
        const seams = yield* host.run(stream, {
          ...(workspace === undefined ? {} : { workspace }),
          ...(state.length === 0 ? {} : { stateText: state })
        })
        if (seams.action !== "none") tiers.push(`seam-${seams.action}`)
        if (seams.decision !== undefined) declined.push(seams.decision)
      }
      // The fit: escalate until the render plus its reserve fits the window. The render's stats count
      // what it sends (`stats.unsentTokens` off the window's count); pruning and truncation never remove
      // reasoning, so their targets in the window's own tokens are the budget plus the unsent tokens.
      let built = yield* build(yield* ctx.load(stream))
      const counted = (window: Window.Window) => available + builder.unsentTokens(window)
      // A last-resort cut (the ask's, the unseen round's): on the window as it is when the stage runs and
      // the render before it, one event or none, the whole text in the file store (ADR 0124, 0147).
      const cutStage = (decideCut: typeof AskCut.decide) =>
        Effect.gen(function* () {
          const draft = yield* decideCut(
            yield* ctx.load(stream),
            built.stats,
            (each) => builder.build(each, buildOptions),
            AskCut.storeWhole(stream, valid.fileStore?.readTool ?? "read_output")
          )
          return yield* ctx.run(stream, () =>
            Either.right<ReadonlyArray<WindowEvent.Draft>>(draft === undefined ? [] : [draft])
          )
        })
      type Stage = readonly [
        string,
        Effect.Effect<ContextService.Outcome | TieredCompaction.Result, TurnError, Requirements>
      ]
      const ordered: ReadonlyArray<Stage> = [
        [
          "fit-prune",
          Effect.suspend(() =>
            ToolOutputPruning.pruneToolOutputs(stream, {
              ...(tiered?.prune ?? {}),
              keepRecent: 0,
              targetTokens: available + built.stats.unsentTokens
            })
          )
        ],
        ...(tiered === undefined
          ? []
          : ([
              [
                "fit-hard",
                Effect.flatMap(
                  nextTierOnRefusal(
                    // The keep ceiling of every tier (the fixed partitions and the cold zone off the
                    // target; ADR 0126), at the fit's target (default 0.45 of the budget).
                    Effect.flatMap(ctx.load(stream), (window) =>
                      TieredCompaction.compactContext(stream, tiered.maxSummaryTokens, {
                        keepTokens: TieredCompaction.keepCeiling(
                          window,
                          tiered,
                          tiered.targetRatio ?? TieredCompaction.defaults.fitTargetRatio
                        ),
                        tier: "hard",
                        guard: tiered.guard
                      })
                    ),
                    "fit-hard",
                    tiers
                  ),
                  (result): Effect.Effect<TieredCompaction.Result, ContextService.LogError> =>
                    result !== undefined
                      ? Effect.succeed(result)
                      : Effect.map(ctx.load(stream), (window) => ({
                          _tag: "NoChange",
                          reason: "the summary was refused",
                          window
                        }))
                )
              ]
            ] as const)),
        [
          "fit-truncate",
          ctx.run(stream, (window) =>
            Either.right(ToolOutputPruning.decideFit(window, counted(window), counter.countMessage))
          )
        ],
        // Trimming drops reasoning with the rest: to the sent budget first, then (when the dropped
        // reasoning leaves it over) to the window's own count, which is never below what is sent.
        ["fit-trim", Effect.suspend(() => ctx.trimToBudget(stream, available + built.stats.unsentTokens))],
        ["fit-trim", ctx.trimToBudget(stream, available)],
        // Last: the user's latest ask alone does not fit; its head and tail stay, the whole text goes to
        // the file store (or stays in the log), one `UserAskCut` (issue 39, ADR 0124).
        ["fit-cut-ask", cutStage(AskCut.decide)],
        // Last of all: the newest unseen tool round alone does not fit (a result the model has not seen,
        // or the text of the message making its call): its longest text keeps its head and tail, the
        // whole text goes to the file store, one `UnseenCut` (ADR 0147). It stays in the render, cut.
        ["fit-cut-unseen", cutStage(AskCut.decideUnseen)]
      ]
      // Cache-aware: cutting the unseen results at the tail keeps the cached prefix that pruning older
      // outputs or summarizing would break, so it goes first when the policy prefers the prefix.
      const stages: ReadonlyArray<Stage> =
        valid.compaction?.preferCachedPrefix === true
          ? [
              ...ordered.filter(([name]) => name === "fit-truncate"),
              ...ordered.filter(([name]) => name !== "fit-truncate")
            ]
          : ordered
      for (const [name, stage] of stages) {
        if (fits(built)) break
        yield* CompactionStatus.report({ _tag: "TierStarted", operation: "maybeCompact", stream, tier: "fit" })
        const outcome = yield* stage
        if (!("events" in outcome) || outcome.events.length === 0) {
          // A fit stage that ran and found nothing to do (ADR 0148): the render's size against the window.
          declined.push({
            tier: "fit",
            reason: "nothing-to-do",
            usedTokens: promptTokens(built),
            thresholdTokens: built.stats.contextWindow - built.stats.outputReserve,
            detail: name
          })
          continue
        }
        if (!tiers.includes(name)) tiers.push(name)
        built = yield* build(yield* ctx.load(stream))
      }
      if (!fits(built)) {
        return yield* new WindowOverflow({
          stream,
          promptTokens: promptTokens(built),
          outputReserve: built.stats.outputReserve,
          contextWindow: built.stats.contextWindow
        })
      }
      // Every evaluation of the render that did not act (the soft tier between calls, the seams, the fit's
      // stages), folded into one `CompactionDecided` in the render's own append (ADR 0128, 0148).
      yield* recordDecisions(
        stream,
        "render",
        tiered === undefined ? available : TieredCompaction.thresholds(tiered).budget,
        declined
      )
      yield* RenderRecord.recordRender(stream, built, targetOf(valid), {
        config: valid.builder,
        options: buildOptions
      })
      return built
    }),
    { actor: actors.render }
  )
  recorded()
  return {
    window: done.window,
    events: done.events,
    tiers,
    built: done.value,
    body: RenderRecord.serialize(done.value.request),
    budget
  }
})

/**
 * The tool results with every output over the policy's threshold stored in the `FileStore` (when one
 * is provided and the policy sets `fileStore`) and replaced by its preview holding the handle. The
 * results of the read tool (`read_output`) stay inline: they are what a stored output reads back as.
 */
const offloadResults = (
  stream: EventLog.StreamId,
  policy: Policy.Policy,
  results: ReadonlyArray<Message.ToolResultPart>,
  names: ReadonlyMap<string, string>
) =>
  Effect.gen(function* () {
    const settings = policy.fileStore
    if (settings === undefined || settings === null || results.length === 0) return results
    const files = yield* Effect.serviceOption(FileStore.FileStore)
    if (files._tag === "None") return results
    const readTool = settings.readTool ?? "read_output"
    const keepInline = new Set([...names].flatMap(([id, name]) => (name === readTool ? [id] : [])))
    const offloaded = yield* FileStore.offload(
      stream,
      results.map((result): Message.MessageInput => ({ role: "tool", parts: [result] })),
      {
        thresholdBytes: settings.thresholdBytes,
        previewChars: settings.previewChars,
        keepInline
      }
    ).pipe(Effect.provideService(FileStore.FileStore, files.value))
    return offloaded.flatMap((message) => message.parts.flatMap((part) => (part.type === "tool_result" ? [part] : [])))
  })

/**
 * Complete a model call: the answer and the tool results, signals, usage, deferred summaries and
 * subgoals; at the end of the turn the proactive tier and `TurnCompleted`. One load, one append.
 * @since 0.4.0
 */
export const complete: (
  stream: EventLog.StreamId,
  completion: Completion,
  policy: Policy.Policy
) => Effect.Effect<Step, TurnError, Requirements> = Effect.fn("ctxlog.turn.complete")(function* (
  stream: EventLog.StreamId,
  completion: Completion,
  policy: Policy.Policy
) {
  yield* Tracing.annotate("ctxlog.stream", stream)
  const valid = yield* checked(policy)
  const ctx = yield* ContextService.ContextService
  const builder = CtxBuilder.forProvider(valid.builder)
  const budget = Policy.budgetOf(valid, completion.turnReminder)
  const available = Budget.available(budget)
  const tiered = Policy.tieredOf(valid, budget)
  const target = targetOf(valid)
  const tiers: Array<string> = []
  const answer = completion.answer.length === 0 ? [Message.text("(no answer)")] : completion.answer
  const names = new Map(Message.toolCallsOf({ parts: answer }).map((call) => [call.id, call.name]))
  // Large outputs go to the file store first (the preview with its handle takes their place), so
  // the whole output is kept and only what is left inline is cut to the builder's limit.
  const stored = yield* offloadResults(stream, valid, completion.results ?? [], names)
  const done = yield* ctx.batch(
    stream,
    Effect.gen(function* () {
      const results = stored.map(
        (result): Message.MessageInput => ({
          role: "tool",
          parts: [
            FileStore.handleOf(result) === undefined
              ? builder.truncateToolOutput(result, names.get(result.toolCallId) ?? "")
              : result
          ]
        })
      )
      const answerMessage: Message.MessageInput =
        completion.answerId === undefined
          ? { role: "assistant", parts: answer }
          : { role: "assistant", parts: answer, id: completion.answerId }
      yield* ctx.appendMessages(stream, [answerMessage, ...results])
      for (const signal of completion.signals ?? []) yield* ctx.raiseSignal(stream, signal)
      if (completion.usage !== undefined) {
        yield* RenderRecord.recordUsage(stream, completion.usage, completion.estimatedInputTokens ?? 0, {
          ...target,
          ...(completion.contextEdits === undefined ? {} : { contextEdits: completion.contextEdits })
        })
      }
      if (valid.subgoals === "heuristic") {
        const window = yield* ctx.load(stream)
        const next = yield* TaskGoalRefresh.heuristicExtractor.subgoals(
          window.history.slice(-6),
          window.taskState.subgoals
        )
        if (next.join("\n") !== window.taskState.subgoals.join("\n")) yield* ctx.setSubgoals(stream, next)
      }
      if (valid.deferred !== undefined && valid.deferred !== null && results.length > 0) {
        const cutoffTokens = Math.max(valid.deferred.minTokens ?? 0, Math.floor(available * valid.deferred.cutoffShare))
        yield* DeferredSummaries.maybeSummarizeToolPair(stream, { cutoffTokens })
      }
      if (!completion.endTurn) return
      if (tiered !== undefined) {
        const usage =
          completion.usage === undefined || valid.compaction?.proactiveFromUsage === false
            ? undefined
            : {
                inputTokens: completion.usage.inputTokens,
                ...(completion.contextEdits?.clearedInputTokens === undefined
                  ? {}
                  : { clearedInputTokens: completion.contextEdits.clearedInputTokens })
              }
        const proactive = yield* TieredCompaction.maybeProactiveCompress(stream, tiered, usage)
        const tier = tierOf(proactive)
        if (tier !== undefined) tiers.push(tier)
        yield* recordDecisions(stream, "complete", TieredCompaction.thresholds(tiered).budget, decisionsOf(proactive))
      }
      yield* ctx.completeTurn(stream)
    }),
    { actor: actors.complete }
  )
  return { window: done.window, events: done.events, tiers }
})

/**
 * Reload the turn's policy mid-session (the seed's `ReloadConfig`): another provider, model, context
 * window or any other setting. The new policy is checked (an invalid one writes nothing) and recorded
 * as `TurnPolicySet` in one append, even when it equals the last one recorded, so the log shows the
 * reload where it happened; renders after it build with the new policy's builder (and its budget), and
 * a replay (`ctxlog whatif`) takes it up from the turn that follows. Between turns: a reload inside a
 * turn applies to that turn's replay from its start.
 * @since 0.4.0
 */
export const reload: (
  stream: EventLog.StreamId,
  policy: Policy.Policy
) => Effect.Effect<Step, Policy.InvalidPolicy | ContextService.ContextError, ContextService.ContextService> = Effect.fn(
  "ctxlog.turn.reload"
)(function* (stream: EventLog.StreamId, policy: Policy.Policy) {
  yield* Tracing.annotate("ctxlog.stream", stream)
  const valid = yield* checked(policy)
  const ctx = yield* ContextService.ContextService
  const json = Policy.toJson(valid)
  const done = yield* ctx.run(stream, () => Either.right([{ _tag: "TurnPolicySet" as const, policy: json }]), {
    actor: actors.reload
  })
  const byStream = yield* recordsOf(ctx)
  byStream.set(stream, policyHash(json))
  return { window: done.window, events: done.events, tiers: [] }
})

/**
 * A process killed between a tool call and its result leaves the call open, and a render would be
 * refused: answer each open call with an error result saying it never ran. One append.
 * @since 0.4.0
 */
export const repair = (
  stream: EventLog.StreamId
): Effect.Effect<Window.Window, ContextService.ContextError, ContextService.ContextService> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const window = yield* ctx.load(stream)
    const open = ToolPairs.pendingCalls(window.history)
    if (open.length === 0) return window
    const outcome = yield* ctx.appendMessages(
      stream,
      open.map((id) =>
        Message.tool(id, "error: the session stopped before this tool ran; run it again if needed", true)
      )
    )
    return outcome.window
  })

/** The budget of a policy's renders with this reminder: what every decision of the turn compares against. @since 0.4.0 */
export const budget = (policy: Policy.Policy, turnReminder?: string): Budget.Budget =>
  Policy.budgetOf(policy, turnReminder)

/** The prompt tokens a policy's renders may take: the context window less every reserve. @since 0.4.0 */
export const budgetTokens = (policy: Policy.Policy, turnReminder?: string): number =>
  Budget.available(Policy.budgetOf(policy, turnReminder))

/** A tool result as `complete` will log it: cut to the builder's limit for its tool. @since 0.4.0 */
export const truncateResult = (
  policy: Policy.Policy,
  result: Message.ToolResultPart,
  toolName: string
): Message.ToolResultPart => CtxBuilder.forProvider(policy.builder).truncateToolOutput(result, toolName)

/**
 * Drop the oldest history (whole tool rounds) until the window fits `budget` tokens, outside a turn
 * (the tool results the model has not seen stay). One append.
 * @since 0.4.0
 */
export const trim = (
  stream: EventLog.StreamId,
  budget: number
): Effect.Effect<ContextService.Outcome, ContextService.ContextError, ContextService.ContextService> =>
  Effect.flatMap(ContextService.ContextService, (ctx) => ctx.trimToBudget(stream, budget))

/**
 * Summarize all but the newest history with the compactor in context, outside a turn (`keepTokens` of
 * the newest history stay verbatim; default a quarter of it). One append.
 * @since 0.4.0
 */
export const compact = (
  stream: EventLog.StreamId,
  options: { readonly keepTokens?: number | undefined; readonly maxSummaryTokens?: number | undefined } = {}
): Effect.Effect<TieredCompaction.Summarized, TieredCompaction.Failure, TieredCompaction.Requirements> =>
  TieredCompaction.compactContext(
    stream,
    options.maxSummaryTokens,
    options.keepTokens === undefined ? {} : { keepTokens: options.keepTokens }
  )

/**
 * The request a render of the current window would send, built and not recorded: a read, for a
 * preview (no fit, no event).
 * @since 0.4.0
 */
export const preview = (
  stream: EventLog.StreamId,
  config: CtxBuilder.ProviderConfig,
  options: CtxBuilder.BuildOptions = {}
): Effect.Effect<
  CtxBuilder.Built<CtxBuilder.AnyRequest>,
  RenderFailed | ContextService.LogError,
  ContextService.ContextService
> =>
  Effect.flatMap(ContextService.ContextService, (ctx) =>
    Effect.flatMap(ctx.load(stream), (window) =>
      Either.match(CtxBuilder.forProvider(config).build(window, options), {
        onLeft: (error) => Effect.fail(new RenderFailed({ stream, detail: error.message })),
        onRight: Effect.succeed
      })
    )
  )

/** The state a {@link Session} holds between its steps. @since 0.8.0 */
export interface State {
  /** The checked policy the steps run under (a {@link Session.reload} replaces it). */
  readonly policy: Policy.Policy
  /**
   * The next render's iteration: 0 after a `prepare` with a user message, one more after each render;
   * 1 before any (a session that has not seen the turn begin continues one begun before it).
   */
  readonly iteration: number
  /** The reminder the last `prepare` gave: the default of the turn's renders and completions. */
  readonly turnReminder: string | undefined
}

/** What the model answered, for {@link Session.run}: a completion whose turn ends when it calls no tool. @since 0.8.0 */
export interface Answer extends Omit<Completion, "endTurn" | "turnReminder"> {
  /** End the turn even though the answer calls tools (default: end it when it calls none). */
  readonly endTurn?: boolean | undefined
}

/** Options of {@link Session.run}. @since 0.8.0 */
export interface RunOptions {
  /** Model calls at most; the last one ends the turn whatever it answers. Default 12. */
  readonly maxIterations?: number | undefined
  /** What each step runs in (a progress display, say): it must return the step's own result. */
  readonly around?: <A, E, R>(step: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * The agent's state each render passes to the seam pipeline (`RenderOptions.briefing`), read before
   * every render (the working set changes within a turn). Since 0.8.0.
   */
  readonly briefing?: (() => Briefing.BriefingState) | undefined
}

/** What {@link Session.run} did: the window at the end, the tiers every step ran, the model calls and the last answer. @since 0.8.0 */
export interface RunResult {
  readonly window: Window.Window
  readonly tiers: Tiers
  readonly modelCalls: number
  readonly answer: ReadonlyArray<Message.Part>
  readonly usage: LanguageModel.Usage | undefined
}

/**
 * One stream's turns under one policy, as a value: the policy is checked once, and the iteration and
 * the turn's reminder live in a `SynchronizedRef`, so its steps run one after another and a caller
 * keeps no counter of its own. `prepare` / `render` / `complete` are the module's steps with that
 * state; `run` is the common loop (render, call the model, complete, until an answer calls no tool).
 * @since 0.8.0
 */
export interface Session<R = CtxBuilder.AnyRequest> {
  readonly stream: EventLog.StreamId
  readonly state: SynchronizedRef.SynchronizedRef<State>
  /** {@link prepare} under the session's policy; a user message starts the turn (iteration 0). */
  readonly prepare: (input: Input) => Effect.Effect<Step, TurnError, Requirements>
  /** {@link render} at the session's iteration (unless `options.iteration` says) and with the turn's reminder. */
  readonly render: (options?: RenderOptions) => Effect.Effect<Rendered<R>, TurnError, Requirements>
  /** {@link complete} with the turn's reminder. */
  readonly complete: (completion: Completion) => Effect.Effect<Step, TurnError, Requirements>
  /** {@link reload}: record another policy; the steps after it run under it. */
  readonly reload: (
    policy: Policy.Policy
  ) => Effect.Effect<Step, Policy.InvalidPolicy | ContextService.ContextError, ContextService.ContextService>
  /**
   * One user turn: `prepare` with `input`, then per model call `render`, `call` (the model, and the
   * tools it called) and `complete`, until an answer calls no tool or `maxIterations` calls were made.
   */
  readonly run: <E, Q>(
    input: Input,
    call: (rendered: Rendered<R>, iteration: number) => Effect.Effect<Answer, E, Q>,
    options?: RunOptions
  ) => Effect.Effect<RunResult, TurnError | E, Requirements | Q>
}

const hasUserMessage = (input: Input): boolean => input.messages.some((message) => message.role === "user")

/**
 * The render of a session whose policy's builder is `C`. The one place the builder config's type
 * meets the request it renders: `render` builds with `CtxBuilder.forProvider(policy.builder)`, and the
 * checked builder is the decoded copy of `C` (same provider, `api` and `format`), so its request is
 * `ProviderPair.RequestOf<C>`.
 */
const renderedOf = <C extends CtxBuilder.ProviderConfig>(rendered: Rendered): Rendered<ProviderPair.RequestOf<C>> =>
  rendered as Rendered<ProviderPair.RequestOf<C>>

/**
 * Open a stream's turns under `policy` (checked here: an invalid policy fails with
 * {@link Policy.InvalidPolicy} and nothing is written). Requires the turn's cache ({@link layer}).
 * The session's renders have the request type of the policy's builder (`ProviderPair.RequestOf`):
 * with a `ProviderPair`'s config as the builder, `pair.send` takes them as they are.
 * @since 0.8.0
 */
export const open = <C extends CtxBuilder.ProviderConfig = CtxBuilder.ProviderConfig>(
  stream: EventLog.StreamId,
  policy: Policy.Policy & { readonly builder: C }
): Effect.Effect<Session<ProviderPair.RequestOf<C>>, Policy.InvalidPolicy, Records> =>
  Effect.gen(function* () {
    const records = yield* Records
    const valid = yield* checked(policy)
    const state = yield* SynchronizedRef.make<State>({ policy: valid, iteration: 1, turnReminder: undefined })
    // Every step runs with the session's cache and holds the state until it is done.
    const step = <A, E, R>(use: (current: State) => Effect.Effect<readonly [A, State], E, R>) =>
      SynchronizedRef.modifyEffect(state, use).pipe(Effect.provideService(Records, records))
    const reminderOf = (given: string | undefined, current: State) => given ?? current.turnReminder
    const session: Session<ProviderPair.RequestOf<C>> = {
      stream,
      state,
      prepare: (input) =>
        step((current) => {
          const turnReminder = hasUserMessage(input) ? input.turnReminder : reminderOf(input.turnReminder, current)
          const given = turnReminder === undefined ? input : { ...input, turnReminder }
          return Effect.map(prepare(stream, given, current.policy), (done) => [
            done,
            {
              ...current,
              iteration: hasUserMessage(input) ? 0 : current.iteration,
              turnReminder: hasUserMessage(input) ? input.turnReminder : current.turnReminder
            }
          ])
        }),
      render: (options = {}) =>
        step((current) => {
          const iteration = options.iteration ?? current.iteration
          const turnReminder = reminderOf(options.turnReminder, current)
          return Effect.map(
            render(stream, current.policy, {
              ...options,
              iteration,
              ...(turnReminder === undefined ? {} : { turnReminder })
            }),
            (done) => [renderedOf<C>(done), { ...current, iteration: iteration + 1 }]
          )
        }),
      complete: (completion) =>
        step((current) => {
          const turnReminder = reminderOf(completion.turnReminder, current)
          return Effect.map(
            complete(stream, turnReminder === undefined ? completion : { ...completion, turnReminder }, current.policy),
            (done) => [done, current]
          )
        }),
      reload: (next) =>
        step((current) =>
          Effect.flatMap(checked(next), (valid) =>
            Effect.map(reload(stream, valid), (done) => [done, { ...current, policy: valid }] as const)
          )
        ),
      run: (input, call, options = {}) =>
        Effect.gen(function* () {
          const around = options.around ?? (<A, E, R>(effect: Effect.Effect<A, E, R>) => effect)
          const maxIterations = options.maxIterations ?? 12
          const tiers: Array<string> = []
          const prepared = yield* around(session.prepare(input))
          tiers.push(...prepared.tiers)
          let window = prepared.window
          let answer: ReadonlyArray<Message.Part> = []
          let usage: LanguageModel.Usage | undefined
          let modelCalls = 0
          for (let iteration = 0; iteration < maxIterations; iteration++) {
            const rendered = yield* around(
              session.render({
                iteration,
                ...(options.briefing === undefined ? {} : { briefing: options.briefing() })
              })
            )
            tiers.push(...rendered.tiers)
            const answered = yield* call(rendered, iteration)
            modelCalls++
            answer = answered.answer
            usage = answered.usage
            const last =
              answered.endTurn ??
              (Message.toolCallsOf({ parts: answered.answer }).length === 0 || iteration === maxIterations - 1)
            const completed = yield* around(
              session.complete({
                ...answered,
                estimatedInputTokens: answered.estimatedInputTokens ?? rendered.built.stats.total,
                endTurn: last
              })
            )
            tiers.push(...completed.tiers)
            window = completed.window
            if (last) break
          }
          return { window, tiers, modelCalls, answer, usage }
        })
    }
    return session
  })
