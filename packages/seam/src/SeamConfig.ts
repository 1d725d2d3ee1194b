/**
 * Seam configuration: when a seam is due (token thresholds per level), how much recent history stays
 * verbatim, how tight each level's summary is, and whether a level-3 seam starts a new cycle.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** A seam level: 1 (light), 2 (denser), 3 (densest; may end a cycle). @since 0.1.0 */
export const SeamLevel = Schema.Literal(1, 2, 3)
/** @since 0.1.0 */
export type SeamLevel = typeof SeamLevel.Type

/** Every level, lowest first. @since 0.1.0 */
export const seamLevels: ReadonlyArray<SeamLevel> = SeamLevel.literals

/** A value per seam level. @since 0.1.0 */
export const PerLevel = Schema.Struct({ level1: Schema.Number, level2: Schema.Number, level3: Schema.Number })
/** @since 0.1.0 */
export type PerLevel = typeof PerLevel.Type

/** A resolved, validated seam configuration. @since 0.1.0 */
export interface SeamConfig {
  /** When false the pipeline never writes anything. */
  readonly enabled: boolean
  /** Active input tokens at or above which a seam of each level is due (strictly increasing). */
  readonly thresholds: PerLevel
  /** Number of most recent history messages never folded into a seam. */
  readonly verbatimWindow: number
  /** A new seam at the current level fuses the existing ones instead once this many exist. */
  readonly maxSeamsPerLevel: number
  /** `maxSummaryTokens` given to the summarizer for each level (higher levels are denser). */
  readonly summaryTokens: PerLevel
  /** Start a new cycle (briefing, history cleared, seams reset) after a level-3 seam. */
  readonly advanceCycle: boolean
}

/**
 * What a caller gives: either `thresholds` or a token `budget` (thresholds then default to
 * {@link defaultThresholdRatios} of it); everything else has a default. One schema, the type derived
 * from it (ADR 0156); {@link make} checks it.
 * @since 0.1.0
 */
export const SeamConfigInput = Schema.Struct({
  /** When false the pipeline never writes anything (default true). */
  enabled: Schema.optional(Schema.Boolean),
  /** A token budget the thresholds default to shares of. */
  budget: Schema.optional(Schema.Number),
  /** Active input tokens at or above which a seam of each level is due (strictly increasing). */
  thresholds: Schema.optional(PerLevel),
  /** Number of most recent history messages never folded into a seam (default {@link defaultVerbatimWindow}). */
  verbatimWindow: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  /** A new seam at the current level fuses the existing ones instead once this many exist (default {@link defaultMaxSeamsPerLevel}). */
  maxSeamsPerLevel: Schema.optional(Schema.Int.pipe(Schema.positive())),
  /** `maxSummaryTokens` given to the summarizer for each level (default {@link defaultSummaryTokens}). */
  summaryTokens: Schema.optional(PerLevel),
  /** Start a new cycle (briefing, history cleared, seams reset) after a level-3 seam (default false). */
  advanceCycle: Schema.optional(Schema.Boolean)
})
/** @since 0.1.0 */
export type SeamConfigInput = typeof SeamConfigInput.Type

const Share = Schema.Number.pipe(Schema.finite(), Schema.greaterThan(0), Schema.lessThanOrEqualTo(1))

/**
 * Seams as data, with the thresholds as shares of a prompt budget: what a turn policy's `seams` holds
 * (`@ctxlog/turn`; ADR 0156). {@link inputAt} turns it into a {@link SeamConfigInput} at a budget.
 * @since 0.8.0
 */
export const Settings = Schema.Struct({
  level1: Share,
  level2: Share,
  level3: Share,
  /** At least 1 here, as a policy has always had it ({@link make} itself takes 0). */
  verbatimWindow: Schema.optional(Schema.Int.pipe(Schema.positive())),
  maxSeamsPerLevel: SeamConfigInput.fields.maxSeamsPerLevel,
  advanceCycle: SeamConfigInput.fields.advanceCycle,
  /** Recorded on seams as their `workspace` attribute. */
  workspace: Schema.optional(Schema.String)
})
/** @since 0.8.0 */
export type Settings = typeof Settings.Type

/**
 * The thresholds of {@link Settings} at a prompt budget, in tokens: each share of it, floored, and at least
 * 1, 2 and 3 tokens.
 * @since 0.8.0
 */
export const thresholdsAt = (
  shares: { readonly level1: number; readonly level2: number; readonly level3: number },
  available: number
): PerLevel => ({
  level1: Math.max(1, Math.floor(available * shares.level1)),
  level2: Math.max(2, Math.floor(available * shares.level2)),
  level3: Math.max(3, Math.floor(available * shares.level3))
})

/** The {@link SeamConfigInput} of {@link Settings} at a prompt budget (for {@link make}). @since 0.8.0 */
export const inputAt = (settings: Settings, available: number): SeamConfigInput => ({
  thresholds: thresholdsAt(settings, available),
  verbatimWindow: settings.verbatimWindow,
  maxSeamsPerLevel: settings.maxSeamsPerLevel,
  advanceCycle: settings.advanceCycle
})

/** Shares of the budget at which levels 1, 2 and 3 become due. @since 0.1.0 */
export const defaultThresholdRatios: PerLevel = { level1: 0.6, level2: 0.75, level3: 0.9 }

/** Default summary sizes per level, in tokens. @since 0.1.0 */
export const defaultSummaryTokens: PerLevel = { level1: 1200, level2: 800, level3: 500 }

/** Default number of recent messages kept verbatim. @since 0.1.0 */
export const defaultVerbatimWindow = 8

/** Default number of seams per level before they are fused. @since 0.1.0 */
export const defaultMaxSeamsPerLevel = 4

/** A seam configuration is unusable; `field` names the offending setting. @since 0.1.0 */
export class InvalidSeamConfig extends Schema.TaggedError<InvalidSeamConfig>()("InvalidSeamConfig", {
  field: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `seam config "${this.field}": ${this.detail}`
  }
}

const positiveInt = (value: number): boolean => Number.isInteger(value) && value > 0

const checkPerLevel = (field: string, value: PerLevel, increasing: boolean) => {
  for (const level of seamLevels) {
    const n = valueAt(value, level)
    if (!positiveInt(n)) {
      return Option.some(
        new InvalidSeamConfig({ field: `${field}.level${level}`, detail: `${n} is not a positive integer` })
      )
    }
  }
  if (increasing && !(value.level1 < value.level2 && value.level2 < value.level3)) {
    return Option.some(
      new InvalidSeamConfig({
        field,
        detail: `must be strictly increasing, got ${value.level1}, ${value.level2}, ${value.level3}`
      })
    )
  }
  return Option.none()
}

/** The value a {@link PerLevel} holds for `level`. @since 0.1.0 */
export const valueAt = (value: PerLevel, level: SeamLevel): number =>
  level === 1 ? value.level1 : level === 2 ? value.level2 : value.level3

/** Thresholds at the given shares of a token budget. @since 0.1.0 */
export const thresholdsFor = (budget: number, ratios: PerLevel = defaultThresholdRatios): PerLevel => ({
  level1: Math.floor(budget * ratios.level1),
  level2: Math.floor(budget * ratios.level2),
  level3: Math.floor(budget * ratios.level3)
})

/** Resolve and validate a configuration. @since 0.1.0 */
export const make = (input: SeamConfigInput): Effect.Effect<SeamConfig, InvalidSeamConfig> =>
  Effect.suspend(() => {
    if (input.thresholds === undefined && input.budget === undefined) {
      return Effect.fail(new InvalidSeamConfig({ field: "thresholds", detail: "give thresholds or a budget" }))
    }
    if (input.budget !== undefined && !positiveInt(input.budget)) {
      return Effect.fail(
        new InvalidSeamConfig({ field: "budget", detail: `${input.budget} is not a positive integer` })
      )
    }
    const thresholds = input.thresholds ?? thresholdsFor(input.budget ?? 0)
    const summaryTokens = input.summaryTokens ?? defaultSummaryTokens
    const verbatimWindow = input.verbatimWindow ?? defaultVerbatimWindow
    const maxSeamsPerLevel = input.maxSeamsPerLevel ?? defaultMaxSeamsPerLevel
    const problem = Option.orElse(checkPerLevel("thresholds", thresholds, true), () =>
      checkPerLevel("summaryTokens", summaryTokens, false)
    )
    if (Option.isSome(problem)) return Effect.fail(problem.value)
    if (!Number.isInteger(verbatimWindow) || verbatimWindow < 0) {
      return Effect.fail(
        new InvalidSeamConfig({ field: "verbatimWindow", detail: `${verbatimWindow} is not a non-negative integer` })
      )
    }
    if (!positiveInt(maxSeamsPerLevel)) {
      return Effect.fail(
        new InvalidSeamConfig({ field: "maxSeamsPerLevel", detail: `${maxSeamsPerLevel} is not a positive integer` })
      )
    }
    return Effect.succeed<SeamConfig>({
      enabled: input.enabled ?? true,
      thresholds,
      verbatimWindow,
      maxSeamsPerLevel,
      summaryTokens,
      advanceCycle: input.advanceCycle ?? false
    })
  })

/**
 * The level due at `activeInputTokens`: the highest level whose threshold is reached, raised to
 * `highestExisting` (a seam is never produced below a level already produced); none below level 1's
 * threshold.
 * @since 0.1.0
 */
export const levelFor = (
  config: SeamConfig,
  activeInputTokens: number,
  highestExisting: Option.Option<SeamLevel>
): Option.Option<SeamLevel> => {
  const reached = [...seamLevels].reverse().find((level) => activeInputTokens >= valueAt(config.thresholds, level))
  if (reached === undefined) return Option.none()
  return Option.some(
    Option.match(highestExisting, { onNone: () => reached, onSome: (existing) => maxLevel(reached, existing) })
  )
}

/** The higher of two levels. @since 0.1.0 */
export const maxLevel = (a: SeamLevel, b: SeamLevel): SeamLevel => (a >= b ? a : b)

/** Index of the first message of the verbatim tail (0 when there are no more messages than it holds). @since 0.1.0 */
export const verbatimWindowStart = (config: SeamConfig, messageCount: number): number =>
  Math.max(0, messageCount - config.verbatimWindow)

/** Whether a number is a seam level. @since 0.1.0 */
export const isSeamLevel: (value: unknown) => value is SeamLevel = Schema.is(SeamLevel)
