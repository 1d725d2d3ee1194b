// Shared by the tests and their child processes: no vitest imports here (a child runs outside the runner).
import { Compactor, ContextService, ConversationMemory, Ids, Message, RecallSource, TokenCounter } from "@ctxlog/core"
import { CompactingMemory, TemplateCompactor, type TieredCompaction } from "@ctxlog/compaction"
import { SqliteEventLog } from "@ctxlog/memory"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"

/** How often the counting compactor was called. */
export class CompactorCalls extends Context.Tag("integration/CompactorCalls")<CompactorCalls, Ref.Ref<number>>() {}

/** The deterministic template compactor, counting its calls. */
export const countingCompactor: Layer.Layer<Compactor.Compactor | CompactorCalls> = Layer.effectContext(
  Effect.gen(function* () {
    const calls = yield* Ref.make(0)
    const inner = TemplateCompactor.make({ maxBytes: 2000 })
    const service: Compactor.Compactor.Service = {
      name: "counting",
      compact: (input) => Ref.update(calls, (n) => n + 1).pipe(Effect.zipRight(inner.compact(input)))
    }
    return Context.make(Compactor.Compactor, service).pipe(Context.add(CompactorCalls, calls))
  })
)

/** The inner memory: a conversation is the history of the stream of the same name. */
export const innerMemory: Layer.Layer<ConversationMemory.ConversationMemory, never, ContextService.ContextService> =
  Layer.effect(
    ConversationMemory.ConversationMemory,
    Effect.map(ContextService.ContextService, (ctx) => {
      const fail = (conversationId: string, operation: string) => (error: { readonly message: string }) =>
        new ConversationMemory.MemoryError({ conversationId, operation, detail: error.message })
      return {
        load: (id) =>
          ctx.load(id).pipe(
            Effect.map((window) => window.history),
            Effect.mapError(fail(id, "load"))
          ),
        append: (id, messages) =>
          ctx.appendMessages(id, messages).pipe(
            Effect.map((outcome) =>
              outcome.events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message] : []))
            ),
            Effect.mapError(fail(id, "append"))
          ),
        clear: (id) => ctx.clearHistory(id).pipe(Effect.asVoid, Effect.mapError(fail(id, "clear")))
      }
    })
  )

/** The compacting memory's policy of the restart test. */
export const policy: CompactingMemory.Policy = { triggerTokens: 1000, keepTokens: 400, maxSummaryTokens: 200 }

/** The tiered-compaction config of the restart test: 20 exchanges of `exchange` pass its Hard threshold. */
export const tiered: TieredCompaction.Config = { budget: 2000 }

/** `n` characters of filler text. */
export const filler = (n: number, seed = "x"): string => `${seed} `.repeat(Math.ceil(n / (seed.length + 1))).slice(0, n)

/** One user question, a tool round trip and an answer. */
export const exchange = (i: number): ReadonlyArray<Message.MessageInput> => [
  Message.user(`question ${i} about src/file${i}.ts ${filler(400)}`),
  Message.assistant("", [Message.toolCall(`call-${i}`, "read", { path: `src/file${i}.ts` })]),
  Message.tool(`call-${i}`, filler(300)),
  Message.assistant(`answer ${i}`)
]

/** The services of one session. */
export type Session =
  | ConversationMemory.ConversationMemory
  | CompactorCalls
  | Compactor.Compactor
  | ContextService.ContextService
  | SqliteEventLog.Services
  | TokenCounter.TokenCounter
  | Ids.Ids
  | RecallSource.RecallSource

/** Everything one process needs over one SQLite file: the window service, the log, the compacting memory. */
export const sessionLayer = (
  filename: string
): Layer.Layer<Session, CompactingMemory.InvalidPolicy | SqliteEventLog.OpenError> =>
  CompactingMemory.layer(policy).pipe(
    Layer.provide(innerMemory),
    Layer.provideMerge(countingCompactor),
    Layer.provideMerge(ContextService.layer()),
    Layer.provideMerge(SqliteEventLog.layer({ filename })),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerHeuristic(4), Ids.layerUuidV7, RecallSource.layerEmpty))
  )
