// The import-cycle check of `pnpm check`: fails on a cycle of value imports, ignores type-only imports
// (as Effect's own check does). Each TypeScript file is transpiled before its imports are read (dpdm's
// `transform`), so `import type`, `export type` and imports used only as types are gone, and a cycle
// that exists only in the types (an implementation in `internal/` importing its contract as a type
// while the contract module imports the implementation) is not a cycle: nothing runs in that order.
//
// Usage: node scripts/cycles.mjs [ENTRY...]   (default: every entry of every workspace package, its
// `exports` map and its `bin`s). Exits 1 and prints each cycle when there is one.
import path from "node:path"
import { fileURLToPath } from "node:url"
import { parseCircular, parseDependencyTree, prettyCircular } from "dpdm"
import { binEntries, exportEntries, packageDirs } from "./package-entries.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** The value-import cycles reachable from `entries` (absolute paths): each a list of files, relative to `cwd`. */
export const valueCycles = async (entries, cwd = root) => {
  const tree = await parseDependencyTree(entries, {
    cwd,
    context: cwd,
    transform: true,
    skipDynamicImports: false,
    exclude: /node_modules/
  })
  return parseCircular(tree)
}

/** The default entries: every workspace package's exports (`@ctxlog/source`) and bins. */
export const workspaceEntries = (at = root) =>
  packageDirs(at).flatMap((dir) => [...exportEntries(dir).map((entry) => entry.file), ...binEntries(dir)])

const main = async () => {
  const args = process.argv.slice(2)
  const entries = args.length > 0 ? args.map((file) => path.resolve(file)) : workspaceEntries()
  const cycles = await valueCycles(entries, args.length > 0 ? process.cwd() : root)
  if (cycles.length === 0) {
    console.log(`cycles: no value-import cycle from ${entries.length} entries (type-only imports ignored)`)
    return 0
  }
  console.error(`cycles: ${cycles.length} value-import cycle(s):`)
  console.error(prettyCircular(cycles, "  "))
  return 1
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main()
}
