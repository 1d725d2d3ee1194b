// No public definition in an `internal/` file: a contract lives in the module named after it, and
// `internal/` holds implementations (STYLE.md, ADR 0056). A public definition is one a user reaches
// from a package's `exports` map: the entry's exports, the members of every module it re-exports as a
// namespace (`export * as EventLog from "./EventLog.js"`) and of every exported namespace, followed
// through re-exports to where the name is declared. A public type alias that only names an internal
// type (`type Service = EventLogService`) counts as that internal definition.
//
// Usage: node scripts/public-contracts.mjs [ROOT]   (exits 1 and lists each one found; ROOT defaults
// to the repository holding this script). A step of `pnpm check`.
import { existsSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { exportEntries, packageDirs } from "./package-entries.mjs"

const isInternal = (fileName) => /[\\/]src[\\/]internal[\\/]/.test(fileName)
const isOurs = (fileName) => !/[\\/]node_modules[\\/]/.test(fileName)

const compilerOptions = (root) => {
  const base = path.join(root, "tsconfig.base.json")
  const fallback = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    customConditions: ["@ctxlog/source"],
    strict: true
  }
  if (!existsSync(base)) return fallback
  const read = ts.readConfigFile(base, ts.sys.readFile)
  if (read.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, "\n"))
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root)
  return { ...parsed.options, noEmit: true, types: [] }
}

/**
 * Every public definition declared in an `internal/` file of the workspace under `root`:
 * `{ file, name, publicAs }`, `file` relative to `root`, sorted. `program`: one of the caller's holding every
 * entry (`pnpm check`'s typecheck program, scripts/typecheck.mjs, ADR 0150); by default one over the entries.
 */
export const publicDefinitionsInInternal = (root, given = undefined) => {
  const entries = packageDirs(root).flatMap(exportEntries)
  const program =
    given ??
    ts.createProgram({
      rootNames: entries.map((entry) => entry.file),
      options: compilerOptions(root)
    })
  const missing = entries.filter((entry) => program.getSourceFile(entry.file) === undefined)
  if (given !== undefined && missing.length > 0) {
    throw new Error(
      `contracts: entries not in the program: ${missing.map((e) => path.relative(root, e.file)).join(", ")}`
    )
  }
  const checker = program.getTypeChecker()
  const found = new Map()
  const visited = new Set()

  const record = (declaration, publicAs) => {
    const file = declaration.getSourceFile().fileName
    if (!isOurs(file) || !isInternal(file)) return
    const name = ts.getNameOfDeclaration(declaration)?.getText() ?? "(default)"
    const key = `${file}#${name}`
    if (!found.has(key)) found.set(key, { file: path.relative(root, file), name, publicAs })
  }

  const resolve = (symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol)

  const visit = (symbol, publicAs) => {
    const target = resolve(symbol)
    if (visited.has(target)) return
    visited.add(target)
    for (const declaration of target.declarations ?? []) {
      if (!isOurs(declaration.getSourceFile().fileName)) continue
      if (ts.isSourceFile(declaration)) continue
      record(declaration, publicAs)
      // `type Service = EventLogService`: a public name for an internal definition.
      if (ts.isTypeAliasDeclaration(declaration) && ts.isTypeReferenceNode(declaration.type)) {
        const named = checker.getSymbolAtLocation(declaration.type.typeName)
        for (const inner of named === undefined ? [] : (resolve(named).declarations ?? [])) {
          record(inner, `${publicAs} (named by a public type alias)`)
        }
      }
    }
    // Members of a re-exported module or of an exported namespace are public too.
    const isModule = (target.declarations ?? []).some((d) => ts.isSourceFile(d) || ts.isModuleDeclaration(d))
    if (isModule) {
      const members = (target.declarations ?? []).some(ts.isSourceFile)
        ? checker.getExportsOfModule(target)
        : [...(target.exports?.values() ?? [])]
      for (const member of members) visit(member, `${publicAs}.${member.getName()}`)
    }
  }

  for (const entry of entries) {
    const source = program.getSourceFile(entry.file)
    const moduleSymbol = source === undefined ? undefined : checker.getSymbolAtLocation(source)
    if (moduleSymbol === undefined) continue
    const prefix = entry.subpath === "." ? entry.name : `${entry.name}/${entry.subpath.replace(/^\.\//, "")}`
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      visit(exported, `${prefix} ${exported.getName()}`)
    }
  }
  return [...found.values()].sort((a, b) => a.file.localeCompare(b.file) || a.name.localeCompare(b.name))
}

/** Prints what `publicDefinitionsInInternal` found; the exit code (0: none). */
export const reportContracts = (found) => {
  if (found.length === 0) {
    console.log("contracts: no public definition in an internal/ file")
    return 0
  }
  console.error(`contracts: ${found.length} public definition(s) in internal/ files (move each to its module):`)
  for (const item of found) console.error(`  ${item.file}: ${item.name}  (public as ${item.publicAs})`)
  return 1
}

const main = () => {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), ".."))
  return reportContracts(publicDefinitionsInInternal(root))
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main()
}
