// `pnpm bench --check`: this run against the committed `bench/results/latest.json`. A figure moved when
// it differs from the committed one by more than the larger of the two spreads (p10–p90 of the rounds
// over the median: the band either run could have given by chance); a ratio the same with its own
// spread (round by round). Rows missing on either side are listed, not judged.
import type { Row } from "./harness.js"

/** One figure compared. */
export interface Moved {
  readonly row: string
  readonly figure: "median" | "ratio"
  readonly before: number
  readonly after: number
  /** The change, as a share of `before` (0.2 = 20% more). */
  readonly change: number
  /** The band it was judged against (a share). */
  readonly tolerance: number
}

export interface Drift {
  readonly moved: ReadonlyArray<Moved>
  readonly steady: number
  readonly onlyBefore: ReadonlyArray<string>
  readonly onlyNow: ReadonlyArray<string>
}

const keyOf = (row: Row): string => `${row.scenario} | ${row.size} | ${row.subject}`

const judge = (
  row: string,
  figure: Moved["figure"],
  before: number | null | undefined,
  after: number | null | undefined,
  spreads: ReadonlyArray<number | null | undefined>
): Moved | "steady" | undefined => {
  if (before == null || after == null || !(before > 0) || !Number.isFinite(after)) return undefined
  const known = spreads.filter((spread): spread is number => spread != null && Number.isFinite(spread))
  if (known.length === 0) return undefined
  const tolerance = Math.max(...known) / 100
  const change = (after - before) / before
  return Math.abs(change) > tolerance ? { row, figure, before, after, change, tolerance } : "steady"
}

/** What moved between the committed rows and this run's. */
export const drift = (before: ReadonlyArray<Row>, now: ReadonlyArray<Row>): Drift => {
  const old = new Map(before.map((row) => [keyOf(row), row]))
  const moved: Array<Moved> = []
  let steady = 0
  const onlyNow: Array<string> = []
  for (const row of now) {
    const key = keyOf(row)
    const was = old.get(key)
    if (was === undefined) {
      if (row.medianUs !== null) onlyNow.push(key)
      continue
    }
    old.delete(key)
    for (const verdict of [
      judge(key, "median", was.medianUs, row.medianUs, [was.spreadPct, row.spreadPct]),
      judge(key, "ratio", was.ratioVsCtxlog, row.ratioVsCtxlog, [
        was.ratioSpreadPct ?? was.spreadPct,
        row.ratioSpreadPct ?? row.spreadPct
      ])
    ]) {
      if (verdict === "steady") steady += 1
      else if (verdict !== undefined) moved.push(verdict)
    }
  }
  const onlyBefore = [...old.values()].filter((row) => row.medianUs !== null).map(keyOf)
  return { moved, steady, onlyBefore, onlyNow }
}

const pct = (share: number): string => `${share >= 0 ? "+" : ""}${(share * 100).toFixed(0)}%`

/** The drift as lines to print (rows of scenarios this run did not run are not listed as missing). */
export const report = (result: Drift, now: ReadonlyArray<Row>): string => {
  const ran = new Set(now.map((row) => row.scenario))
  const lines = [
    `bench --check: ${result.moved.length} figure(s) moved beyond their spread, ${result.steady} within it`
  ]
  for (const m of result.moved) {
    lines.push(
      `  moved: ${m.row}: ${m.figure} ${m.before} → ${m.after} (${pct(m.change)}, spread ±${(m.tolerance * 100).toFixed(0)}%)`
    )
  }
  const notRun = result.onlyBefore.filter((key) => ran.has(key.split(" | ")[0] ?? ""))
  if (notRun.length > 0) lines.push(`  in latest.json, not in this run: ${notRun.join("; ")}`)
  if (result.onlyNow.length > 0) lines.push(`  new in this run (not in latest.json): ${result.onlyNow.join("; ")}`)
  return lines.join("\n")
}
