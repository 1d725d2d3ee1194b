/**
 * Tiered compaction. Pressure is `None`, `Soft` or `Hard` from thresholds of the token budget.
 *
 * - Soft: apply deferred tool-pair summaries and prune old tool outputs. No model call.
 * - Hard: Soft first, then, only if still at Hard pressure, summarize old history with the
 *   `Compactor` into one summary message (`Compacted`, tier `hard`). After a hard compaction a
 *   cooldown of some turns skips model summarization; a `compactedThisTurn` guard allows one per turn.
 *   While cooling or guarded, a window over the budget itself is compacted with the deterministic
 *   template compactor (tier `soft`), never a model.
 *
 * Model calls happen before anything is appended: load the window, call the compactor, then append
 * through `ContextService.run` with a decision that re-checks the window still holds the messages to
 * remove. A compactor failure appends `CompactionFailed` and leaves the window unchanged. The
 * original messages always stay in the log.
 *
 * Eviction is chunked: a hard compaction brings the window down to `targetRatio` of the budget, well
 * below the threshold that triggered it, so the rendered prefix stays byte-identical for many turns.
 *
 * @since 0.1.0
 */
import { Compactor, ContextService, type EventLog, type Message, TokenCounter, Window, WindowEvent } from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as CompressionPlan from "./CompressionPlan.js"
import * as DeferredSummaries from "./DeferredSummaries.js"
import * as TemplateCompactor from "./TemplateCompactor.js"
import * as ToolOutputPruning from "./ToolOutputPruning.js"
import { by } from "./internal/metadata.js"
import { summarize } from "./internal/summarize.js"

/** Token pressure on a window. @since 0.1.0 */
export type Pressure = "None" | "Soft" | "Hard"

/** Tiered compaction settings. @since 0.1.0 */
export interface Config {
  /** The token budget of the whole window. */
  readonly budget: number
  /** Share of the budget at which pressure becomes Soft (default 0.7). */
  readonly softThreshold?: number
  /** Share of the budget at which pressure becomes Hard (default 0.85). */
  readonly hardThreshold?: number
  /** Share of the budget a model summarization brings the window down to (default 0.5). */
  readonly targetRatio?: number
  /** Turns after a hard compaction during which model summarization is skipped (default 2). */
  readonly cooldownTurns?: number
  /** Upper bound of a summary in tokens (default an eighth of the budget, at most 1024). */
  readonly maxSummaryTokens?: number
  /** How long one compactor call may take (default 120 seconds). */
  readonly compactorTimeout?: Duration.DurationInput
  /** Tool-output pruning in the Soft tier. */
  readonly prune?: ToolOutputPruning.Options
  /** Share of the budget at which `maybeProactiveCompress` runs (default 0.6). */
  readonly proactiveThreshold?: number
  /** The provider compacts server-side: proactive compression only runs above 95% usage. */
  readonly providerSideCompaction?: boolean
  /** Correct token estimates by provider-reported usage (`Window.calibrationRatio`; default true). */
  readonly calibrate?: boolean
}

/** What a compaction step did. @since 0.1.0 */
export type Result =
  | { readonly _tag: "NoChange"; readonly reason: string; readonly window: Window.Window }
  | {
      readonly _tag: "SoftCompacted"
      readonly window: Window.Window
      readonly events: ReadonlyArray<WindowEvent.WindowEvent>
    }
  | {
      readonly _tag: "Compacted"
      readonly tier: WindowEvent.CompactionTier
      readonly window: Window.Window
      readonly events: ReadonlyArray<WindowEvent.WindowEvent>
      readonly summary: Message.Message
    }

/** The services compaction needs. @since 0.1.0 */
export type Requirements = ContextService.ContextService | Compactor.Compactor | TokenCounter.TokenCounter

/** A compaction setting is out of range; nothing was written. @since 0.1.0 */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  field: Schema.String,
  value: Schema.Unknown,
  detail: Schema.String
}) {
  override get message(): string {
    return `compaction config: ${this.field} = ${JSON.stringify(this.value)}: ${this.detail}`
  }
}

/** Everything a compaction can fail with. @since 0.1.0 */
export type Failure = ContextService.LogError | Compactor.CompactionError | InvalidConfig

/** Optional hooks of `compactContext`, called in this order: archive → summarize → probe → finalize → persist. @since 0.1.0 */
export interface Hooks {
  /** Before anything else: keep the messages that will leave somewhere else (they stay in the log anyway). */
  readonly archive?: (plan: CompressionPlan.Plan) => Effect.Effect<void, Compactor.CompactionError>
  /** Replaces the `Compactor` for this call. */
  readonly summarize?: (
    input: Compactor.CompactionInput
  ) => Effect.Effect<Compactor.CompactionOutput, Compactor.CompactionError>
  /** Checks the summary; failing rejects it (recorded as `CompactionFailed`). */
  readonly probe?: (summary: string, plan: CompressionPlan.Plan) => Effect.Effect<void, Compactor.CompactionError>
  /** Last edit of the summary text before it is appended. */
  readonly finalize?: (summary: string) => Effect.Effect<string, Compactor.CompactionError>
  /** After the `Compacted` event is in the log. */
  readonly persist?: (
    result: Extract<Result, { readonly _tag: "Compacted" }>
  ) => Effect.Effect<void, Compactor.CompactionError>
}

/** Options of `compactContext`. @since 0.1.0 */
export interface CompactContextOptions {
  /** Tokens of history kept verbatim (default: the newest quarter of the history). */
  readonly keepTokens?: number
  /** Tier recorded (default `manual`). */
  readonly tier?: WindowEvent.CompactionTier
  readonly hooks?: Hooks
  readonly compactorTimeout?: Duration.DurationInput
}

const settings = (config: Config) => ({
  budget: config.budget,
  soft: config.softThreshold ?? 0.7,
  hard: config.hardThreshold ?? 0.85,
  target: config.targetRatio ?? 0.5,
  cooldown: config.cooldownTurns ?? 2,
  maxSummaryTokens: config.maxSummaryTokens ?? Math.max(32, Math.min(1024, Math.floor(config.budget / 8))),
  proactive: config.proactiveThreshold ?? 0.6,
  calibrate: config.calibrate ?? true,
  timeout: config.compactorTimeout ?? Duration.seconds(120)
})

const share = (value: number | undefined) => value === undefined || (Number.isFinite(value) && value > 0 && value <= 1)

/**
 * Check a config: a positive integer budget, shares in (0, 1], `softThreshold <= hardThreshold`,
 * `targetRatio < hardThreshold`, non-negative integer cooldown and a positive summary bound.
 * @since 0.1.0
 */
export const validate = (config: Config): Either.Either<Config, InvalidConfig> => {
  const bad = (field: string, value: unknown, detail: string) =>
    Either.left(new InvalidConfig({ field, value, detail }))
  if (!Number.isInteger(config.budget) || config.budget <= 0)
    return bad("budget", config.budget, "must be a positive integer")
  for (const field of ["softThreshold", "hardThreshold", "targetRatio", "proactiveThreshold"] as const) {
    if (!share(config[field])) return bad(field, config[field], "must be a share of the budget in (0, 1]")
  }
  const s = settings(config)
  if (s.soft > s.hard) return bad("softThreshold", s.soft, `must not exceed hardThreshold (${s.hard})`)
  if (s.target >= s.hard) return bad("targetRatio", s.target, `must be below hardThreshold (${s.hard})`)
  if (!Number.isInteger(s.cooldown) || s.cooldown < 0)
    return bad("cooldownTurns", s.cooldown, "must be a non-negative integer")
  if (!Number.isInteger(s.maxSummaryTokens) || s.maxSummaryTokens <= 0) {
    return bad("maxSummaryTokens", s.maxSummaryTokens, "must be a positive integer")
  }
  return Either.right(config)
}

/** How many turns completed since the last hard compaction (every turn counts). @since 0.1.0 */
export const turnsSinceLastHardCompaction = (window: Window.Window): number => window.compaction.turnsSinceHard

/** Estimated prompt tokens of a window (calibrated by reported usage unless disabled). @since 0.1.0 */
export const usedTokens = (window: Window.Window, calibrate = true): number =>
  calibrate ? Math.ceil(window.tokens.total * Window.calibrationRatio(window)) : window.tokens.total

/** The pressure on a window under a config. @since 0.1.0 */
export const pressure = (window: Window.Window, config: Config): Pressure => {
  const s = settings(config)
  const used = usedTokens(window, s.calibrate)
  if (used >= s.budget * s.hard) return "Hard"
  if (used >= s.budget * s.soft) return "Soft"
  return "None"
}

/** What a summarization ends in. @since 0.1.0 */
export type Summarized = Extract<Result, { readonly _tag: "NoChange" | "Compacted" }>

/** The soft-tier decision: apply deferred summaries, then prune tool outputs. Pure. @since 0.1.0 */
export const decideSoft = (
  window: Window.Window,
  prune: ToolOutputPruning.Options,
  countMessage: (message: { readonly parts: ReadonlyArray<Message.Part> }) => number
): ReadonlyArray<WindowEvent.Draft> => {
  const apply = DeferredSummaries.decideApply(window)
  // Prune against the window as it will be once the summaries are applied.
  const afterApply = apply.reduce(
    (current, draft, index) => Window.evolve(current, WindowEvent.stamp(draft, `pending-${index}`)),
    window
  )
  return [...apply, ...ToolOutputPruning.decide(afterApply, prune, countMessage)]
}

const softStep = (stream: EventLog.StreamId, config: Config) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const counter = yield* TokenCounter.TokenCounter
    return yield* ctx.run(
      stream,
      (window) => Either.right(decideSoft(window, config.prune ?? {}, counter.countMessage)),
      by("TieredCompaction.soft")
    )
  })

/** Tokens of history to keep verbatim so the window lands at `share` of the budget after a summary. */
const keepCeiling = (
  window: Window.Window,
  config: Config,
  share: number,
  maxSummaryTokens: number,
  reportedRatio?: number
): number => {
  const s = settings(config)
  const ratio = reportedRatio ?? (s.calibrate ? Window.calibrationRatio(window) : 1)
  const fixed = window.tokens.total - window.tokens.history
  return Math.max(0, Math.floor((s.budget * share) / ratio) - fixed - maxSummaryTokens)
}

const fallbackCompactor = (maxSummaryTokens: number) =>
  TemplateCompactor.make({ maxBytes: Math.max(64, maxSummaryTokens * 3) })

/**
 * Compact when the pressure calls for it: nothing at None, the Soft tier at Soft, and at Hard the
 * Soft tier first and then model summarization if the window is still at Hard pressure (unless
 * cooling down or already compacted this turn).
 * @since 0.1.0
 */
export const maybeCompact = (stream: EventLog.StreamId, config: Config): Effect.Effect<Result, Failure, Requirements> =>
  Effect.gen(function* () {
    yield* validate(config)
    const ctx = yield* ContextService.ContextService
    const compactor = yield* Compactor.Compactor
    const s = settings(config)
    const before = yield* ctx.load(stream)
    const initial = pressure(before, config)
    if (initial === "None") return { _tag: "NoChange", reason: "no pressure", window: before } as const
    const soft = yield* softStep(stream, config)
    const softResult: Result =
      soft.events.length > 0
        ? { _tag: "SoftCompacted", window: soft.window, events: soft.events }
        : { _tag: "NoChange", reason: "soft tier found nothing to do", window: soft.window }
    if (initial === "Soft") return softResult
    const window = soft.window
    if (pressure(window, config) !== "Hard") return softResult
    // A summarization result also lists the soft-tier events that came before it.
    const withSoftEvents = (result: Summarized): Result =>
      result._tag === "Compacted"
        ? { ...result, events: [...soft.events, ...result.events] }
        : softResult._tag === "SoftCompacted"
          ? { ...softResult, window: result.window }
          : result
    const cooling = window.compaction.cooldownRemaining > 0
    const guarded = window.compaction.compactedThisTurn
    if (cooling || guarded) {
      // No model now; but a window over the budget itself gets the deterministic template.
      if (usedTokens(window, s.calibrate) <= s.budget) {
        return softResult._tag === "SoftCompacted"
          ? softResult
          : ({ _tag: "NoChange", reason: cooling ? "cooling down" : "already compacted this turn", window } as const)
      }
      const plan = CompressionPlan.compressionPlan(window, keepCeiling(window, config, s.target, s.maxSummaryTokens))
      if (CompressionPlan.isEmpty(plan)) return softResult
      return withSoftEvents(
        yield* summarize(stream, window, {
          tier: "soft",
          plan,
          maxSummaryTokens: s.maxSummaryTokens,
          cooldownTurns: 0,
          timeout: s.timeout,
          compactor: fallbackCompactor(s.maxSummaryTokens),
          hooks: {}
        })
      )
    }
    const plan = CompressionPlan.compressionPlan(window, keepCeiling(window, config, s.target, s.maxSummaryTokens))
    if (CompressionPlan.isEmpty(plan)) return softResult
    return withSoftEvents(
      yield* summarize(stream, window, {
        tier: "hard",
        plan,
        maxSummaryTokens: s.maxSummaryTokens,
        cooldownTurns: s.cooldown,
        timeout: s.timeout,
        compactor,
        hooks: {}
      })
    )
  }).pipe(Effect.withSpan("TieredCompaction.maybeCompact", { attributes: { stream } }))

/**
 * Compact now, whatever the pressure: summarize all but the newest history with the `Compactor`,
 * calling the optional hooks in order archive → summarize → probe → finalize → persist. Returns
 * `NoChange` when there is nothing to summarize, else `Compacted`.
 * @since 0.1.0
 */
export const compactContext = (
  stream: EventLog.StreamId,
  maxSummaryTokens?: number,
  options: CompactContextOptions = {}
): Effect.Effect<Summarized, Failure, Requirements> =>
  Effect.gen(function* () {
    if (maxSummaryTokens !== undefined && (!Number.isInteger(maxSummaryTokens) || maxSummaryTokens <= 0)) {
      return yield* new InvalidConfig({
        field: "maxSummaryTokens",
        value: maxSummaryTokens,
        detail: "must be a positive integer"
      })
    }
    if (options.keepTokens !== undefined && !(options.keepTokens >= 0)) {
      return yield* new InvalidConfig({
        field: "keepTokens",
        value: options.keepTokens,
        detail: "must not be negative"
      })
    }
    const ctx = yield* ContextService.ContextService
    const compactor = yield* Compactor.Compactor
    const window = yield* ctx.load(stream)
    const keep = options.keepTokens ?? Math.floor(window.tokens.history / 4)
    const plan = CompressionPlan.compressionPlan(window, keep)
    if (CompressionPlan.isEmpty(plan)) return { _tag: "NoChange", reason: "nothing to summarize", window } as const
    return yield* summarize(stream, window, {
      tier: options.tier ?? "manual",
      plan,
      maxSummaryTokens: maxSummaryTokens ?? 1024,
      cooldownTurns: 0,
      timeout: options.compactorTimeout ?? Duration.seconds(120),
      compactor,
      hooks: options.hooks ?? {}
    })
  }).pipe(Effect.withSpan("TieredCompaction.compactContext", { attributes: { stream } }))

/** Usage the provider reported for the last call, if known. @since 0.1.0 */
export interface ProactiveUsage {
  readonly inputTokens: number
}

/** Usage above which proactive compression runs even when the provider compacts server-side. @since 0.1.0 */
export const providerSideOverride = 0.95

/**
 * Summarize ahead of need, at its own threshold (`proactiveThreshold`). Skipped when the provider
 * compacts server-side, unless usage passes 95% of the budget. No cooldown applies.
 * @since 0.1.0
 */
export const maybeProactiveCompress = (
  stream: EventLog.StreamId,
  config: Config,
  usage?: ProactiveUsage
): Effect.Effect<Result, Failure, Requirements> =>
  Effect.gen(function* () {
    yield* validate(config)
    const ctx = yield* ContextService.ContextService
    const compactor = yield* Compactor.Compactor
    const s = settings(config)
    const window = yield* ctx.load(stream)
    const used = (usage?.inputTokens ?? usedTokens(window, s.calibrate)) / s.budget
    if (config.providerSideCompaction === true && used <= providerSideOverride) {
      return { _tag: "NoChange", reason: "provider-side compaction is on", window } as const
    }
    if (used < s.proactive) return { _tag: "NoChange", reason: "below the proactive threshold", window } as const
    // Reported usage, when given, says how far off the local estimate is.
    const reportedRatio =
      usage === undefined || window.tokens.total === 0
        ? undefined
        : Math.max(1, usage.inputTokens / window.tokens.total)
    const plan = CompressionPlan.compressionPlan(
      window,
      keepCeiling(window, config, s.target, s.maxSummaryTokens, reportedRatio)
    )
    if (CompressionPlan.isEmpty(plan)) return { _tag: "NoChange", reason: "nothing to summarize", window } as const
    return yield* summarize(stream, window, {
      tier: "proactive",
      plan,
      maxSummaryTokens: s.maxSummaryTokens,
      cooldownTurns: 0,
      timeout: s.timeout,
      compactor,
      hooks: {}
    })
  }).pipe(Effect.withSpan("TieredCompaction.maybeProactiveCompress", { attributes: { stream } }))

/**
 * Between tool calls of one iteration: the Soft tier only (apply deferred summaries, prune tool
 * outputs) when there is any pressure. Never calls a model.
 * @since 0.1.0
 */
export const maybeSoftCompactMidIteration = (
  stream: EventLog.StreamId,
  config: Config
): Effect.Effect<
  Result,
  ContextService.LogError | InvalidConfig,
  ContextService.ContextService | TokenCounter.TokenCounter
> =>
  Effect.gen(function* () {
    yield* validate(config)
    const ctx = yield* ContextService.ContextService
    const window = yield* ctx.load(stream)
    if (pressure(window, config) === "None") return { _tag: "NoChange", reason: "no pressure", window } as const
    const soft = yield* softStep(stream, config)
    return soft.events.length > 0
      ? ({ _tag: "SoftCompacted", window: soft.window, events: soft.events } as const)
      : ({ _tag: "NoChange", reason: "soft tier found nothing to do", window: soft.window } as const)
  }).pipe(Effect.withSpan("TieredCompaction.maybeSoftCompactMidIteration", { attributes: { stream } }))
