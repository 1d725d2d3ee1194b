// `pnpm run docs`: the API reference of every published package, from the TSDoc in its sources (TypeDoc, options
// in typedoc.json), into docs/api/ (ignored by git). The entry points are each package's public entries as
// its exports map names them (the `@ctxlog/source` condition: the .ts file behind `@ctxlog/core`,
// `@ctxlog/providers/ai-sdk` …), so what is documented is what a user can import. TypeDoc's warnings —
// an export without a doc comment (`validation.notDocumented`), a broken {@link} — fail the command: the
// reference is built in CI (`.ci/run`'s "docs" step) with 0 warnings.
// Usage: node scripts/docs.mjs [--out dir]
import { existsSync, readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { Application } from "typedoc"
import { publishedDirs } from "./pack-packages.mjs"

const root = resolve(import.meta.dirname, "..")
const outAt = process.argv.indexOf("--out")
const out = outAt > 0 ? resolve(process.argv[outAt + 1]) : join(root, "docs", "api")

const entryPoints = publishedDirs().flatMap((dir) => {
  const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))
  return Object.entries(manifest.exports ?? {})
    .filter(([key, target]) => key !== "./package.json" && target !== null && typeof target === "object")
    .map(([, target]) => target["@ctxlog/source"])
    .filter((source) => typeof source === "string" && existsSync(join(root, dir, source)))
    .map((source) => join(root, dir, source))
})

// The default option readers: typedoc.json (named here), then the tsconfig it names.
const app = await Application.bootstrapWithPlugins({ options: join(root, "typedoc.json"), entryPoints, out })
const project = await app.convert()
if (project === undefined) {
  console.error("docs: TypeDoc could not convert the sources")
  process.exit(1)
}
app.validate(project)
const warnings = app.logger.warningCount
const errors = app.logger.errorCount
if (errors === 0) await app.generateDocs(project, out)
console.log(
  `docs: ${entryPoints.length} entry points of ${publishedDirs().length} packages → ${out}; ${warnings} warnings, ${errors} errors`
)
if (warnings > 0 || errors > 0 || app.logger.errorCount > 0) process.exit(1)
