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
 * The budget is `Budget.tokensOf(config.budget)`: a `Budget` (context window minus output reserve,
 * tool schemas and turn reminder) or a number already net of them. A tool result the model has not
 * seen yet is never pruned, summarized or replaced by its deferred summary; when the window is still
 * over the budget after every tier, those results are truncated to fit (`ToolOutputPruned`, head and
 * tail kept around a marker). Progress goes to the optional `CompactionStatus` service.
 *
 * @since 0.1.0
 */
import {
  Budget,
  Compactor,
  CompressionPlan,
  ContextService,
  type EventLog,
  type Message,
  type TokenCounter,
  Tracing,
  Window,
  WindowEvent
} from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as CompactionStatus from "./CompactionStatus.js"
import * as DeferredSummaries from "./DeferredSummaries.js"
import type * as SummaryGuard from "./SummaryGuard.js"
import { runCounted } from "./internal/metadata.js"
import { summarize } from "./internal/summarize.js"
import * as TemplateCompactor from "./TemplateCompactor.js"
import * as ToolOutputPruning from "./ToolOutputPruning.js"

/** What a compaction step did. @since 0.1.0 */
export type Result =
  | {
      readonly _tag: "NoChange"
      readonly reason: string
      readonly window: Window.Window
      /** The tier that evaluated and did not act, why, and the tokens it compared (ADR 0128). Since 0.8.0. */
      readonly decision?: WindowEvent.TierDecision | undefined
    }
  | {
      readonly _tag: "SoftCompacted"
      readonly window: Window.Window
      readonly events: ReadonlyArray<WindowEvent.WindowEvent>
      /** A later tier that evaluated and did not act (the hard tier cooling down, say; ADR 0128). Since 0.8.0. */
      readonly decision?: WindowEvent.TierDecision | undefined
    }
  | {
      readonly _tag: "Compacted"
      readonly tier: WindowEvent.CompactionTier
      readonly window: Window.Window
      readonly events: ReadonlyArray<WindowEvent.WindowEvent>
      readonly summary: Message.Message
    }

/** What a summarization ends in. @since 0.1.0 */
export type Summarized = Extract<Result, { readonly _tag: "NoChange" | "Compacted" }>

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
export type Failure = ContextService.LogError | Compactor.CompactionError | InvalidConfig | SummaryGuard.SummaryRefused

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

/** Token pressure on a window. @since 0.1.0 */
export type Pressure = "None" | "Soft" | "Hard"

const Share = Schema.Number.pipe(Schema.finite(), Schema.greaterThan(0), Schema.lessThanOrEqualTo(1))

/**
 * The settings of the tiers that are data (a turn policy's `compaction` decodes with them; ADR 0156): one
 * schema, {@link Config} derived from it. Their defaults are {@link defaults}.
 * @since 0.8.0
 */
export const Settings = Schema.Struct({
  /** Share of the budget at which pressure becomes Soft (default 0.7). */
  softThreshold: Schema.optional(Share),
  /** Share of the budget at which pressure becomes Hard (default 0.85). */
  hardThreshold: Schema.optional(Share),
  /** Share of the budget at which `maybeProactiveCompress` runs (default 0.6). */
  proactiveThreshold: Schema.optional(Share),
  /** Share of the budget a model summarization brings the window down to (default 0.5). */
  targetRatio: Schema.optional(Share),
  /** Turns after a hard compaction during which model summarization is skipped (default 2). */
  cooldownTurns: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  /** Upper bound of a summary in tokens (default an eighth of the budget, at most 1024). */
  maxSummaryTokens: Schema.optional(Schema.Int.pipe(Schema.positive())),
  /**
   * Share of the budget kept for the cold zone: the compressed context that sits before the verbatim
   * tail after a summary (the summary itself, the seams and the briefing the seam pipeline folds in).
   * The keep ceiling is the target less the fixed partitions and the cold zone, and the cold zone is
   * never smaller than the summary's bound (`maxSummaryTokens`). Default 0.05; 0 leaves only the
   * summary's bound. Must be below `targetRatio`. Since 0.8.0 (issue 39).
   */
  coldZoneShare: Schema.optional(Schema.Number.pipe(Schema.finite(), Schema.nonNegative(), Schema.lessThan(1))),
  /** Correct token estimates by provider-reported usage (`Window.calibrationRatio`; default true). */
  calibrate: Schema.optional(Schema.Boolean),
  /**
   * Cache-aware: at Soft pressure the window still fits, and leaving it whole keeps the provider's cached
   * prefix, where pruning rewrites an old message and breaks it: the Soft tier then waits for Hard
   * pressure (and prunes to the Soft threshold in one step), and proactive compression runs only from
   * the Hard threshold. Default false. Since 0.8.0.
   */
  preferCachedPrefix: Schema.optional(Schema.Boolean),
  /** Tool-output pruning in the Soft tier. */
  prune: Schema.optional(ToolOutputPruning.Options)
})
/** @since 0.8.0 */
export type Settings = typeof Settings.Type

/** Tiered compaction settings: the {@link Settings} (data) and what only a caller in code can give. @since 0.1.0 */
export interface Config extends Settings {
  /**
   * The token budget: a `Budget` (context window minus output reserve, tool schemas and reminder;
   * see `CtxBuilder.budget`) or a number of prompt tokens already net of them.
   */
  readonly budget: Budget.Spec
  /** How long one compactor call may take (default 120 seconds). */
  readonly compactorTimeout?: Duration.DurationInput | undefined
  /** The provider compacts server-side: proactive compression only runs above 95% usage. */
  readonly providerSideCompaction?: boolean | undefined
  /**
   * `maybeCompact` ends a turn (`TurnCompleted`) before it decides, as the seed's `maybe_compact` does:
   * for callers that never call `completeTurn`. Without it (the default) the turn only advances on
   * `completeTurn`, and the per-turn guard and the cooldown of a hard compaction hold until then: a
   * caller that never completes a turn gets one model compaction per stream (the result says so).
   */
  readonly advanceTurn?: boolean | undefined
  /** Settings of the guards every summary passes before it is written (`SummaryGuard`; issue 39). */
  readonly guard?: Guard | undefined
  /**
   * Tokens of a window its render will not send (reasoning the builder drops: `CtxBuilder.unsentTokens`).
   * Every comparison against the budget takes them off the window's count, so the tiers weigh what is
   * sent (issue 37). Default none. Since 0.8.0.
   */
  readonly unsentTokens?: ((window: Window.Window) => number) | undefined
}

/**
 * Settings of the summary guards: pinned identifiers, whether the user's latest ask must survive, and
 * guards of the caller's own (`SummaryGuard.Guard`; `SummaryGuard.layer` adds them to every path).
 * @since 0.8.0
 */
export type Guard = Pick<SummaryGuard.Context, "pinnedIdentifiers" | "keepUserAsk" | "guards">

/** The services compaction needs. @since 0.1.0 */
export type Requirements = ContextService.ContextService | Compactor.Compactor | TokenCounter.TokenCounter

/** Options of `compactContext`. @since 0.1.0 */
export interface CompactContextOptions {
  /** Tokens of history kept verbatim (default: the newest quarter of the history). */
  readonly keepTokens?: number
  /** Tier recorded (default `manual`). */
  readonly tier?: WindowEvent.CompactionTier
  readonly hooks?: Hooks
  readonly compactorTimeout?: Duration.DurationInput
  /** Settings of the summary guards (`SummaryGuard`). */
  readonly guard?: Guard | undefined
}

/** The cold zone's share of the budget when a config sets none (issue 39, ADR 0126). @since 0.8.0 */
export const defaultColdZoneShare = 0.05

/**
 * The defaults of a {@link Config}'s shares and counts, in one place (ADR 0145). `fitTargetRatio` is not a
 * `Config` field: it is the target the turn's fit (`@ctxlog/turn`'s `fit-hard`) summarizes to when its
 * policy sets no `targetRatio` — 0.45, below the tiers' own 0.5, as it has been since the turn module was
 * written; the two are kept apart so no recorded figure moves.
 * @since 0.8.0
 */
export const defaults = {
  softThreshold: 0.7,
  hardThreshold: 0.85,
  targetRatio: 0.5,
  fitTargetRatio: 0.45,
  cooldownTurns: 2,
  proactiveThreshold: 0.6,
  coldZoneShare: defaultColdZoneShare,
  calibrate: true,
  compactorTimeoutSeconds: 120
} as const

const settings = (config: Config) => ({
  budget: Budget.tokensOf(config.budget),
  soft: config.softThreshold ?? defaults.softThreshold,
  hard: config.hardThreshold ?? defaults.hardThreshold,
  target: config.targetRatio ?? defaults.targetRatio,
  cooldown: config.cooldownTurns ?? defaults.cooldownTurns,
  maxSummaryTokens:
    config.maxSummaryTokens ?? Math.max(32, Math.min(1024, Math.floor(Budget.tokensOf(config.budget) / 8))),
  proactive: config.proactiveThreshold ?? defaults.proactiveThreshold,
  coldZoneShare: config.coldZoneShare ?? defaults.coldZoneShare,
  calibrate: config.calibrate ?? defaults.calibrate,
  timeout: config.compactorTimeout ?? Duration.seconds(defaults.compactorTimeoutSeconds)
})

const share = (value: number | undefined) => value === undefined || (Number.isFinite(value) && value > 0 && value <= 1)

/**
 * Check a config: a positive integer budget (for a `Budget`, its available tokens), shares in (0, 1], `softThreshold <= hardThreshold`,
 * `targetRatio < hardThreshold`, non-negative integer cooldown and a positive summary bound.
 * @since 0.1.0
 */
export const validate = (config: Config): Either.Either<Config, InvalidConfig> => {
  const bad = (field: string, value: unknown, detail: string) =>
    Either.left(new InvalidConfig({ field, value, detail }))
  const budget = Budget.tokensOf(config.budget)
  if (!Number.isInteger(budget) || budget <= 0) {
    return typeof config.budget === "number"
      ? bad("budget", config.budget, "must be a positive integer")
      : bad("budget", config.budget, "leaves no room for the prompt: the reserves take the whole context window")
  }
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
  if (!(Number.isFinite(s.coldZoneShare) && s.coldZoneShare >= 0 && s.coldZoneShare < s.target)) {
    return bad("coldZoneShare", s.coldZoneShare, `must be a share of the budget in [0, targetRatio (${s.target}))`)
  }
  return Either.right(config)
}

/** How many turns completed since the last hard compaction (every turn counts). @since 0.1.0 */
export const turnsSinceLastHardCompaction = (window: Window.Window): number => window.compaction.turnsSinceHard

/** Estimated prompt tokens of a window (calibrated by reported usage unless disabled). @since 0.1.0 */
export const usedTokens = (window: Window.Window, calibrate = true): number =>
  calibrate ? Math.ceil(window.tokens.total * Window.calibrationRatio(window)) : window.tokens.total

/**
 * The token lines of a config (what `pressure`, the soft and hard tiers and proactive compression
 * compare the window against): the prompt budget, and each threshold as its share and its tokens.
 * @since 0.8.0
 */
export interface Thresholds {
  readonly budget: number
  readonly soft: { readonly share: number; readonly tokens: number }
  readonly hard: { readonly share: number; readonly tokens: number }
  readonly proactive: { readonly share: number; readonly tokens: number }
  readonly target: { readonly share: number; readonly tokens: number }
}

/** The prompt budget and thresholds of a config, defaults applied (see {@link Thresholds}). @since 0.8.0 */
export const thresholds = (config: Config): Thresholds => {
  const s = settings(config)
  const line = (share: number) => ({ share, tokens: Math.floor(s.budget * share) })
  return {
    budget: s.budget,
    soft: line(s.soft),
    hard: line(s.hard),
    proactive: line(s.proactive),
    target: line(s.target)
  }
}

/**
 * Estimated prompt tokens a window's render sends under a config: its count less what the builder does
 * not send (`Config.unsentTokens`), calibrated unless disabled. What every tier compares to the budget.
 * @since 0.8.0
 */
export const sentTokens = (window: Window.Window, config: Config): number => {
  const unsent = config.unsentTokens?.(window) ?? 0
  const counted = Math.max(0, window.tokens.total - unsent)
  return settings(config).calibrate ? Math.ceil(counted * Window.calibrationRatio(window)) : counted
}

/** The pressure on a window under a config. @since 0.1.0 */
export const pressure = (window: Window.Window, config: Config): Pressure => {
  const s = settings(config)
  const used = sentTokens(window, config)
  if (used >= s.budget * s.hard) return "Hard"
  if (used >= s.budget * s.soft) return "Soft"
  return "None"
}

/**
 * A tier's evaluation that did not act (ADR 0128): the sent tokens of the window it weighed and the
 * tier's threshold in tokens.
 */
const declined = (
  window: Window.Window,
  config: Config,
  tier: "soft" | "hard" | "proactive",
  reason: WindowEvent.DecisionReason,
  line: "soft" | "hard" | "proactive" = tier,
  usedTokens: number = sentTokens(window, config)
): WindowEvent.TierDecision => ({ tier, reason, usedTokens, thresholdTokens: thresholds(config)[line].tokens })

/**
 * The soft-tier decision: apply deferred summaries, then prune tool outputs (down to `targetTokens`,
 * uncalibrated, when given). Neither touches a tool result the model has not seen yet. Pure.
 * @since 0.1.0
 */
export const decideSoft = (
  window: Window.Window,
  prune: ToolOutputPruning.Options,
  countMessage: (message: { readonly parts: ReadonlyArray<Message.Part> }) => number,
  targetTokens?: number
): ReadonlyArray<WindowEvent.Draft> => {
  const apply = DeferredSummaries.decideApply(window)
  // Prune against the window as it will be once the summaries are applied.
  const afterApply = apply.reduce(
    (current, draft, index) => Window.evolve(current, WindowEvent.stamp(draft, `pending-${index}`)),
    window
  )
  const options = targetTokens === undefined ? prune : { ...prune, targetTokens }
  return [...apply, ...ToolOutputPruning.decide(afterApply, options, countMessage)]
}

/**
 * `tokens` (calibrated sent tokens, as pressure counts them) as uncalibrated window tokens: the unsent
 * tokens added back, since pruning and truncation (which take these targets) never remove reasoning.
 */
const uncalibrated = (window: Window.Window, config: Config, tokens: number): number => {
  const ratio = settings(config).calibrate ? Window.calibrationRatio(window) : 1
  return Math.floor(tokens / ratio) + (config.unsentTokens?.(window) ?? 0)
}

const softStep = (stream: EventLog.StreamId, config: Config, targetShare?: number) =>
  runCounted(stream, "TieredCompaction.soft", (window, countMessage) =>
    decideSoft(
      window,
      config.prune ?? {},
      countMessage,
      targetShare === undefined ? undefined : uncalibrated(window, config, settings(config).budget * targetShare)
    )
  )

/**
 * Truncate the tool results the model has not seen yet until the window fits the budget (a
 * `ToolOutputPruned` event), when it is still over the budget after every other tier.
 */
const fitStep = (stream: EventLog.StreamId, config: Config) =>
  runCounted(stream, "TieredCompaction.fit", (window, countMessage) =>
    ToolOutputPruning.decideFit(window, uncalibrated(window, config, settings(config).budget), countMessage)
  )

/** Append the fit step's events to a result, when the window it ends with is over the budget. */
const fitted = (stream: EventLog.StreamId, config: Config, result: Result, operation?: CompactionStatus.Operation) =>
  Effect.gen(function* () {
    const s = settings(config)
    if (sentTokens(result.window, config) <= s.budget) return result
    if (operation !== undefined) yield* CompactionStatus.report({ _tag: "TierStarted", operation, stream, tier: "fit" })
    const fit = yield* fitStep(stream, config)
    if (fit.events.length === 0) return result
    return result._tag === "NoChange"
      ? ({
          _tag: "SoftCompacted",
          window: fit.window,
          events: fit.events,
          ...(result.decision === undefined ? {} : { decision: result.decision })
        } as const)
      : { ...result, window: fit.window, events: [...result.events, ...fit.events] }
  })

/** Report a compaction's start, end or failure to the optional status service. */
const withStatus = <E, R>(
  operation: CompactionStatus.Operation,
  stream: EventLog.StreamId,
  run: Effect.Effect<Result, E, R>
): Effect.Effect<Result, E, R | ContextService.ContextService> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const before = yield* Effect.either(ctx.load(stream))
    const tokensBefore = Either.isRight(before) ? before.right.tokens.total : 0
    yield* CompactionStatus.report({ _tag: "Started", operation, stream, tokensBefore })
    return yield* run.pipe(
      Effect.tapBoth({
        onFailure: (error) =>
          CompactionStatus.report({
            _tag: "Failed",
            operation,
            stream,
            tokensBefore,
            reason:
              typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
          }),
        onSuccess: (result) =>
          CompactionStatus.report({
            _tag: "Finished",
            operation,
            stream,
            result: result._tag,
            tokensBefore,
            tokensAfter: result.window.tokens.total
          })
      })
    )
  })

const tierStarted = (operation: CompactionStatus.Operation, stream: EventLog.StreamId, tier: CompactionStatus.Tier) =>
  CompactionStatus.report({ _tag: "TierStarted", operation, stream, tier })

/**
 * The cold zone of a config in tokens: `coldZoneShare` of the budget, never less than the summary's
 * bound (the summary a compaction writes lives there).
 * @since 0.8.0
 */
export const coldZoneTokens = (config: Config): number => {
  const s = settings(config)
  return Math.max(s.maxSummaryTokens, Math.floor(s.budget * s.coldZoneShare))
}

/**
 * The keep ceiling: tokens of history a summary keeps verbatim so the window lands at `share` of the
 * budget (default `targetRatio`). The seed's formula, in one place for every tier and the turn's fit:
 * the context window less the output reserve, the tool schemas and the reminder (the budget), scaled
 * to the target and corrected by the calibration ratio, less the fixed partitions (system, knowledge,
 * task state, signals) and the cold zone ({@link coldZoneTokens}). Never negative.
 * @since 0.8.0
 */
export const keepCeiling = (window: Window.Window, config: Config, share?: number, reportedRatio?: number): number => {
  const s = settings(config)
  const ratio = reportedRatio ?? (s.calibrate ? Window.calibrationRatio(window) : 1)
  const fixed = window.tokens.total - window.tokens.history
  return Math.max(0, Math.floor((s.budget * (share ?? s.target)) / ratio) - fixed - coldZoneTokens(config))
}

const fallbackCompactor = (maxSummaryTokens: number) =>
  TemplateCompactor.make({ maxBytes: Math.max(64, maxSummaryTokens * 3) })

/**
 * Compact when the pressure calls for it: nothing at None, the Soft tier at Soft, and at Hard the
 * Soft tier first and then model summarization if the window is still at Hard pressure (unless
 * cooling down or already compacted this turn). A window still over the budget at the end has its
 * unseen tool results truncated to fit.
 * @since 0.1.0
 */
export const maybeCompact: (stream: EventLog.StreamId, config: Config) => Effect.Effect<Result, Failure, Requirements> =
  Effect.fn("TieredCompaction.maybeCompact")(
    function* (stream: EventLog.StreamId, config: Config) {
      yield* Tracing.annotate("stream", stream)
      yield* validate(config)
      const op = "maybeCompact" as const
      const ctx = yield* ContextService.ContextService
      const compactor = yield* Compactor.Compactor
      const s = settings(config)
      const before =
        config.advanceTurn === true
          ? (yield* ctx.run(stream, () => Either.right([{ _tag: "TurnCompleted" } as const]))).window
          : yield* ctx.load(stream)
      const initial = pressure(before, config)
      if (initial === "None") {
        const decision = declined(before, config, "soft", "below-threshold")
        return { _tag: "NoChange", reason: "no pressure", window: before, decision } as const
      }
      if (initial === "Soft" && config.preferCachedPrefix === true) {
        const decision = declined(before, config, "soft", "cached-prefix", "hard")
        return yield* fitted(
          stream,
          config,
          { _tag: "NoChange", reason: "keeping the cached prefix", window: before, decision },
          op
        )
      }
      yield* tierStarted(op, stream, "soft")
      // Prune only to just under the Soft threshold, so the pruning strategy picks which outputs go.
      const soft = yield* softStep(stream, config, s.soft - 1 / Math.max(1, s.budget))
      const softResult: Result =
        soft.events.length > 0
          ? { _tag: "SoftCompacted", window: soft.window, events: soft.events }
          : {
              _tag: "NoChange",
              reason: "soft tier found nothing to do",
              window: soft.window,
              decision: declined(soft.window, config, "soft", "nothing-to-do")
            }
      if (initial === "Soft") return yield* fitted(stream, config, softResult, op)
      const window = soft.window
      if (pressure(window, config) !== "Hard") {
        const decision = declined(window, config, "hard", "below-threshold")
        return yield* fitted(stream, config, { ...softResult, decision }, op)
      }
      // A summarization result also lists the soft-tier events that came before it.
      const withSoftEvents = (result: Summarized): Result =>
        result._tag === "Compacted"
          ? { ...result, events: [...soft.events, ...result.events] }
          : softResult._tag === "SoftCompacted"
            ? { ...softResult, window: result.window }
            : result
      const cooling = window.compaction.cooldownRemaining > 0
      const guarded = window.compaction.compactedThisTurn
      // No model while cooling down or after a compaction this turn: only a window over the budget itself
      // gets the deterministic template (recorded as the soft tier, without a cooldown).
      if ((cooling || guarded) && sentTokens(window, config) <= s.budget) {
        const decision = declined(window, config, "hard", cooling ? "cooldown" : "compacted-this-turn")
        return softResult._tag === "SoftCompacted"
          ? { ...softResult, decision }
          : ({
              _tag: "NoChange",
              reason: cooling ? "cooling down" : "already compacted this turn",
              window,
              decision
            } as const)
      }
      const template = cooling || guarded
      const plan = CompressionPlan.compressionPlan(window, keepCeiling(window, config))
      if (CompressionPlan.isEmpty(plan)) {
        const decision = declined(window, config, "hard", "nothing-to-summarize")
        return yield* fitted(stream, config, { ...softResult, decision }, op)
      }
      yield* tierStarted(op, stream, template ? "template" : "hard")
      return yield* fitted(
        stream,
        config,
        withSoftEvents(
          yield* summarize(stream, window, {
            tier: template ? "soft" : "hard",
            plan,
            maxSummaryTokens: s.maxSummaryTokens,
            cooldownTurns: template ? 0 : s.cooldown,
            timeout: s.timeout,
            compactor: template ? fallbackCompactor(s.maxSummaryTokens) : compactor,
            hooks: {},
            guard: config.guard,
            reason: template
              ? `over the budget (${sentTokens(window, config)} of ${s.budget} tokens) while ${cooling ? "cooling down" : "already compacted this turn"}`
              : `${sentTokens(window, config)} of ${s.budget} tokens used`
          })
        ),
        op
      )
    },
    (run, stream) => withStatus("maybeCompact", stream, run)
  )

/**
 * Compact now, whatever the pressure: summarize all but the newest history with the `Compactor`,
 * calling the optional hooks in order archive → summarize → probe → finalize → persist. Returns
 * `NoChange` when there is nothing to summarize, else `Compacted`.
 * @since 0.1.0
 */
export const compactContext: (
  stream: EventLog.StreamId,
  maxSummaryTokens?: number,
  options?: CompactContextOptions
) => Effect.Effect<Summarized, Failure, Requirements> = Effect.fn("TieredCompaction.compactContext")(function* (
  stream: EventLog.StreamId,
  maxSummaryTokens?: number,
  options: CompactContextOptions = {}
) {
  yield* Tracing.annotate("stream", stream)
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
    hooks: options.hooks ?? {},
    guard: options.guard,
    reason: `asked for (compactContext), keeping ${keep} tokens`
  })
})

/** Usage the provider reported for the last call, if known. @since 0.1.0 */
export interface ProactiveUsage {
  /** Prompt tokens as reported: tool schemas and the turn reminder included. */
  readonly inputTokens: number
  /**
   * Tokens of the tool schemas and turn reminder inside `inputTokens`, which the budget leaves out
   * (default: the config's `Budget.toolTokens + reminderTokens`; 0 for a bare-number budget).
   */
  readonly reservedTokens?: number
  /** Tokens the provider cleared on its side first (`ModelResponse.contextEdits`): the prompt sent was this much bigger. */
  readonly clearedInputTokens?: number
}

/** Usage above which proactive compression runs even when the provider compacts server-side. @since 0.1.0 */
export const providerSideOverride = 0.95

/**
 * Summarize ahead of need, at its own threshold (`proactiveThreshold`). Skipped when the provider
 * compacts server-side, unless usage passes 95% of the budget. No cooldown applies.
 * @since 0.1.0
 */
export const maybeProactiveCompress: (
  stream: EventLog.StreamId,
  config: Config,
  usage?: ProactiveUsage
) => Effect.Effect<Result, Failure, Requirements> = Effect.fn("TieredCompaction.maybeProactiveCompress")(
  function* (stream: EventLog.StreamId, config: Config, usage?: ProactiveUsage) {
    yield* Tracing.annotate("stream", stream)
    yield* validate(config)
    const ctx = yield* ContextService.ContextService
    const compactor = yield* Compactor.Compactor
    const s = settings(config)
    const window = yield* ctx.load(stream)
    // The 95% rule is about the prompt we send, before the provider's own edits shrink it. The budget
    // leaves out the tool schemas and reminder, so they come off the reported count: like with like.
    const reserved =
      usage?.reservedTokens ??
      (typeof config.budget === "number" ? 0 : config.budget.toolTokens + config.budget.reminderTokens)
    const sent =
      usage === undefined
        ? undefined
        : Math.max(0, usage.inputTokens + (usage.clearedInputTokens ?? 0) - Math.max(0, reserved))
    const usedTokens = sent ?? sentTokens(window, config)
    const used = usedTokens / s.budget
    const decline = (reason: WindowEvent.DecisionReason, line: "proactive" | "hard" = "proactive") =>
      declined(window, config, "proactive", reason, line, usedTokens)
    if (config.providerSideCompaction === true && used <= providerSideOverride) {
      const decision = { ...decline("provider-side"), thresholdTokens: Math.floor(s.budget * providerSideOverride) }
      return { _tag: "NoChange", reason: "provider-side compaction is on", window, decision } as const
    }
    if (used < s.proactive) {
      const decision = decline("below-threshold")
      return { _tag: "NoChange", reason: "below the proactive threshold", window, decision } as const
    }
    // Cache-aware: a proactive summary rewrites the head of history while the window still fits.
    if (config.preferCachedPrefix === true && used < s.hard) {
      const decision = decline("cached-prefix", "hard")
      return { _tag: "NoChange", reason: "keeping the cached prefix", window, decision } as const
    }
    // Reported usage, when given, says how far off the local estimate is.
    const reportedRatio =
      sent === undefined || window.tokens.total === 0 ? undefined : Math.max(1, sent / window.tokens.total)
    const plan = CompressionPlan.compressionPlan(window, keepCeiling(window, config, undefined, reportedRatio))
    if (CompressionPlan.isEmpty(plan)) {
      const decision = decline("nothing-to-summarize")
      return { _tag: "NoChange", reason: "nothing to summarize", window, decision } as const
    }
    yield* tierStarted("maybeProactiveCompress", stream, "proactive")
    return yield* summarize(stream, window, {
      tier: "proactive",
      plan,
      maxSummaryTokens: s.maxSummaryTokens,
      cooldownTurns: 0,
      timeout: s.timeout,
      compactor,
      hooks: {},
      guard: config.guard,
      reason: `${Math.round(used * 100)}% of the budget used (proactive threshold ${Math.round(s.proactive * 100)}%)`
    })
  },
  (run, stream) => withStatus("maybeProactiveCompress", stream, run)
)

/**
 * Between tool calls of one iteration: the Soft tier only, aimed at the Soft threshold. Returns at
 * once when a compaction already ran this turn or the pressure is below Soft; otherwise applies the
 * deferred summaries and prunes tool outputs, stopping as soon as the window is under the Soft
 * threshold. Never calls a model, never touches an unseen tool result (except truncating it when the
 * window is over the budget itself).
 * @since 0.1.0
 */
export const maybeSoftCompactMidIteration: (
  stream: EventLog.StreamId,
  config: Config
) => Effect.Effect<
  Result,
  ContextService.LogError | InvalidConfig,
  ContextService.ContextService | TokenCounter.TokenCounter
> = Effect.fn("TieredCompaction.maybeSoftCompactMidIteration")(function* (stream: EventLog.StreamId, config: Config) {
  yield* Tracing.annotate("stream", stream)
  yield* validate(config)
  const ctx = yield* ContextService.ContextService
  const window = yield* ctx.load(stream)
  if (window.compaction.compactedThisTurn) {
    const decision = declined(window, config, "soft", "compacted-this-turn")
    return { _tag: "NoChange", reason: "already compacted this turn", window, decision } as const
  }
  const level = pressure(window, config)
  if (level === "None") {
    const decision = declined(window, config, "soft", "below-threshold")
    return { _tag: "NoChange", reason: "no pressure", window, decision } as const
  }
  if (level === "Soft" && config.preferCachedPrefix === true) {
    const decision = declined(window, config, "soft", "cached-prefix", "hard")
    return yield* fitted(stream, config, { _tag: "NoChange", reason: "keeping the cached prefix", window, decision })
  }
  const s = settings(config)
  // Just under the Soft threshold: pressure counts `>=`.
  const soft = yield* softStep(stream, config, s.soft - 1 / Math.max(1, s.budget))
  const result: Result =
    soft.events.length > 0
      ? ({ _tag: "SoftCompacted", window: soft.window, events: soft.events } as const)
      : ({
          _tag: "NoChange",
          reason: "soft tier found nothing to do",
          window: soft.window,
          decision: declined(soft.window, config, "soft", "nothing-to-do")
        } as const)
  return yield* fitted(stream, config, result)
})
