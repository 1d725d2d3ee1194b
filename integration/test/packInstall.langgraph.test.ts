// Issue 26: the packed tarballs of @ctxlog/langgraph and the packages it depends on install into an empty
// project beside `@langchain/langgraph` and `@langchain/core` with no peer conflict (npm's ERESOLVE fails
// the install: no --legacy-peer-deps, no --force), and the example `examples/langgraph-agent.mjs` runs
// there: a ReAct agent with `CtxlogSaver` and `ctxlogPreModelHook`, resumed in a second process, every
// render rebuilt.
//
// Then LangGraph's own checkpoint-sqlite and MemorySaver tests (packages/langgraph/test/ported/, provenance
// in the file) run there under `node --test` against the installed CtxlogSaver, on SQLite and on
// PostgreSQL (the memory package's test server): every case must pass.
//
// It installs eight of the packages `test/support/packed.ts` packs once per run (building them) and runs
// npm against the registry: minutes, not seconds. Like packInstall.test.ts it runs in CI (`CI=true`) or
// when `CTXLOG_PACK_INSTALL=1`; elsewhere it is skipped.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, inject, it } from "vitest"
import { exec, gated, installConsumer, root, tarballsOf } from "./support/pack.js"

// @ctxlog/langgraph and every package of ours it depends on.
const packages = ["core", "compaction", "providers", "memory", "seam", "turn", "client", "langgraph"]

describe.runIf(gated)("packed tarballs install beside LangGraph, without peer conflicts, and run the example", () => {
  let work = ""
  let tarballs: ReadonlyArray<string> = []

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), "ctxlog-pack-langgraph-"))
    tarballs = tarballsOf(inject("packed"), packages)
  })

  afterAll(() => {
    if (work !== "") rmSync(work, { recursive: true, force: true })
  })

  it("@langchain/langgraph@1 and @langchain/core@1: installs, and examples/langgraph-agent.mjs runs", async () => {
    const dir = join(work, "consumer")
    mkdirSync(dir)
    await installConsumer(dir, tarballs, [
      "@langchain/langgraph@^1.7.0",
      "@langchain/core@^1.1.48",
      "@langchain/langgraph-checkpoint@^1.2.2",
      "pg@^8.16.3"
    ])
    const installed = (name: string): string =>
      JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8")).version
    assert.strictEqual(installed("@langchain/langgraph").split(".")[0], "1")
    assert.strictEqual(installed("@langchain/core").split(".")[0], "1")
    // `npm ls --all` fails (ELSPROBLEMS) on any installed package whose peer range is not met.
    await exec("npm", ["ls", "--all"], dir)

    copyFileSync(join(root, "examples", "langgraph-agent.mjs"), join(dir, "langgraph-agent.mjs"))
    const out = await exec("node", ["langgraph-agent.mjs"], dir)
    console.log(out)
    assert.match(
      out,
      /process 2 \(restarted\): Is there a test for it\?\n {2}the thread holds 4 messages before this run/
    )
    assert.match(out, /the model's stream demo\/model: 4 renders, 4 rebuilt to their recorded hash, 0 failures/)
    assert.match(out, /pnpm ctxlog render demo\/model --db /)

    // LangGraph's own saver tests, on the installed tarballs.
    const ported = join(root, "packages", "langgraph", "test", "ported", "checkpoints.port.mjs")
    copyFileSync(ported, join(dir, "checkpoints.port.mjs"))
    for (const backend of ["sqlite", "postgres"]) {
      const tap = await exec("node", ["--test", "--test-reporter=tap", "checkpoints.port.mjs"], dir, {
        CTXLOG_PORT_BACKEND: backend,
        CTXLOG_PORT_PG_URL: inject("pgUrl")
      })
      console.log(
        `ported LangGraph saver tests on ${backend}:`,
        /^# pass \d+$/m.exec(tap)?.[0],
        /^# fail \d+$/m.exec(tap)?.[0]
      )
      assert.match(tap, /^# tests 10$/m)
      assert.match(tap, /^# pass 10$/m)
      assert.match(tap, /^# fail 0$/m)
    }
  }, 900_000)
})
