// The test count and the test:all filter on recorded `turbo run test --log-order=grouped` logs: a
// passing run (two packages), and the same run doctored to a failed test in one package and a crash
// without a vitest summary in another. Run with `node --test scripts/` (a step of .ci/run and test:all).
import assert from "node:assert/strict"
import { readFileSync } from "node:fs"
import { test } from "node:test"
import { testFilter } from "./test-all.mjs"
import { summarize } from "./test-summary.mjs"

const log = (name) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")

const filtered = (text, failed) => {
  const printed = []
  const filter = testFilter((line) => printed.push(line))
  for (const line of text.split("\n")) filter.push(line)
  filter.end(failed)
  return printed
}

test("a passing run: one line per package, and the total", () => {
  const text = log("turbo-test-passed.log")
  assert.deepEqual(filtered(text, false), [
    "  ✓ @ctxlog/client: 4 passed in 1 file",
    "  ✓ @ctxlog/seam: 29 passed in 6 files"
  ])
  const result = summarize(text, { prefix: "test:all" })
  assert.equal(result.line, "test:all: 33 passed, 0 failed")
  assert.deepEqual(result.notes, [])
})

test("a failed test prints its package in full; a crash counts as one failure; failed steps count", () => {
  const text = log("turbo-test-failed.log")
  const printed = filtered(text, true)
  assert.ok(printed.includes("  ✗ @ctxlog/client: failed; its output:"))
  assert.ok(printed.some((line) => line.includes("AssertionError: expected 1 to be 0")))
  assert.ok(printed.includes("  ✓ @ctxlog/seam: 29 passed in 6 files"))
  assert.ok(printed.includes("  ✗ @ctxlog/memory: ended without a vitest summary; its output:"))
  assert.ok(printed.some((line) => line.includes("Failed:    @ctxlog/client#test, @ctxlog/memory#test")))
  const result = summarize(text, { prefix: "ci", status: 1, failedSteps: ["build", "test"] })
  assert.equal(result.line, "ci: 32 passed, 3 failed")
  assert.deepEqual(result.notes, [
    "ci: @ctxlog/memory: vitest failed without a failed test in its summary (crash, unhandled error or no Tests line)",
    "ci: step failed: build"
  ])
})

test("two test logs (the packages' and .ci/run's test:integration beside them) count together, steps once", () => {
  const passed = log("turbo-test-passed.log")
  const failed = log("turbo-test-failed.log")
  const result = summarize(`${failed}\n${passed}`, {
    prefix: "ci",
    status: 1,
    failedSteps: ["test", "test:integration"]
  })
  // 32 + 33 passed; the failed log's client test and memory crash; neither test step counted again.
  assert.equal(result.line, "ci: 65 passed, 2 failed")
})

test("a red run with nothing counted still reports a failure", () => {
  assert.equal(summarize("", { status: 2 }).line, "ci: 0 passed, 1 failed")
})
