/**
 * A turn's policy, as data: which builder renders the window (and so the budget, output reserve
 * included), the render options, and what the pipeline may do to make a render fit: recall,
 * compaction tiers, seams, deferred tool-pair summaries, the cap on one input message. It is recorded
 * in the log (`TurnPolicySet`) when it changes, so a replay under the recorded policy needs nothing
 * but the log, and `ctxlog whatif` replays the same module under another one.
 *
 * Shares (`…Share`, thresholds, ratios) are fractions of the prompt budget: the context window less
 * the output reserve, the tool schemas and the turn reminder (`CtxBuilder.budget`).
 *
 * @since 0.4.0
 */
import { TieredCompaction, ToolOutputPruning } from "@ctxlog/compaction"
import { Budget, type Message } from "@ctxlog/core"
import { CtxBuilder } from "@ctxlog/providers"
import { SeamConfig } from "@ctxlog/seam"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const opt = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const Share = Schema.Number.pipe(Schema.finite(), Schema.greaterThan(0), Schema.lessThanOrEqualTo(1))
const Count = Schema.Int.pipe(Schema.nonNegative())

/**
 * The options every render of the turn is built with: `CtxBuilder.BuildOptions`' data fields, the schema
 * declared once in `@ctxlog/providers` (ADR 0156).
 * @since 0.4.0
 */
export const RenderSettings = CtxBuilder.BuildOptions.pick(
  "systemPrompt",
  "turnReminder",
  "tools",
  "maxOutputTokens",
  "temperature"
)

/**
 * Tool-output pruning inside the soft tier: `ToolOutputPruning.Options`' `strategy`, `keepRecent`,
 * `minChars` and `perTool`, the schema declared once in `@ctxlog/compaction` (ADR 0156).
 * @since 0.4.0
 */
export const PruneSettings = ToolOutputPruning.Options.pick("strategy", "keepRecent", "minChars", "perTool")

/**
 * The compaction tiers (`TieredCompaction`): soft (prune), hard (summarize), proactive. The tiers' own
 * settings are `TieredCompaction.Settings` (declared once in `@ctxlog/compaction`, ADR 0156); beside them
 * the turn's own switches and the summary guard's settings, which {@link tieredOf} hands on as `guard`.
 * @since 0.4.0
 */
export const CompactionSettings = Schema.Struct({
  ...TieredCompaction.Settings.fields,
  prune: Schema.optional(PruneSettings),
  /** The soft tier between the model calls of one turn, and a trim to the soft threshold when it is not enough (default true). */
  midIteration: Schema.optional(Schema.Boolean),
  /** Proactive compression against the input tokens the provider reported, not the local count (default true). */
  proactiveFromUsage: Schema.optional(Schema.Boolean),
  /** Identifiers (paths, ids) a summary must keep verbatim when what it folds holds them (`SummaryGuard`; issue 39). */
  pinnedIdentifiers: Schema.optional(Schema.Array(Schema.String)),
  /** Refuse a summary that folds the user's latest ask without quoting it whole (`SummaryGuard`; default true, `false` turns it off). */
  keepUserAsk: Schema.optional(Schema.Boolean)
})

/**
 * Seams: leveled archived context, thresholds as shares of the budget: `SeamConfig.Settings`, declared once
 * in `@ctxlog/seam` (ADR 0156).
 * @since 0.4.0
 */
export const SeamSettings = SeamConfig.Settings

/** Recall before the input is appended: this conversation's older messages and the owner's other sessions. @since 0.4.0 */
export const RecallSettings = Schema.Struct({
  recallShare: opt(Share),
  crossSessionShare: opt(Share),
  owner: opt(Schema.String)
})

/**
 * Skills the turn places for its query (`ContextAssembly`'s choice: best score first within the share,
 * at or above `minScore`, a skill up to `explorationMargin` below it when the query names it), as the
 * `skill` kind in knowledge, replaced every turn the caller gives its matches. `null` turns placing off.
 * @since 0.8.0
 */
export const SkillSettings = Schema.Struct({
  /** Share of the budget the placed skills may take (default {@link defaultSkillShare}). */
  share: opt(Share),
  minScore: opt(Schema.Number.pipe(Schema.finite())),
  explorationMargin: opt(Schema.Number.pipe(Schema.finite(), Schema.nonNegative()))
})

/** The skills' share of the budget when a policy sets none (ADR 0126). @since 0.8.0 */
export const defaultSkillShare = 0.05

/** Deferred tool-pair summaries (`DeferredSummaries`). @since 0.4.0 */
export const DeferredSettings = Schema.Struct({
  /** A tool pair above this share of the budget gets a summary, applied later under pressure. */
  cutoffShare: Share,
  /** ... but never below this many tokens. */
  minTokens: opt(Count)
})

/** The compactor the caller provides, described so a replay can use the same one. @since 0.4.0 */
export const CompactorSettings = Schema.Struct({
  kind: Schema.Literal("template", "model"),
  maxBytes: opt(Schema.Int.pipe(Schema.positive()))
})

/**
 * The file store (`@ctxlog/memory`'s `FileStore`): a tool output of more UTF-8 bytes than
 * `thresholdBytes` is stored once in the log's database and the event holds a preview with its handle
 * (the model reads it whole with `read_output`). Runs only where a `FileStore` is provided.
 * @since 0.4.0
 */
export const FileStoreSettings = Schema.Struct({
  thresholdBytes: Count,
  /** Characters of the output the preview shows (default 2,000). */
  previewChars: opt(Schema.Int.pipe(Schema.positive())),
  /** The tool whose results always stay inline (default `read_output`: reading a stored output whole). */
  readTool: opt(Schema.String)
})

/** A turn's policy. @since 0.4.0 */
export const Policy = Schema.Struct({
  /** The builder that renders every request of the turn, and so the budget. */
  builder: CtxBuilder.ProviderConfig,
  /** Who serves the requests, as `PromptRendered` and `UsageReported` record it (default: the builder's provider and model). */
  target: opt(Schema.Struct({ provider: Schema.String, model: Schema.String })),
  render: opt(RenderSettings),
  compaction: opt(Schema.NullOr(CompactionSettings)),
  seams: opt(Schema.NullOr(SeamSettings)),
  recall: opt(Schema.NullOr(RecallSettings)),
  /** Skills placed for the turn's query (default: placed at {@link defaultSkillShare} of the budget). */
  skills: opt(Schema.NullOr(SkillSettings)),
  deferred: opt(Schema.NullOr(DeferredSettings)),
  /** One input message longer than this share of the budget (in tokens, ~4 characters each) is cut to its head and tail. */
  inputShare: opt(Share),
  /** Subgoals follow the newest plan the model wrote (a numbered list in its answer). */
  subgoals: opt(Schema.Literal("heuristic")),
  compactor: opt(CompactorSettings),
  /** Large tool outputs stored out of the window, a preview with a handle in their place. */
  fileStore: opt(Schema.NullOr(FileStoreSettings))
})
/** @since 0.4.0 */
export type Policy = typeof Policy.Type
/** @since 0.4.0 */
export type PolicyEncoded = typeof Policy.Encoded

/** A policy that cannot run: a bad field, or a window too small for its reserves. @since 0.4.0 */
export class InvalidPolicy extends Schema.TaggedError<InvalidPolicy>()("InvalidPolicy", {
  field: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `turn policy: ${this.field}: ${this.detail}`
  }
}

const decode = Schema.decodeUnknownEither(Policy, { onExcessProperty: "error" })
const encode = Schema.encodeSync(Policy)

/** The smallest prompt budget a turn runs with: below it, one tool output would not fit. @since 0.4.0 */
export const minimumBudget = 512

/** Check a policy (its schema, and a budget that leaves room for a prompt). @since 0.4.0 */
export const validate = (input: unknown): Either.Either<Policy, InvalidPolicy> =>
  Either.flatMap(
    Either.mapLeft(decode(input), (error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      return new InvalidPolicy({
        field: issue === undefined || issue.path.length === 0 ? "(policy)" : issue.path.join("."),
        detail: issue?.message ?? error.message
      })
    }),
    (policy) => {
      const budget = Budget.available(budgetOf(policy, undefined))
      const window = CtxBuilder.forProvider(policy.builder).ctxWindow
      if (budget < minimumBudget) {
        const reserve = policy.render?.maxOutputTokens ?? policy.builder.maxOutputTokens
        return Either.left(
          new InvalidPolicy({
            field: "builder.contextWindow",
            detail:
              `a context window of ${window} tokens leaves ${budget} for the prompt once the output reserve` +
              `${reserve === undefined ? "" : ` (${reserve})`}, the tool schemas and the turn reminder are set aside; ` +
              `at least ${minimumBudget} are needed: raise the context window or lower the output reserve`
          })
        )
      }
      // The tiers and seams the policy describes must be runnable: checked here, so that a step never
      // starts (and writes nothing) under a policy whose compaction or seam config would be refused.
      const tiered = tieredOf(policy, budgetOf(policy, undefined))
      if (tiered !== undefined) {
        const checked = TieredCompaction.validate(tiered)
        if (Either.isLeft(checked)) {
          return Either.left(
            new InvalidPolicy({ field: `compaction.${checked.left.field}`, detail: checked.left.detail })
          )
        }
      }
      const seams = policy.seams
      if (seams !== undefined && seams !== null) {
        const [l1, l2, l3] = seamThresholds(seams, budget)
        if (!(l1 < l2 && l2 < l3)) {
          return Either.left(
            new InvalidPolicy({
              field: "seams",
              detail:
                `the thresholds must be strictly increasing at this budget (${budget} tokens): ` +
                `level1..3 = ${seams.level1}, ${seams.level2}, ${seams.level3} give ${l1}, ${l2}, ${l3} tokens`
            })
          )
        }
      }
      return Either.right(policy)
    }
  )

/** The seam thresholds of a policy at a prompt budget, in tokens (`SeamConfig.thresholdsAt`). @since 0.4.0 */
export const seamThresholds = (
  seams: { readonly level1: number; readonly level2: number; readonly level3: number },
  available: number
): readonly [number, number, number] => {
  const at = SeamConfig.thresholdsAt(seams, available)
  return [at.level1, at.level2, at.level3]
}

/** The policy as JSON (what `TurnPolicySet` records). @since 0.4.0 */
export const toJson = (policy: Policy): { readonly [key: string]: Message.JsonValue } =>
  JSON.parse(JSON.stringify(encode(policy)))

/** The render options of a policy, with this turn's reminder when one is given. @since 0.4.0 */
export const buildOptions = (policy: Policy, turnReminder?: string): CtxBuilder.BuildOptions => {
  const render = policy.render ?? {}
  return { ...render, turnReminder: turnReminder ?? render.turnReminder }
}

/** The budget of a policy's renders (the builder's, for these options). @since 0.4.0 */
export const budgetOf = (policy: Policy, turnReminder: string | undefined): Budget.Budget =>
  CtxBuilder.forProvider(policy.builder).budget(buildOptions(policy, turnReminder))

/**
 * The compaction budget and thresholds a policy's turns run with, in tokens (`TieredCompaction.thresholds`
 * of {@link tieredOf} at {@link budgetOf}, the policy's own reminder); undefined when compaction is off.
 * @since 0.8.0
 */
export const compactionThresholds = (policy: Policy): TieredCompaction.Thresholds | undefined => {
  const config = tieredOf(policy, budgetOf(policy, undefined))
  return config === undefined ? undefined : TieredCompaction.thresholds(config)
}

/**
 * The tiered-compaction config of a policy at a budget: its `TieredCompaction.Settings` as they are, the
 * guard's settings as `guard`, and the budget and unsent tokens of its builder.
 * @since 0.4.0
 */
export const tieredOf = (policy: Policy, budget: Budget.Budget): TieredCompaction.Config | undefined => {
  const c = policy.compaction
  if (c === undefined || c === null) return undefined
  const { midIteration: _mid, proactiveFromUsage: _usage, pinnedIdentifiers, keepUserAsk, ...settings } = c
  return {
    ...settings,
    budget,
    // The tiers weigh what the builder sends: the window's count less the reasoning it drops (issue 37).
    unsentTokens: CtxBuilder.forProvider(policy.builder).unsentTokens,
    ...(pinnedIdentifiers === undefined && keepUserAsk === undefined
      ? {}
      : { guard: { pinnedIdentifiers, keepUserAsk } })
  }
}
