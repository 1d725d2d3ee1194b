// The public API report: for each published package, the declarations (`.d.ts`, comments removed) of
// every module a user can reach from its `exports` map (the entry files and, within the package, every
// module they re-export, followed transitively; `internal/` is not public), written to
// `api/<package>.api.md`. The committed reports are the API's history: a change to a public signature
// shows in the diff of the commit that makes it, and a removal shows as removed lines (issue 40).
//
// Usage: node scripts/api-report.mjs           (writes api/*.api.md)
//        node scripts/api-report.mjs --check   (exits 1 when a report is out of date; a step of `pnpm check`)
// The declarations are emitted in memory from `pnpm typecheck`'s program (tsconfig.check.json: workspace
// packages resolve to their sources), before it is checked, so no build is needed first (ADR 0150).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { exportEntries, packageDirs } from "./package-entries.mjs"

const isInternal = (fileName) => /[\\/]src[\\/]internal[\\/]/.test(fileName)

/** The options of `configFile` (default: the base config) with the report's declaration emit on top. */
export const reportOptions = (root, configFile = "tsconfig.base.json") => {
  const read = ts.readConfigFile(path.join(root, configFile), ts.sys.readFile)
  if (read.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"))
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root)
  return { parsed, options: withReportEmit(root, parsed.options) }
}

const withReportEmit = (root, options) => {
  return {
    ...options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    declarationMap: false,
    sourceMap: false,
    removeComments: true,
    rootDir: root,
    outDir: path.join(root, ".api-report-out")
  }
}

/** The in-package modules `file` re-exports (`export * as X from "./X.js"`, `export { a } from "./a.js"`). */
const reExported = (program, file) => {
  const source = program.getSourceFile(file)
  if (source === undefined) return []
  const found = []
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement) || statement.moduleSpecifier === undefined) continue
    const specifier = statement.moduleSpecifier.text
    if (!specifier.startsWith(".")) continue
    const target = path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts"))
    if (existsSync(target)) found.push(target)
  }
  return found
}

/** The public modules of one package: its entries and what they re-export, transitively, sorted. */
const publicModules = (program, entries) => {
  const seen = new Set()
  const queue = entries.map((entry) => entry.file)
  while (queue.length > 0) {
    const file = queue.pop()
    if (seen.has(file) || isInternal(file)) continue
    seen.add(file)
    queue.push(...reExported(program, file))
  }
  return [...seen].sort()
}

/** The published packages with public entries: `{ dir, manifest, entries }`. */
const publicPackages = (root) =>
  packageDirs(root)
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) }))
    .filter(({ manifest }) => manifest.private !== true)
    .map(({ dir, manifest }) => ({ dir, manifest, entries: exportEntries(dir) }))
    .filter(({ entries }) => entries.length > 0)

/**
 * `pnpm check`'s program (tsconfig.check.json, or where a workspace has none — the scripts' tests — the base
 * config over the public entries) with the reports' emit options, not yet checked, and `diagnostics()`: what
 * `tsc --noEmit` reports for it (options, syntactic, global, semantic; not declaration-emit diagnostics).
 * A union's or an object type's members are printed in the order the checker created them, so the reports
 * are emitted before the program is checked, from the public modules alone (`reportsOf`): then no other
 * file — a test — decides their order, and scripts/typecheck.mjs, `pnpm api:report` and `api:check` print
 * the same text (ADR 0150).
 */
export const checkProgram = (root) => {
  const own = existsSync(path.join(root, "tsconfig.check.json"))
  const { parsed, options } = reportOptions(root, own ? "tsconfig.check.json" : "tsconfig.base.json")
  const rootNames = own
    ? parsed.fileNames
    : publicPackages(root).flatMap(({ entries }) => entries.map((entry) => entry.file))
  const program = ts.createProgram({ rootNames, options, projectReferences: parsed.projectReferences })
  const diagnostics = () =>
    ts.sortAndDeduplicateDiagnostics([
      ...(own ? parsed.errors : []),
      ...program.getConfigFileParsingDiagnostics(),
      ...program.getOptionsDiagnostics(),
      ...program.getSyntacticDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...program.getSemanticDiagnostics()
    ])
  return { program, diagnostics }
}

/** Every report as `{ file, text }` (`file` relative to `root`), sorted by package. */
export const apiReports = (root) => reportsOf(root, checkProgram(root).program)

/**
 * The reports from `checkProgram`'s program, before it is checked (see there): only the public modules'
 * declarations are emitted, in memory.
 */
export const reportsOf = (root, program, packages = publicPackages(root)) => {
  const options = program.getCompilerOptions()
  const declarations = new Map()
  const declarationOf = (file) => {
    const out = path.join(options.outDir, path.relative(root, file)).replace(/\.tsx?$/, ".d.ts")
    if (!declarations.has(out)) {
      const source = program.getSourceFile(file)
      if (source === undefined) throw new Error(`${path.relative(root, file)} is not in the program`)
      const emitted = program.emit(source, (name, text) => declarations.set(path.resolve(name), text), undefined, true)
      if (emitted.diagnostics.length > 0) {
        const shown = emitted.diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))
        throw new Error(`declaration emit failed:\n${shown.join("\n")}`)
      }
    }
    const text = declarations.get(out)
    if (text === undefined) throw new Error(`no declarations emitted for ${path.relative(root, file)}`)
    return text.trimEnd()
  }
  return packages.map(({ dir, manifest, entries }) => {
    const relative = (file) => path.relative(dir, file).split(path.sep).join("/")
    const lines = [
      `# ${manifest.name} — public API`,
      "",
      "Generated by `pnpm api:report` from the declarations of the modules reachable from the package's",
      "`exports` (comments removed; `internal/` is not public). Do not edit by hand: `pnpm check` fails",
      "when it is out of date.",
      "",
      ...entries.map((entry) => `- \`${path.posix.join(manifest.name, entry.subpath)}\`: \`${relative(entry.file)}\``)
    ]
    for (const file of publicModules(program, entries)) {
      lines.push("", `## ${relative(file)}`, "", "```ts", declarationOf(file), "```")
    }
    const name = manifest.name.replace(/^@[^/]+\//, "")
    return { file: `api/${name}.api.md`, text: `${lines.join("\n")}\n` }
  })
}

/** Committed reports (`api/*.api.md`) of no package in `reports`. */
const staleReports = (root, reports) => {
  const dir = path.join(root, "api")
  const wanted = new Set(reports.map((report) => report.file))
  return existsSync(dir)
    ? readdirSync(dir)
        .map((name) => `api/${name}`)
        .filter((file) => file.endsWith(".api.md") && !wanted.has(file))
    : []
}

/**
 * `--check`'s comparison: each report against its committed file, and committed reports of no package.
 * Prints what is out of date; true when every report is current.
 */
export const reportsCurrent = (root, reports) => {
  const stale = staleReports(root, reports)
  const outdated = reports.filter(
    (report) =>
      !existsSync(path.join(root, report.file)) || readFileSync(path.join(root, report.file), "utf8") !== report.text
  )
  for (const report of outdated) console.error(`api report out of date: ${report.file}`)
  for (const file of stale) console.error(`api report of no package: ${file}`)
  if (outdated.length + stale.length > 0) {
    console.error("The public API changed: run `pnpm api:report` and commit api/ (the diff shows the change).")
    return false
  }
  console.log(`api reports up to date (${reports.length} packages)`)
  return true
}

const main = () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
  const check = process.argv.includes("--check")
  const reports = apiReports(root)
  if (check) {
    if (!reportsCurrent(root, reports)) process.exit(1)
    return
  }
  const dir = path.join(root, "api")
  const stale = staleReports(root, reports)
  mkdirSync(dir, { recursive: true })
  for (const file of stale) rmSync(path.join(root, file))
  for (const report of reports) writeFileSync(path.join(root, report.file), report.text)
  console.log(`wrote ${reports.length} api reports to api/`)
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
