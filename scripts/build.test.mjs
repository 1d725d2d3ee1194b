// scripts/build.mjs (ADR 0170) on a workspace of two packages, `@x/b` and `@x/a` which imports it: one program
// writes both dists, maps pointing at each package's src; an emitted declaration importing a package its
// manifest does not depend on, and a type error, fail the build. Run with `node --test scripts/`.
import assert from "node:assert/strict"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { test } from "node:test"
import { build } from "./build.mjs"

const write = (root, file, text) => {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  writeFileSync(path.join(root, file), typeof text === "string" ? text : JSON.stringify(text))
}

const exportsOf = {
  ".": { "@ctxlog/source": "./src/index.ts", types: "./dist/index.d.ts", default: "./dist/index.js" }
}

const workspace = ({ aDependsOnB = true } = {}) => {
  const root = mkdtempSync(path.join(tmpdir(), "ctxlog-build-test-"))
  write(root, "tsconfig.base.json", {
    compilerOptions: {
      target: "ES2022",
      module: "NodeNext",
      moduleResolution: "NodeNext",
      customConditions: ["@ctxlog/source"],
      strict: true,
      declaration: true,
      declarationMap: true,
      sourceMap: true,
      types: []
    }
  })
  const buildConfig = {
    extends: "../../tsconfig.base.json",
    compilerOptions: { outDir: "dist", rootDir: "src", customConditions: [] },
    include: ["src"]
  }
  write(root, "packages/b/package.json", { name: "@x/b", version: "1.0.0", type: "module", exports: exportsOf })
  write(root, "packages/b/tsconfig.build.json", buildConfig)
  write(root, "packages/b/src/index.ts", "/** A box. */\nexport interface Box {\n  readonly n: number\n}\n")
  const dependency = { "@x/b": "workspace:^" }
  write(root, "packages/a/package.json", {
    name: "@x/a",
    version: "1.0.0",
    type: "module",
    exports: exportsOf,
    ...(aDependsOnB ? { dependencies: dependency } : { devDependencies: dependency })
  })
  write(root, "packages/a/tsconfig.build.json", buildConfig)
  write(
    root,
    "packages/a/src/index.ts",
    'import type { Box } from "@x/b"\nexport const box = (n: number): Box => ({ n })\n'
  )
  mkdirSync(path.join(root, "packages/a/node_modules/@x"), { recursive: true })
  symlinkSync(path.join(root, "packages/b"), path.join(root, "packages/a/node_modules/@x/b"))
  return root
}

const quietly = (run) => {
  const log = console.log
  const write = process.stdout.write
  const lines = []
  console.log = (...args) => lines.push(args.join(" "))
  process.stdout.write = (text) => lines.push(String(text)) > 0
  try {
    return { status: run(), lines }
  } finally {
    console.log = log
    process.stdout.write = write
  }
}

test("one program writes every package's dist, the maps pointing at its own src; --if-changed then does nothing", () => {
  const root = workspace()
  try {
    const { status } = quietly(() => build({ root }))
    assert.equal(status, 0)
    const dist = (pkg, file) => readFileSync(path.join(root, "packages", pkg, "dist", file), "utf8")
    assert.match(dist("a", "index.js"), /export const box = \(n\) => \(\{ n \}\);/)
    assert.match(dist("a", "index.d.ts"), /import type \{ Box \} from "@x\/b";/)
    assert.match(dist("b", "index.d.ts"), /\/\*\* A box\. \*\//)
    assert.deepEqual(JSON.parse(dist("a", "index.js.map")).sources, ["../src/index.ts"])
    assert.deepEqual(JSON.parse(dist("a", "index.d.ts.map")).sources, ["../src/index.ts"])
    const again = quietly(() => build({ root, ifChanged: true }))
    assert.equal(again.status, 0)
    assert.ok(again.lines.some((line) => line.includes("every dist is current")))
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test("an emitted declaration importing a package that is only a devDependency fails the build, naming both", () => {
  const root = workspace({ aDependsOnB: false })
  try {
    const { status, lines } = quietly(() => build({ root }))
    assert.equal(status, 1)
    assert.ok(
      lines.some((line) => line.includes('packages/a/dist/index.d.ts: imports "@x/b"') && line.includes("@x/a")),
      lines.join("\n")
    )
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test("a type error fails the build and writes nothing", () => {
  const root = workspace()
  try {
    write(
      root,
      "packages/a/src/index.ts",
      'import type { Box } from "@x/b"\nexport const box = (n: number): Box => ({ m: n })\n'
    )
    const { status, lines } = quietly(() => build({ root }))
    assert.equal(status, 1)
    assert.ok(
      lines.some((line) => line.includes("packages/a/src/index.ts")),
      lines.join("\n")
    )
    assert.equal(existsSync(path.join(root, "packages/a/dist")), false)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
