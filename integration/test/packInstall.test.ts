// Issue 23: the packed tarballs install into an empty project beside the frameworks agent developers use,
// with no peer conflict (npm's ERESOLVE fails the install): `ai@6`, `ai@7`, `@openai/agents` (which
// brings `openai@7`), `vitest@4` and `vitest@5`. Each case installs once (`--prefer-offline`) and then checks what it
// installed: the adapters load and convert; TypeScript accepts our AI SDK messages as `ModelMessage[]`
// of that `ai` major; the EventLog conformance suite of `@ctxlog/testing` runs and passes under vitest 4 and 5.
//
// The `ai` and `@openai/agents` projects are the ones packInstall.aiSdk.test.ts and
// packInstall.openaiAgents.test.ts use too, installed once per run (test/support/consumers.ts: with their
// packages and vitest 3 as well); the vitest 4 and 5 projects are this file's own.
//
// It installs packages `test/support/packed.ts` packs once per run (building them) and runs npm
// against the registry: minutes, not seconds. It runs in CI (`CI=true`, as `.ci/run` sets it) or when
// `CTXLOG_PACK_INSTALL=1`; elsewhere it is skipped.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, inject, it } from "vitest"
import { sharedConsumer } from "./support/consumers.js"
import { exec, gated, tarballsOf } from "./support/pack.js"

const packages = ["core", "compaction", "providers", "testing"]

const roundTrip = `
import { Message } from "@ctxlog/core"
import { fromModelMessages, toModelMessages } from "@ctxlog/providers/ai-sdk"
import { fromOpenAI, toOpenAI } from "@ctxlog/providers/openai"
import * as Either from "effect/Either"
const messages = [Message.user("hi"), Message.assistant("", [Message.toolCall("c1", "ls", { path: "." })]), Message.tool("c1", "a.txt")]
const ai = Either.flatMap(toModelMessages(messages), (out) => fromModelMessages(out))
const openai = Either.flatMap(toOpenAI(messages), fromOpenAI)
if (Either.isLeft(ai) || Either.isLeft(openai)) throw new Error("round trip failed")
console.log(JSON.stringify({ ai: ai.right.length, openai: openai.right.length }))
`

const typesCheck = `
import type { ModelMessage } from "ai"
import { Message } from "@ctxlog/core"
import { fromModelMessages, toModelMessages } from "@ctxlog/providers/ai-sdk"
import * as Either from "effect/Either"
const out: Either.Either<Array<ModelMessage>, unknown> = toModelMessages([Message.user("hi")])
const back = Either.flatMap(out, (messages: ReadonlyArray<ModelMessage>) => fromModelMessages(messages))
export const ok: boolean = Either.isRight(back)
`

const conformance = `
import { EventLog } from "@ctxlog/core"
import { eventLogConformance } from "@ctxlog/testing"
eventLogConformance("memory (vitest 4)", EventLog.layerMemory())
`

const tsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"]
  },
  files: ["check.ts"]
}

describe.runIf(gated)("packed tarballs install beside the frameworks, without peer conflicts", () => {
  let work = ""
  let tarballs: ReadonlyArray<string> = []

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "ctxlog-pack-install-"))
    tarballs = tarballsOf(inject("packed"), packages)
  })

  afterAll(() => {
    if (work !== "") rmSync(work, { recursive: true, force: true })
  })

  const project = async (label: string, deps: ReadonlyArray<string>): Promise<string> => {
    const dir = join(work, label.replace(/[^a-z0-9]+/gi, "-"))
    mkdirSync(dir)
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    // No --legacy-peer-deps, no --force: a peer conflict fails the install with ERESOLVE.
    await exec(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        ...tarballs,
        "effect@^3.22.4",
        ...deps
      ],
      dir
    )
    return dir
  }

  const installed = (dir: string, name: string): string =>
    JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8")).version

  for (const major of [6, 7]) {
    it(`ai@${major}: installs, converts, and TypeScript accepts our messages as its ModelMessage[]`, async () => {
      const dir = await sharedConsumer(inject("packed"), major === 6 ? "ai6" : "ai7")
      assert.strictEqual(installed(dir, "ai").split(".")[0], String(major))
      writeFileSync(join(dir, "round-trip.mjs"), roundTrip)
      assert.deepStrictEqual(JSON.parse(await exec("node", ["round-trip.mjs"], dir)), { ai: 3, openai: 3 })
      writeFileSync(join(dir, "check.ts"), typesCheck)
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig))
      await exec(join(dir, "node_modules", ".bin", "tsc"), ["-p", "."], dir)
    }, 900_000)
  }

  it("@openai/agents (openai@7): installs beside our openai peer range and converts", async () => {
    const dir = await sharedConsumer(inject("packed"), "agents")
    assert.strictEqual(installed(dir, "openai").split(".")[0], "7")
    writeFileSync(join(dir, "round-trip.mjs"), roundTrip)
    assert.deepStrictEqual(JSON.parse(await exec("node", ["round-trip.mjs"], dir)), { ai: 3, openai: 3 })
  }, 900_000)

  // vitest 5's manifest asks for Node 22; the suite runs on it here on Node 20 all the same.
  for (const major of [4, 5]) {
    it(`vitest@${major}: @ctxlog/testing installs beside it and its conformance suite passes under it`, async () => {
      const dir = await project(`vitest${major}`, [`vitest@^${major}`])
      assert.strictEqual(installed(dir, "vitest").split(".")[0], String(major))
      writeFileSync(join(dir, "conformance.test.mjs"), conformance)
      const out = await exec(join(dir, "node_modules", ".bin", "vitest"), ["run", "--testTimeout=120000"], dir)
      assert.match(out, /Tests\s+17 passed \(17\)/)
    }, 900_000)
  }
})
