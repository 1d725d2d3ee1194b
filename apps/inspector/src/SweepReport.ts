/**
 * A sweep's verdict: per-policy totals over every stream (the recording as the baseline), the gate
 * (`--fail-on 'cost>+2%'`, `'lost>0'`, `'overflow>0'`), and the three layouts `whatif` prints it in
 * (a text table, a markdown table for a pull-request comment, one JSON document).
 *
 * @since 0.5.0
 */
import * as Schema from "effect/Schema"
import type * as SweepPool from "./SweepPool.js"
import * as Sweep from "./Sweep.js"

/** One policy over every stream. @since 0.5.0 */
export interface PolicyTotals {
  readonly policy: string
  readonly totals: Sweep.Totals
  /** Dollars against the recording's, as a fraction (0.02 = +2%); null when the recording cost nothing. */
  readonly costDelta: number | null
}

/** A whole sweep. @since 0.5.0 */
export interface Verdict {
  readonly pricer: string
  readonly workers: number
  readonly recorded: PolicyTotals
  readonly policies: ReadonlyArray<PolicyTotals>
  readonly streams: ReadonlyArray<Sweep.StreamResult>
  /** Jobs that could not be read at all. */
  readonly failures: ReadonlyArray<SweepPool.JobFailure>
  readonly gate: ReadonlyArray<GateResult>
}

/** A `--fail-on` condition that does not parse. @since 0.5.0 */
export class BadCondition extends Schema.TaggedError<BadCondition>()("BadCondition", {
  condition: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `--fail-on ${JSON.stringify(this.condition)}: ${this.detail}`
  }
}

/** A parsed `--fail-on` condition. @since 0.5.0 */
export interface Condition {
  readonly text: string
  readonly metric: "cost" | "lost" | "overflow" | "failed"
  readonly op: ">" | ">="
  readonly value: number
}

/** Parse `cost>+2%`, `lost>0`, `overflow>0`, `failed>0` (also `>=`). @since 0.5.0 */
export const parseCondition = (text: string): Condition | BadCondition => {
  const match = /^\s*(cost|lost|overflow|failed)\s*(>=|>)\s*([+-]?\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(text)
  if (match === null) {
    return new BadCondition({
      condition: text,
      detail: "expected <metric><op><value>: cost>+2% (dollars against the recording), lost>0, overflow>0 or failed>0"
    })
  }
  const [, metric = "", op = "", value = "", percent = ""] = match
  if (metric === "cost" && percent !== "%") {
    return new BadCondition({ condition: text, detail: "cost is compared in percent of the recording: write cost>+2%" })
  }
  if (metric !== "cost" && percent === "%") {
    return new BadCondition({ condition: text, detail: `${metric} is a count: write ${metric}>0` })
  }
  return {
    text,
    metric: metric === "cost" ? "cost" : metric === "lost" ? "lost" : metric === "overflow" ? "overflow" : "failed",
    op: op === ">=" ? ">=" : ">",
    value: Number(value)
  }
}

/** One condition checked against one policy. @since 0.5.0 */
export interface GateResult {
  readonly policy: string
  readonly condition: string
  readonly failed: boolean
  readonly reason: string
}

const lostCount = (totals: Sweep.Totals) => totals.lost.toolResults + totals.lost.userMessages + totals.lost.identifiers

const percent = (fraction: number | null) =>
  fraction === null ? "-" : `${fraction > 0 ? "+" : ""}${(fraction * 100).toFixed(2)}%`

/** Check every condition against every candidate policy. @since 0.5.0 */
export const gate = (
  conditions: ReadonlyArray<Condition>,
  recorded: PolicyTotals,
  policies: ReadonlyArray<PolicyTotals>
): ReadonlyArray<GateResult> =>
  policies.flatMap((policy) =>
    conditions.map((condition) => {
      const actual =
        condition.metric === "cost"
          ? (policy.costDelta ?? 0) * 100
          : condition.metric === "lost"
            ? lostCount(policy.totals)
            : condition.metric === "overflow"
              ? policy.totals.overflows
              : policy.totals.failed
      const failed = condition.op === ">" ? actual > condition.value : actual >= condition.value
      const shown =
        condition.metric === "cost"
          ? `cost ${percent(policy.costDelta)} ($${policy.totals.dollars.toFixed(4)} against the recorded $${recorded.totals.dollars.toFixed(4)})`
          : condition.metric === "lost"
            ? `lost ${actual} (${policy.totals.lost.toolResults} tool results, ${policy.totals.lost.userMessages} user messages, ${policy.totals.lost.identifiers} needed identifiers)`
            : condition.metric === "overflow"
              ? `overflow ${actual} renders over the model's window`
              : `failed ${actual} streams the policy could not replay`
      return {
        policy: policy.policy,
        condition: condition.text,
        failed,
        reason: `${policy.policy}: ${shown}${failed ? ` — fails ${condition.text}` : ""}`
      }
    })
  )

/** Sum the streams' runs per policy. @since 0.5.0 */
export const verdictOf = (
  outcomes: ReadonlyArray<SweepPool.Outcome>,
  candidates: ReadonlyArray<Sweep.Candidate>,
  conditions: ReadonlyArray<Condition>,
  meta: { readonly pricer: string; readonly workers: number }
): Verdict => {
  const streams = outcomes.flatMap((outcome) => (outcome.ok ? outcome.results : []))
  const failures = outcomes.flatMap((outcome) =>
    outcome.ok ? [] : [{ source: outcome.source, stream: outcome.stream, error: outcome.error }]
  )
  const recordedTotals = streams.reduce(
    (sum, stream) => Sweep.addTotals(sum, stream.recorded.totals),
    Sweep.emptyTotals
  )
  const recorded: PolicyTotals = { policy: "recorded", totals: recordedTotals, costDelta: 0 }
  const policies = candidates.map((candidate, index): PolicyTotals => {
    const totals = streams.reduce(
      (sum, stream) => Sweep.addTotals(sum, stream.candidates[index]?.totals ?? Sweep.emptyTotals),
      Sweep.emptyTotals
    )
    return {
      policy: candidate.name,
      totals,
      costDelta:
        recordedTotals.dollars === 0 ? null : (totals.dollars - recordedTotals.dollars) / recordedTotals.dollars
    }
  })
  return {
    ...meta,
    recorded,
    policies,
    streams,
    failures,
    gate: gate(conditions, recorded, policies)
  }
}

const compactionText = (compactions: Sweep.Compactions) => {
  const entries = Object.entries(compactions).filter(([, count]) => count > 0)
  return entries.length === 0 ? "-" : entries.map(([kind, count]) => `${kind} ${count}`).join(", ")
}

const rows = (verdict: Verdict): ReadonlyArray<ReadonlyArray<string>> =>
  [verdict.recorded, ...verdict.policies].map((row) => [
    row.policy,
    String(row.totals.streams - row.totals.failed),
    String(row.totals.calls),
    String(row.totals.uncached),
    String(row.totals.cacheWrite),
    String(row.totals.cacheRead),
    `$${row.totals.dollars.toFixed(4)}`,
    row === verdict.recorded ? "" : percent(row.costDelta),
    // Compactor: its own model calls and their dollars (part of DOLLARS).
    row.totals.compactor.calls === 0
      ? "-"
      : `${row.totals.compactor.calls} $${row.totals.compactor.dollars.toFixed(4)}`,
    compactionText(row.totals.compactions),
    String(row.totals.overflows),
    `${row.totals.lost.toolResults}/${row.totals.lost.userMessages}/${row.totals.lost.identifiers}`,
    String(row.totals.failed)
  ])

const header = [
  "POLICY",
  "STREAMS",
  "CALLS",
  "UNCACHED",
  "CACHE-WRITE",
  "CACHE-READ",
  "DOLLARS",
  "Δ$",
  "COMPACTOR",
  "COMPACTIONS",
  "OVERFLOW",
  "LOST T/U/I",
  "FAILED"
]

const textTable = (head: ReadonlyArray<string>, body: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = head.map((name, index) => Math.max(name.length, ...body.map((row) => [...(row[index] ?? "")].length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, index) => cell.padEnd(widths[index] ?? 0))
      .join("  ")
      .trimEnd()
  return [line(head), ...body.map(line)].join("\n")
}

const lostLine = (item: Sweep.LostItem) =>
  `${item.stream}  call ${item.call}  ${item.kind}  ${JSON.stringify(item.item)}  ${
    item.removedBy === null
      ? "never in the what-if window in that form"
      : `removed by ${item.removedBy.type} @${item.removedBy.version}`
  }`

const gateLines = (verdict: Verdict) =>
  verdict.gate.length === 0
    ? []
    : ["", ...verdict.gate.map((result) => `${result.failed ? "FAIL" : "ok  "}  ${result.reason}`)]

/** The text layout: the table, failures, the lost items (with `lost`), the gate. @since 0.5.0 */
export const text = (verdict: Verdict, options: { readonly lost: boolean }): string =>
  [
    `${verdict.streams.length} streams, ${verdict.policies.length} policies, priced by ${verdict.pricer}, ${verdict.workers} workers`,
    "",
    textTable(header, rows(verdict)),
    "LOST T/U/I: tool results never whole in a render / user messages gone before their answer / needed identifiers missing",
    ...(verdict.failures.length === 0
      ? []
      : [
          "",
          "could not be read:",
          ...verdict.failures.map((failure) => `  ${failure.source} ${failure.stream}: ${failure.error}`)
        ]),
    ...verdict.streams.flatMap((stream) =>
      stream.candidates.flatMap((run) =>
        run.error === null ? [] : [`${run.policy} failed on ${stream.stream}: ${run.error}`]
      )
    ),
    ...(options.lost
      ? verdict.policies.flatMap((policy, index) => {
          const items = verdict.streams.flatMap((stream) => stream.candidates[index]?.lost ?? [])
          return ["", `lost under ${policy.policy}: ${items.length}`, ...items.map((item) => `  ${lostLine(item)}`)]
        })
      : []),
    ...gateLines(verdict)
  ].join("\n")

const cell = (value: string) => value.replaceAll("|", "\\|")

/** The markdown layout, for a pull-request comment. @since 0.5.0 */
export const markdown = (verdict: Verdict, options: { readonly lost: boolean }): string => {
  const failing = verdict.gate.filter((result) => result.failed)
  return [
    "### ctxlog policy sweep",
    "",
    `${verdict.streams.length} recorded streams replayed under ${verdict.policies.length} ${verdict.policies.length === 1 ? "policy" : "policies"} (no model calls), priced by \`${verdict.pricer}\`.`,
    "",
    `| ${header.map(cell).join(" | ")} |`,
    `|${header.map(() => " --- ").join("|")}|`,
    ...rows(verdict).map((row) => `| ${row.map(cell).join(" | ")} |`),
    "",
    "LOST T/U/I: tool results never whole in a render / user messages gone before their answer / needed identifiers missing.",
    ...(verdict.gate.length === 0
      ? []
      : [
          "",
          failing.length === 0 ? "**Gate: passed.**" : `**Gate: failed** (${failing.length}).`,
          "",
          ...verdict.gate.map((result) => `- ${result.failed ? "❌" : "✅"} ${cell(result.reason)}`)
        ]),
    ...(options.lost
      ? verdict.policies.flatMap((policy, index) => {
          const items = verdict.streams.flatMap((stream) => stream.candidates[index]?.lost ?? [])
          return items.length === 0
            ? []
            : [
                "",
                `<details><summary>Lost under ${cell(policy.policy)}: ${items.length}</summary>`,
                "",
                "| stream | call | kind | item | removed by |",
                "| --- | --- | --- | --- | --- |",
                ...items.map(
                  (item) =>
                    `| ${cell(item.stream)} | ${item.call} | ${item.kind} | \`${cell(item.item.replaceAll("`", "'"))}\` | ${item.removedBy === null ? "-" : `${item.removedBy.type} @${item.removedBy.version}`} |`
                ),
                "",
                "</details>"
              ]
        })
      : [])
  ].join("\n")
}
