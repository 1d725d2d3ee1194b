// better-sqlite3 has no prebuilt binary reachable here, so npm compiles it from source when a test installs
// our tarballs into an empty project (a minute or more on a busy machine, once per install). When the
// workspace holds a compiled copy, an install can take that exact version without install scripts and reuse
// its binding: same Node, same ABI, and the binding is not what those installs check. Used by
// scripts/pack-check.mjs and the packed-tarball tests in integration/.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const workspaceSqlite = join(root, "packages", "memory", "node_modules", "better-sqlite3")
const binding = join("build", "Release", "better_sqlite3.node")

/**
 * How to install better-sqlite3 into a consumer project: the npm arguments (the package spec, and
 * `--ignore-scripts` when the workspace's binding is reused) and what to do after `npm install` there.
 * `range` is the version range to install when the workspace holds no compiled copy (npm compiles it).
 */
export const sqliteInstall = (range) => {
  if (!existsSync(join(workspaceSqlite, binding))) {
    return { args: [`better-sqlite3@${range}`], reused: false, after: () => undefined }
  }
  const version = JSON.parse(readFileSync(join(workspaceSqlite, "package.json"), "utf8")).version
  return {
    args: ["--ignore-scripts", `better-sqlite3@${version}`],
    reused: true,
    after: (consumer) => {
      mkdirSync(join(consumer, "node_modules", "better-sqlite3", "build", "Release"), { recursive: true })
      copyFileSync(join(workspaceSqlite, binding), join(consumer, "node_modules", "better-sqlite3", binding))
      return `better-sqlite3 ${version}: reused the workspace's compiled binding`
    }
  }
}
