// The performance targets (issue 24), each with the figure this run measured and its ratio against the
// reference of the same run. A target whose scenario did not run says so.
import type { Row } from "./harness.js"
import { langgraphVerdicts } from "./langgraph.js"
import { langgraphDeltaVerdicts } from "./langgraphDelta.js"
import { mastraVerdicts } from "./mastra.js"

export interface Verdict {
  readonly target: string
  readonly goal: string
  readonly measured: string
  readonly met: "yes" | "no" | "not run"
}

const find = (all: ReadonlyArray<Row>, scenario: string, size: string | undefined, subject: string) =>
  all.find(
    (row) =>
      row.scenario === scenario && (size === undefined || row.size.startsWith(size)) && row.subject.startsWith(subject)
  )

const fmt = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`)
const x = (value: number): string => `${value.toFixed(2)}x`
/** The number before `unit` in a note ("1969 appends/s"). */
const noted = (row: Row | undefined, unit: string): number | undefined => {
  const match = row?.note.match(new RegExp(`([0-9.]+) ${unit}`))
  return match?.[1] === undefined ? undefined : Number(match[1])
}

const notRun = (target: string, goal: string, scenario: string): Verdict => ({
  target,
  goal,
  measured: `no figure in this run (scenario \`${scenario}\` not run, or its row has a note instead)`,
  met: "not run"
})

/** ctxlog's time over the reference's: must be at most `max`. */
const timeRatio = (
  all: ReadonlyArray<Row>,
  target: string,
  goal: string,
  max: number,
  scenario: string,
  ctxlog: [string, string | undefined, string],
  reference: [string, string | undefined, string]
): Verdict => {
  const a = find(all, ...ctxlog)
  const b = find(all, ...reference)
  if (a?.medianUs == null || b?.medianUs == null || b.medianUs <= 0) return notRun(target, goal, scenario)
  const ratio = a.medianUs / b.medianUs
  return {
    target,
    goal,
    measured: `${fmt(a.medianUs)} vs ${fmt(b.medianUs)}: ${x(ratio)}`,
    met: ratio <= max ? "yes" : "no"
  }
}

/** The reference's time over ctxlog's (a throughput share): must be at least `min`. */
const share = (
  all: ReadonlyArray<Row>,
  target: string,
  goal: string,
  min: number,
  scenario: string,
  ctxlog: [string, string | undefined, string],
  reference: [string, string | undefined, string]
): Verdict => {
  const a = find(all, ...ctxlog)
  const b = find(all, ...reference)
  if (a?.medianUs == null || b?.medianUs == null || a.medianUs <= 0) return notRun(target, goal, scenario)
  const ratio = b.medianUs / a.medianUs
  return {
    target,
    goal,
    measured: `${fmt(a.medianUs)} vs ${fmt(b.medianUs)}: ${x(ratio)} of the reference's speed`,
    met: ratio >= min ? "yes" : "no"
  }
}

const writers = (all: ReadonlyArray<Row>, scenario: string, target: string, goal: string, against: "one" | "raw") => {
  const four = noted(find(all, scenario, "4 processes", "ctxlog"), "appends/s")
  const other =
    against === "one"
      ? noted(find(all, scenario, "1 process", "ctxlog"), "appends/s")
      : noted(find(all, scenario, "4 processes", "raw"), "appends/s")
  if (four === undefined || other === undefined || other <= 0) return notRun(target, goal, "writers")
  const ratio = four / other
  const min = against === "one" ? 2 : 0.5
  return {
    target,
    goal,
    measured: `${four} vs ${other} appends/s: ${x(ratio)}`,
    met: ratio >= min ? ("yes" as const) : ("no" as const)
  }
}

const noteRatio = (row: Row | undefined, target: string, goal: string, max: number, scenario: string): Verdict => {
  const match = row?.note.match(/ctxlog \/ raw ([0-9.]+)x/)
  if (row === undefined || match?.[1] === undefined) return notRun(target, goal, scenario)
  const ratio = Number(match[1])
  return { target, goal, measured: row.note, met: ratio <= max ? "yes" : "no" }
}

/** Every target against the rows of one run. */
export const verdicts = (all: ReadonlyArray<Row>): ReadonlyArray<Verdict> => [
  timeRatio(
    all,
    "one turn at 2k history messages",
    "≤ 1.5x the plain loop",
    1.5,
    "turn",
    ["one turn", "2000 ", "ctxlog"],
    ["one turn", "2000 ", "plain"]
  ),
  timeRatio(
    all,
    "one turn at 10k",
    "≤ 1.0x the plain loop",
    1.0,
    "turn",
    ["one turn", "10000 ", "ctxlog"],
    ["one turn", "10000 ", "plain"]
  ),
  share(
    all,
    "single append, WAL NORMAL",
    "≥ 0.5x raw",
    0.5,
    "append",
    ["append (single)", undefined, "ctxlog"],
    ["append (single)", undefined, "raw"]
  ),
  share(
    all,
    "batched append, 100 a call",
    "≥ 0.5x raw",
    0.5,
    "append-batch",
    ["append (batched)", undefined, "ctxlog"],
    ["append (batched)", undefined, "raw"]
  ),
  timeRatio(
    all,
    "batched append vs Emmett",
    "faster than Emmett (< 1x)",
    1,
    "append-batch",
    ["append (batched)", undefined, "ctxlog"],
    ["append (batched)", undefined, "Emmett"]
  ),
  timeRatio(
    all,
    "`appendMessages` of one message",
    "≤ 1.2x one append",
    1.2,
    "append-messages and append",
    ["appendMessages (1 msg)", undefined, "ctxlog"],
    ["append (single)", undefined, "ctxlog"]
  ),
  share(
    all,
    "load without a snapshot, 10k",
    "≥ 0.3x SELECT + JSON.parse",
    0.3,
    "load",
    ["load (no snapshot)", "10000 ", "ctxlog"],
    ["load (no snapshot)", "10000 ", "SELECT"]
  ),
  share(
    all,
    "load without a snapshot, 100k",
    "≥ 0.3x SELECT + JSON.parse",
    0.3,
    "load",
    ["load (no snapshot)", "100000 ", "ctxlog"],
    ["load (no snapshot)", "100000 ", "SELECT"]
  ),
  writers(all, "writers (PostgreSQL)", "PostgreSQL, 4 writers on 4 streams", "≥ 2x one writer", "one"),
  writers(all, "writers (SQLite)", "SQLite, 4 writers on 4 streams", "≥ 0.5x raw with the same writers", "raw"),
  timeRatio(
    all,
    "reload from a freshly opened store, 1k messages",
    "≤ 1.5x plain",
    1.5,
    "reload",
    ["reload", "1000 ", "ctxlog"],
    ["reload", "1000 ", "open"]
  ),
  timeRatio(
    all,
    "reload from a freshly opened store, 10k messages",
    "≤ 1.5x plain",
    1.5,
    "reload",
    ["reload", "10000 ", "ctxlog"],
    ["reload", "10000 ", "open"]
  ),
  (() => {
    const row = find(all, "reload", "100 ", "ctxlog")
    const target = "reload at 100 messages"
    const goal = "≤ 3 ms"
    if (row?.medianUs == null) return notRun(target, goal, "reload")
    return { target, goal, measured: fmt(row.medianUs), met: row.medianUs <= 3000 ? "yes" : "no" } as const
  })(),
  noteRatio(
    find(all, "bytes per turn", undefined, "raw"),
    "bytes written per turn (2 messages)",
    "≤ 1.3x plain",
    1.3,
    "storage"
  ),
  noteRatio(find(all, "storage", undefined, "raw"), "database size", "≤ 1.5x plain", 1.5, "storage")
]

/** The verdicts as Markdown. */
export const targetTable = (all: ReadonlyArray<Row>): string =>
  [
    "| target | goal | this run | met? |",
    "|---|---|---|---|",
    ...[...verdicts(all), ...langgraphVerdicts(all), ...langgraphDeltaVerdicts(all), ...mastraVerdicts(all)].map(
      (v) => `| ${v.target} | ${v.goal} | ${v.measured} | ${v.met} |`
    )
  ].join("\n")
