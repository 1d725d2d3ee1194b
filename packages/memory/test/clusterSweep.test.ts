// A test process killed outright (SIGKILL: an agent's or a CI step's timeout) runs none of its exit
// hooks, and `pg_ctl` leaves its PostgreSQL server running detached. The next run that starts a cluster
// stops and deletes every cluster whose owning process is gone (support/cluster.ts), so no server
// outlives the runs that started it for longer than the next one.
import { spawn } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import pg from "pg"
import { startCluster } from "./support/cluster.js"
import { bundledEntrySync } from "../../../scripts/ts-bundle.mjs"

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..")
// Where support/cluster.ts makes its clusters (`.ci/run` sets CTXLOG_PG_TMPDIR).
const root =
  process.env.CTXLOG_PG_TMPDIR !== undefined && process.env.CTXLOG_PG_TMPDIR !== ""
    ? process.env.CTXLOG_PG_TMPDIR
    : tmpdir()
const clusters = () => new Set(readdirSync(root).filter((name) => name.startsWith("ctxlog-pg-")))

const reachable = async (url: string): Promise<boolean> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

describe("throwaway PostgreSQL clusters", () => {
  it("a cluster whose process was killed outright is stopped and deleted by the next start", {
    timeout: 120_000
  }, async () => {
    const before = clusters()
    const child = spawn(process.execPath, [bundledEntrySync(join(packageDir, "test", "child", "clusterThenHang.ts"))], {
      cwd: packageDir,
      stdio: ["ignore", "pipe", "inherit"]
    })
    const url = await new Promise<string>((resolve, reject) => {
      let out = ""
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString()
        const line = out.split("\n").find((candidate) => candidate.startsWith("{"))
        if (line !== undefined) resolve((JSON.parse(line) as { url: string }).url)
      })
      child.on("exit", (code) => reject(new Error(`the child exited (${code}) before starting its cluster`)))
    })
    const orphan = [...clusters()].find((name) => !before.has(name))
    assert.isDefined(orphan)
    assert.isTrue(await reachable(url), "the child's server runs")
    const exited = new Promise((resolve) => child.on("exit", resolve))
    child.kill("SIGKILL")
    await exited
    assert.isTrue(await reachable(url), "killed outright, the child left its server running")

    const next = await startCluster()
    try {
      assert.isFalse(existsSync(join(root, orphan ?? "")), "the orphan's directory is gone")
      assert.isFalse(await reachable(url), "the orphan's server is stopped")
      assert.isTrue(await reachable(next.url))
    } finally {
      next.destroy()
    }
  })
})
