// A throwaway PostgreSQL server for the PostgreSQL scenarios, started the way the memory package's test
// setup does (initdb into a temp dir as the postgres user, pg_ctl on 127.0.0.1 and a free port) and
// stopped when the bench exits, also on an interrupt. With CTXLOG_BENCH_PG_URL set, that server is used.
import { execFileSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import pg from "pg"

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

/** A running server: its admin URL and how to stop it. */
export interface Server {
  readonly adminUrl: string
  readonly stop: () => void
  /** Create an empty database and return its URL. */
  readonly database: (name: string) => Promise<string>
}

const withDatabases = (adminUrl: string, stop: () => void): Server => ({
  adminUrl,
  stop,
  database: async (name) => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(`drop database if exists ${name}`)
      await client.query(`create database ${name}`)
    } finally {
      await client.end()
    }
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return url.toString()
  }
})

/** Start a server, or say why not (the PostgreSQL scenarios are then skipped with that note). */
export const startServer = async (): Promise<Server | string> => {
  const fromEnv = process.env.CTXLOG_BENCH_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") return withDatabases(fromEnv, () => {})
  const binaries = findBinaries()
  if (binaries === undefined) return "initdb/pg_ctl not found (apt-get install postgresql, or set CTXLOG_BENCH_PG_URL)"
  const dir = mkdtempSync(join(tmpdir(), "ctxlog-bench-pg-"))
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
  try {
    run(binaries.initdb, ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync"])
    // Default durability (fsync on, synchronous_commit on): the bench compares stores, not a crippled server.
    run(binaries.pgCtl, [
      "-D",
      data,
      "-l",
      join(dir, "server.log"),
      "-w",
      "-t",
      "60",
      "-o",
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100`,
      "start"
    ])
  } catch (cause) {
    rmSync(dir, { recursive: true, force: true })
    return `could not start PostgreSQL: ${String(cause)}`
  }
  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    try {
      run(binaries.pgCtl, ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"])
    } catch {
      try {
        const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
        if (Number.isInteger(pid) && pid > 0) process.kill(pid, "SIGQUIT")
      } catch {
        // Already gone.
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  process.once("exit", stop)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(signal, () => {
      stop()
      process.exit(130)
    })
  }
  return withDatabases(`postgres://postgres@127.0.0.1:${port}/postgres`, stop)
}
