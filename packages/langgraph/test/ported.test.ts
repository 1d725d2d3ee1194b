/**
 * LangGraph's own checkpointer tests (checkpoint-sqlite's and MemorySaver's, `test/ported/checkpoints.port.mjs`,
 * provenance in its header) run against CtxlogSaver on SQLite and on PostgreSQL, under `node --test` as
 * a user's project would import `@ctxlog/langgraph` (here from the workspace's sources; the packed
 * tarballs run the same file in integration/test/packInstall.langgraph.test.ts). Every case must pass.
 */
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, inject, it } from "vitest"
import { sourceArgs } from "./support/cli.js"

const file = join(dirname(fileURLToPath(import.meta.url)), "ported", "checkpoints.port.mjs")

const runPorted = (env: Record<string, string>): Promise<{ readonly code: number; readonly out: string }> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [...sourceArgs, "--test", "--test-reporter=tap", file],
      { env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : ((error.code ?? 1) as number), out: `${stdout}${stderr}` })
    )
  })

const count = (out: string, key: string): number => Number(new RegExp(`^# ${key} (\\d+)$`, "m").exec(out)?.[1] ?? -1)

describe("LangGraph's checkpoint-sqlite and MemorySaver tests on CtxlogSaver", () => {
  for (const backend of ["sqlite", "postgres"] as const) {
    it(`on ${backend}: 10 of 10 pass`, async () => {
      const { code, out } = await runPorted({ CTXLOG_PORT_BACKEND: backend, CTXLOG_PORT_PG_URL: inject("pgUrl") })
      if (code !== 0) console.log(out)
      expect({ code, tests: count(out, "tests"), pass: count(out, "pass"), fail: count(out, "fail") }).toEqual({
        code: 0,
        tests: 10,
        pass: 10,
        fail: 0
      })
    })
  }
})
