/**
 * The totals of `test/conversionCoverage.md` (issue 35's acceptance: of the peers' conversion cases,
 * no silent loss and at most 40 that cannot be expressed). Each suite's row is
 * checked against its own verdicts by the suite (`assertCoverageRow`); this test checks that every
 * row belongs to a suite that checks it, that every suite that checks a row has one, and the sums.
 */
import { readdirSync, readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { coverageFile, outcomes, rowsOf, type Tally } from "./support/coverage.js"

const testDir = new URL("./", import.meta.url)
const text = readFileSync(coverageFile, "utf8")
const rows = rowsOf(text)

const totalRow = (): Tally | undefined => {
  const match = /^\|\s*\*\*Total\*\*\s*\|((?:\s*\d+\s*\|){6})\s*$/m.exec(text)
  if (match?.[1] === undefined) return undefined
  const [same, differs, refused, inexpressible, lost, total] = match[1]
    .split("|")
    .filter((cell) => cell.trim() !== "")
    .map((cell) => Number(cell.trim()))
  return {
    same: same ?? 0,
    differs: differs ?? 0,
    refused: refused ?? 0,
    inexpressible: inexpressible ?? 0,
    lost: lost ?? 0,
    total: total ?? 0
  }
}

describe("peer conversion coverage (test/conversionCoverage.md)", () => {
  it("every row is checked by its suite, and every suite that checks a row has one", () => {
    const checking = readdirSync(testDir)
      .filter((file) => file.endsWith(".test.ts") && file !== "conversionCoverage.test.ts")
      .flatMap((file) =>
        [...readFileSync(new URL(file, testDir), "utf8").matchAll(/assertCoverageRow\(\s*"([^"]+)"/g)].map(
          (match) => [match[1] ?? "", file] as const
        )
      )
    assert.isAbove(rows.size, 0)
    for (const suite of rows.keys()) {
      assert.isTrue(
        checking.some(([name]) => name === suite),
        `no test checks the row ${suite}`
      )
    }
    for (const [suite, file] of checking) assert.isTrue(rows.has(suite), `${file} checks ${suite}, which has no row`)
  })

  it("the Total row is the sum of the rows; each row adds up", () => {
    const sum = { same: 0, differs: 0, refused: 0, inexpressible: 0, lost: 0, total: 0 }
    for (const [suite, row] of rows) {
      assert.strictEqual(
        outcomes.reduce((acc, outcome) => acc + row[outcome], 0),
        row.total,
        suite
      )
      for (const key of [...outcomes, "total"] as const) sum[key] += row[key]
    }
    assert.deepStrictEqual(totalRow(), sum)
  })

  it("no silent loss: no case is dropped without an error", () => {
    assert.strictEqual(totalRow()?.lost, 0)
    for (const [suite, row] of rows) assert.strictEqual(row.lost, 0, suite)
  })

  it("at most 40 cases cannot be expressed", () => {
    const total = totalRow()
    console.log(`peer conversion cases: ${JSON.stringify(total)}`)
    assert.isAtMost(total?.inexpressible ?? Number.POSITIVE_INFINITY, 40)
  })
})
