// `pnpm build` (and CI's build step): every package's and app's `dist` from ONE TypeScript program over all
// their sources (ADR 0170). `turbo run build` ran `tsc -p tsconfig.build.json` in each of the twelve, and
// each of those programs loaded and checked effect's declarations and every dependency's emitted
// declarations anew: ~166 s of CPU on the 2-core CI machine, ~192 s on CI's critical path. Here each source
// file is parsed, bound and checked once, with the options of the packages' tsconfig.build.json (all the same:
// tsconfig.base.json, outDir dist, rootDir src), and its JavaScript, declarations and maps are written where
// that package's own build writes them (`<package>/dist/…`), the maps' paths rewritten to match.
//
// What it checks: every error `tsc -p tsconfig.build.json` reports about a package's sources (options,
// syntax, types) and about its declaration emit (a type that cannot be named in a .d.ts, …). What the
// per-package builds checked and this program does not (each package against its dependencies' emitted
// .d.ts instead of their sources) is checked after the emit: one declaration program over every package's
// emitted entries, resolved as a consumer resolves them (package exports, no source condition), with the
// declarations themselves checked (`skipLibCheck` off for ours). Any error fails the build; nothing is
// written for a package whose sources have an error.
//
// The inspector's UI bundle (apps/inspector/scripts/bundle-ui.mjs) is built after the emit, as its own
// build script does. Each package's `build` script (`tsc -p tsconfig.build.json`, what `prepack` runs on
// publish) still works alone.
//
// Usage: node scripts/build.mjs [--if-changed]
//   --if-changed: do nothing when the inputs (sources, tsconfigs, manifests, the TypeScript version) hash
//   to what the last successful build recorded (node_modules/.cache/ctxlog-build.json) and every dist is
//   there; the pack scripts call it this way instead of `turbo run build`.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import path from "node:path"
import { builtinModules } from "node:module"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const repoRoot = path.resolve(import.meta.dirname, "..")

/** Every workspace package or app with a tsconfig.build.json, relative to the root (packages/core, …). */
export const builtDirs = (root = repoRoot) =>
  ["packages", "apps"].flatMap((group) =>
    (existsSync(path.join(root, group)) ? readdirSync(path.join(root, group)) : [])
      .map((name) => `${group}/${name}`)
      .filter((dir) => existsSync(path.join(root, dir, "tsconfig.build.json")))
  )

const filesUnder = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => path.join(entry.parentPath, entry.name))
    : []

/** The hash of what a build reads: each package's sources, tsconfigs and manifest, the base config, TypeScript. */
const inputsHash = (root, dirs) => {
  const hash = createHash("sha256")
  const files = [
    path.join(root, "tsconfig.base.json"),
    path.join(repoRoot, "scripts", "build.mjs"),
    ...dirs.flatMap((dir) => [
      path.join(root, dir, "tsconfig.build.json"),
      path.join(root, dir, "package.json"),
      ...filesUnder(path.join(root, dir, "src")),
      ...filesUnder(path.join(root, dir, "ui")),
      ...filesUnder(path.join(root, dir, "scripts"))
    ])
  ].sort()
  hash.update(ts.version)
  for (const file of files) {
    hash.update(path.relative(root, file))
    hash.update("\0")
    hash.update(readFileSync(file))
    hash.update("\0")
  }
  return hash.digest("hex")
}

const stampFileOf = (root) => path.join(root, "node_modules", ".cache", "ctxlog-build.json")

const format = (root, diagnostics) =>
  ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => root,
    getNewLine: () => "\n"
  })

/**
 * The packages' options (each tsconfig.build.json, which must agree), for one program over all of them:
 * sources resolved through the `@ctxlog/source` condition, emitted under a virtual root that `writeFile`
 * maps back to each package's dist.
 */
const buildProgram = (root, dirs, virtualOut) => {
  const parsed = dirs.map((dir) => {
    const configPath = path.join(root, dir, "tsconfig.build.json")
    const config = ts.getParsedCommandLineOfConfigFile(
      configPath,
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} }
    )
    if (config === undefined) throw new Error(`${configPath}: cannot be read`)
    return { dir, config }
  })
  const errors = parsed.flatMap(({ config }) => config.errors)
  const shape = ({ dir, config }) => {
    const { outDir, rootDir, configFilePath, pathsBasePath, ...rest } = config.options
    const expected = [path.join(root, dir, "dist"), path.join(root, dir, "src")]
    if (outDir !== expected[0] || rootDir !== expected[1])
      throw new Error(`${dir}/tsconfig.build.json: outDir must be dist and rootDir src (scripts/build.mjs maps them)`)
    return JSON.stringify(rest)
  }
  const first = shape(parsed[0])
  for (const entry of parsed.slice(1))
    if (shape(entry) !== first)
      throw new Error(
        `${entry.dir}/tsconfig.build.json: its options differ from ${parsed[0].dir}'s; scripts/build.mjs builds them as one program`
      )
  const { outDir: _o, rootDir: _r, configFilePath: _c, ...base } = parsed[0].config.options
  const options = { ...base, rootDir: root, outDir: virtualOut, customConditions: ["@ctxlog/source"] }
  const rootNames = parsed.flatMap(({ config }) => config.fileNames)
  return { program: ts.createProgram({ rootNames, options }), errors }
}

/** A source map's `sources` (and a declaration map's) made relative to the file's real place in dist. */
const remapSources = (text, virtualFile, realFile) => {
  const map = JSON.parse(text)
  map.sources = map.sources.map((source) =>
    path
      .relative(path.dirname(realFile), path.resolve(path.dirname(virtualFile), source))
      .split(path.sep)
      .join("/")
  )
  return JSON.stringify(map)
}

const builtins = new Set(builtinModules)

/**
 * After the emit: every import in every emitted declaration file, resolved as a consumer resolves it (the
 * packages' exports, no `@ctxlog/source` condition), must land on a declaration file, and a bare import must
 * name the package itself, a Node built-in or one of its `dependencies` / `peerDependencies` (a consumer
 * has no devDependencies). What the per-package builds checked, in effect, by compiling each package
 * against its dependencies' emitted .d.ts; without re-checking effect's types twelve times over (37 s of
 * CPU as a full type check of the declarations, 1–2 s this way).
 */
const declarationCheck = (root, dirs, options) => {
  const resolution = { ...options, customConditions: [], noEmit: true }
  const problems = []
  for (const dir of dirs) {
    const manifest = JSON.parse(readFileSync(path.join(root, dir, "package.json"), "utf8"))
    const allowed = new Set([
      manifest.name,
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {})
    ])
    for (const file of filesUnder(path.join(root, dir, "dist")).filter((name) => name.endsWith(".d.ts"))) {
      const { importedFiles, referencedFiles, typeReferenceDirectives } = ts.preProcessFile(
        readFileSync(file, "utf8"),
        true,
        true
      )
      const where = path.relative(root, file)
      for (const { fileName } of referencedFiles)
        problems.push(`${where}: a /// <reference path="${fileName}"> a consumer may not have`)
      for (const { fileName } of typeReferenceDirectives)
        if (fileName !== "node")
          problems.push(`${where}: a /// <reference types="${fileName}"> outside its dependencies`)
      for (const { fileName: specifier } of importedFiles) {
        const bare = !specifier.startsWith(".") && !specifier.startsWith("/")
        if (bare) {
          if (specifier.startsWith("node:") || builtins.has(specifier)) continue
          const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]
          if (!allowed.has(name)) {
            problems.push(
              `${where}: imports "${specifier}", which is not among ${manifest.name}'s dependencies or peerDependencies`
            )
            continue
          }
        }
        const resolved = ts.resolveModuleName(specifier, file, resolution, ts.sys).resolvedModule
        if (resolved === undefined) problems.push(`${where}: "${specifier}" does not resolve for a consumer`)
        else if (!/\.d\.[cm]?ts$/.test(resolved.resolvedFileName))
          problems.push(
            `${where}: "${specifier}" resolves to ${path.relative(root, resolved.resolvedFileName)}, not a declaration file`
          )
      }
    }
  }
  return problems
}

/** CPU seconds (user + system) of this process since `from` (a `process.cpuUsage()`), for the closing line. */
const cpuSince = (from) => {
  const used = process.cpuUsage(from)
  return ((used.user + used.system) / 1e6).toFixed(1)
}

export const build = ({ root = repoRoot, ifChanged = false } = {}) => {
  const stampFile = stampFileOf(root)
  const started = process.cpuUsage()
  const dirs = builtDirs(root)
  const hash = inputsHash(root, dirs)
  if (ifChanged && existsSync(stampFile)) {
    const stamp = JSON.parse(readFileSync(stampFile, "utf8"))
    if (stamp.hash === hash && dirs.every((dir) => existsSync(path.join(root, dir, "dist")))) {
      console.log("build: every dist is current (inputs unchanged since the last build)")
      return 0
    }
  }
  const virtualOut = path.join(root, "node_modules", ".cache", "ctxlog-build-out")
  const { program, errors } = buildProgram(root, dirs, virtualOut)
  const before = ts.sortAndDeduplicateDiagnostics([
    ...errors,
    ...program.getOptionsDiagnostics(),
    ...program.getSyntacticDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSemanticDiagnostics()
  ])
  if (before.length > 0) {
    process.stdout.write(format(root, before))
    console.log(`\nbuild: ${before.length} error${before.length === 1 ? "" : "s"}; nothing written`)
    return 1
  }
  const checked = process.cpuUsage()
  // Each package's dist holds exactly what this emit writes (as a fresh `tsc` build of a clean checkout).
  const owner = (file) => dirs.find((dir) => file.startsWith(path.join(virtualOut, dir, "src") + path.sep))
  const outputs = new Map()
  const emitted = program.emit(undefined, (virtualFile, text) => {
    const dir = owner(virtualFile)
    if (dir === undefined) throw new Error(`build: ${virtualFile} is outside every package's src`)
    const realFile = path.join(root, dir, "dist", path.relative(path.join(virtualOut, dir, "src"), virtualFile))
    outputs.set(realFile, virtualFile.endsWith(".map") ? remapSources(text, virtualFile, realFile) : text)
  })
  if (emitted.diagnostics.length > 0 || emitted.emitSkipped) {
    process.stdout.write(format(root, emitted.diagnostics))
    console.log(`\nbuild: declaration emit failed (${emitted.diagnostics.length} errors); nothing written`)
    return 1
  }
  const emittedAt = process.cpuUsage()
  for (const dir of dirs) {
    const dist = path.join(root, dir, "dist")
    // The inspector's UI bundle (dist/ui) is made below; everything else in dist is this emit's.
    for (const entry of existsSync(dist) ? readdirSync(dist) : [])
      if (!(dir === "apps/inspector" && entry === "ui"))
        rmSync(path.join(dist, entry), { recursive: true, force: true })
  }
  for (const [file, text] of outputs) {
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
  const written = process.cpuUsage()
  const declared = declarationCheck(root, dirs, program.getCompilerOptions())
  if (declared.length > 0) {
    for (const problem of declared) console.log(problem)
    console.log(
      `\nbuild: ${declared.length} import${declared.length === 1 ? "" : "s"} in the emitted declarations a consumer cannot resolve`
    )
    return 1
  }
  const declaredAt = process.cpuUsage()
  const inspector = path.join(root, "apps", "inspector", "scripts", "bundle-ui.mjs")
  if (existsSync(inspector))
    execFileSync(process.execPath, [inspector], { cwd: path.dirname(path.dirname(inspector)), stdio: "inherit" })
  mkdirSync(path.dirname(stampFile), { recursive: true })
  writeFileSync(stampFile, `${JSON.stringify({ hash }, null, 2)}\n`)
  const sources = program.getRootFileNames().length
  console.log(`build: ${outputs.size} files into ${dirs.length} packages' dist from one program of ${sources} sources`)
  const phase = (from, to) => ((to.user + to.system - from.user - from.system) / 1e6).toFixed(1)
  console.log(
    `build: CPU ${cpuSince(started)} s (program and check ${phase(started, checked)} s, emit ${phase(checked, emittedAt)} s, ` +
      `declaration imports ${phase(written, declaredAt)} s; the UI bundle in its own process)`
  )
  return 0
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = build({ ifChanged: process.argv.includes("--if-changed") })
}
