import {
  Compactor,
  type CompressionPlan,
  ContextService,
  type EventLog,
  Message,
  Receipt,
  TokenCounter,
  Window,
  type WindowEvent
} from "@ctxlog/core"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { Failure, Hooks, Summarized } from "../TieredCompaction.js"
import * as SummaryGuard from "../SummaryGuard.js"
import { by } from "./metadata.js"

/** The ids a compaction would remove are no longer all in the window. */
class Stale extends Data.TaggedError("Stale")<{ readonly missing: ReadonlyArray<string> }> {}

/** The tokens of a summary message as the window counts it: inside its `<context kind="summary">` wrapper. */
const summaryTokens = (text: string, counter: TokenCounter.TokenCounter.Service): number => {
  const message = { parts: [Message.text(text)] }
  return Window.wrappedTokens(counter, "summary", message, counter.countMessage(message))
}

/** Cut `summary` until its message, as the window counts it, fits `maxTokens`. */
const capSummary = (summary: string, maxTokens: number, counter: TokenCounter.TokenCounter.Service): string => {
  let text = summary
  for (let attempt = 0; attempt < 12; attempt++) {
    const tokens = summaryTokens(text, counter)
    if (tokens <= maxTokens) return text
    const keep = Math.max(0, Math.floor((text.length * (maxTokens - TokenCounter.messageOverhead)) / tokens) - 8)
    text = `${text.slice(0, keep)} …`
  }
  return text.slice(0, Math.max(0, maxTokens))
}

export interface Summarization {
  readonly tier: WindowEvent.CompactionTier
  readonly plan: CompressionPlan.Plan
  readonly maxSummaryTokens: number
  readonly cooldownTurns: number
  readonly timeout: Duration.DurationInput
  readonly compactor: Compactor.Compactor.Service
  readonly hooks: Hooks
  /** The guards' settings (pinned identifiers, the user's ask). */
  readonly guard?: Pick<SummaryGuard.Context, "pinnedIdentifiers" | "keepUserAsk" | "guards"> | undefined
  /** Why this compaction runs, for its receipt. */
  readonly reason?: string | undefined
}

/** Summarize a plan and append the result; a failure appends `CompactionFailed` and fails. */
export const summarize = (
  stream: EventLog.StreamId,
  window: Window.Window,
  job: Summarization
): Effect.Effect<Summarized, Failure, ContextService.ContextService | TokenCounter.TokenCounter> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const counter = yield* TokenCounter.TokenCounter
    const { plan, hooks } = job
    const input: Compactor.CompactionInput = {
      messages: plan.toSummarize,
      previousSummary: window.carryOver,
      goal: window.taskState.goal,
      maxSummaryTokens: job.maxSummaryTokens
    }
    const timeout = Duration.decode(job.timeout)
    const produce = Effect.gen(function* () {
      if (hooks.archive !== undefined) yield* hooks.archive(plan)
      // A compactor that answers at once (a pure function of its input) has no timeout to race (ADR 0168).
      const now = hooks.summarize === undefined ? job.compactor.compactNow : undefined
      const output = yield* now !== undefined
        ? now(input)
        : (hooks.summarize ?? job.compactor.compact)(input).pipe(
            Effect.timeoutFail({
              duration: timeout,
              onTimeout: () =>
                new Compactor.CompactionError({
                  compactor: job.compactor.name,
                  reason: "timeout",
                  detail: `no summary within ${Duration.format(timeout)}`
                })
            })
          )
      // The guards, before anything is written (issue 39): a refusal is recorded below like any failure.
      const removed = new Set(plan.removeIds)
      yield* SummaryGuard.guard(output.summary, {
        folded: window.history.filter((message) => removed.has(message.id)),
        kept: window.history.filter((message) => !removed.has(message.id)),
        pinnedIdentifiers: job.guard?.pinnedIdentifiers,
        keepUserAsk: job.guard?.keepUserAsk,
        guards: job.guard?.guards
      })
      if (hooks.probe !== undefined) yield* hooks.probe(output.summary, plan)
      const finalized = hooks.finalize === undefined ? output.summary : yield* hooks.finalize(output.summary)
      return capSummary(finalized, job.maxSummaryTokens, counter)
    })
    const produced = yield* Effect.either(produce)
    if (Either.isLeft(produced)) {
      const failure = produced.left
      const reason = failure._tag === "SummaryRefused" ? `guard:${failure.reason}: ${failure.detail}` : failure.message
      yield* ctx.run(
        stream,
        () => Either.right<ReadonlyArray<WindowEvent.Draft>>([{ _tag: "CompactionFailed", tier: job.tier, reason }]),
        by(`TieredCompaction.${job.tier}`)
      )
      return yield* Effect.fail(produced.left)
    }
    const summaryText = produced.right
    const [summary] = yield* ctx.prepare([{ role: "user", parts: [Message.text(summaryText)] }], "summary")
    if (summary === undefined) return yield* Effect.dieMessage("prepare returned no message")
    const appended = yield* Effect.either(
      ctx.run(
        stream,
        (current) => {
          const present = new Set(current.history.map((message) => message.id))
          const missing = plan.removeIds.filter((id) => !present.has(id))
          if (missing.length > 0) return Either.left(new Stale({ missing }))
          return Either.right<ReadonlyArray<WindowEvent.Draft>>([
            {
              _tag: "Compacted",
              tier: job.tier,
              summary,
              removedIds: plan.removeIds,
              carryOver: summaryText,
              throughVersion: current.version,
              cooldownTurns: job.cooldownTurns,
              receipt: Receipt.draft({ reason: job.reason ?? `${job.tier} compaction` })
            }
          ])
        },
        by(`TieredCompaction.${job.tier}`)
      )
    )
    if (Either.isLeft(appended)) {
      const error = appended.left
      if (error._tag === "Stale") {
        return {
          _tag: "NoChange",
          reason: `stale: ${error.missing.length} message(s) to remove left the window meanwhile`,
          window: yield* ctx.load(stream)
        } as const
      }
      return yield* Effect.fail(error)
    }
    const result = {
      _tag: "Compacted",
      tier: job.tier,
      window: appended.right.window,
      events: appended.right.events,
      summary
    } as const
    if (hooks.persist !== undefined) yield* hooks.persist(result)
    return result
  })
