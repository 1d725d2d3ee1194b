/**
 * Guards a summary passes before its `Compacted` event is written (issue 39, build item 2): it is not
 * empty, not a fallback text, folds no tool call still waiting for its result, keeps the user's latest
 * ask (verbatim in the summary, or the ask stays in the kept tail), folds no pinned message, and keeps
 * every pinned identifier found in what it folds verbatim. A failing guard refuses the summary with a
 * typed {@link SummaryRefused}; the compaction records it (`CompactionFailed`, reason `guard:<reason>: …`)
 * and writes no summary, and the turn falls to its next tier (ADR 0092).
 *
 * @since 0.8.0
 */
import { Message, ToolPairs } from "@ctxlog/core"
import * as Context_ from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** Why a summary was refused (`policy`: a guard a policy added). @since 0.8.0 */
export const Reason = Schema.Literal("empty", "fallback", "pending_call", "user_ask", "pinned", "policy")
/** @since 0.8.0 */
export type Reason = typeof Reason.Type

/** A summary failed a guard; nothing was written but the refusal. @since 0.8.0 */
export class SummaryRefused extends Schema.TaggedError<SummaryRefused>()("SummaryRefused", {
  reason: Reason,
  detail: Schema.String,
  /** What the summary would have lost: call ids, message ids or pinned identifiers. */
  dropped: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `summary refused (${this.reason}): ${this.detail}`
  }
}

/**
 * Texts a compactor answers with when it has no summary (compared trimmed and case-insensitively, with
 * trailing punctuation ignored): a summary that is one of them replaces history by nothing.
 * @since 0.8.0
 */
export const fallbackTexts: ReadonlyArray<string> = [
  "no summary",
  "no summary available",
  "summary unavailable",
  "(no summary)",
  "[no summary]",
  "nothing to summarize",
  "conversation summarized",
  "previous conversation summarized"
]

/** What a guard sees. @since 0.8.0 */
export interface Context {
  /** The messages the summary replaces (folded into it). */
  readonly folded: ReadonlyArray<Message.Message>
  /** The history that stays verbatim after the compaction. */
  readonly kept: ReadonlyArray<Message.Message>
  /** Identifiers (paths, ids) that must survive verbatim when what is folded holds them. */
  readonly pinnedIdentifiers?: ReadonlyArray<string> | undefined
  /**
   * Refuse a summary that folds the user's latest ask without quoting it whole (default true since the
   * compression plan, the trims and the seam ranges keep the ask in the tail; `false` turns it off; see
   * ADR 0114).
   */
  readonly keepUserAsk?: boolean | undefined
  /** Guards a policy adds, run after the built-in ones, in order. */
  readonly guards?: ReadonlyArray<Guard> | undefined
}

/**
 * A guard a policy adds: it answers why it refuses the summary (and what the summary would lose), or
 * nothing to let it pass. Pure. A refusal is recorded as `guard:policy: <name>: <detail>`.
 * @since 0.8.0
 */
export interface Guard {
  readonly name: string
  readonly check: (
    summary: string,
    context: Context
  ) => Option.Option<{ readonly detail: string; readonly dropped?: ReadonlyArray<string> | undefined }>
}

/**
 * The guard settings in force for every summarizing path (the compaction tiers, the seam pipeline,
 * `CompactingMemory`): each path reads this service, when provided, and adds its settings to its own
 * (pinned identifiers joined, the user-ask guard on if either asks, policy guards after the path's own).
 * A policy adds guards by providing {@link layer}.
 * @since 0.8.0
 */
export class Policy extends Context_.Tag("@ctxlog/compaction/SummaryGuard/Policy")<
  Policy,
  Pick<Context, "pinnedIdentifiers" | "keepUserAsk" | "guards">
>() {}

/** Provide guard settings to every summarizing path. @since 0.8.0 */
export const layer = (settings: Policy["Type"]): Layer.Layer<Policy> => Layer.succeed(Policy, settings)

/**
 * Check a summary on any path: the path's own context joined with the {@link Policy} in force. The one
 * entry every summarizing path calls.
 * @since 0.8.0
 */
export const guard = (summary: string, context: Context): Effect.Effect<void, SummaryRefused> =>
  Effect.flatMap(Effect.serviceOption(Policy), (policy) => {
    if (Option.isNone(policy)) return check(summary, context)
    const extra = policy.value
    const identifiers = [...(context.pinnedIdentifiers ?? []), ...(extra.pinnedIdentifiers ?? [])]
    return check(summary, {
      ...context,
      pinnedIdentifiers: [...new Set(identifiers)],
      // On if either asks for it, off if either turns it off, else the default (on).
      keepUserAsk:
        context.keepUserAsk === true || extra.keepUserAsk === true
          ? true
          : context.keepUserAsk === false || extra.keepUserAsk === false
            ? false
            : undefined,
      guards: [...(context.guards ?? []), ...(extra.guards ?? [])]
    })
  })

const normalized = (text: string): string =>
  text
    .trim()
    .toLowerCase()
    .replace(/[.!\s]+$/, "")

const refuse = (reason: Reason, detail: string, dropped: ReadonlyArray<string> = []) =>
  Either.left(new SummaryRefused({ reason, detail, dropped }))

/**
 * Check a summary against every guard, in the order of {@link Reason}: the first that fails refuses it.
 * Pure. O(the folded and kept messages).
 * @since 0.8.0
 */
export const check = (summary: string, context: Context): Either.Either<void, SummaryRefused> => {
  if (summary.trim().length === 0) return refuse("empty", "the compactor returned an empty summary")
  const fallback = normalized(summary)
  if (fallbackTexts.some((text) => normalized(text) === fallback)) {
    return refuse("fallback", `the summary is a fallback text (${JSON.stringify(summary.trim())})`)
  }
  // A call folded in must have its result folded or kept: a call still waiting would lose its result.
  const all = [...context.folded, ...context.kept]
  const waiting = new Set(ToolPairs.pendingCalls(all))
  const folded = context.folded.flatMap((message) =>
    Message.toolCallsOf(message)
      .map((call) => call.id)
      .filter((id) => waiting.has(id))
  )
  if (folded.length > 0) {
    return refuse("pending_call", `it folds ${folded.length} tool call(s) still waiting for a result`, folded)
  }
  // The user's latest ask: kept verbatim in the tail, or quoted whole by the summary.
  const ask = Message.latestUserAsk(all)
  if (context.keepUserAsk !== false && ask !== undefined && context.folded.some((message) => message.id === ask.id)) {
    const text = Message.textOf(ask).trim()
    if (text.length > 0 && !summary.includes(text)) {
      return refuse("user_ask", "the user's latest ask is folded and the summary does not keep it verbatim", [ask.id])
    }
  }
  const pinned = context.folded.filter((message) => message.pinned === true).map((message) => message.id)
  if (pinned.length > 0) return refuse("pinned", `it folds ${pinned.length} pinned message(s)`, pinned)
  const identifiers = context.pinnedIdentifiers ?? []
  if (identifiers.length > 0) {
    // Text, tool inputs and tool outputs alike: a path can be in any of them.
    const source = context.folded.map((message) => JSON.stringify(message.parts)).join("\n")
    const lost = identifiers.filter((identifier) => source.includes(identifier) && !summary.includes(identifier))
    if (lost.length > 0) return refuse("pinned", `it drops pinned identifier(s) ${lost.join(", ")}`, lost)
  }
  for (const added of context.guards ?? []) {
    const refusal = added.check(summary, context)
    if (Option.isSome(refusal)) return refuse("policy", `${added.name}: ${refusal.value.detail}`, refusal.value.dropped)
  }
  return Either.right(undefined)
}
