// Runs a TypeScript entry of the workspace (a CLI's `src/bin.ts`, a test's child script) as a child process
// without tsx: the entry and everything it imports (workspace sources by the `@ctxlog/source` condition,
// and the third-party packages) are bundled by esbuild into one ES module, once, and cached under
// node_modules/.cache/ctxlog-ts-bundles/ by the contents of the workspace files it was built from (and the
// lockfile and this script). A child under tsx spent ~5 s of CPU resolving and transforming its imports
// through tsx's hooks (over 100 such children in a CI run); the bundle starts in ~0.5 s (ADR 0108).
//
// It is the same program: the same sources, compiled ahead instead of on load. Each module's
// `import.meta.url` is its own source file's URL (not the bundle's), so code that finds files beside
// itself (package.json, the UI's dist, a sample directory, a worker, `createRequire`) finds what it finds
// under tsx. Native and driver packages (better-sqlite3, pg) stay outside the bundle, imported by absolute
// path from where the importing package resolves them.
//
// `node scripts/ts-bundle.mjs ENTRY.ts` prints the bundle's path (building it when stale).
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, dirname, join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const cacheDir = join(root, "node_modules", ".cache", "ctxlog-ts-bundles")
// esbuild: the bundler the workspace already uses (apps/inspector's UI bundle).
const require = createRequire(join(root, "apps", "inspector", "package.json"))

/** Packages left outside the bundle: native bindings, and drivers that load optional modules by name. */
const external = new Set(["better-sqlite3", "bindings", "pg", "pg-native", "pg-cloudflare", "tsx", "esbuild"])

const sha = (data) => createHash("sha256").update(data).digest("hex")

/** What every bundle's key includes besides its own inputs: this script and the lockfile. */
const baseKey = () => sha(readFileSync(fileURLToPath(import.meta.url)) + readFileSync(join(root, "pnpm-lock.yaml")))

/** The key of a bundle from the workspace files it was built from (paths relative to the root). */
const inputsKey = (inputs) => {
  const hash = createHash("sha256").update(baseKey())
  for (const input of inputs)
    hash
      .update(`${input}\0`)
      .update(readFileSync(join(root, input)))
      .update("\0")
  return hash.digest("hex")
}

const packageName = (specifier) => {
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]
}

const plugin = {
  name: "ctxlog-ts-bundle",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith("node:") || !external.has(packageName(args.path))) return undefined
      if (args.pluginData === "external") return undefined
      const found = await build.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: "external"
      })
      if (found.errors.length > 0) return { errors: found.errors }
      return { path: found.path, external: true }
    })
    // Each module keeps its own `import.meta.url` (see the header): esbuild's own `define` replaces the
    // expression where it is one (not in strings or comments), file by file.
    build.onLoad({ filter: /\.(?:[cm]?[jt]s|tsx)$/ }, async (args) => {
      const text = readFileSync(args.path, "utf8")
      if (!text.includes("import.meta")) return undefined
      const ext = args.path.slice(args.path.lastIndexOf(".") + 1)
      const loader = ext === "ts" || ext === "mts" || ext === "cts" ? "ts" : ext === "tsx" ? "tsx" : "js"
      const { transform } = require("esbuild")
      const out = await transform(text, {
        loader,
        sourcefile: args.path,
        define: { "import.meta.url": JSON.stringify(pathToFileURL(args.path).href) }
      })
      return { contents: out.code, loader: "js", resolveDir: dirname(args.path) }
    })
  }
}

const files = (entry) => {
  const id = sha(relative(root, entry)).slice(0, 12)
  const name = `${basename(entry).replace(/\.[cm]?tsx?$/, "")}-${id}`
  return { outfile: join(cacheDir, `${name}.mjs`), manifestFile: join(cacheDir, `${name}.json`) }
}

/** Bundles this process has found fresh or built: a process checks each entry once. */
const known = new Map()

/** The cached bundle of `entry` when it was built from the files as they are now. */
const fresh = (entry) => {
  const { outfile, manifestFile } = files(entry)
  try {
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8"))
    if (manifest.key === inputsKey(manifest.inputs)) return outfile
  } catch {
    // missing, unreadable or naming a file that is gone: stale
  }
  return undefined
}

/** The bundle of `entry` (an absolute path), built when missing or stale; its absolute path. */
export const bundledEntry = async (entry) => {
  const found = known.get(entry) ?? fresh(entry) ?? (await build(entry))
  known.set(entry, found)
  return found
}

/** `bundledEntry` for synchronous callers: a stale bundle is built by running this script. */
export const bundledEntrySync = (entry) => {
  const found =
    known.get(entry) ??
    fresh(entry) ??
    execFileSync(process.execPath, [fileURLToPath(import.meta.url), entry], { encoding: "utf8" }).trim()
  known.set(entry, found)
  return found
}

const build = async (entry) => {
  const { outfile, manifestFile } = files(entry)
  const esbuild = require("esbuild")
  mkdirSync(cacheDir, { recursive: true })
  const temp = `${outfile}.${process.pid}.${Date.now()}.tmp.mjs`
  const result = await esbuild.build({
    entryPoints: [entry],
    outfile: temp,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@ctxlog/source"],
    metafile: true,
    logLevel: "silent",
    // CommonJS packages inside an ES module bundle call `require` for Node's built-ins.
    banner: {
      js: 'import { createRequire as __ctxlogRequire } from "node:module";\nconst require = __ctxlogRequire(import.meta.url);'
    },
    plugins: [plugin]
  })
  const inputs = Object.keys(result.metafile.inputs)
    .map((input) => relative(root, resolve(process.cwd(), input)))
    .filter((input) => !input.split(/[\\/]/).includes("node_modules"))
    .sort()
  // Concurrent builders (test files, packages) each rename a whole file: a reader never sees half of one.
  renameSync(temp, outfile)
  const manifestTemp = `${manifestFile}.${process.pid}.tmp`
  writeFileSync(manifestTemp, JSON.stringify({ entry: relative(root, entry), key: inputsKey(inputs), inputs }))
  renameSync(manifestTemp, manifestFile)
  return outfile
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const entry = process.argv[2]
  if (entry === undefined) {
    console.error("usage: node scripts/ts-bundle.mjs ENTRY.ts")
    process.exit(2)
  }
  console.log(await bundledEntry(resolve(entry)))
}
