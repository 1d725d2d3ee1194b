// The cache model's accuracy on the real sessions of fixtures/sessions (provenance in its README), as the
// root README and BENCHMARKS.md state it (issue 37, ADR 0138, ADR 0141, ADR 0172): every Claude Code session and Codex rollout
// imported, each call's predicted cache read set against its recorded one (within ±10%) and its class
// (hit / partial / miss) against the recorded class. The prediction reads the renders, their times and
// the first call's usage only: every session predicted again with every later usage stripped gives the
// same numbers. The figures are asserted as documented, so a change to the model that moves them fails
// here until the documents say the new ones.
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CacheModel } from "@ctxlog/providers"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Inspect, Source } from "../src/index.js"
import { ctxlogInProcess as ctxlog, json, tempDir } from "./support/cli.js"

const root = fileURLToPath(new URL("../../../fixtures/sessions/", import.meta.url))
const temp = tempDir("ctxlog-cache-accuracy-")
const db = join(temp.dir, "log.db")

const claudeCode = [
  "full-session-two",
  "full-session-three",
  "full-session-four",
  "full-session-five",
  // Added later (helper cache37c, ADR 0172): out of sample for every rule derived before it.
  "06381696-0074-49f8-863e-6ad4fac507f9"
]
// The first two were the fixtures the model's Codex rules were derived on (ADR 0141); the other three
// were added later (ADR 0172) and are out of sample for them.
const codex = [
  "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5",
  "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e",
  "rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08",
  "rollout-2025-09-25T08-02-05-0199812e-64f0-7f73-91fc-095dda01c36e",
  "rollout-2025-09-25T09-49-46-01998190-fba6-7f40-9309-dc4e48c5844a"
]

const entriesOf = (stream: string) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(Source.sqlite(db), (source) => Inspect.entries(source, stream))))

/** Calls within ±10% of the recorded cache read, and classified alike, over the calls with usage. */
interface Figures {
  readonly recorded: number
  readonly within: number
  readonly agrees: number
}

const figuresOf = (report: CacheModel.Report): Figures => {
  const accuracy = CacheModel.accuracy(report)
  return {
    recorded: accuracy.recorded,
    within: Math.round(accuracy.readWithin10 * accuracy.recorded),
    agrees: Math.round(accuracy.classAgrees * accuracy.recorded)
  }
}

const reports = new Map<string, CacheModel.Report>()

beforeAll(async () => {
  const imported = await ctxlog(["import", "--db", db, join(root, "claude-code"), join(root, "codex")])
  assert.strictEqual(imported.code, 0, imported.stderr)
  for (const stream of [...claudeCode, ...codex]) reports.set(stream, CacheModel.predict(await entriesOf(stream)))
}, 180_000)
afterAll(() => temp.cleanup())

const total = (streams: ReadonlyArray<string>): Figures =>
  streams.reduce(
    (sum, stream) => {
      const report = reports.get(stream)
      if (report === undefined) throw new Error(`no report for ${stream}`)
      const figures = figuresOf(report)
      return {
        recorded: sum.recorded + figures.recorded,
        within: sum.within + figures.within,
        agrees: sum.agrees + figures.agrees
      }
    },
    { recorded: 0, within: 0, agrees: 0 }
  )

describe("the cache model against the recorded usage of real sessions", () => {
  it("reads no usage but the first call's: each real session with every later usage stripped gives the same numbers", async () => {
    for (const stream of [...claudeCode, ...codex]) {
      const entries = await entriesOf(stream)
      const first = entries.findIndex((entry) => entry.event._tag === "UsageReported")
      assert.isAbove(first, -1, stream)
      const stripped = entries.filter((entry, index) => entry.event._tag !== "UsageReported" || index === first)
      assert.isBelow(stripped.length, entries.length, stream)
      const full = reports.get(stream)
      const bare = CacheModel.predict(stripped)
      assert.deepStrictEqual(
        bare.calls.map((call) => call.predicted),
        full?.calls.map((call) => call.predicted),
        stream
      )
      assert.deepStrictEqual(bare.unknownPrefix, full?.unknownPrefix ?? null, stream)
    }
  })

  it("Claude Code: the figures the README states (57 calls: 21 within ±10%, 53 classified alike)", () => {
    assert.deepStrictEqual(total(claudeCode), { recorded: 57, within: 21, agrees: 53 })
    // The session added later, out of sample: its third call, 388 s after the second, reads only the
    // CLI's warm prefix (the 5-minute TTL expired), as predicted.
    assert.deepStrictEqual(total(["06381696-0074-49f8-863e-6ad4fac507f9"]), { recorded: 3, within: 3, agrees: 3 })
    // Where the session file holds the whole prompt (three, five), within ±10% on 12 of 13 calls; four and
    // two carry content the file does not (ADR 0138), and miss by what it adds.
    assert.deepStrictEqual(total(["full-session-three", "full-session-five"]), {
      recorded: 13,
      within: 12,
      agrees: 12
    })
  })

  it("Codex: the figures the README states (328 calls: 296 within ±10%, 299 classified alike)", () => {
    assert.deepStrictEqual(total(codex), { recorded: 328, within: 296, agrees: 299 })
    // The render holds the encrypted reasoning Codex sent back (ADR 0141) and each reasoning item, function
    // call and output is framed by the table's 9 tokens (ADR 0172, derived on the first two rollouts): the
    // median prompt error is within ±0.5% (it was -1.9% at 3 tokens an item), and every call outside ±10%
    // is one where the server read less than the prefix the renders share (OpenAI's best-effort routing,
    // ADR 0138), never more.
    const calls = codex.flatMap((stream) => reports.get(stream)?.calls ?? [])
    const promptErrors = calls
      .flatMap((call) =>
        call.recorded === null
          ? []
          : [(call.predicted.promptTokens - call.recorded.promptTokens) / call.recorded.promptTokens]
      )
      .sort((a, b) => a - b)
    assert.isAtMost(Math.abs(promptErrors[Math.floor(promptErrors.length / 2)] ?? 1), 0.005)
    const off = calls.filter((call) => call.readError !== null && Math.abs(call.readError) > 0.1)
    assert.strictEqual(off.length, 32)
    assert.isTrue(off.every((call) => (call.readError ?? 0) > 0))
    // A new user turn drops the reasoning of the turns before it: named as such, 10 calls (9 of them in
    // the rollouts added later, out of sample for ADR 0141's rule), each classified as recorded.
    const dropped = calls.filter((call) => call.cause?.kind === "reasoning-dropped")
    assert.strictEqual(dropped.length, 10)
    for (const call of dropped) assert.strictEqual(call.predicted.class, call.recorded?.class)
    assert.deepStrictEqual(
      dropped.map((call) => call.predicted.class),
      ["miss", "miss", "partial", "miss", "hit", "hit", "hit", "hit", "hit", "miss"]
    )
  })

  it("full-session-four: the step the file lacks explains its misses (the prediction shifted by it lands within ±10%)", () => {
    // Call 3 records a ~13k-token write that no line of the file accounts for (a subdirectory CLAUDE.md
    // Claude Code loads on a Read, ADR 0138). Analysis, not prediction: shifted by the gap recorded at call 4,
    // every later call's read but the one after the TTL expiry (call 15, read from the warm prefix only)
    // lands within ±10% of the recorded one, so the rest of the model holds call by call.
    const calls = reports.get("full-session-four")?.calls ?? []
    assert.strictEqual(calls.length, 30)
    const at4 = calls[3]
    const gap = (at4?.recorded?.cacheRead ?? 0) - (at4?.predicted.cacheRead ?? 0)
    assert.isAbove(gap, 12_000)
    const later = calls.filter((_, index) => index >= 3 && index !== 14)
    const shifted = later.filter((call) => {
      const recorded = call.recorded?.cacheRead ?? 0
      return Math.abs(call.predicted.cacheRead + gap - recorded) <= 0.1 * recorded
    })
    assert.strictEqual(shifted.length, later.length)
    // Unshifted, none of them is.
    assert.isTrue(
      later.every((call) => {
        const recorded = call.recorded?.cacheRead ?? 0
        return Math.abs(call.predicted.cacheRead - recorded) > 0.1 * recorded
      })
    )
  })

  it("whatif under the recorded policy prices the replay as the cache model prices the recorded renders", async () => {
    for (const stream of claudeCode) {
      const result = await ctxlog(["whatif", "--db", db, stream, "--json"])
      const totals = json(result) as { totals: { recorded: { cost: number }; whatif: { cost: number } } }
      // The import records Claude Code's breakpoint placement in the policy, so the replay caches as it did.
      assert.closeTo(totals.totals.whatif.cost, totals.totals.recorded.cost, 1e-9, stream)
    }
  })
})
