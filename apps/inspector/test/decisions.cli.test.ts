// `ctxlog events <stream> --decisions` (issue 39, build item 1; ADR 0128): the compaction tiers' decisions
// not to act, one line per tier. A real transcript imported (through the turn) at a window its history
// never comes near: every decision is a threshold not reached, measured under its line; the renders still
// rebuild byte for byte (`verify --renders`).
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import type { Queries } from "../src/index.js"
import { ctxlogInProcess, tempDir, importTranscript } from "./support/cli.js"

const temp = tempDir("ctxlog-decisions-")
afterAll(() => temp.cleanup())

const stream = "wide"

describe("ctxlog events --decisions", () => {
  it("lists each tier that evaluated and did not act, with the tokens it compared", async () => {
    const db = join(temp.dir, "log.db")
    await importTranscript({ db, stream, budget: 200_000, file: "04-mini-swe-agent-django-11910.json" })
    const listed = await ctxlogInProcess(["events", "--db", db, stream, "--decisions", "--json"])
    assert.strictEqual(listed.code, 0, listed.stderr)
    const lines = JSON.parse(listed.stdout) as ReadonlyArray<Queries.DecisionLine>
    assert.isAbove(lines.length, 0)
    const steps = new Set(lines.map((line) => `${line.step}:${line.tier}`))
    assert.isTrue(steps.has("prepare:soft") && steps.has("complete:proactive"), [...steps].join(", "))
    for (const line of lines) {
      assert.strictEqual(line.reason, "below-threshold", JSON.stringify(line))
      assert.isBelow(line.usedTokens, line.thresholdTokens, JSON.stringify(line))
      assert.isAbove(line.budgetTokens, 100_000)
    }
    // The whole log holds one CompactionDecided per decision line here (one tier each) and no compaction.
    const all = await ctxlogInProcess(["events", "--db", db, stream, "--json"])
    const events = JSON.parse(all.stdout) as ReadonlyArray<Queries.EventLine>
    const decided = events.filter((line) => line.type === "CompactionDecided")
    assert.strictEqual(decided.length, lines.length)
    assert.isTrue(decided.every((line) => line.mark === "decision"))
    assert.strictEqual(events.filter((line) => line.type === "Compacted").length, 0)
    const text = await ctxlogInProcess(["events", "--db", db, stream, "--decisions"])
    assert.strictEqual(text.code, 0, text.stderr)
    const first = lines[0]
    assert.match(
      text.stdout,
      new RegExp(`^\\s*${first?.version}\\s+${first?.step}\\s+${first?.tier}\\s+below-threshold`)
    )
    // The decisions change no render: every one rebuilds byte for byte.
    const verified = await ctxlogInProcess(["verify", "--db", db, "--renders", "--json"])
    assert.strictEqual(verified.code, 0, verified.stderr)
  }, 240_000)
})
