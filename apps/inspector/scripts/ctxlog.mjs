#!/usr/bin/env node
// `pnpm ctxlog …` from the repository root: runs the built CLI (apps/inspector/dist/bin.js) at once when it
// is newer than every source it is built from, and otherwise says so and builds first (`pnpm install` builds
// nothing: the first `pnpm ctxlog` after a fresh install, or `pnpm build`, does, and says so).
// `--build-only` builds when needed and exits.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const inspector = join(dirname(fileURLToPath(import.meta.url)), "..")
const root = join(inspector, "..", "..")
const bin = join(inspector, "dist", "bin.js")
// The inspector and the workspace packages it imports (their dist is what dist/bin.js loads).
const sources = [
  join(inspector, "src"),
  join(inspector, "ui"),
  ...["core", "memory", "compaction", "providers"].map((name) => join(root, "packages", name, "src"))
]

const newest = (dir) => {
  if (!existsSync(dir)) return 0
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

const stale = () => !existsSync(bin) || Math.max(...sources.map(newest)) > statSync(bin).mtimeMs

const buildOnly = process.argv[2] === "--build-only"
if (stale()) {
  process.stderr.write(
    "ctxlog: building the inspector and the packages it uses (sources changed since the last build)…\n"
  )
  const built = spawnSync(
    "pnpm",
    ["exec", "turbo", "run", "build", "--filter=@ctxlog/inspector", "--output-logs=errors-only"],
    { cwd: root, stdio: ["ignore", "ignore", "inherit"] }
  )
  if (built.status !== 0) {
    process.stderr.write("ctxlog: the build failed (see above); run `pnpm build` for the whole log\n")
    process.exit(built.status ?? 1)
  }
}
if (!buildOnly) {
  // `pnpm ctxlog` runs this in the repository root; the person typed it in INIT_CWD. Work there, so the
  // default log (.ctxlog/ctxlog.db) and relative paths are theirs: the place the agent writes its log
  // when started the same way (`pnpm --filter @ctxlog/agent --silent start`, `pnpm demo`).
  const invoked = process.env.npm_lifecycle_event === "ctxlog" ? process.env.INIT_CWD : undefined
  if (invoked !== undefined && invoked.length > 0 && existsSync(invoked)) process.chdir(invoked)
  // dist/bin.js reads process.argv from index 2: the arguments after this script are the CLI's.
  await import(pathToFileURL(bin).href)
}
