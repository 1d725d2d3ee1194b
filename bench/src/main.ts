// `pnpm bench [--quick] [scenario ...]`: runs the scenarios (all, or those named), prints the table and
// writes results/latest.json. Sizes come from BENCH_<NAME> variables (see BENCHMARKS.md); --quick picks
// the small defaults (a few minutes), the full run the large ones.
import { cpus } from "node:os"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Row } from "./harness.js"
import { table } from "./harness.js"
import type { Server } from "./postgres.js"
import { type Run, scenarios, startServer } from "./scenarios.js"
import { targetTable } from "./targets.js"
import { drift, report } from "./check.js"

const args = process.argv.slice(2).filter((arg) => arg !== "--")
const quick = args.includes("--quick") || process.env.BENCH_QUICK === "1"
// --check: compare this run with the committed results/latest.json (left as it is; this run goes to
// results/check.json) and exit 1 when a figure moved beyond its spread.
const check = args.includes("--check")
const named = args.filter((arg) => !arg.startsWith("--"))
const unknown = named.filter((name) => !scenarios.some((scenario) => scenario.name === name))
if (args.includes("--help") || unknown.length > 0) {
  if (unknown.length > 0) console.error(`unknown scenario(s): ${unknown.join(", ")}`)
  console.log("usage: pnpm bench [--quick] [--check] [scenario ...]\n\nscenarios:")
  for (const scenario of scenarios) console.log(`  ${scenario.name.padEnd(16)} ${scenario.describe}`)
  process.exit(unknown.length > 0 ? 2 : 0)
}
const selected = named.length === 0 ? scenarios : scenarios.filter((scenario) => named.includes(scenario.name))

const fromEnv = (name: string): string | undefined => {
  const value = process.env[`BENCH_${name}`]
  return value === undefined || value.trim() === "" ? undefined : value
}

const positive = (name: string, raw: string): number => {
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`BENCH_${name} must be a positive number, got ${JSON.stringify(raw)}`)
  return value
}

let server: Promise<Server | string> | undefined
const run: Run = {
  quick,
  size: (name, quickSize, fullSize) => {
    const raw = fromEnv(name)
    return raw === undefined ? (quick ? quickSize : fullSize) : positive(name, raw)
  },
  sizes: (name, quickSizes, fullSizes) => {
    const raw = fromEnv(name)
    return raw === undefined
      ? quick
        ? quickSizes
        : fullSizes
      : raw.split(",").map((part) => positive(name, part.trim()))
  },
  postgres: () => {
    server ??= startServer()
    return server
  },
  budgetS: (() => {
    const raw = fromEnv("BUDGET_S")
    return raw === undefined ? (quick ? 30 : 120) : positive("BUDGET_S", raw)
  })()
}

const cpuModel = (): string => {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"))
    return line?.split(":")[1]?.trim() ?? cpus()[0]?.model ?? "unknown"
  } catch {
    return cpus()[0]?.model ?? "unknown"
  }
}

const started = Date.now()
const all: Array<Row> = []
const timings: Array<{ scenario: string; seconds: number }> = []
for (const scenario of selected) {
  const t0 = Date.now()
  console.log(`bench: ${scenario.name}: ${scenario.describe}`)
  try {
    const result = await scenario.run(run)
    all.push(...result)
    // Progress only: the table is printed once, at the end.
    console.log(`bench: ${scenario.name}: ${result.length} row(s)`)
  } catch (cause) {
    const message = cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)
    console.error(`bench: ${scenario.name} failed: ${message}`)
    all.push({
      scenario: scenario.name,
      size: "",
      subject: "failed",
      unit: "",
      medianUs: null,
      spreadPct: null,
      ratioVsCtxlog: null,
      note: message.split("\n")[0] ?? "",
      rssMiB: 0
    })
  }
  timings.push({ scenario: scenario.name, seconds: Math.round((Date.now() - t0) / 1000) })
  console.log(`bench: ${scenario.name} took ${Math.round((Date.now() - t0) / 1000)} s\n`)
}
const resolved = server === undefined ? undefined : await server
if (resolved !== undefined && typeof resolved !== "string") resolved.stop()

const machine = {
  nproc: cpus().length,
  cpu: cpuModel(),
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  loadavg: (await import("node:os")).loadavg().map((n) => Math.round(n * 100) / 100)
}
const out = join(dirname(fileURLToPath(import.meta.url)), "..", "results")
mkdirSync(out, { recursive: true })
const committed = ((): { readonly quick?: boolean; readonly rows: ReadonlyArray<Row> } | undefined => {
  if (!check) return undefined
  try {
    return JSON.parse(readFileSync(join(out, "latest.json"), "utf8"))
  } catch {
    return undefined
  }
})()
const result = {
  date: new Date().toISOString(),
  quick,
  machine,
  seconds: Math.round((Date.now() - started) / 1000),
  timings,
  rows: all
}
writeFileSync(join(out, check ? "check.json" : "latest.json"), `${JSON.stringify(result, null, 2)}\n`)
console.log(
  `bench: ${selected.length} scenario(s) in ${result.seconds} s on ${machine.nproc} × ${machine.cpu} (load ${machine.loadavg.join(" ")})`
)
console.log(`bench: the targets\n\n${targetTable(all)}\n`)
console.log(`bench: the table\n\n${table(all)}\n\nwritten to bench/results/${check ? "check" : "latest"}.json`)
if (check) {
  if (committed === undefined) {
    console.error("bench --check: no bench/results/latest.json to compare with")
    process.exit(1)
  }
  if (committed.quick !== quick) {
    console.log(
      `bench --check: latest.json was a ${committed.quick ? "--quick" : "full"} run, this one is not: sizes differ`
    )
  }
  const result = drift(committed.rows, all)
  console.log(`\n${report(result, all)}`)
  if (result.moved.length > 0) process.exitCode = 1
}
