// Makes sure the system programs the test suite needs are present: PostgreSQL's initdb/pg_ctl (the
// memory package's tests start a real server). Installs them with apt-get when running as root on a
// Debian-like machine; otherwise says exactly what is missing. Skipped when CTXLOG_TEST_PG_URL points
// at a running server.
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"

const pgBin = () => {
  const root = "/usr/lib/postgresql"
  if (existsSync(root)) {
    for (const version of readdirSync(root).sort().reverse()) {
      if (existsSync(`${root}/${version}/bin/initdb`)) return `${root}/${version}/bin`
    }
  }
  return spawnSync("sh", ["-c", "command -v initdb"]).status === 0 ? "PATH" : undefined
}

if (process.env.CTXLOG_TEST_PG_URL) {
  console.log("system deps: using CTXLOG_TEST_PG_URL, not checking for a local PostgreSQL")
} else if (pgBin() !== undefined) {
  console.log(`system deps: PostgreSQL found (${pgBin()})`)
} else if (process.getuid?.() === 0 && spawnSync("sh", ["-c", "command -v apt-get"]).status === 0) {
  console.log("system deps: installing PostgreSQL with apt-get")
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
  execFileSync("apt-get", ["update"], { stdio: "inherit", env })
  execFileSync("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], { stdio: "inherit", env })
  if (pgBin() === undefined) {
    console.error("system deps: apt-get installed postgresql but initdb is still missing")
    process.exit(1)
  }
} else {
  console.error(
    "system deps: the tests need PostgreSQL's initdb and pg_ctl (Debian: apt-get install -y postgresql), " +
      "or CTXLOG_TEST_PG_URL=postgres://user:pass@127.0.0.1:5432/db pointing at a server you run."
  )
  process.exit(1)
}
