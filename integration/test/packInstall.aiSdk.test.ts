// Issue 35: the AI SDK's own wrapLanguageModel tests, ported with ctxlogMiddleware in the chain
// (packages/integrations/test/ported/wrapLanguageModel.suite.mjs cites the vercel/ai file and commits), run
// against @ctxlog/integrations as users get it: the packed tarballs installed into an empty project beside
// `ai@6`, then beside `ai@7` (on Node 20; its manifest asks for 22), with vitest, and the suite run there.
// Every one of its 18 cases must pass under each major.
//
// Like packInstall.test.ts it packs (test/support/packed.ts) and runs npm against the registry: it runs in
// CI (`CI=true`) or when `CTXLOG_PACK_INSTALL=1`; elsewhere it is skipped.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, inject, it } from "vitest"
import { sharedConsumer } from "./support/consumers.js"
import { exec, gated, root } from "./support/pack.js"

const entry = (major: number) => `
import { wrapLanguageModel } from "ai"
import * as mocks from "ai/test"
import { afterAll, describe, expect, it, vi } from "vitest"
import { ctxlogMiddleware } from "@ctxlog/integrations/ai-sdk"
import { wrapLanguageModelSuite } from "./wrapLanguageModel.suite.mjs"
const v4 = mocks.MockLanguageModelV4 !== undefined
wrapLanguageModelSuite({
  label: "ai ${major} (packed tarballs)",
  wrapLanguageModel,
  MockModel: v4 ? mocks.MockLanguageModelV4 : mocks.MockLanguageModelV3,
  specificationVersion: v4 ? "v4" : "v3",
  ctxlogMiddleware,
  t: { describe, it, expect, vi, afterAll }
})
`

describe.runIf(gated)("the AI SDK's wrapLanguageModel tests with ctxlogMiddleware, on the packed tarballs", () => {
  for (const major of [6, 7]) {
    it(`ai@${major}: the ported suite passes, 18 of 18`, async () => {
      // @ctxlog/integrations, the packages it depends on, ai, zod and vitest 3, installed once per run
      // (support/consumers.ts; packInstall.test.ts checks this project too).
      const dir = await sharedConsumer(inject("packed"), major === 6 ? "ai6" : "ai7")
      const installed = JSON.parse(readFileSync(join(dir, "node_modules", "ai", "package.json"), "utf8")).version
      assert.strictEqual(String(installed).split(".")[0], String(major))
      copyFileSync(
        join(root, "packages", "integrations", "test", "ported", "wrapLanguageModel.suite.mjs"),
        join(dir, "wrapLanguageModel.suite.mjs")
      )
      writeFileSync(join(dir, "ported.test.mjs"), entry(major))
      const out = await exec(join(dir, "node_modules", ".bin", "vitest"), ["run", "--testTimeout=120000"], dir)
      console.log(`ai@${installed}: ${out.split("\n").find((line) => line.includes("Tests")) ?? out}`)
      assert.match(out, /Tests\s+18 passed \(18\)/)
    }, 900_000)
  }
})
