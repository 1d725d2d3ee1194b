// `pnpm test:all`: what CI checks, readable. Runs the system-deps check, the typecheck, lint, cycle
// check, build, every package's tests (turbo, two at a time), the pack check and the bare-clone check;
// each passing step and each passing package prints one line, a failing one prints its output in full,
// and the run closes with the count `.ci/run` prints, from the same script (scripts/test-summary.mjs):
//   test:all: N passed, N failed
// Like CI, a failed step does not stop the later ones (tests run on sources), except the system deps.
// Usage: node scripts/test-all.mjs            (the run)
//        node scripts/test-all.mjs --replay LOG  (filter and count a recorded `turbo run test` log)
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { stripVTControlCharacters } from "node:util"
import { summarize } from "./test-summary.mjs"

const root = resolve(import.meta.dirname, "..")
const prefix = "test:all"

/**
 * A line filter for `turbo run test --log-order=grouped` output: lines are grouped by their
 * `<package>:test: ` prefix; when a package's vitest run ends (its "Duration" line) the group prints as
 * one line if it passed, in full if anything failed. Groups that never end (a crash) print in full at
 * `end`, and so do turbo's own lines when the run failed.
 */
export const testFilter = (print) => {
  const groups = new Map()
  const other = []
  const passedLine = (pkg, lines) => {
    const plain = lines.map((line) => stripVTControlCharacters(line))
    const tests = plain.find((line) => / Tests +\d/.test(line))?.match(/Tests +(.*)$/)?.[1] ?? "no tests"
    const files = plain.find((line) => / Test Files +\d/.test(line))?.match(/Test Files +(\d+) passed/)?.[1]
    return `  ✓ ${pkg}: ${tests.replace(/ \(\d+\)$/, "")}${files === undefined ? "" : ` in ${files} file${files === "1" ? "" : "s"}`}`
  }
  const failedGroup = (lines) =>
    lines.some((line) => {
      const plain = stripVTControlCharacters(line)
      return / Tests +.*\bfailed\b/.test(plain) || / Test Files +.*\bfailed\b/.test(plain) || /\bFAIL\b/.test(plain)
    })
  const flush = (pkg, lines) => {
    if (failedGroup(lines)) {
      print(`  ✗ ${pkg}: failed; its output:`)
      for (const line of lines) print(line)
    } else print(passedLine(pkg, lines))
  }
  return {
    push: (line) => {
      const match = stripVTControlCharacters(line).match(/^(\S+):test: (.*)$/)
      if (match === null) {
        other.push(line)
        return
      }
      const [, pkg, rest] = match
      // Blank lines after a package's summary start no new group.
      if (!groups.has(pkg) && rest.trim() === "") return
      const lines = groups.get(pkg) ?? []
      lines.push(line)
      groups.set(pkg, lines)
      if (/^ *Duration +\d/.test(rest) && lines.some((seen) => / Tests +\d/.test(stripVTControlCharacters(seen)))) {
        groups.delete(pkg)
        flush(pkg, lines)
      }
    },
    end: (failed) => {
      for (const [pkg, lines] of groups) {
        print(`  ✗ ${pkg}: ended without a vitest summary; its output:`)
        for (const line of lines) print(line)
      }
      groups.clear()
      if (failed) for (const line of other.filter((line) => line.trim() !== "")) print(line)
    }
  }
}

/** Run a command; `onLine` sees each line of its output (stdout and stderr); resolves to the exit status. */
const run = (command, args, onLine) =>
  new Promise((done) => {
    const child = spawn(command, args, { cwd: root, env: process.env, stdio: ["ignore", "pipe", "pipe"] })
    let pending = ""
    const take = (chunk) => {
      pending += chunk
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) onLine(line)
    }
    child.stdout.setEncoding("utf8").on("data", take)
    child.stderr.setEncoding("utf8").on("data", take)
    child.on("close", (code, signal) => {
      if (pending !== "") onLine(pending)
      done(code ?? (signal === null ? 1 : 128))
    })
  })

const seconds = (start) => `${((Date.now() - start) / 1000).toFixed(0)} s`

const replay = (file) => {
  const log = readFileSync(file, "utf8")
  const failedRun = /^ *Failed: /m.test(stripVTControlCharacters(log))
  const filter = testFilter((line) => console.log(line))
  for (const line of log.split("\n")) filter.push(line)
  filter.end(failedRun)
  const result = summarize(log, { prefix, status: failedRun ? 1 : 0 })
  for (const note of result.notes) console.log(note)
  console.log(result.line)
  process.exit(result.failed === 0 ? 0 : 1)
}

const main = async () => {
  const failedSteps = []
  let testLog = ""
  const step = async (name, command, args) => {
    const start = Date.now()
    const output = []
    const status = await run(command, args, (line) => output.push(line))
    if (status === 0) console.log(`✓ ${name} (${seconds(start)})`)
    else {
      failedSteps.push(name)
      console.log(`✗ ${name} failed (exit ${status}, ${seconds(start)}); its output:`)
      for (const line of output) console.log(line)
    }
    return status
  }
  if ((await step("system deps", "node", ["scripts/ensure-system-deps.mjs"])) !== 0) {
    console.log(summarize("", { prefix, status: 1, failedSteps }).line)
    process.exit(1)
  }
  await step("typecheck", "pnpm", ["typecheck"])
  // The scripts' own tests: the test count, the cycle check (a value cycle fails it) and the contract check.
  await step("scripts", "pnpm", ["test:scripts"])
  await step("lint", "pnpm", ["exec", "biome", "check", "."])
  await step("cycles", "pnpm", ["cycles"])
  await step("contracts", "pnpm", ["contracts"])
  await step("versions", "pnpm", ["versions"])
  await step("build", "node", ["scripts/build.mjs"])
  await step("docs", "pnpm", ["docs"])
  // Packed once for the tests, the pack check and the publish dry run, as in .ci/run.
  const packedDir = mkdtempSync(join(tmpdir(), "ctxlog-test-all-packed-"))
  process.on("exit", () => rmSync(packedDir, { recursive: true, force: true }))
  if ((await step("pack", "node", ["scripts/release-pack.mjs", packedDir])) === 0)
    process.env.CTXLOG_PACKED_DIR = packedDir
  {
    const start = Date.now()
    console.log("… tests (every package, two at a time; a package prints one line when it passes)")
    const filter = testFilter((line) => console.log(line))
    const lines = []
    const status = await run(
      "pnpm",
      ["exec", "turbo", "run", "test", "--concurrency=2", "--continue", "--log-order=grouped"],
      (line) => {
        lines.push(line)
        filter.push(line)
      }
    )
    filter.end(status !== 0)
    testLog = lines.join("\n")
    if (status !== 0) failedSteps.push("test")
    console.log(`${status === 0 ? "✓" : "✗"} tests (${seconds(start)})`)
  }
  await step("pack check", "node", ["scripts/pack-check.mjs"])
  await step("publish dry run", "node", ["scripts/publish-check.mjs"])
  await step("bare clone", "node", ["scripts/bare-clone-check.mjs"])
  const result = summarize(testLog, { prefix, status: failedSteps.length === 0 ? 0 : 1, failedSteps })
  for (const note of result.notes) console.log(note)
  console.log(result.line)
  process.exit(failedSteps.length === 0 ? 0 : 1)
}

// Only as a script: the filter is imported by scripts/test-summary.test.mjs.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const replayAt = process.argv.indexOf("--replay")
  if (replayAt >= 0) replay(process.argv[replayAt + 1])
  else await main()
}
