import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { TemplateCompactor } from "@ctxlog/compaction"
import { ContextService, Ids, Message, RecallSource, TokenCounter } from "@ctxlog/core"
import { SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Policy, Turn } from "../src/index.js"
import { eventsOf } from "./support.js"

// `TurnPolicySet` is appended when the stream's last recorded policy differs from the step's, compared
// by hash, and a process that opens the log anew reads what was last recorded from the log's tail.
const dir = mkdtempSync(join(tmpdir(), "ctxlog-turn-policy-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** One "process": its own window service over the SQLite file (nothing shared in memory with another). */
const process = (filename: string) =>
  ContextService.layer().pipe(
    Layer.provideMerge(SqliteEventLog.layer({ filename })),
    Layer.provideMerge(
      Layer.mergeAll(
        TokenCounter.layerGpt(),
        Ids.layerUuidV7,
        RecallSource.layerEmpty,
        TemplateCompactor.layer({ maxBytes: 2048 })
      )
    )
  )

const policy = (contextWindow: number): Policy.Policy => ({
  builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow, maxOutputTokens: 512 },
  compaction: { softThreshold: 0.7, hardThreshold: 0.85, targetRatio: 0.45, cooldownTurns: 0 }
})

const turn = (stream: string, p: Policy.Policy, n: number) =>
  Effect.gen(function* () {
    yield* Turn.prepare(stream, { messages: [Message.user(`question ${n}`)] }, p)
    yield* Turn.render(stream, p)
    yield* Turn.complete(stream, { answer: [Message.text(`answer ${n}`)], endTurn: true }, p)
  })

/** The policies recorded on the stream, in order, by context window. */
const recorded = (stream: string) =>
  Effect.map(eventsOf(stream), (events) =>
    events.flatMap((envelope) =>
      envelope.event._tag === "TurnPolicySet"
        ? [(envelope.event.policy.builder as { readonly contextWindow: number }).contextWindow]
        : []
    )
  )

describe("TurnPolicySet", () => {
  it.effect("is appended only when the policy differs from the one the stream last recorded, across processes", () =>
    Effect.gen(function* () {
      const filename = join(dir, "policy.db")
      const stream = "turn-policy-processes"
      const small = policy(8192)
      const large = policy(16_384)
      // Process 1 records the policy once for its turns.
      yield* Effect.scoped(
        Effect.provide(Effect.zipRight(turn(stream, small, 0), turn(stream, small, 1)), process(filename))
      )
      // Process 2, same policy (an equal object, not the same one): nothing new recorded.
      yield* Effect.scoped(
        Effect.provide(Effect.zipRight(turn(stream, policy(8192), 2), recorded(stream)), process(filename))
      ).pipe(Effect.tap((policies) => assert.deepStrictEqual(policies, [8192])))
      // Process 3 changes it: recorded once; process 4 changes it back: recorded again.
      yield* Effect.scoped(
        Effect.provide(Effect.zipRight(turn(stream, large, 3), turn(stream, large, 4)), process(filename))
      )
      const policies = yield* Effect.scoped(
        Effect.provide(Effect.zipRight(turn(stream, small, 5), recorded(stream)), process(filename))
      )
      assert.deepStrictEqual(policies, [8192, 16_384, 8192])
    })
  )

  it.effect("a policy recorded further back than the lookback is recorded again (never assumed)", () =>
    Effect.gen(function* () {
      const filename = join(dir, "lookback.db")
      const stream = "turn-policy-lookback"
      const small = policy(8192)
      yield* Effect.scoped(Effect.provide(turn(stream, small, 0), process(filename)))
      const policies = yield* Effect.scoped(
        Effect.provide(
          Effect.gen(function* () {
            const ctx = yield* ContextService.ContextService
            // More events than the lookback reads since the policy was recorded.
            for (let at = 0; at < Turn.policyLookback; at += 64) {
              yield* ctx.appendMessages(
                stream,
                Array.from({ length: 32 }, (_, k) => [
                  Message.user(`q ${at + k}`),
                  Message.assistant(`a ${at + k}`)
                ]).flat()
              )
            }
            yield* turn(stream, small, 1)
            return yield* recorded(stream)
          }),
          process(filename)
        )
      )
      assert.deepStrictEqual(policies, [8192, 8192])
    })
  )
})
