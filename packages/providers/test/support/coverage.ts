/**
 * The tally of the ported peer conversion suites (issue 35): each suite states a verdict per case
 * (same, differs by a stated rule, refused by name, cannot be expressed, or lost — dropped without an
 * error, which only another adapter's side may still do), and checks that its row of
 * `test/conversionCoverage.md` equals the tally of its own verdicts. The table therefore cannot go
 * stale: a changed verdict fails its suite until the row says the same (the failure prints the row).
 * `conversionCoverage.test.ts` sums the rows.
 */
import { readFileSync } from "node:fs"
import { assert } from "@effect/vitest"

/** What became of one peer case through ctxlog. */
export type Outcome = "same" | "differs" | "refused" | "inexpressible" | "lost"

export const outcomes: ReadonlyArray<Outcome> = ["same", "differs", "refused", "inexpressible", "lost"]

export type Tally = { readonly [O in Outcome]: number } & { readonly total: number }

export const tallyOf = (verdicts: ReadonlyArray<Outcome>): Tally => {
  const counts = { same: 0, differs: 0, refused: 0, inexpressible: 0, lost: 0 }
  for (const verdict of verdicts) counts[verdict]++
  return { ...counts, total: verdicts.length }
}

export const coverageFile = new URL("../conversionCoverage.md", import.meta.url)

/** A table row as the file writes it. */
export const rowOf = (suite: string, tally: Tally): string =>
  `| \`${suite}\` | ${outcomes.map((outcome) => tally[outcome]).join(" | ")} | ${tally.total} |`

/** The suites' rows of the table, by suite name (the `Total` row is not a suite); cells may be padded. */
export const rowsOf = (text: string): ReadonlyMap<string, Tally> => {
  const rows = new Map<string, Tally>()
  for (const line of text.split("\n")) {
    const match = /^\|\s*`([^`]+)`\s*\|((?:\s*\d+\s*\|){6})\s*$/.exec(line)
    if (match?.[1] === undefined || match[2] === undefined) continue
    const [same, differs, refused, inexpressible, lost, total] = match[2]
      .split("|")
      .filter((cell) => cell.trim() !== "")
      .map((cell) => Number(cell.trim()))
    rows.set(match[1], {
      same: same ?? 0,
      differs: differs ?? 0,
      refused: refused ?? 0,
      inexpressible: inexpressible ?? 0,
      lost: lost ?? 0,
      total: total ?? 0
    })
  }
  return rows
}

/** The suite's row of the table equals the tally of its verdicts (a stale row fails, printing the right one). */
export const assertCoverageRow = (suite: string, verdicts: ReadonlyArray<Outcome>): Tally => {
  const tally = tallyOf(verdicts)
  const row = rowsOf(readFileSync(coverageFile, "utf8")).get(suite)
  assert.deepStrictEqual(row, tally, `test/conversionCoverage.md must have the row\n${rowOf(suite, tally)}`)
  return tally
}
