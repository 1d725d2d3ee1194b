// Makes sure the system programs the test suite needs are present: PostgreSQL's initdb/pg_ctl (the
// memory, compaction, agent and inspector tests start a real server) and Chromium (the inspector's
// browser test drives /usr/bin/chromium with playwright-core; no browser download works here) and tmux
// (the agent's terminal test types into the interactive agent in a tmux pane). Installs
// what is missing with one `apt-get update` and one `apt-get install -y` when running as root on a
// Debian-like machine; otherwise says exactly what is missing. PostgreSQL is not needed when
// CTXLOG_TEST_PG_URL points at a running server.
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

const chromium = "/usr/bin/chromium"

const missing = []
if (process.env.CTXLOG_TEST_PG_URL) {
  console.log("system deps: using CTXLOG_TEST_PG_URL, not checking for a local PostgreSQL")
} else if (pgBin() !== undefined) {
  console.log(`system deps: PostgreSQL found (${pgBin()})`)
} else {
  missing.push("postgresql")
}
if (existsSync(chromium)) console.log(`system deps: Chromium found (${chromium})`)
else missing.push("chromium")
const hasTmux = () => spawnSync("sh", ["-c", "command -v tmux"]).status === 0
if (hasTmux()) console.log("system deps: tmux found")
else missing.push("tmux")

if (missing.length > 0) {
  if (process.getuid?.() === 0 && spawnSync("sh", ["-c", "command -v apt-get"]).status === 0) {
    console.log(`system deps: installing ${missing.join(", ")} with apt-get`)
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
    execFileSync("apt-get", ["update"], { stdio: "inherit", env })
    execFileSync("apt-get", ["install", "-y", "--no-install-recommends", ...missing], { stdio: "inherit", env })
    if (missing.includes("postgresql") && pgBin() === undefined) {
      console.error("system deps: apt-get installed postgresql but initdb is still missing")
      process.exit(1)
    }
    if (missing.includes("tmux") && !hasTmux()) {
      console.error("system deps: apt-get installed tmux but it is still not on the PATH")
      process.exit(1)
    }
    if (missing.includes("chromium") && !existsSync(chromium)) {
      console.error(`system deps: apt-get installed chromium but ${chromium} is still missing`)
      process.exit(1)
    }
  } else {
    console.error(
      `system deps: the tests need ${missing.join(" and ")} (Debian: apt-get install -y ${missing.join(" ")})` +
        (missing.includes("postgresql")
          ? ", or CTXLOG_TEST_PG_URL=postgres://user:pass@127.0.0.1:5432/db pointing at a server you run"
          : "") +
        "."
    )
    process.exit(1)
  }
}
