import { ContextService, EventLog, Message, ToolPairs, type Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Stream from "effect/Stream"
import { DeferredSummaries, TieredCompaction, ToolOutputPruning, UndoCompaction } from "../src/index.js"
import { filler, testLayer } from "./harness.js"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"

const config = {
  budget: 3000,
  softThreshold: 0.7,
  hardThreshold: 0.85,
  targetRatio: 0.5,
  cooldownTurns: 2,
  maxSummaryTokens: 200,
  prune: { keepRecent: 2, minChars: 200 }
} satisfies TieredCompaction.Config

type Op =
  | { readonly op: "chat"; readonly chars: number }
  | { readonly op: "tools"; readonly outputs: ReadonlyArray<number>; readonly reversed: boolean }
  | { readonly op: "openCall" }
  | { readonly op: "resolve"; readonly chars: number }
  | { readonly op: "pin"; readonly at: number }
  | {
      readonly op:
        | "turn"
        | "maybeCompact"
        | "mid"
        | "proactive"
        | "summarizePairs"
        | "applyDeferred"
        | "maybeApplyDeferred"
        | "flush"
        | "prune"
        | "compactContext"
        | "undoLast"
        | "injectSummaries"
    }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant("chat" as const), chars: fc.integer({ min: 10, max: 1600 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant("tools" as const),
      outputs: fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 3 }),
      reversed: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("openCall" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("resolve" as const), chars: fc.integer({ min: 0, max: 2000 }) })
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("pin" as const), at: fc.nat() }) },
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constantFrom(
        "turn" as const,
        "maybeCompact" as const,
        "maybeCompact" as const,
        "mid" as const,
        "proactive" as const,
        "summarizePairs" as const,
        "applyDeferred" as const,
        "maybeApplyDeferred" as const,
        "flush" as const,
        "prune" as const,
        "compactContext" as const,
        "undoLast" as const,
        "injectSummaries" as const
      )
    })
  }
)

const orphanFree = (window: Window.Window, after: string) =>
  assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [], `after ${after}`)

/** Issue 11 item 2: a result the model has not seen (after the last assistant message) is whole or truncated to fit. */
const unseenIntact = (window: Window.Window, originals: ReadonlyMap<string, string>, after: string) => {
  const lastAssistant = window.history.map((message) => message.role).lastIndexOf("assistant")
  for (const message of window.history.slice(lastAssistant + 1)) {
    for (const part of Message.toolResultsOf(message)) {
      const original = originals.get(part.toolCallId)
      if (original === undefined || part.content === original) continue
      assert.include(part.content, "characters cut to fit the context window", `after ${after}: ${part.toolCallId}`)
    }
  }
}

/** CI default 60; the nightly job sets CTXLOG_PROPERTY_RUNS higher. */

/** Tokens a hard compaction cannot remove: fixed partitions, pinned groups, calls waiting for results. */
const unremovable = (window: Window.Window): number => {
  const pending = new Set(ToolPairs.pendingCalls(window.history))
  const forced = ToolPairs.groups(window.history).filter((group) =>
    group.some(
      (message) => message.pinned === true || Message.toolCallsOf(message).some((call) => pending.has(call.id))
    )
  )
  const grouped = forced.flat().reduce((total, message) => total + message.tokens, 0)
  return window.tokens.total - window.tokens.history + grouped
}

describe("properties", () => {
  it.effect.prop(
    "after any sequence of operations (flushDeferredSummaries, injectSummaries and maybeSoftCompactMidIteration among them) no tool call or result is orphaned, an unseen result is whole or truncated to fit; after a hard compaction the window fits",
    [fc.array(opArb, { minLength: 1, maxLength: 40 })],
    ([ops]) =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const log = yield* EventLog.EventLog
        const stream = "prop"
        yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
        let call = 0
        const open: Array<string> = []
        const originals = new Map<string, string>()
        for (const op of ops) {
          // One turn of the event loop per step: a long case must not hold the worker (vitest RPC timeouts).
          yield* Effect.promise(yieldToEventLoop)
          const before = yield* ctx.load(stream)
          switch (op.op) {
            case "chat":
              yield* ctx.appendMessages(stream, [
                Message.user(filler(op.chars, "u")),
                Message.assistant(filler(op.chars, "a"))
              ])
              break
            case "tools": {
              const ids = op.outputs.map(() => `c${++call}`)
              const results = op.outputs.map((chars, i) => Message.tool(ids[i] ?? "", filler(chars, "o")))
              for (const [i, id] of ids.entries()) originals.set(id, filler(op.outputs[i] ?? 0, "o"))
              yield* ctx.appendMessages(stream, [
                Message.assistant(
                  "calling",
                  ids.map((id) => Message.toolCall(id, "bash", { id }))
                ),
                ...(op.reversed ? results.reverse() : results)
              ])
              break
            }
            case "openCall": {
              const id = `c${++call}`
              open.push(id)
              yield* ctx.appendMessages(stream, [Message.assistant("", [Message.toolCall(id, "read", { id })])])
              break
            }
            case "resolve": {
              const id = open.shift()
              if (id !== undefined) {
                originals.set(id, filler(op.chars, "r"))
                yield* ctx.appendMessages(stream, [Message.tool(id, filler(op.chars, "r"))])
              }
              break
            }
            case "pin": {
              const target = before.history[op.at % Math.max(1, before.history.length)]
              if (target !== undefined) yield* ctx.pin(stream, target.id)
              break
            }
            case "turn":
              yield* ctx.completeTurn(stream)
              break
            case "maybeCompact": {
              const result = yield* TieredCompaction.maybeCompact(stream, config)
              if (result._tag === "Compacted" && unremovable(before) + 200 <= config.budget * 0.5) {
                assert.isAtMost(result.window.tokens.total, config.budget, `${result.tier} compaction over budget`)
              }
              break
            }
            case "mid":
              yield* TieredCompaction.maybeSoftCompactMidIteration(stream, config)
              break
            case "proactive":
              yield* TieredCompaction.maybeProactiveCompress(stream, config)
              break
            case "summarizePairs":
              yield* DeferredSummaries.maybeSummarizeToolPair(stream, { cutoffTokens: 300 })
              break
            case "applyDeferred":
              yield* DeferredSummaries.applyDeferredSummaries(stream)
              break
            case "maybeApplyDeferred":
              yield* DeferredSummaries.maybeApplyDeferredSummaries(stream, { budget: config.budget, countCutoff: 2 })
              break
            case "flush":
              yield* DeferredSummaries.flushDeferredSummaries(stream)
              break
            case "prune":
              yield* ToolOutputPruning.pruneToolOutputs(stream, { keepRecent: 1 })
              break
            case "compactContext":
              yield* TieredCompaction.compactContext(stream, 200)
              break
            case "injectSummaries": {
              // An injection never touches history (issue 11 item 4): compaction's summaries stay put.
              const injected = yield* ctx.injectSummaries(stream, 300)
              assert.deepStrictEqual(
                injected.window.history.map((message) => message.id),
                before.history.map((message) => message.id),
                "injectSummaries changed history"
              )
              break
            }
            case "undoLast": {
              const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
              const last = [...events].reverse().find((envelope) => envelope.event._tag === "Compacted")
              if (last !== undefined) {
                yield* UndoCompaction.undoCompaction(stream, last.eventId).pipe(
                  Effect.catchTag("CompactionNotUndoable", () => Effect.void)
                )
              }
              break
            }
          }
          const after = yield* ctx.load(stream)
          orphanFree(after, op.op)
          unseenIntact(after, originals, op.op)
        }
      }).pipe(Effect.provide(testLayer)),
    { fastCheck: { numRuns: propertyRuns(40, 0.3) } }
  )
})
