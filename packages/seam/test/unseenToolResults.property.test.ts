// Issue 20, part B: the newest tool result the model has not seen survives every removal path, whole or
// truncated. Random conversations (user interjections, turns stopped on tool results, huge single
// messages, renders and answers that make results seen) interleaved with every path that removes or
// rewrites history: trimToBudget, tiered compaction (soft, hard, fit), the mid-iteration soft tier,
// proactive compression, tool-output pruning, deferred tool-pair summaries (summarize, apply, flush),
// manual compaction, the seam pipeline, and a compacting conversation memory under a policy that keeps
// only the newest tool-pair group. The oracle is the test's own: the results of the last tool step,
// until an assistant message or a render follows them.
import { ContextService, type ConversationMemory, EventLog, Message, ToolPairs, type Window } from "@ctxlog/core"
import { CompactingMemory, DeferredSummaries, TieredCompaction, ToolOutputPruning } from "@ctxlog/compaction"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import { Compactor } from "@ctxlog/core"
import { SeamHost } from "../src/index.js"
import { coreLayer, recordingCompactor } from "./support.js"

const config = {
  budget: 3_000,
  cooldownTurns: 1,
  maxSummaryTokens: 200,
  prune: { keepRecent: 0, minChars: 100 }
} satisfies TieredCompaction.Config

const seamConfig = { thresholds: { level1: 600, level2: 1_800, level3: 100_000 }, verbatimWindow: 1 }

const layer = Layer.mergeAll(
  SeamHost.layerCompactor(seamConfig).pipe(Layer.provide(recordingCompactor())),
  recordingCompactor()
).pipe(Layer.provideMerge(coreLayer))

type Op =
  | { readonly op: "user"; readonly chars: number }
  | { readonly op: "answer"; readonly chars: number }
  | { readonly op: "tools"; readonly outputs: ReadonlyArray<number> }
  | {
      readonly op:
        | "render"
        | "turn"
        | "maybeCompact"
        | "mid"
        | "proactive"
        | "prune"
        | "summarizePairs"
        | "applyDeferred"
        | "flush"
        | "compactContext"
        | "seam"
        | "memory"
    }
  | { readonly op: "trim"; readonly budget: number }

/** Sizes from a few characters to a single message far over the whole budget. */
const size = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 1, max: 800 }) },
  { weight: 2, arbitrary: fc.integer({ min: 800, max: 6_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 12_000, max: 40_000 }) }
)

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant("user" as const), chars: size }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("answer" as const), chars: fc.integer({ min: 1, max: 600 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({ op: fc.constant("tools" as const), outputs: fc.array(size, { minLength: 1, maxLength: 3 }) })
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("trim" as const), budget: fc.integer({ min: 1, max: 4_000 }) }) },
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constantFrom(
        "render" as const,
        "turn" as const,
        "maybeCompact" as const,
        "mid" as const,
        "proactive" as const,
        "prune" as const,
        "summarizePairs" as const,
        "applyDeferred" as const,
        "flush" as const,
        "compactContext" as const,
        "seam" as const,
        "memory" as const
      )
    })
  }
)

const text = (chars: number, seed: string) => `${seed} `.repeat(Math.ceil(chars / (seed.length + 1))).slice(0, chars)

/** What the test expects to survive: the newest unseen result (its call id and original content). */
interface Unseen {
  readonly callId: string
  readonly content: string
}

/** The result is in `messages` whole or truncated to fit (head and tail around the marker), with its call. */
const survives = (messages: ReadonlyArray<Message.Message>, unseen: Unseen, after: string) => {
  const result = messages.flatMap(Message.toolResultsOf).find((part) => part.toolCallId === unseen.callId)
  assert.isDefined(result, `after ${after}: the unseen result ${unseen.callId} is gone`)
  if (result !== undefined && result.content !== unseen.content) {
    assert.include(result.content, "characters cut to fit the context window", `after ${after}: ${unseen.callId}`)
    const head = result.content.slice(0, result.content.indexOf("\n[... "))
    assert.isTrue(unseen.content.startsWith(head), `after ${after}: the head is the original's`)
  }
  assert.isTrue(
    messages.some((message) => Message.toolCallsOf(message).some((call) => call.id === unseen.callId)),
    `after ${after}: the call of ${unseen.callId} is gone`
  )
}

/** The conversation as appended (append-only): what a compacting memory wraps. */
const appendedMessages = (log: EventLog.EventLog.Service, stream: string) =>
  Effect.map(Stream.runCollect(log.read(stream)), (envelopes) =>
    Chunk.toReadonlyArray(envelopes).flatMap((envelope) =>
      envelope.event._tag === "MessageAppended" ? [envelope.event.message] : []
    )
  )

/** A policy that keeps only the newest tool-pair group: a user interjection alone, after a stopped turn. */
const newestGroup = {
  name: "newestGroup",
  select: (history: ReadonlyArray<Message.Message>) => ToolPairs.groups(history).at(-1) ?? []
}

describe("part B: the newest unseen tool result survives every removal path", () => {
  it.effect.prop(
    "after every step of a random conversation, the newest unseen tool result and its call are in the window (and in the memory's load), whole or truncated",
    [fc.array(opArb, { minLength: 1, maxLength: 30 })],
    ([ops]) =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const compactor = yield* Compactor.Compactor
        const log = yield* EventLog.EventLog
        const stream = `prop-${Math.random().toString(36).slice(2)}`
        const inner: ConversationMemory.ConversationMemory.Service = {
          load: () => appendedMessages(log, stream).pipe(Effect.orDie),
          append: () => Effect.succeed([]),
          clear: () => Effect.void
        }
        const memory = yield* CompactingMemory.make(inner, newestGroup, compactor)
        yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
        let call = 0
        let unseen: Unseen | undefined
        for (const op of ops) {
          yield* Effect.promise(yieldToEventLoop)
          let loaded: ReadonlyArray<Message.Message> | undefined
          switch (op.op) {
            case "user":
              yield* ctx.appendMessages(stream, [Message.user(text(op.chars, "u"))])
              break
            case "answer":
              yield* ctx.appendMessages(stream, [Message.assistant(text(op.chars, "a"))])
              unseen = undefined
              break
            case "tools": {
              const ids = op.outputs.map(() => `c${++call}`)
              const contents = op.outputs.map((chars, i) => `${ids[i]} ${text(chars, "o")}`)
              yield* ctx.appendMessages(stream, [
                Message.assistant(
                  "calling",
                  ids.map((id) => Message.toolCall(id, "bash", { id }))
                ),
                ...ids.map((id, i) => Message.tool(id, contents[i] ?? ""))
              ])
              // A turn stopped here: the model has not seen these results yet.
              unseen = { callId: ids[ids.length - 1] ?? "", content: contents[contents.length - 1] ?? "" }
              break
            }
            case "render":
              yield* ctx.run(stream, (window: Window.Window) =>
                Either.right([
                  { _tag: "PromptRendered", provider: "test", model: "m", tokens: window.tokens, sha256: "00" } as const
                ])
              )
              unseen = undefined
              break
            case "turn":
              yield* ctx.completeTurn(stream)
              break
            case "trim":
              yield* ctx.trimToBudget(stream, op.budget)
              break
            case "maybeCompact":
              yield* TieredCompaction.maybeCompact(stream, config)
              break
            case "mid":
              yield* TieredCompaction.maybeSoftCompactMidIteration(stream, config)
              break
            case "proactive":
              yield* TieredCompaction.maybeProactiveCompress(stream, config)
              break
            case "prune":
              yield* ToolOutputPruning.pruneToolOutputs(stream, { keepRecent: 0, minChars: 50 })
              break
            case "summarizePairs":
              yield* DeferredSummaries.maybeSummarizeToolPair(stream, { cutoffTokens: 100 })
              break
            case "applyDeferred":
              yield* DeferredSummaries.applyDeferredSummaries(stream)
              break
            case "flush":
              yield* DeferredSummaries.flushDeferredSummaries(stream)
              break
            case "compactContext":
              yield* TieredCompaction.compactContext(stream, 200, { keepTokens: 0 })
              break
            case "seam":
              yield* SeamHost.runSeamPipeline(stream)
              break
            case "memory":
              loaded = yield* memory.load(stream)
              break
          }
          const window = yield* ctx.load(stream)
          if (unseen !== undefined) {
            survives(window.history, unseen, op.op)
            if (loaded !== undefined) survives(loaded, unseen, "memory load")
          }
        }
      }).pipe(Effect.provide(layer)),
    { fastCheck: { numRuns: propertyRuns(40, 0.2) } }
  )
})
