// Builds the native binding of `sqlite3` (the driver of Emmett's SQLite store, the bench's reference)
// the first time `pnpm bench` needs it. It is kept out of the workspace's onlyBuiltDependencies because
// with no reachable prebuilt binary it compiles SQLite from source, minutes on a 2-core machine, and
// every install (CI's included) would pay for it. A failed build is reported, not fatal: the Emmett
// rows of the table then say why they are missing.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"

// sqlite3 is Emmett's dependency, not the bench's: resolve it from where emmett-sqlite sits.
const locate =
  "require.resolve('sqlite3', { paths: [require('path').dirname(require.resolve('@event-driven-io/emmett-sqlite'))] })"
const loads = () => spawnSync(process.execPath, ["-e", `require(${locate})`], { cwd: import.meta.dirname }).status === 0

if (process.env.BENCH_SKIP_EMMETT_BUILD === "1" || loads()) process.exit(0)
const found = spawnSync(process.execPath, ["-e", `console.log(require('path').dirname(${locate}))`], {
  cwd: import.meta.dirname,
  encoding: "utf8"
})
if (found.status !== 0) {
  console.error("bench: sqlite3 is not installed (run pnpm install); the Emmett rows will be missing")
  process.exit(0)
}
// lib/sqlite3.js -> the package directory.
const dir = dirname(found.stdout.trim())
console.log(`bench: building the sqlite3 native binding once (no prebuilt binary here; takes minutes) in ${dir}`)
const started = Date.now()
// node-gyp downloads Node's headers unless told where they are: a Node installed by the system package
// keeps them under <prefix>/include/node, which needs no network.
const prefix = dirname(dirname(process.execPath))
const nodedir = existsSync(join(prefix, "include", "node", "node.h")) ? ` --nodedir=${prefix}` : ""
const build = spawnSync(
  "sh",
  ["-c", `./node_modules/.bin/prebuild-install -r napi || ./node_modules/.bin/node-gyp rebuild${nodedir}`],
  {
    cwd: dir,
    stdio: "inherit"
  }
)
const seconds = Math.round((Date.now() - started) / 1000)
if (build.status === 0 && loads()) console.log(`bench: sqlite3 built in ${seconds} s`)
else console.error(`bench: building sqlite3 failed after ${seconds} s; the Emmett rows will say so`)
