// `pnpm typecheck`'s program (tsconfig.check.json: every package, app, test and bench but the inspector's tests),
// checked as `tsc -p tsconfig.check.json` checks it, and — with `--api-check` — the public API reports
// (`pnpm api:check`) compared from the same program (ADR 0150). The two used to build two programs over
// the same sources (56 s and 38 s of CPU in CI); the reports need only the declarations of the public
// modules, which this program emits in memory before its files are checked. The program is created with
// the reports' emit options (declarations only, comments removed); those options change what is emitted,
// not what is checked, and nothing is written to disk.
//
// With `--contracts`, `pnpm contracts` (scripts/public-contracts.mjs) walks this program's checker too, not a
// program of its own (13 s of CPU).
//
// Usage: node scripts/typecheck.mjs [--api-check] [--contracts]
//        (exit 1 on a type error, an out-of-date report or a public definition in internal/)
import path from "node:path"
import ts from "typescript"
import { checkProgram, reportsCurrent, reportsOf } from "./api-report.mjs"
import { publicDefinitionsInInternal, reportContracts } from "./public-contracts.mjs"

const root = path.resolve(import.meta.dirname, "..")
const apiCheck = process.argv.includes("--api-check")
const contracts = process.argv.includes("--contracts")
const { program, diagnostics: check } = checkProgram(root)
// The reports before the check, as `pnpm api:report` makes them (checkProgram's note in api-report.mjs).
const reports = apiCheck ? reportsOf(root, program) : []
const diagnostics = check()
if (diagnostics.length > 0) {
  const host = {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => root,
    getNewLine: () => "\n"
  }
  const pretty = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics
  process.stdout.write(pretty(diagnostics, host))
  console.log(`\nFound ${diagnostics.length} error${diagnostics.length === 1 ? "" : "s"} (tsconfig.check.json).`)
  process.exit(1)
}
console.log(`typecheck: ${program.getRootFileNames().length} files of tsconfig.check.json, no errors`)
let failed = false
if (apiCheck && !reportsCurrent(root, reports)) failed = true
// `pnpm contracts` (no public definition in an internal/ file) on this program's checker.
if (contracts && reportContracts(publicDefinitionsInInternal(root, program)) !== 0) failed = true
if (failed) process.exit(1)
