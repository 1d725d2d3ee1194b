/**
 * Importing `@ctxlog/core` loads no tokenizer: an encoding's tables are loaded by the first count with a
 * counter of that encoding, and only that encoding's. Checked in a fresh process, where the ESM loader's
 * resolves of `gpt-tokenizer` are recorded too (a static import would show there).
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { assert, describe, it } from "@effect/vitest"

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
const run = promisify(execFile)

const loads = async (counts: ReadonlyArray<string>) => {
  const log = join(mkdtempSync(join(tmpdir(), "ctxlog-tokenizer-")), "resolves.txt")
  writeFileSync(log, "")
  const { stdout } = await run(
    process.execPath,
    [
      "--conditions=@ctxlog/source",
      "--import",
      "tsx",
      "--import",
      "./test/child/recordResolves.mjs",
      "test/child/tokenizerLoads.ts",
      ...counts
    ],
    { cwd: packageDir, env: { ...process.env, CTXLOG_RESOLVE_LOG: log } }
  )
  const steps: ReadonlyArray<{ step: string; loaded: ReadonlyArray<string> }> = JSON.parse(stdout.trim())
  return { steps, esmResolves: readFileSync(log, "utf8").split("\n").filter(Boolean) }
}

describe("TokenCounter loads an encoding on first use", () => {
  it("importing the package and making counters loads none; a count loads its encoding only", async () => {
    const { steps, esmResolves } = await loads(["o200k_base"])
    assert.deepStrictEqual(esmResolves, [], "the ESM loader resolved gpt-tokenizer")
    assert.deepStrictEqual(steps, [
      { step: "import", loaded: [] },
      { step: "made counters", loaded: [] },
      { step: "counted o200k_base", loaded: ["o200k_base.js"] }
    ])
  }, 60_000)

  it("each encoding is loaded once, by its own first count", async () => {
    const { steps } = await loads(["cl100k_base", "o200k_base", "cl100k_base"])
    assert.deepStrictEqual(
      steps.map((step) => step.loaded),
      [[], [], ["cl100k_base.js"], ["cl100k_base.js", "o200k_base.js"], ["cl100k_base.js", "o200k_base.js"]]
    )
  }, 60_000)
})
