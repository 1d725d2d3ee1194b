// A clone needs nothing beside it: copies the repository's files (`git ls-files`: tracked, plus new files
// not ignored) into an empty temp dir, so no `../shared` or other sibling is reachable, installs there
// from the local pnpm store, and runs one transcript test with CTXLOG_TRANSCRIPTS unset. Fails when the
// test cannot find its transcripts in the copy. Cheap: one install from the store, one test file.
// Usage: node scripts/bare-clone-check.mjs
import { execFileSync, spawnSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
  cwd: root,
  encoding: "utf8",
  maxBuffer: 64 * 1024 * 1024
})
  .split("\0")
  .filter((file) => file.length > 0)

const parent = mkdtempSync(join(tmpdir(), "ctxlog-bare-"))
const copy = join(parent, "ctxlog")
const env = { ...process.env, CI: "true" }
delete env.CTXLOG_TRANSCRIPTS

const run = (command, args) => {
  console.log(`bare clone: ${command} ${args.join(" ")}`)
  const result = spawnSync(command, args, { cwd: copy, env, stdio: "inherit" })
  return result.status ?? 1
}

let status = 1
try {
  for (const file of files) {
    const target = join(copy, file)
    mkdirSync(dirname(target), { recursive: true })
    try {
      copyFileSync(join(root, file), target)
    } catch (error) {
      // A tracked file deleted in the working tree is not part of the copy.
      if (error?.code !== "ENOENT") throw error
    }
  }
  console.log(`bare clone: ${files.length} files copied to ${copy} (nothing beside it)`)
  // From the store the main install filled; offline first, so the check needs no network.
  status = run("pnpm", ["install", "--frozen-lockfile", "--offline", "--reporter=append-only"])
  if (status !== 0) status = run("pnpm", ["install", "--frozen-lockfile", "--reporter=append-only"])
  if (status === 0)
    status = run("pnpm", ["--filter", "@ctxlog/core", "exec", "vitest", "run", "test/Transcript.test.ts"])
} finally {
  rmSync(parent, { recursive: true, force: true })
}
console.log(status === 0 ? "bare clone: the transcript test passes without ../shared" : "bare clone: FAILED")
process.exit(status)
