// Budget and CompressionPlan moved to core (ADR 0056); compaction keeps every old name for one minor
// version as the core value itself, so code on the old path gets the same numbers and the same plans.
import { Budget as CoreBudget, CompressionPlan as CorePlan, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import { Budget, CompressionPlan } from "../src/index.js"

describe("deprecated aliases of the core modules", () => {
  it("every Budget name of compaction is core's", () => {
    assert.deepStrictEqual(Object.keys(Budget).sort(), Object.keys(CoreBudget).sort())
    for (const name of Object.keys(CoreBudget) as Array<keyof typeof CoreBudget>) {
      assert.strictEqual(Budget[name], CoreBudget[name], name)
    }
    const budget = Budget.make({ contextWindow: 8192, outputReserve: 1024, toolTokens: 100 })
    assert.strictEqual(CoreBudget.available(budget), 8192 - 1024 - 100)
  })

  it("every CompressionPlan name of compaction is core's", () => {
    assert.deepStrictEqual(Object.keys(CompressionPlan).sort(), Object.keys(CorePlan).sort())
    for (const name of Object.keys(CorePlan) as Array<keyof typeof CorePlan>) {
      assert.strictEqual(CompressionPlan[name], CorePlan[name], name)
    }
    assert.isTrue(CompressionPlan.isEmpty(CompressionPlan.compressionPlan(Window.empty, 5)))
  })
})
