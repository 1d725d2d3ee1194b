// Issue 35: the OpenAI Agents SDK's own session tests, ported, and our own as-users tests, run against
// `CtxlogSession` as users get it. The packed tarballs of @ctxlog/integrations and the packages it
// depends on install into an empty project beside `@openai/agents` (no --legacy-peer-deps, no --force:
// a peer conflict fails the install), and vitest runs there the files of
// packages/integrations/test/ported/ (the SDK's MemorySession contract, run-with-session with approvals
// and rehydration, OpenAIResponsesCompactionSession over CtxlogSession) and test/asUsers/ (the 30-call
// "render is the prompt" test, the real OpenAIResponsesModel against a local Responses server), which
// import only published names (`@ctxlog/integrations/openai-agents`, `@openai/agents`, …): here they
// load our built `dist`, not the workspace sources.
//
// Like the other packInstall tests it runs in CI (`CI=true`) or when `CTXLOG_PACK_INSTALL=1`; elsewhere
// it is skipped.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, inject, it } from "vitest"
import { sharedConsumer } from "./support/consumers.js"
import { exec, gated, root } from "./support/pack.js"

const suites = ["ported", "asUsers"].map((folder) => join(root, "packages", "integrations", "test", folder))

describe.runIf(gated)("the Agents SDK's session tests run against the packed CtxlogSession", () => {
  it("@openai/agents@0.20: installs beside our tarballs, and the ported and as-users suites pass", async () => {
    // @ctxlog/integrations, the packages it depends on, @openai/agents, zod and vitest 3, installed once per
    // run (support/consumers.ts; packInstall.test.ts checks this project too).
    const dir = await sharedConsumer(inject("packed"), "agents")
    mkdirSync(join(dir, "test"), { recursive: true })
    const installed = (name: string): string =>
      JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8")).version
    assert.strictEqual(installed("@openai/agents").split(".").slice(0, 2).join("."), "0.20")
    // `npm ls --all` fails (ELSPROBLEMS) on any installed package whose peer range is not met.
    await exec("npm", ["ls", "--all"], dir)

    const copied: Array<string> = []
    for (const folder of suites) {
      for (const file of readdirSync(folder).filter((name) => name.endsWith(".test.ts"))) {
        copyFileSync(join(folder, file), join(dir, "test", file))
        copied.push(file)
      }
    }
    writeFileSync(
      join(dir, "vitest.config.mjs"),
      'export default { test: { include: ["test/**/*.test.ts"], testTimeout: 120000, hookTimeout: 120000 } }\n'
    )
    await exec(join(dir, "node_modules", ".bin", "vitest"), ["run", "--reporter=json", "--outputFile=report.json"], dir)
    const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8")) as {
      readonly numTotalTests: number
      readonly numPassedTests: number
      readonly numFailedTests: number
      readonly numPendingTests: number
      readonly numTodoTests: number
      readonly testResults: ReadonlyArray<{ readonly name: string; readonly status: string }>
    }
    console.log(
      `packed CtxlogSession: ${copied.length} files (${copied.join(", ")}), ${report.numTotalTests} tests: ` +
        `${report.numPassedTests} passed, ${report.numFailedTests} failed, ${report.numPendingTests} skipped`
    )
    assert.strictEqual(report.testResults.length, copied.length)
    assert.strictEqual(report.numFailedTests, 0)
    assert.strictEqual(report.numPendingTests + report.numTodoTests, 0)
    assert.isAbove(report.numPassedTests, 40)
    assert.strictEqual(report.numPassedTests, report.numTotalTests)
  }, 1_800_000)
})
