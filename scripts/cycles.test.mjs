// The cycle check of `pnpm check` (scripts/cycles.mjs) on temporary files: a cycle of value imports
// fails it; a cycle closed only by type imports (`import type`, `export type`, an inline `type`
// specifier) passes. Run with `pnpm test:scripts` (`node --test scripts/*.test.mjs`).
import assert from "node:assert/strict"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { test } from "node:test"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("./cycles.mjs", import.meta.url))

const tsconfig = JSON.stringify({
  compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true, verbatimModuleSyntax: true }
})

/** Write `files` in a fresh temporary folder, run the check on `entry` there, and remove the folder. */
const check = (files, entry = "a.ts") => {
  const dir = mkdtempSync(path.join(tmpdir(), "ctxlog-cycles-"))
  try {
    writeFileSync(path.join(dir, "tsconfig.json"), tsconfig)
    for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text)
    const run = spawnSync(process.execPath, [script, entry], { cwd: dir, encoding: "utf8" })
    return { status: run.status, output: `${run.stdout}${run.stderr}` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test("a cycle of value imports fails the check and names its files", () => {
  const result = check({
    "a.ts": 'import { b } from "./b.js"\nexport const a = (): number => b + 1\n',
    "b.ts": 'import { a } from "./a.js"\nexport const b = 1\nexport const c = (): number => a()\n'
  })
  assert.equal(result.status, 1, result.output)
  assert.match(result.output, /1 value-import cycle/)
  assert.match(result.output, /a\.ts/)
  assert.match(result.output, /b\.ts/)
})

test("a longer value cycle through a re-export fails too", () => {
  const result = check({
    "a.ts": 'export * as B from "./b.js"\nexport const a = 1\n',
    "b.ts": 'import { c } from "./c.js"\nexport const b = c\n',
    "c.ts": 'import { a } from "./a.js"\nexport const c = a\n'
  })
  assert.equal(result.status, 1, result.output)
  assert.match(result.output, /c\.ts/)
})

test("a cycle closed by an `import type` passes", () => {
  const result = check({
    "a.ts":
      'import * as impl from "./b.js"\nexport interface Service { readonly n: number }\nexport const make = impl.make\n',
    "b.ts": 'import type { Service } from "./a.js"\nexport const make = (): Service => ({ n: 1 })\n'
  })
  assert.equal(result.status, 0, result.output)
  assert.match(result.output, /no value-import cycle/)
})

test("a cycle closed by `export type` or an inline `type` specifier passes", () => {
  const result = check({
    "a.ts":
      'import { make } from "./b.js"\nexport interface Service { readonly n: number }\nexport const service = make()\n',
    "b.ts":
      'import { type Service } from "./a.js"\nexport type { Service as Contract } from "./a.js"\nexport const make = (): Service => ({ n: 1 })\n'
  })
  assert.equal(result.status, 0, result.output)
})
