// The contract check of `pnpm check` (scripts/public-contracts.mjs) on a temporary workspace: a public
// name declared in an `internal/` file fails it, whether re-exported by name, through a namespace
// module, or named by a public type alias; contracts in their own module with implementations in
// `internal/` pass. Run with `pnpm test:scripts` (`node --test scripts/*.test.mjs`).
import assert from "node:assert/strict"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { test } from "node:test"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("./public-contracts.mjs", import.meta.url))

const manifest = JSON.stringify({
  name: "@probe/thing",
  type: "module",
  exports: { ".": { "@ctxlog/source": "./src/index.ts" }, "./internal/*": null }
})

/** A workspace with one package holding `files` (paths under its `src/`); the check's exit code and output. */
const check = (files) => {
  const root = mkdtempSync(path.join(tmpdir(), "ctxlog-contracts-"))
  try {
    const pkg = path.join(root, "packages", "thing")
    mkdirSync(path.join(pkg, "src", "internal"), { recursive: true })
    writeFileSync(path.join(pkg, "package.json"), manifest)
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(pkg, "src", name), text)
    const run = spawnSync(process.execPath, [script, root], { encoding: "utf8" })
    return { status: run.status, output: `${run.stdout}${run.stderr}` }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

const index = 'export * as Thing from "./Thing.js"\n'

test("a contract re-exported from an internal file fails, named with its file and public name", () => {
  const result = check({
    "index.ts": index,
    "Thing.ts": 'export type { Options } from "./internal/impl.js"\nexport { ThingError } from "./internal/impl.js"\n',
    "internal/impl.ts":
      "export interface Options { readonly size: number }\nexport class ThingError extends Error {}\nexport const helper = 1\n"
  })
  assert.equal(result.status, 1, result.output)
  assert.match(result.output, /2 public definition\(s\)/)
  assert.match(result.output, /src\/internal\/impl\.ts: Options {2}\(public as @probe\/thing Thing\.Options\)/)
  assert.match(result.output, /src\/internal\/impl\.ts: ThingError/)
  assert.doesNotMatch(result.output, /helper/)
})

test("a public type alias that only names an internal interface fails", () => {
  const result = check({
    "index.ts": index,
    "Thing.ts":
      'import type { ThingService } from "./internal/impl.js"\nexport declare namespace Thing {\n  export type Service = ThingService\n}\n',
    "internal/impl.ts": "export interface ThingService { readonly run: () => number }\n"
  })
  assert.equal(result.status, 1, result.output)
  assert.match(result.output, /ThingService/)
})

test("an entry re-exporting an internal definition directly fails", () => {
  const result = check({
    "index.ts": 'export { make } from "./internal/impl.js"\n',
    "internal/impl.ts": "export const make = (): number => 1\n"
  })
  assert.equal(result.status, 1, result.output)
  assert.match(result.output, /internal\/impl\.ts: make {2}\(public as @probe\/thing make\)/)
})

test("contracts in their module and implementations in internal/ pass", () => {
  const result = check({
    "index.ts": index,
    "Thing.ts": [
      'import * as impl from "./internal/impl.js"',
      "export interface Options { readonly size: number }",
      "export declare namespace Thing {",
      "  export interface Service { readonly run: () => number }",
      "}",
      "export const make: (options: Options) => Thing.Service = impl.make",
      ""
    ].join("\n"),
    "internal/impl.ts": [
      'import type { Options, Thing } from "../Thing.js"',
      "export const make = (options: Options): Thing.Service => ({ run: () => options.size })",
      ""
    ].join("\n")
  })
  assert.equal(result.status, 0, result.output)
  assert.match(result.output, /no public definition in an internal\/ file/)
})
