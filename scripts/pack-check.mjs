// Proves each package is usable on its own, outside the monorepo: packs every publishable package,
// installs the tarballs into an empty folder in the temp dir with npm, imports each under plain node
// and typechecks a file that uses each one's types.
// Usage: node scripts/pack-check.mjs [package-dir ...]   (default: every dir in packages/)
import { execFileSync } from "node:child_process"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"

const root = resolve(import.meta.dirname, "..")
const dirs =
  process.argv.slice(2).length > 0
    ? process.argv.slice(2)
    : readdirSync(join(root, "packages")).map((d) => `packages/${d}`)
const work = mkdtempSync(join(tmpdir(), "ctxlog-pack-"))
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" })

// Native packages whose build the tarballs' install needs: [package, built file inside it].
const natives = [["better-sqlite3", "build/Release/better_sqlite3.node"]]

function reuseNativeBuilds(dir) {
  for (const [name, built] of natives) {
    const target = join(dir, "node_modules", name)
    if (!existsSync(join(target, "package.json"))) continue
    const { version } = JSON.parse(readFileSync(join(target, "package.json"), "utf8"))
    const source = join(root, "node_modules", ".pnpm", `${name}@${version}`, "node_modules", name, built)
    if (existsSync(source)) {
      mkdirSync(dirname(join(target, built)), { recursive: true })
      copyFileSync(source, join(target, built))
      console.log(`pack check: ${name}@${version} native build reused from the workspace install`)
    } else {
      console.log(`pack check: building ${name}@${version} (no workspace build of that version)`)
      run("npm", ["rebuild", name, "--loglevel=error"], dir)
    }
  }
}

try {
  const names = []
  const tarballs = []
  for (const dir of dirs) {
    const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))
    names.push(manifest.name)
    run("pnpm", ["pack", "--pack-destination", work], join(root, dir))
    tarballs.push(`./${manifest.name.replace("@", "").replace("/", "-")}-${manifest.version}.tgz`)
  }
  writeFileSync(join(work, "package.json"), JSON.stringify({ name: "pack-check", private: true, type: "module" }))
  // Install scripts off, then native modules are taken from the workspace's own install when it holds the
  // same version built for this Node (it was just built by pnpm install): without a reachable prebuilt
  // binary, npm would compile SQLite again from source here, many minutes on a loaded 2-core CI box.
  // Anything not found that way is rebuilt by npm as usual.
  run(
    "npm",
    ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs, "typescript@~5.9.3"],
    work
  )
  reuseNativeBuilds(work)
  for (const name of names) {
    const keys = run(
      "node",
      [
        "--input-type=module",
        "-e",
        `import(${JSON.stringify(name)}).then((m) => console.log(Object.keys(m).join(",")))`
      ],
      work
    ).trim()
    if (keys === "") throw new Error(`${name} exports nothing`)
    console.log(`node import ${name}: ${keys}`)
  }
  const uses = names.map(
    (name, index) =>
      `import * as P${index} from ${JSON.stringify(name)}\nexport const k${index}: ReadonlyArray<string> = Object.keys(P${index})`
  )
  writeFileSync(
    join(work, "check.ts"),
    `${uses.join("\n")}\nimport { Window } from "@ctxlog/core"\n// @ts-expect-error version is a number\nexport const wrong: string = Window.empty.version\n`
  )
  writeFileSync(
    join(work, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "NodeNext",
        moduleResolution: "NodeNext",
        target: "ES2022",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: []
      },
      files: ["check.ts"]
    })
  )
  run(join(work, "node_modules", ".bin", "tsc"), ["-p", "."], work)
  console.log(`types ok: ${names.join(", ")}`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
