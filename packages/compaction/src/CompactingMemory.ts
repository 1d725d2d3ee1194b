/**
 * A `ConversationMemory` that compacts. Once a conversation's unsummarized messages pass
 * `triggerTokens`, the oldest of them are summarized with a `Compactor` and `load` returns
 * `[summary, ...kept]` from then on; the next compaction rolls the summary forward.
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
import { Compactor, ContextService, ConversationMemory, type Message, ToolPairs, type WindowEvent } from "@ctxlog/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { by } from "./internal/metadata.js"

/** When and how much to compact. @since 0.1.0 */
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

/** Check a policy: non-negative integer token bounds with `keepTokens <= triggerTokens`. @since 0.1.0 */
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

/** Wrap a memory with compaction. @since 0.1.0 */
export const make = (
  inner: ConversationMemory.ConversationMemory.Service,
  policy: Policy,
  compactor: Compactor.Compactor.Service
): Effect.Effect<ConversationMemory.ConversationMemory.Service, InvalidPolicy, ContextService.ContextService> =>
  Effect.gen(function* () {
    yield* validate(policy)
    const ctx = yield* ContextService.ContextService
    const streamOf = policy.streamOf ?? defaultStreamOf
    const timeout = Duration.decode(policy.compactorTimeout ?? Duration.seconds(120))
    // Conversations whose compaction is running now, in this process.
    const inFlight = yield* Ref.make<ReadonlySet<string>>(new Set())

    const memoryError = (conversationId: string, operation: string) => (error: { readonly message: string }) =>
      new ConversationMemory.MemoryError({ conversationId, operation, detail: error.message })

    const load = (
      conversationId: string
    ): Effect.Effect<ReadonlyArray<Message.Message>, ConversationMemory.MemoryError> =>
      Effect.gen(function* () {
        const stream = streamOf(conversationId)
        const all = yield* inner.load(conversationId)
        const state = yield* ctx.load(stream).pipe(Effect.mapError(memoryError(conversationId, "load")))
        const watermark = state.watermark ?? 0
        const summary = state.history.find((message) => message.kind === "summary")
        const rest = all.slice(watermark)
        const current = summary === undefined ? rest : [summary, ...rest]
        if (tokensOf(rest) <= policy.triggerTokens) return current
        const cut = cutIndex(rest, policy.keepTokens)
        if (cut === 0) return current
        const drive = yield* Ref.modify(inFlight, (running) =>
          running.has(conversationId) ? [false, running] : [true, new Set([...running, conversationId])]
        )
        // Someone else is compacting this conversation: answer at once with the previous summary.
        if (!drive) return current
        return yield* Effect.gen(function* () {
          const compacted = rest.slice(0, cut)
          const output = yield* compactor
            .compact({
              messages: compacted,
              previousSummary: state.carryOver,
              maxSummaryTokens: policy.maxSummaryTokens ?? 1024
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
                ctx
                  .run(
                    stream,
                    () =>
                      Either.right<ReadonlyArray<WindowEvent.Draft>>([
                        { _tag: "CompactionFailed", tier: "memory", reason: error.message }
                      ]),
                    by("CompactingMemory.compact")
                  )
                  .pipe(Effect.ignore)
              ),
              Effect.mapError(memoryError(conversationId, "compact"))
            )
          const [message] = yield* ctx.prepare(
            [{ role: "user", parts: [{ type: "text", text: output.summary }] }],
            "summary"
          )
          if (message === undefined) return yield* Effect.dieMessage("prepare returned no message")
          const outcome = yield* ctx
            .run(
              stream,
              (window) =>
                // Another process moved the watermark meanwhile: keep its result, write nothing.
                (window.watermark ?? 0) !== watermark
                  ? Either.right<ReadonlyArray<WindowEvent.Draft>>([])
                  : Either.right<ReadonlyArray<WindowEvent.Draft>>([
                      {
                        _tag: "Compacted",
                        tier: "memory",
                        summary: message,
                        removedIds: [...(summary === undefined ? [] : [summary.id]), ...compacted.map((m) => m.id)],
                        carryOver: output.summary,
                        throughVersion: watermark + cut,
                        cooldownTurns: 0
                      }
                    ]),
              by("CompactingMemory.compact")
            )
            .pipe(Effect.mapError(memoryError(conversationId, "compact")))
          if (outcome.events.length === 0) return yield* load(conversationId)
          // The summary as the window holds it (with its origin), exactly what later loads return.
          const stored = outcome.window.history.find((candidate) => candidate.id === message.id) ?? message
          return [stored, ...rest.slice(cut)]
        }).pipe(
          Effect.ensuring(
            Ref.update(inFlight, (running) => new Set([...running].filter((id) => id !== conversationId)))
          )
        )
      })

    const clear = (conversationId: string) =>
      Effect.gen(function* () {
        yield* inner.clear(conversationId)
        yield* ctx
          .run(
            streamOf(conversationId),
            (window) =>
              Either.right<ReadonlyArray<WindowEvent.Draft>>(
                window.watermark === null && window.history.length === 0 ? [] : [{ _tag: "ConversationReset" }]
              ),
            by("CompactingMemory.clear")
          )
          .pipe(Effect.mapError(memoryError(conversationId, "clear")))
      })

    const service: ConversationMemory.ConversationMemory.Service = {
      load: (conversationId) => load(conversationId),
      append: inner.append,
      clear
    }
    return service
  })

/**
 * The compacting memory over the `ConversationMemory` in context (the inner one) and the `Compactor`
 * in context.
 * @since 0.1.0
 */
export const layer = (
  policy: Policy
): Layer.Layer<
  ConversationMemory.ConversationMemory,
  InvalidPolicy,
  ConversationMemory.ConversationMemory | Compactor.Compactor | ContextService.ContextService
> =>
  Layer.effect(
    ConversationMemory.ConversationMemory,
    Effect.gen(function* () {
      const inner = yield* ConversationMemory.ConversationMemory
      const compactor = yield* Compactor.Compactor
      return yield* make(inner, policy, compactor)
    })
  )
