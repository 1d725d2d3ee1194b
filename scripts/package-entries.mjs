// The source entry points of the workspace's packages, read from their package.json: every `exports`
// target's `@ctxlog/source` file (what a user can import) and every `bin` (its `dist/X.js` mapped back
// to `src/X.ts`). The cycle check starts from all of them; the contract check from the exports only.
import { existsSync, readdirSync, readFileSync } from "node:fs"
import path from "node:path"

/** The package folders of the workspace under `root` (`packages/*` and `apps/*`, as pnpm-workspace.yaml). */
export const packageDirs = (root) =>
  ["packages", "apps"].flatMap((group) => {
    const dir = path.join(root, group)
    if (!existsSync(dir)) return []
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, "package.json")))
      .map((entry) => path.join(dir, entry.name))
      .sort()
  })

const sourceOf = (target) => {
  if (typeof target === "string") return /\.tsx?$/.test(target) ? target : undefined
  if (target !== null && typeof target === "object") return sourceOf(target["@ctxlog/source"])
  return undefined
}

/**
 * The public entry points of one package: `{ subpath, file }` for each `exports` key whose target has a
 * `@ctxlog/source` file (`./internal/*: null` and `./package.json` have none).
 */
export const exportEntries = (packageDir) => {
  const manifest = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8"))
  const exportsMap = manifest.exports ?? {}
  return Object.entries(typeof exportsMap === "string" ? { ".": exportsMap } : exportsMap).flatMap(
    ([subpath, target]) => {
      const source = sourceOf(target)
      return source === undefined ? [] : [{ name: manifest.name, subpath, file: path.resolve(packageDir, source) }]
    }
  )
}

/** The source files of a package's `bin` entries (`./dist/bin.js` → `src/bin.ts`) that exist. */
export const binEntries = (packageDir) => {
  const manifest = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8"))
  const bins = typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {})
  return bins
    .map((bin) => path.resolve(packageDir, bin.replace(/^(\.\/)?dist\//, "src/").replace(/\.js$/, ".ts")))
    .filter((file) => existsSync(file))
}
