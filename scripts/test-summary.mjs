// The one count of a test run, shared by `.ci/run` and `pnpm test:all`: reads the output of
// `turbo run test` and prints the closing line
//   <prefix>: N passed, N failed
// vitest prints "Tests  N passed (N)" or "Tests  F failed | N passed (T)" per package; turbo prefixes
// each line with "<package>:test: ". A package whose test task failed (turbo: "<package>#test" in its
// "Failed:" line, or "<package>#test: ERROR command ...") without any failed test counted is one failure
// more (a crash, an unhandled error, no Tests line), and so is every failed step other than the tests,
// so the line never says "0 failed" on a red run.
// Usage: node scripts/test-summary.mjs [--prefix ci] [--status N] [--failed-step NAME ...] LOG
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { stripVTControlCharacters } from "node:util"

const sum = (lines, word) =>
  lines.reduce((total, line) => {
    const match = line.match(new RegExp(`(\\d+) ${word}`))
    return total + (match === null ? 0 : Number(match[1]))
  }, 0)

/**
 * The notes and the closing line for a run's test output.
 * `status` is the run's exit status (a red run reports at least one failure); `failedSteps` the names of
 * the steps that failed (`test` and `test:…`, e.g. .ci/run's `test:integration`, are counted from the
 * output, not as steps).
 */
export const summarize = (log, { prefix = "ci", status = 0, failedSteps = [] } = {}) => {
  const lines = stripVTControlCharacters(log).split("\n")
  const summary = lines.filter((line) => /^\S+:test: +Tests +/.test(line))
  const passed = sum(summary, "passed")
  let failed = sum(summary, "failed")
  const notes = []
  const failedPackages = new Set()
  for (const line of lines) {
    if (/^ *Failed: /.test(line)) for (const match of line.matchAll(/([^ ,]+)#test/g)) failedPackages.add(match[1])
    const crashed = line.match(/^(\S+)#test: +ERROR +command/)
    if (crashed !== null) failedPackages.add(crashed[1])
  }
  for (const pkg of [...failedPackages].sort()) {
    const own = summary.filter((line) => line.startsWith(`${pkg}:test:`))
    if (sum(own, "failed") === 0) {
      notes.push(
        `${prefix}: ${pkg}: vitest failed without a failed test in its summary (crash, unhandled error or no Tests line)`
      )
      failed += 1
    }
  }
  for (const step of failedSteps) {
    if (step === "test" || step.startsWith("test:")) continue
    notes.push(`${prefix}: step failed: ${step}`)
    failed += 1
  }
  if (status !== 0 && failed === 0) failed = 1
  return { passed, failed, notes, line: `${prefix}: ${passed} passed, ${failed} failed` }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const options = { prefix: "ci", status: 0, failedSteps: [] }
  let file
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]
    if (arg === "--prefix") options.prefix = args[++index]
    else if (arg === "--status") options.status = Number(args[++index])
    else if (arg === "--failed-step") options.failedSteps.push(args[++index])
    else file = arg
  }
  let log = ""
  try {
    log = file === undefined ? readFileSync(0, "utf8") : readFileSync(file, "utf8")
  } catch {
    // No log (the run stopped before the tests): only the steps and the status count.
  }
  const result = summarize(log, options)
  for (const note of result.notes) console.log(note)
  console.log(result.line)
}
