// `ctxlog cache` and `whatif` on real imported sessions (fixtures/sessions, provenance in its README): every
// call predicted beside its recorded usage, every miss with a cause, the unknown prefix said, whatif priced
// by the cache model. The measured accuracy figures are in BENCHMARKS.md (issue 37), not asserted here.
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ctxlogInProcess as ctxlog, json, tempDir } from "./support/cli.js"

const root = fileURLToPath(new URL("../../../fixtures/sessions/", import.meta.url))
const temp = tempDir("ctxlog-cache-sessions-")
const db = join(temp.dir, "log.db")

const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? Object.fromEntries(Object.entries(value)) : {}
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

beforeAll(async () => {
  const imported = await ctxlog([
    "import",
    "--db",
    db,
    join(root, "claude-code", "full-session-five.jsonl"),
    join(root, "claude-code", "full-session-four.jsonl"),
    join(root, "claude-code", "06381696-0074-49f8-863e-6ad4fac507f9.jsonl")
  ])
  assert.strictEqual(imported.code, 0, imported.stderr)
}, 120_000)
afterAll(() => temp.cleanup())

describe("ctxlog cache on imported Claude Code sessions", () => {
  it("predicts every call beside its recorded usage and names a cause for every miss", async () => {
    const result = await ctxlog(["cache", "--db", db, "full-session-four", "--json"])
    assert.strictEqual(result.code, 0, result.stderr)
    const report = record(json(result))
    const calls = list(report.calls).map(record)
    assert.strictEqual(calls.length, 30)
    for (const call of calls) {
      const predicted = record(call.predicted)
      assert.isNotNull(call.recorded)
      assert.strictEqual(
        Number(predicted.uncached) + Number(predicted.cacheWrite) + Number(predicted.cacheRead),
        Number(predicted.promptTokens)
      )
      if (predicted.class !== "hit") assert.isNotNull(call.cause, `call at v${call.version} missed without a cause`)
    }
    // The session file lacks Claude Code's system prompt and tools: estimated from the first usage, and said.
    const prefix = record(report.unknownPrefix)
    assert.isAbove(Number(prefix.tokens), 10_000)
    assert.include(String(prefix.note), "first call's recorded usage")
    // A gap of 331 s between two calls (past the 5-minute TTL) is named.
    const kinds = list(report.causes).map((cause) => record(cause).kind)
    assert.include(kinds, "ttl-expiry")
    const figures = record(report.accuracy)
    assert.strictEqual(figures.recorded, 30)
  })

  it("whatif under the recorded policy prices both runs with the cache model and shows the recorded usage cost", async () => {
    // Two sessions whose files hold the whole prompt: full-session-five, and 06381696 (added later, out of
    // sample, ADR 0172: a 388 s gap past the TTL re-writes all but the warm prefix). The replay's cost is
    // within 5% of the recorded usage's on each.
    for (const stream of ["full-session-five", "06381696-0074-49f8-863e-6ad4fac507f9"]) {
      const result = await ctxlog(["whatif", "--db", db, stream, "--json"])
      assert.strictEqual(result.code, 0, result.stderr)
      const totals = record(record(json(result)).totals)
      const recordedUsage = Number(totals.recordedUsageCost)
      const whatif = Number(record(totals.whatif).cost)
      assert.isAbove(recordedUsage, 0, stream)
      assert.isAtMost(Math.abs(whatif - recordedUsage), 0.05 * recordedUsage, stream)
      assert.isAbove(Number(record(totals.whatif).cacheRead), 0, stream)
    }
  })
})
