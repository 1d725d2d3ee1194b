// Proactive compression's 95% rule when the provider edits the context on its side: the reported
// input tokens are after the provider's clearing, the prompt sent was bigger by what it cleared.
import { ContextService, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { TieredCompaction } from "../src/index.js"
import { CompactorProbe, filler, testLayer } from "./harness.js"

const config = {
  budget: 4000,
  softThreshold: 0.7,
  hardThreshold: 0.85,
  targetRatio: 0.5,
  cooldownTurns: 2,
  maxSummaryTokens: 300,
  proactiveThreshold: 0.6,
  providerSideCompaction: true,
  prune: { keepRecent: 2, minChars: 200 }
} satisfies TieredCompaction.Config

const calls = Effect.flatMap(CompactorProbe, (probe) => Ref.get(probe.calls))

describe("maybeProactiveCompress with provider-side edits", () => {
  it.effect("counts the tokens the provider cleared toward the 95% rule", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("ps", [Message.user(filler(4000)), Message.assistant(filler(2000))])
      // 3,000 reported after the provider cleared 500: the prompt sent was 3,500 (87.5%), still under 95%.
      const under = yield* TieredCompaction.maybeProactiveCompress("ps", config, {
        inputTokens: 3000,
        clearedInputTokens: 500
      })
      assert.strictEqual(under._tag, "NoChange")
      if (under._tag === "NoChange") assert.strictEqual(under.reason, "provider-side compaction is on")
      assert.strictEqual(yield* calls, 0)
      // 3,000 reported after clearing 900: 3,900 sent, past 95% — proactive compression runs.
      const forced = yield* TieredCompaction.maybeProactiveCompress("ps", config, {
        inputTokens: 3000,
        clearedInputTokens: 900
      })
      assert.strictEqual(forced._tag, "Compacted")
      if (forced._tag === "Compacted") assert.strictEqual(forced.tier, "proactive")
      assert.strictEqual(yield* calls, 1)
    }).pipe(Effect.provide(testLayer))
  )
})
