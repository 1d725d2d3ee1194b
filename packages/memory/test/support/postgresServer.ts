/**
 * vitest globalSetup: gives the PostgreSQL tests a real server. With `CTXLOG_TEST_PG_URL` set, that
 * server is used. Otherwise a throwaway cluster is created with `initdb` in a temporary directory and
 * started with `pg_ctl` on 127.0.0.1 and a free port, and stopped (and deleted) after the run — also
 * when the run fails, is interrupted (SIGINT, SIGTERM, SIGHUP) or exits early: a process-exit hook stops
 * the server synchronously. The cluster lives under `CTXLOG_PG_TMPDIR` when set (`.ci/run` sets it and
 * sweeps it on exit, covering a vitest process that was killed outright), else under the OS temp dir.
 * With neither a URL nor the binaries, the run fails with a message saying what to install: PostgreSQL
 * tests are never skipped.
 */
import type { TestProject } from "vitest/node"
import { startCluster } from "./cluster.js"

export { type Cluster, startCluster } from "./cluster.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the test server: tests create their own databases on it. */
    readonly pgUrl: string
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const fromEnv = process.env.CTXLOG_TEST_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") {
    project.provide("pgUrl", fromEnv)
    return undefined
  }
  const cluster = await startCluster()
  project.provide("pgUrl", cluster.url)
  return cluster.destroy
}
