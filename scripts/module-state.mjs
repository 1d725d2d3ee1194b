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
// A cache is declared through the cache layer (`@ctxlog/core` `Caches.weak` / `Caches.lru` / `Caches.slot`,
// ADR 0162) at module level, with a literal name: a declaration inside a function (which would register a
// cache per call) or with a computed name is a finding too, and so is a name declared twice.
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

const cacheKinds = new Set(["weak", "lru", "slot"])

/**
 * The caches a file declares through the cache layer (`Caches.weak("name")`, …): `declared` those made
 * when the module loads, each `{ name, kind }`; `misplaced` findings for a declaration inside a function
 * or with a name that is not a string literal.
 */
export const cachesIn = (fileName, text) => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const declared = []
  const misplaced = []
  const visit = (node, deferred) => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.expression.getText(source) === "Caches" &&
      cacheKinds.has(node.expression.name.text)
    ) {
      const kind = node.expression.name.text
      const [first] = node.arguments
      const literal = first !== undefined && ts.isStringLiteralLike(first) ? first.text : undefined
      if (deferred) misplaced.push({ name: holderOf(node), what: `Caches.${kind} per call` })
      else if (literal === undefined)
        misplaced.push({ name: holderOf(node), what: `Caches.${kind} without a literal name` })
      else declared.push({ name: literal, kind })
    }
    ts.forEachChild(node, (child) => visit(child, deferred || isDeferred(node)))
  }
  for (const statement of source.statements) visit(statement, false)
  return { declared, misplaced }
}

/** Every module-level mutable binding or collection in one file's text (and every misplaced cache declaration). */
export const findingsIn = (fileName, text) => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const found = [...cachesIn(fileName, text).misplaced]
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

/** The source files under `root`'s `packages/*\/src`, each `{ file, relative }`. */
const packageSources = (root) => {
  const packages = path.join(root, "packages")
  if (!existsSync(packages)) return []
  return readdirSync(packages, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(packages, entry.name, "src")))
    .map((entry) => entry.name)
    .sort()
    .flatMap((name) => sourceFiles(path.join(packages, name, "src")))
    .map((file) => ({ file, relative: path.relative(root, file).split(path.sep).join("/") }))
}

/** Every finding under `root`'s `packages/*\/src`: `{ file, name, what }`, `file` relative to `root`. */
export const moduleState = (root) =>
  packageSources(root).flatMap(({ file, relative }) =>
    findingsIn(file, readFileSync(file, "utf8")).map((finding) => ({ file: relative, ...finding }))
  )

/** Every cache declared through the cache layer under `root`'s `packages/*\/src`: `{ file, name, kind }`. */
export const declaredCaches = (root) =>
  packageSources(root).flatMap(({ file, relative }) =>
    cachesIn(file, readFileSync(file, "utf8")).declared.map((cache) => ({ file: relative, ...cache }))
  )

const keyOf = (entry) => `${entry.file}#${entry.name}#${entry.what}`

/**
 * What is found and not allowed, and what is allowed and no longer found. `allowed`: the allow-list's
 * entries, `{ file, name, what, reason }`; an entry without a reason counts as not written.
 */
export const check = (root, allowed) => {
  const found = moduleState(root)
  const caches = declaredCaches(root)
  const duplicates = caches.filter((cache, at) => caches.findIndex((other) => other.name === cache.name) !== at)
  const reasoned = allowed.filter((entry) => typeof entry.reason === "string" && entry.reason.trim().length > 0)
  const allowedKeys = new Set(reasoned.map(keyOf))
  const foundKeys = new Set(found.map(keyOf))
  return {
    found,
    caches,
    duplicates,
    unexplained: found.filter((finding) => !allowedKeys.has(keyOf(finding))),
    unused: allowed.filter((entry) => !foundKeys.has(keyOf(entry)) || !reasoned.includes(entry))
  }
}

const main = () => {
  const here = path.dirname(fileURLToPath(import.meta.url))
  const root = path.resolve(process.argv[2] ?? path.join(here, ".."))
  const allowed = JSON.parse(readFileSync(path.join(here, "module-state-allow.json"), "utf8")).allowed
  const { found, caches, duplicates, unexplained, unused } = check(root, allowed)
  for (const finding of unexplained) {
    console.error(`${finding.file}: module-level ${finding.what} (${finding.name}) is not on the allow-list`)
  }
  for (const entry of unused) {
    console.error(`allow-list entry ${entry.file} ${entry.name} (${entry.what}) matches nothing or has no reason`)
  }
  for (const cache of duplicates) {
    console.error(`${cache.file}: cache ${cache.name} is declared twice (a cache's name is unique)`)
  }
  if (unexplained.length + unused.length + duplicates.length > 0) {
    console.error(
      "Module-level mutable state belongs in a layer; an exception goes in scripts/module-state-allow.json with its reason."
    )
    process.exit(1)
  }
  console.log(
    `module-level state: ${found.length} allowed (scripts/module-state-allow.json), none else; ${caches.length} caches declared through the cache layer (Caches)`
  )
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
