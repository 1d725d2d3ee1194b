import { TieredCompaction, ToolOutputPruning } from "@ctxlog/compaction"
import { CtxBuilder } from "@ctxlog/providers"
import { SeamConfig } from "@ctxlog/seam"
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { Policy } from "../src/index.js"

// ADR 0156: the policy's schema is composed of the configs' own schemas (declared once, in their home
// packages). A policy as JSON decodes as before and encodes back to the same JSON, and what was refused
// before is refused still.

/** A policy that sets every field the schema has, as `TurnPolicySet` records it. */
const everyField = {
  builder: {
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    contextWindow: 64_000,
    compressionThreshold: 0.8,
    toolOutputLimits: { defaultChars: 4000, perTool: { grep: 2000 }, headRatio: 0.6 },
    maxOutputTokens: 2048,
    minCacheableTokens: 1024,
    cacheTtl: "1h",
    promptCaching: true,
    cacheBreakpoints: "last-message",
    thinking: "current",
    thinkingBudget: 1024
  },
  target: { provider: "anthropic", model: "claude-sonnet-4-5" },
  render: {
    systemPrompt: "You are terse.",
    turnReminder: "Answer in one line.",
    tools: [{ name: "grep", description: "Search.", inputSchema: { type: "object" } }],
    maxOutputTokens: 1024,
    temperature: 0.2
  },
  compaction: {
    softThreshold: 0.6,
    hardThreshold: 0.8,
    proactiveThreshold: 0.55,
    targetRatio: 0.45,
    cooldownTurns: 1,
    maxSummaryTokens: 512,
    coldZoneShare: 0.05,
    calibrate: false,
    midIteration: false,
    proactiveFromUsage: false,
    prune: { strategy: "Mig", keepRecent: 2, minChars: 100, perTool: { grep: { keepRecent: 1, maxChars: 800 } } },
    pinnedIdentifiers: ["src/main.ts"],
    keepUserAsk: true,
    preferCachedPrefix: true
  },
  seams: {
    level1: 0.5,
    level2: 0.7,
    level3: 0.9,
    verbatimWindow: 6,
    maxSeamsPerLevel: 3,
    advanceCycle: true,
    workspace: "/repo"
  },
  recall: { recallShare: 0.1, crossSessionShare: 0.05, owner: "alice" },
  skills: { share: 0.05, minScore: 0.2, explorationMargin: 0.1 },
  deferred: { cutoffShare: 0.2, minTokens: 200 },
  inputShare: 0.5,
  subgoals: "heuristic",
  compactor: { kind: "model", maxBytes: 4096 },
  fileStore: { thresholdBytes: 8192, previewChars: 1000, readTool: "read_output" }
}

const refused = (input: unknown): string => {
  const result = Policy.validate(input)
  if (Either.isRight(result)) return assert.fail(`decoded: ${JSON.stringify(input)}`)
  return result.left.field
}

describe("the policy's schema (ADR 0156)", () => {
  it("decodes a policy with every field and encodes it back to the same JSON", () => {
    const decoded = Policy.validate(everyField)
    if (Either.isLeft(decoded)) return assert.fail(decoded.left.message)
    assert.deepStrictEqual(Policy.toJson(decoded.right), everyField)
  })

  it("reads the policy an existing log recorded (core's events-by-version fixture) as it was written", () => {
    const recorded = {
      builder: { provider: "openai", model: "gpt-4.1", contextWindow: 16384 },
      compaction: { softThreshold: 0.7 }
    }
    const decoded = Policy.validate(recorded)
    if (Either.isLeft(decoded)) return assert.fail(decoded.left.message)
    assert.deepStrictEqual(Policy.toJson(decoded.right), recorded)
    assert.deepStrictEqual(
      Policy.tieredOf(decoded.right, Policy.budgetOf(decoded.right, undefined))?.softThreshold,
      0.7
    )
  })

  it("refuses what it refused before: fields the policy never had, and values out of range", () => {
    const base = { builder: { provider: "openai", model: "gpt-4.1", contextWindow: 16384 } }
    // Pruning options that are not the policy's (`batch`, `targetTokens`) stay out of it.
    assert.include(refused({ ...base, compaction: { prune: { batch: 2 } } }), "compaction.prune")
    assert.include(refused({ ...base, compaction: { prune: { targetTokens: 100 } } }), "compaction.prune")
    // Runtime-only tier settings are not data.
    assert.include(refused({ ...base, compaction: { advanceTurn: true } }), "compaction")
    assert.include(refused({ ...base, render: { cacheHints: [] } }), "render")
    assert.strictEqual(refused({ ...base, render: { maxOutputTokens: 0 } }), "render.maxOutputTokens")
    assert.strictEqual(refused({ ...base, compaction: { softThreshold: 1.5 } }), "compaction.softThreshold")
    assert.strictEqual(refused({ ...base, compaction: { cooldownTurns: -1 } }), "compaction.cooldownTurns")
    assert.strictEqual(
      refused({ ...base, compaction: { prune: { perTool: { grep: { keepRecent: 1.5 } } } } }),
      "compaction.prune.perTool.grep.keepRecent"
    )
    assert.strictEqual(
      refused({ ...base, seams: { level1: 0.5, level2: 0.7, level3: 0.9, verbatimWindow: 0 } }),
      "seams.verbatimWindow"
    )
    assert.include(refused({ builder: { provider: "openai", model: "gpt-4.1", cacheTtl: "1h" } }), "builder")
  })

  it("keeps a builder's toolOutputShare (the one field the recorded shape gained: CommonConfig had it, the old schema did not)", () => {
    const policy = { builder: { provider: "default", model: "local", contextWindow: 16384, toolOutputShare: 0.05 } }
    const decoded = Policy.validate(policy)
    if (Either.isLeft(decoded)) return assert.fail(decoded.left.message)
    assert.deepStrictEqual(Policy.toJson(decoded.right), policy)
  })

  it("is composed of the configs' own declarations, not copies of them", () => {
    assert.strictEqual(Policy.Policy.fields.builder, CtxBuilder.ProviderConfig)
    for (const key of ["systemPrompt", "turnReminder", "tools", "maxOutputTokens", "temperature"] as const) {
      assert.strictEqual(Policy.RenderSettings.fields[key], CtxBuilder.BuildOptions.fields[key])
    }
    for (const key of ["strategy", "keepRecent", "minChars", "perTool"] as const) {
      assert.strictEqual(Policy.PruneSettings.fields[key], ToolOutputPruning.Options.fields[key])
    }
    for (const [key, field] of Object.entries(TieredCompaction.Settings.fields)) {
      if (key === "prune") continue
      assert.strictEqual(Policy.CompactionSettings.fields[key as keyof typeof Policy.CompactionSettings.fields], field)
    }
    assert.strictEqual(Policy.SeamSettings, SeamConfig.Settings)
  })
})
