/**
 * A `ConversationMemory` that compacts, whatever decides what is kept. It wraps a
 * history policy (`ConversationMemory.HistoryPolicy`: the memory package's sliding or token window, or a user's own `select`):
 * the policy picks what stays verbatim from the messages after the watermark, everything older than
 * the first kept message is demoted into the summary (with a `Compactor`), and `load` returns
 * `[summary, ...kept]`; the next compaction rolls the summary forward. The token policy of
 * {@link Policy} (`triggerTokens` / `keepTokens`) is one such policy ({@link tokenPolicy}).
 *
 * The summary and the watermark (how many of the inner memory's messages the summary covers) are
 * events (`Compacted`, tier `memory`) on a stream of their own, so a restart does not compact the same
 * prefix again. Concurrent loads of one conversation run the compactor once: the first caller drives
 * it, the others get the previous summary at once. A compactor error goes only to the caller that
 * drove it (and is recorded as `CompactionFailed`); the watermark stays, so the next load retries.
 *
 * The inner memory must return the whole conversation, in order (append-only): the watermark counts
 * its messages.
 *
 * @since 0.1.0
 */
import {
  Compactor,
  ContextService,
  ConversationMemory,
  Message,
  Receipt,
  ToolPairs,
  type WindowEvent
} from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { by } from "./internal/metadata.js"
import * as SummaryGuard from "./SummaryGuard.js"

/** Settings of a compacting memory besides its policy. @since 0.1.0 */
export interface Options {
  /** Passed to the compactor (default 1024). */
  readonly maxSummaryTokens?: number | undefined
  /** How long one compactor call may take (default 120 seconds). */
  readonly compactorTimeout?: Duration.DurationInput | undefined
  /** The stream holding a conversation's compaction events (default `<conversationId>/compaction`). */
  readonly streamOf?: ((conversationId: string) => string) | undefined
  /**
   * Settings of the guards every summary passes before it is written (`SummaryGuard`, issue 39); a
   * `SummaryGuard.Policy` in context adds to them. A refused summary is recorded (`CompactionFailed`,
   * `guard:<reason>: …`) and the load serves the history uncompacted.
   */
  readonly guard?: Pick<SummaryGuard.Context, "pinnedIdentifiers" | "keepUserAsk" | "guards"> | undefined
}

/** The token policy: when and how much to compact, by tokens. @since 0.1.0 */
export interface Policy {
  /** Compact once the messages after the watermark pass this many tokens. */
  readonly triggerTokens: number
  /** Tokens of the newest messages kept verbatim after a compaction (at most `triggerTokens`). */
  readonly keepTokens: number
  /** Passed to the compactor (default 1024). */
  readonly maxSummaryTokens?: number
  /** How long one compactor call may take (default 120 seconds). */
  readonly compactorTimeout?: Duration.DurationInput
  /** The stream holding a conversation's compaction events (default `<conversationId>/compaction`). */
  readonly streamOf?: (conversationId: string) => string
}

/** A policy setting is out of range. @since 0.1.0 */
export class InvalidPolicy extends Schema.TaggedError<InvalidPolicy>()("InvalidPolicy", {
  field: Schema.String,
  value: Schema.Unknown,
  detail: Schema.String
}) {
  override get message(): string {
    return `compacting memory policy: ${this.field} = ${JSON.stringify(this.value)}: ${this.detail}`
  }
}

/** Check a token policy: non-negative integer token bounds with `keepTokens <= triggerTokens`. @since 0.1.0 */
export const validate = (policy: Policy): Either.Either<Policy, InvalidPolicy> => {
  const bad = (field: string, value: unknown, detail: string) =>
    Either.left(new InvalidPolicy({ field, value, detail }))
  if (!Number.isInteger(policy.triggerTokens) || policy.triggerTokens < 0) {
    return bad("triggerTokens", policy.triggerTokens, "must be a non-negative integer")
  }
  if (!Number.isInteger(policy.keepTokens) || policy.keepTokens < 0 || policy.keepTokens > policy.triggerTokens) {
    return bad(
      "keepTokens",
      policy.keepTokens,
      `must be an integer between 0 and triggerTokens (${policy.triggerTokens})`
    )
  }
  if (
    policy.maxSummaryTokens !== undefined &&
    (!Number.isInteger(policy.maxSummaryTokens) || policy.maxSummaryTokens <= 0)
  ) {
    return bad("maxSummaryTokens", policy.maxSummaryTokens, "must be a positive integer")
  }
  return Either.right(policy)
}

/** The default compaction stream of a conversation. @since 0.1.0 */
export const defaultStreamOf = (conversationId: string): string => `${conversationId}/compaction`

const tokensOf = (messages: ReadonlyArray<Message.Message>): number =>
  messages.reduce((total, message) => total + message.tokens, 0)

/**
 * Where to cut `messages` so the tail after the cut fits `keepTokens` and no tool call before the cut
 * has its result after it. Returns 0 when nothing can be cut.
 * @since 0.1.0
 */
export const cutIndex = (messages: ReadonlyArray<Message.Message>, keepTokens: number): number => {
  let tail = 0
  let cut = messages.length
  while (cut > 0) {
    const previous = messages[cut - 1]
    if (previous === undefined || tail + previous.tokens > keepTokens) break
    tail += previous.tokens
    cut -= 1
  }
  // Move forward to a cut no tool pair crosses: every result after it answers a call after it.
  for (; cut < messages.length; cut++) {
    if (ToolPairs.problems(messages.slice(cut)).every((problem) => problem._tag !== "OrphanResult")) break
  }
  return cut
}

/**
 * The token policy as a memory policy: everything while the messages stay within `triggerTokens`;
 * past it, the newest messages within `keepTokens` (never cutting between a call and its result).
 * @since 0.1.0
 */
export const tokenPolicy = (policy: Policy): ConversationMemory.HistoryPolicy => ({
  name: `tokens(trigger ${policy.triggerTokens}, keep ${policy.keepTokens})`,
  select: (history) =>
    tokensOf(history) <= policy.triggerTokens ? history : history.slice(cutIndex(history, policy.keepTokens))
})

const isTokenPolicy = (policy: Policy | ConversationMemory.HistoryPolicy): policy is Policy => "triggerTokens" in policy

const checkOptions = (options: Options): Either.Either<Options, InvalidPolicy> =>
  options.maxSummaryTokens !== undefined &&
  (!Number.isInteger(options.maxSummaryTokens) || options.maxSummaryTokens <= 0)
    ? Either.left(
        new InvalidPolicy({
          field: "maxSummaryTokens",
          value: options.maxSummaryTokens,
          detail: "must be a positive integer"
        })
      )
    : Either.right(options)

/** A compacting memory: a `ConversationMemory` plus what it wraps and its per-process bookkeeping. @since 0.1.0 */
export interface Service extends ConversationMemory.ConversationMemory.Service {
  /** The wrapped memory (it holds the whole conversation). */
  readonly inner: ConversationMemory.ConversationMemory.Service
  /** What is kept verbatim; the rest is demoted to the summary. */
  readonly policy: ConversationMemory.HistoryPolicy
  readonly compactor: Compactor.Compactor.Service
  /**
   * Drop this process's state for a conversation (the seed's `forget`, to bound memory): it is no longer
   * tracked. Nothing is written: the persisted summary and watermark stay, so the next load serves the
   * same summary without calling the compactor. To start the compaction over, use `clear`.
   */
  readonly forget: (conversationId: string) => Effect.Effect<void, ConversationMemory.MemoryError>
  /** Conversations this memory loaded or appended to in this process and has not forgotten or cleared. */
  readonly trackedConversations: () => Effect.Effect<ReadonlyArray<string>>
  /** What this memory is made of, as one value (the seed's `into_inner`). */
  readonly parts: Parts
}

/** The parts of a compacting memory as one value: rebuild it with `make(inner, policy, compactor, options)`. @since 0.1.0 */
export interface Parts {
  readonly inner: ConversationMemory.ConversationMemory.Service
  readonly policy: ConversationMemory.HistoryPolicy
  readonly compactor: Compactor.Compactor.Service
  readonly options: Options
}

/** The compacting memory, for callers that need more than `ConversationMemory`. @since 0.1.0 */
export class CompactingMemory extends Context.Tag("@ctxlog/compaction/CompactingMemory")<CompactingMemory, Service>() {}

/**
 * Wrap a memory with compaction under a policy: a memory policy (`{ name, select }`) or the token
 * policy (`{ triggerTokens, keepTokens, ... }`, whose own settings then act as the options).
 * @since 0.1.0
 */
export const make = (
  inner: ConversationMemory.ConversationMemory.Service,
  policy: Policy | ConversationMemory.HistoryPolicy,
  compactor: Compactor.Compactor.Service,
  options: Options = {}
): Effect.Effect<Service, InvalidPolicy, ContextService.ContextService> =>
  Effect.gen(function* () {
    const settings: Options = isTokenPolicy(policy)
      ? {
          maxSummaryTokens: policy.maxSummaryTokens ?? options.maxSummaryTokens,
          compactorTimeout: policy.compactorTimeout ?? options.compactorTimeout,
          streamOf: policy.streamOf ?? options.streamOf,
          guard: options.guard
        }
      : options
    if (isTokenPolicy(policy)) yield* validate(policy)
    yield* checkOptions(settings)
    const memoryPolicy = isTokenPolicy(policy) ? tokenPolicy(policy) : policy
    const ctx = yield* ContextService.ContextService
    const streamOf = settings.streamOf ?? defaultStreamOf
    const timeout = Duration.decode(settings.compactorTimeout ?? Duration.seconds(120))
    // Conversations whose compaction is running now, in this process.
    const inFlight = yield* Ref.make<ReadonlySet<string>>(new Set())
    const tracked = yield* Ref.make<ReadonlySet<string>>(new Set())
    const track = (conversationId: string) =>
      Ref.update(tracked, (current) => (current.has(conversationId) ? current : new Set([...current, conversationId])))
    // The loads that decided not to compact since this memory's last write, per conversation (ADR 0148):
    // folded into one `CompactionDecided` (step `load`, tier `memory`) in the next event this memory
    // writes for the conversation — a load that compacts nothing writes nothing, as before.
    type Declined = ReadonlyMap<string, { readonly loads: number; readonly usedTokens: number }>
    const declined = yield* Ref.make<Declined>(new Map())
    const noteDeclined = (conversationId: string, usedTokens: number) =>
      Ref.update(
        declined,
        (current) =>
          new Map([...current, [conversationId, { loads: (current.get(conversationId)?.loads ?? 0) + 1, usedTokens }]])
      )
    /** The folded decision to write with the memory's next event, taken (cleared) when written. */
    const takeDeclined = (conversationId: string) =>
      Ref.modify(declined, (current): readonly [ReadonlyArray<WindowEvent.Draft>, Declined] => {
        const noted = current.get(conversationId)
        if (noted === undefined) return [[], current]
        const rest = new Map(current)
        rest.delete(conversationId)
        const token = isTokenPolicy(policy)
        return [
          [
            {
              _tag: "CompactionDecided",
              step: "load",
              budgetTokens: token ? policy.triggerTokens : 0,
              decisions: [
                {
                  tier: "memory",
                  reason: token ? "below-threshold" : "nothing-to-do",
                  usedTokens: noted.usedTokens,
                  thresholdTokens: token ? policy.triggerTokens : 0,
                  detail: `policy ${memoryPolicy.name}: ${noted.loads} load(s) kept every message`
                }
              ]
            }
          ],
          rest
        ]
      })
    const untrack = (conversationId: string) =>
      Ref.update(tracked, (current) => new Set([...current].filter((id) => id !== conversationId)))

    const memoryError = (conversationId: string, operation: string) => (error: { readonly message: string }) =>
      new ConversationMemory.MemoryError({ conversationId, operation, detail: error.message })

    const load = (
      conversationId: string
    ): Effect.Effect<ReadonlyArray<Message.Message>, ConversationMemory.MemoryError> =>
      Effect.gen(function* () {
        yield* track(conversationId)
        const stream = streamOf(conversationId)
        const all = yield* inner.load(conversationId)
        const state = yield* ctx.load(stream).pipe(Effect.mapError(memoryError(conversationId, "load")))
        const watermark = state.watermark ?? 0
        const summary = state.history.find((message) => message.kind === "summary")
        const rest = all.slice(watermark)
        // No policy demotes or drops a tool result the model has not answered yet, nor its call: they
        // stay whole (a memory returns messages, it does not rewrite them). Nor the user's latest ask
        // (issue 39): it stays verbatim, and so does everything after it.
        const ask = Message.latestUserAsk(rest)
        const keep = ToolPairs.unseenPairs(rest)
        const kept = ToolPairs.withKept(
          rest,
          memoryPolicy.select(rest),
          ask === undefined ? keep : new Set([...keep, ask.id])
        )
        const current = summary === undefined ? kept : [summary, ...kept]
        // Everything before the first kept message is demoted to the summary.
        const first = kept[0]
        const cut = first === undefined ? rest.length : rest.findIndex((message) => message.id === first.id)
        if (cut <= 0) {
          yield* noteDeclined(
            conversationId,
            rest.reduce((sum, message) => sum + message.tokens, 0)
          )
          return current
        }
        const drive = yield* Ref.modify(inFlight, (running) =>
          running.has(conversationId) ? [false, running] : [true, new Set([...running, conversationId])]
        )
        // Someone else is compacting this conversation: answer at once, bounded by the policy.
        if (!drive) return current
        return yield* Effect.gen(function* () {
          const compacted = rest.slice(0, cut)
          const output = yield* compactor
            .compact({
              messages: compacted,
              previousSummary: state.carryOver,
              maxSummaryTokens: settings.maxSummaryTokens ?? 1024
            })
            .pipe(
              Effect.timeoutFail({
                duration: timeout,
                onTimeout: () =>
                  new Compactor.CompactionError({
                    compactor: compactor.name,
                    reason: "timeout",
                    detail: `no summary within ${Duration.format(timeout)}`
                  })
              }),
              Effect.tapError((error) =>
                Effect.flatMap(takeDeclined(conversationId), (decided) =>
                  ctx.run(
                    stream,
                    () =>
                      Either.right<ReadonlyArray<WindowEvent.Draft>>([
                        ...decided,
                        { _tag: "CompactionFailed", tier: "memory", reason: error.message }
                      ]),
                    by("CompactingMemory.compact")
                  )
                ).pipe(Effect.ignore)
              ),
              Effect.mapError(memoryError(conversationId, "compact"))
            )
          // The same guards as every other summarizing path, before anything is written (issue 39). A
          // refusal is recorded and the history is served uncompacted: no bad summary, nothing lost.
          const refused = yield* Effect.flip(
            SummaryGuard.guard(output.summary, {
              folded: summary === undefined ? compacted : [summary, ...compacted],
              kept,
              ...settings.guard
            })
          ).pipe(Effect.option)
          if (refused._tag === "Some") {
            const failure = refused.value
            const decided = yield* takeDeclined(conversationId)
            yield* ctx
              .run(
                stream,
                () =>
                  Either.right<ReadonlyArray<WindowEvent.Draft>>([
                    ...decided,
                    { _tag: "CompactionFailed", tier: "memory", reason: `guard:${failure.reason}: ${failure.detail}` }
                  ]),
                by("CompactingMemory.compact")
              )
              .pipe(Effect.mapError(memoryError(conversationId, "compact")))
            return summary === undefined ? rest : [summary, ...rest]
          }
          const [message] = yield* ctx.prepare(
            [{ role: "user", parts: [{ type: "text", text: output.summary }] }],
            "summary"
          )
          if (message === undefined) return yield* Effect.dieMessage("prepare returned no message")
          const folded = yield* takeDeclined(conversationId)
          const outcome = yield* ctx
            .run(
              stream,
              (window) =>
                // Another process moved the watermark meanwhile: keep its result, write nothing.
                (window.watermark ?? 0) !== watermark
                  ? Either.right<ReadonlyArray<WindowEvent.Draft>>([])
                  : Either.right<ReadonlyArray<WindowEvent.Draft>>([
                      ...folded,
                      {
                        _tag: "Compacted",
                        tier: "memory",
                        summary: message,
                        removedIds: [...(summary === undefined ? [] : [summary.id]), ...compacted.map((m) => m.id)],
                        carryOver: output.summary,
                        throughVersion: watermark + cut,
                        cooldownTurns: 0,
                        // The folded messages live in the inner memory, not in this stream's window: the
                        // receipt takes their tokens and origins from them.
                        receipt: Receipt.draft({
                          reason: `policy ${memoryPolicy.name}: ${cut} message(s) before the kept ones`,
                          replacedTokens: (summary?.tokens ?? 0) + compacted.reduce((sum, m) => sum + m.tokens, 0),
                          sources: [
                            ...new Set(
                              [...(summary === undefined ? [] : [summary]), ...compacted].flatMap((m) =>
                                m.origin === undefined ? [] : [m.origin.eventId]
                              )
                            )
                          ]
                        })
                      }
                    ]),
              by("CompactingMemory.compact")
            )
            .pipe(Effect.mapError(memoryError(conversationId, "compact")))
          if (outcome.events.length === 0) return yield* load(conversationId)
          // The summary as the window holds it (with its origin), exactly what later loads return.
          const stored = outcome.window.history.find((candidate) => candidate.id === message.id) ?? message
          return [stored, ...kept]
        }).pipe(
          Effect.ensuring(
            Ref.update(inFlight, (running) => new Set([...running].filter((id) => id !== conversationId)))
          )
        )
      })

    const resetState = (conversationId: string, operation: string) =>
      ctx
        .run(
          streamOf(conversationId),
          (window) =>
            Either.right<ReadonlyArray<WindowEvent.Draft>>(
              window.watermark === null && window.history.length === 0 ? [] : [{ _tag: "ConversationReset" }]
            ),
          by(`CompactingMemory.${operation}`)
        )
        .pipe(Effect.mapError(memoryError(conversationId, operation)))

    const clear = (conversationId: string) =>
      Effect.gen(function* () {
        yield* inner.clear(conversationId)
        yield* resetState(conversationId, "clear")
        yield* untrack(conversationId)
      })

    // In-process state only: the compaction stream (summary, watermark) is the durable state and stays.
    const forget = (conversationId: string) => untrack(conversationId)

    return {
      load: (conversationId) => load(conversationId),
      append: (conversationId, messages) =>
        Effect.zipRight(track(conversationId), inner.append(conversationId, messages)),
      clear,
      inner,
      policy: memoryPolicy,
      compactor,
      forget,
      trackedConversations: () => Effect.map(Ref.get(tracked), (ids) => [...ids]),
      parts: { inner, policy: memoryPolicy, compactor, options: settings }
    }
  })

/**
 * The compacting memory over the `ConversationMemory` in context (the inner one) and the `Compactor`
 * in context, as both `ConversationMemory` and `CompactingMemory`.
 * @since 0.1.0
 */
export const layer = (
  policy: Policy | ConversationMemory.HistoryPolicy,
  options: Options = {}
): Layer.Layer<
  ConversationMemory.ConversationMemory | CompactingMemory,
  InvalidPolicy,
  ConversationMemory.ConversationMemory | Compactor.Compactor | ContextService.ContextService
> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const inner = yield* ConversationMemory.ConversationMemory
      const compactor = yield* Compactor.Compactor
      const service = yield* make(inner, policy, compactor, options)
      return Context.make(ConversationMemory.ConversationMemory, service).pipe(Context.add(CompactingMemory, service))
    })
  )
