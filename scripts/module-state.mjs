// No module-level mutable state in `packages/*/src` outside a short, documented allow-list (issue 40):
// a `let` (or `var`) among a module's top-level statements, or a `new Map` / `new WeakMap` / `new Lru` /
// `Lru.make(…)` (core's one LRU) evaluated when the module loads (in a top-level statement or a static class field, not inside a function, method or
// instance field, which make one per call or per object). Found with the TypeScript parser, not a regex,
// so a `let` in a function or a `new Map` in a factory never counts.
//
// Each finding is `{ file, name, what }` (`name`: the variable or field holding it). The allow-list,
// `scripts/module-state-allow.json`, names each exception with the reason it stays; an entry that no
// longer matches anything fails too, so the list only shrinks with the code.
//
// Usage: node scripts/module-state.mjs [ROOT]   (exits 1 and lists what is not allowed; a step of `pnpm check`)
import { existsSync, readdirSync, readFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const tracked = new Set(["Map", "WeakMap", "Lru"])

/** The `.ts` files under `dir`, recursively, sorted. */
const sourceFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) return sourceFiles(full)
      return entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : []
    })

/** Nodes whose inside runs later (per call or per object), never when the module loads. */
const isDeferred = (node) =>
  ts.isFunctionLike(node) ||
  (ts.isPropertyDeclaration(node) && !node.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword))

/** The name of the variable, field or property a node's value is held in (the nearest one around it). */
const holderOf = (node) => {
  for (let at = node; at !== undefined; at = at.parent) {
    if ((ts.isVariableDeclaration(at) || ts.isPropertyDeclaration(at)) && at.name !== undefined) {
      return at.name.getText()
    }
    if (ts.isExpressionStatement(at)) return "(statement)"
  }
  return "(module)"
}

/** Every module-level mutable binding or collection in one file's text. */
export const findingsIn = (fileName, text) => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const found = []
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement) && !(statement.declarationList.flags & ts.NodeFlags.Const)) {
      const keyword = statement.declarationList.flags & ts.NodeFlags.Let ? "let" : "var"
      for (const declaration of statement.declarationList.declarations) {
        found.push({ name: declaration.name.getText(source), what: keyword })
      }
    }
    const visit = (node) => {
      if (isDeferred(node)) return
      if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && tracked.has(node.expression.text)) {
        found.push({ name: holderOf(node), what: `new ${node.expression.text}` })
      }
      if (ts.isCallExpression(node) && node.expression.getText(source) === "Lru.make") {
        found.push({ name: holderOf(node), what: "Lru.make" })
      }
      ts.forEachChild(node, visit)
    }
    visit(statement)
  }
  return found
}

/** Every finding under `root`'s `packages/*\/src`: `{ file, name, what }`, `file` relative to `root`. */
export const moduleState = (root) => {
  const packages = path.join(root, "packages")
  if (!existsSync(packages)) return []
  return readdirSync(packages, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(packages, entry.name, "src")))
    .map((entry) => entry.name)
    .sort()
    .flatMap((name) => sourceFiles(path.join(packages, name, "src")))
    .flatMap((file) => {
      const relative = path.relative(root, file).split(path.sep).join("/")
      return findingsIn(file, readFileSync(file, "utf8")).map((finding) => ({ file: relative, ...finding }))
    })
}

const keyOf = (entry) => `${entry.file}#${entry.name}#${entry.what}`

/**
 * What is found and not allowed, and what is allowed and no longer found. `allowed`: the allow-list's
 * entries, `{ file, name, what, reason }`; an entry without a reason counts as not written.
 */
export const check = (root, allowed) => {
  const found = moduleState(root)
  const reasoned = allowed.filter((entry) => typeof entry.reason === "string" && entry.reason.trim().length > 0)
  const allowedKeys = new Set(reasoned.map(keyOf))
  const foundKeys = new Set(found.map(keyOf))
  return {
    found,
    unexplained: found.filter((finding) => !allowedKeys.has(keyOf(finding))),
    unused: allowed.filter((entry) => !foundKeys.has(keyOf(entry)) || !reasoned.includes(entry))
  }
}

const main = () => {
  const here = path.dirname(fileURLToPath(import.meta.url))
  const root = path.resolve(process.argv[2] ?? path.join(here, ".."))
  const allowed = JSON.parse(readFileSync(path.join(here, "module-state-allow.json"), "utf8")).allowed
  const { found, unexplained, unused } = check(root, allowed)
  for (const finding of unexplained) {
    console.error(`${finding.file}: module-level ${finding.what} (${finding.name}) is not on the allow-list`)
  }
  for (const entry of unused) {
    console.error(`allow-list entry ${entry.file} ${entry.name} (${entry.what}) matches nothing or has no reason`)
  }
  if (unexplained.length + unused.length > 0) {
    console.error(
      "Module-level mutable state belongs in a layer; an exception goes in scripts/module-state-allow.json with its reason."
    )
    process.exit(1)
  }
  console.log(`module-level state: ${found.length} allowed (scripts/module-state-allow.json), none else`)
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
