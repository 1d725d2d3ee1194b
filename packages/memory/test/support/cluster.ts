/**
 * A throwaway PostgreSQL cluster: `initdb` into a temporary directory (as the postgres user when run as
 * root), `pg_ctl` on 127.0.0.1 and a free port, stopped and deleted once — on `destroy`, at process exit
 * or on SIGINT/SIGTERM/SIGHUP. Under `CTXLOG_PG_TMPDIR` when set. Used by the tests' global setup
 * (`postgresServer.ts`), the restart tests and `pnpm bench`; no test-runner imports here.
 */
import { execFileSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"

const findBinaries = (): { initdb: string; pgCtl: string } | undefined => {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "")
  const versioned = existsSync("/usr/lib/postgresql")
    ? readdirSync("/usr/lib/postgresql")
        .filter((version) => /^\d+$/.test(version))
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => `/usr/lib/postgresql/${version}/bin`)
    : []
  for (const dir of [...dirs, ...versioned]) {
    const initdb = join(dir, "initdb")
    const pgCtl = join(dir, "pg_ctl")
    if (existsSync(initdb) && existsSync(pgCtl)) return { initdb, pgCtl }
  }
  return undefined
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))
      )
    })
  })

/** A throwaway PostgreSQL cluster in a temporary directory, on 127.0.0.1 and a free port. */
export interface Cluster {
  /** Admin URL (database `postgres`, user `postgres`, trust auth). */
  readonly url: string
  /** `pg_ctl stop` with the given mode (`immediate` is a crash: no checkpoint, clients cut off). */
  readonly stop: (mode: "fast" | "immediate") => void
  /** `pg_ctl start` (waits until it accepts connections). */
  readonly start: () => void
  /** Stop (fast) and delete the directory. */
  readonly destroy: () => void
}

/** Create and start a cluster with `initdb` + `pg_ctl`; throws naming what to install when they are missing. */
export const startCluster = async (options: { readonly fsync?: boolean } = {}): Promise<Cluster> => {
  const binaries = findBinaries()
  if (binaries === undefined) {
    throw new Error(
      "PostgreSQL tests need a server: set CTXLOG_TEST_PG_URL=postgres://user@host:port/db, or install " +
        "PostgreSQL (Debian/Ubuntu: apt-get install postgresql) so that initdb and pg_ctl are found on PATH " +
        "or under /usr/lib/postgresql/*/bin."
    )
  }
  const parent = process.env.CTXLOG_PG_TMPDIR
  const root = parent !== undefined && parent !== "" ? parent : tmpdir()
  sweepOrphans(root)
  const dir = mkdtempSync(join(root, "ctxlog-pg-"))
  // Which process owns this cluster: a later run stops it if that process died without its hooks running.
  writeFileSync(join(dir, "owner.pid"), `${process.pid}\n`)
  // initdb and pg_ctl refuse to run as root: run them as the postgres user, in a directory it owns.
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    chownSync(dir, uid, gid)
  }
  const run = (command: string, args: ReadonlyArray<string>) =>
    execFileSync(asRoot ? "runuser" : command, asRoot ? ["-u", "postgres", "--", command, ...args] : [...args], {
      stdio: ["ignore", "pipe", "pipe"],
      encoding: "utf8"
    })
  const data = join(dir, "data")
  const port = await freePort()
  // fsync off: a throwaway test cluster; durability of PostgreSQL itself is not what these tests check
  // (an immediate stop is a server crash, not an OS crash: committed data survives it even so).
  const start = () =>
    run(binaries.pgCtl, [
      "-D",
      data,
      "-l",
      join(dir, "server.log"),
      "-w",
      "-t",
      "60",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=${options.fsync === true ? "on" : "off"} -c max_connections=200`,
      "start"
    ])
  try {
    run(binaries.initdb, ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync"])
    start()
  } catch (cause) {
    rmSync(dir, { recursive: true, force: true })
    const detail =
      typeof cause === "object" && cause !== null && "stderr" in cause ? String(cause.stderr) : String(cause)
    throw new Error(`could not start a test PostgreSQL server with ${binaries.initdb}: ${detail}`)
  }
  const stopWith = (mode: "fast" | "immediate") => {
    run(binaries.pgCtl, ["-D", data, "-m", mode, "-w", "-t", "30", "stop"])
  }
  // The final stop: once, even when the run is interrupted; a server pg_ctl cannot stop is killed.
  const destroy = stopOnce(() => {
    try {
      stopWith("fast")
    } catch {
      // pg_ctl could not stop it (timed out, or the cluster is half gone): end the postmaster directly.
      killPostmaster(data)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
  const release = stopOnExit(destroy)
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: stopWith,
    start: () => {
      start()
    },
    destroy: () => {
      release()
      destroy()
    }
  }
}

/**
 * Stops and deletes the clusters under `root` whose owning process is gone. The exit and signal hooks
 * below cannot run when a test process is killed outright (SIGKILL: an agent's or a CI step's timeout),
 * and `pg_ctl` leaves the server running detached; the next run that starts a cluster cleans up.
 */
const sweepOrphans = (root: string): void => {
  let entries: ReadonlyArray<string>
  try {
    entries = readdirSync(root).filter((name) => name.startsWith("ctxlog-pg-"))
  } catch {
    return
  }
  for (const name of entries) {
    const dir = join(root, name)
    let owner: number
    try {
      owner = Number(readFileSync(join(dir, "owner.pid"), "utf8").trim())
    } catch {
      continue // an older run's cluster, or one still being made: not ours to judge
    }
    if (!Number.isInteger(owner) || owner <= 0 || alive(owner)) continue
    killPostmaster(join(dir, "data"))
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    return typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EPERM"
  }
}

/** Runs `f` the first time it is called, never again. */
const stopOnce = (f: () => void): (() => void) => {
  let done = false
  return () => {
    if (done) return
    done = true
    f()
  }
}

/** SIGQUIT (immediate shutdown) to the postmaster named in the cluster's postmaster.pid, if it runs. */
const killPostmaster = (data: string): void => {
  try {
    const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, "SIGQUIT")
  } catch {
    // No pid file or no such process: nothing left running.
  }
}

const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const

/**
 * Stops the server when this process exits or is interrupted, so an aborted run leaves no server
 * behind. On a signal nobody else handles, the signal is re-raised after the stop so the process still
 * ends the way it would have. Returns the function that removes the hooks (the normal teardown).
 */
const stopOnExit = (stop: () => void): (() => void) => {
  const onSignal = (signal: NodeJS.Signals) => {
    stop()
    if (process.listenerCount(signal) === 1) {
      release()
      process.kill(process.pid, signal)
    }
  }
  const release = () => {
    process.removeListener("exit", stop)
    for (const signal of signals) process.removeListener(signal, onSignal)
  }
  process.once("exit", stop)
  for (const signal of signals) process.on(signal, onSignal)
  return release
}
