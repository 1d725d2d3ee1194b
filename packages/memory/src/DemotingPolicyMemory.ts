/**
 * A `ConversationMemory` that tells a demotion hook what its policy evicted (the seed's
 * `DemotingPolicyMemory`). It wraps an inner memory holding the whole conversation (append-only) and a
 * `ConversationMemoryPolicy`: on `load`, the policy picks what stays from the messages after the
 * watermark, and everything before the first kept message is evicted. The hook receives exactly those
 * messages, each once and in order, and the watermark then moves past them. The watermark is an event
 * (`Compacted`, tier `memory`, no summary) on a stream of its own, like `CompactingMemory`'s, so a
 * restart never hands the hook a message twice.
 *
 * The hook runs before the watermark is recorded (at least once): a hook that fails is retried on the
 * next load with the same messages. Within a process, loads run one at a time, so the hook never
 * sees a message twice. Two processes racing on one conversation may both call it; the ready `recallHook` is
 * idempotent (one document per message id).
 *
 * How it stacks with `@ctxlog/compaction`'s `CompactingMemory`: both need an append-only inner memory
 * (their watermarks count its messages). To index evicted messages *and* summarize them, put
 * `CompactingMemory` above a demoting memory made with `serve: "all"` and give both the same policy:
 * the demoting memory observes (its load serves the whole conversation and calls the hook), the
 * compacting memory above it summarizes the same prefix. With the default `serve: "kept"` the demoting
 * memory is the top layer and serves what the policy keeps.
 *
 * @since 0.1.0
 */
import { ContextService, ConversationMemory, Message, Receipt, ToolPairs, type WindowEvent } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { ConversationMemoryPolicy } from "./ConversationMemoryPolicy.js"
import { RecallIndex } from "./RecallIndex.js"

/** A demotion hook failed; the watermark stays, so the next load retries it. @since 0.1.0 */
export class DemotionError extends Schema.TaggedError<DemotionError>()("DemotionError", {
  hook: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `demotion hook ${this.hook} failed: ${this.detail}`
  }
}

/** Receives the messages a policy evicted, oldest first. @since 0.1.0 */
export interface DemotionHook {
  /** A readable name, e.g. `recall`. */
  readonly name: string
  readonly demote: (
    conversationId: string,
    messages: ReadonlyArray<Message.Message>
  ) => Effect.Effect<void, DemotionError>
}

/** Settings of a demoting memory. @since 0.1.0 */
export interface Options {
  /** The stream holding a conversation's demotion watermark (default `<conversationId>/demotion`). */
  readonly streamOf?: (conversationId: string) => string
  /**
   * What `load` returns: the messages the policy keeps (`"kept"`, the default), or the whole inner
   * conversation (`"all"`: the hook only observes, for a `CompactingMemory` stacked above).
   */
  readonly serve?: "kept" | "all"
}

/** A demoting memory: a `ConversationMemory` plus what it is made of. @since 0.1.0 */
export interface Service extends ConversationMemory.ConversationMemory.Service {
  readonly inner: ConversationMemory.ConversationMemory.Service
  readonly policy: ConversationMemoryPolicy
  readonly hook: DemotionHook
  /** How many of the inner conversation's messages the hook has been given (the persisted watermark). */
  readonly watermark: (conversationId: string) => Effect.Effect<number, ConversationMemory.MemoryError>
}

/** The demoting memory, for callers that need more than `ConversationMemory`. @since 0.1.0 */
export class DemotingPolicyMemory extends Context.Tag("@ctxlog/memory/DemotingPolicyMemory")<
  DemotingPolicyMemory,
  Service
>() {}

/** The default demotion stream of a conversation. @since 0.1.0 */
export const defaultStreamOf = (conversationId: string): string => `${conversationId}/demotion`

const actor = { actor: "@ctxlog/memory/DemotingPolicyMemory" }

/** Wrap a memory so a hook sees what `policy` evicts. @since 0.1.0 */
export const make = (
  inner: ConversationMemory.ConversationMemory.Service,
  policy: ConversationMemoryPolicy,
  hook: DemotionHook,
  options: Options = {}
): Effect.Effect<Service, never, ContextService.ContextService> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const streamOf = options.streamOf ?? defaultStreamOf
    const serveAll = options.serve === "all"
    // Loads run one at a time in a process, so concurrent loads never hand the hook a message twice
    // (a lock per conversation would be finer; one per memory keeps "each once, in order" simple).
    const lock = yield* Effect.makeSemaphore(1)

    const failure = (conversationId: string, operation: string) => (error: { readonly message: string }) =>
      new ConversationMemory.MemoryError({ conversationId, operation, detail: error.message })

    const watermark = (conversationId: string) =>
      ctx.load(streamOf(conversationId)).pipe(
        Effect.map((window) => window.watermark ?? 0),
        Effect.mapError(failure(conversationId, "load"))
      )

    const load = (conversationId: string) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const all = yield* inner.load(conversationId)
          const mark = yield* watermark(conversationId)
          const rest = all.slice(mark)
          // As every other removal path: no policy demotes a tool result the model has not seen, its
          // call, or a call still waiting for its result (issue 39); they stay whole.
          const kept = ToolPairs.withKept(rest, policy.select(rest), ToolPairs.unseenPairs(rest))
          const first = kept[0]
          const cut = first === undefined ? rest.length : rest.findIndex((message) => message.id === first.id)
          if (cut > 0) {
            const demoted = rest.slice(0, cut)
            yield* hook.demote(conversationId, demoted).pipe(Effect.mapError(failure(conversationId, "demote")))
            yield* ctx
              .run(
                streamOf(conversationId),
                (window) =>
                  Either.right<ReadonlyArray<WindowEvent.Draft>>(
                    (window.watermark ?? 0) !== mark
                      ? []
                      : [
                          {
                            _tag: "Compacted",
                            tier: "memory",
                            summary: null,
                            removedIds: [],
                            carryOver: null,
                            throughVersion: mark + cut,
                            cooldownTurns: 0,
                            // The demoted messages live in the inner memory: the receipt names them.
                            receipt: Receipt.draft({
                              reason: `policy ${policy.name} demoted ${cut} message(s)`,
                              messageIds: demoted.map((message) => message.id),
                              replacedTokens: demoted.reduce((total, message) => total + message.tokens, 0),
                              sources: [
                                ...new Set(
                                  demoted.flatMap((message) =>
                                    message.origin === undefined ? [] : [message.origin.eventId]
                                  )
                                )
                              ]
                            })
                          }
                        ]
                  ),
                actor
              )
              .pipe(Effect.mapError(failure(conversationId, "demote")))
          }
          return serveAll ? all : kept
        })
      )

    const clear = (conversationId: string) =>
      Effect.gen(function* () {
        yield* inner.clear(conversationId)
        yield* ctx
          .run(
            streamOf(conversationId),
            (window) =>
              Either.right<ReadonlyArray<WindowEvent.Draft>>(
                window.watermark === null ? [] : [{ _tag: "ConversationReset" }]
              ),
            actor
          )
          .pipe(Effect.mapError(failure(conversationId, "clear")))
      })

    return {
      load,
      append: (conversationId, messages) => inner.append(conversationId, messages),
      clear,
      inner,
      policy,
      hook,
      watermark
    }
  })

/**
 * The ready hook: each evicted message becomes a recall document of `owner` (id
 * `<conversationId>/<messageId>`, so a repeated call replaces rather than duplicates), found by
 * `RecallIndex.search` with `documentsOf(owner)` and by `FullTextRecall`'s document recall.
 * @since 0.1.0
 */
export const recallHook = (index: RecallIndex.Service, owner: string): DemotionHook => ({
  name: "recall",
  demote: (conversationId, messages) =>
    Effect.forEach(
      messages,
      (message) => {
        const text = Message.textOf(message).trim()
        return text.length === 0
          ? Effect.void
          : index
              .ingestDocument(owner, `${conversationId}/${message.id}`, `${message.role}: ${text}`)
              .pipe(Effect.mapError((error) => new DemotionError({ hook: "recall", detail: error.message })))
      },
      { discard: true }
    )
})

/**
 * The demoting memory over the `ConversationMemory` in context, as both `ConversationMemory` and
 * `DemotingPolicyMemory`.
 * @since 0.1.0
 */
export const layer = (
  policy: ConversationMemoryPolicy,
  hook: DemotionHook,
  options: Options = {}
): Layer.Layer<
  ConversationMemory.ConversationMemory | DemotingPolicyMemory,
  never,
  ConversationMemory.ConversationMemory | ContextService.ContextService
> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const inner = yield* ConversationMemory.ConversationMemory
      const service = yield* make(inner, policy, hook, options)
      return Context.make(ConversationMemory.ConversationMemory, service).pipe(
        Context.add(DemotingPolicyMemory, service)
      )
    })
  )

/** The recall hook over the `RecallIndex` in context. @since 0.1.0 */
export const layerRecall = (
  policy: ConversationMemoryPolicy,
  owner: string,
  options: Options = {}
): Layer.Layer<
  ConversationMemory.ConversationMemory | DemotingPolicyMemory,
  never,
  ConversationMemory.ConversationMemory | ContextService.ContextService | RecallIndex
> => Layer.unwrapEffect(Effect.map(RecallIndex, (index) => layer(policy, recallHook(index, owner), options)))
