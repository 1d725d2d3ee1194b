// The AI SDK's own wrapLanguageModel tests with ctxlogMiddleware in the chain (ported: see
// test/ported/wrapLanguageModel.suite.mjs), on ai 6 (`ai`) and ai 7 (`ai-v7`), against the workspace source.
// integration/test/packInstall.aiSdk.test.ts runs the same cases against the packed tarballs.
import * as ai6 from "ai"
import { MockLanguageModelV3 } from "ai/test"
import * as ai7 from "ai-v7"
import { MockLanguageModelV4 } from "ai-v7/test"
import { afterAll, describe, expect, it, vi } from "vitest"
import { ctxlogMiddleware } from "../src/aiSdk.js"
import { wrapLanguageModelSuite } from "./ported/wrapLanguageModel.suite.mjs"

const t = { describe, it, expect, vi, afterAll }
wrapLanguageModelSuite({
  label: "ai 6",
  wrapLanguageModel: ai6.wrapLanguageModel,
  MockModel: MockLanguageModelV3,
  specificationVersion: "v3",
  ctxlogMiddleware,
  t
})
wrapLanguageModelSuite({
  label: "ai 7",
  wrapLanguageModel: ai7.wrapLanguageModel,
  MockModel: MockLanguageModelV4,
  specificationVersion: "v4",
  ctxlogMiddleware,
  t
})
