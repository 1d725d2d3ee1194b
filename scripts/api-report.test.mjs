import assert from "node:assert/strict"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { test } from "node:test"
import { apiReports } from "./api-report.mjs"

const write = (root, file, text) => {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  writeFileSync(path.join(root, file), text)
}

/** A workspace of one published package (`@x/p`: an entry re-exporting a module and an internal file) and one private. */
const workspace = () => {
  const root = mkdtempSync(path.join(tmpdir(), "api-report-"))
  write(
    root,
    "tsconfig.base.json",
    JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", target: "ES2022", strict: true }
    })
  )
  const manifest = { name: "@x/p", type: "module", exports: { ".": { "@ctxlog/source": "./src/index.ts" } } }
  write(root, "packages/p/package.json", JSON.stringify(manifest))
  write(root, "packages/p/src/index.ts", '/** doc */\nexport * as Thing from "./Thing.js"\n')
  write(
    root,
    "packages/p/src/Thing.ts",
    'import { helper } from "./internal/helper.js"\n/** A comment the report drops. */\nexport const make = (n: number): string => helper(n)\nexport const old = 1\n'
  )
  write(root, "packages/p/src/internal/helper.ts", "export const helper = (n: number): string => String(n)\n")
  write(
    root,
    "apps/a/package.json",
    JSON.stringify({ name: "a", private: true, exports: { ".": { "@ctxlog/source": "./src/index.ts" } } })
  )
  write(root, "apps/a/src/index.ts", "export const x = 1\n")
  return root
}

test("a report lists the declarations of each public module, without comments, internal/ or private packages", () => {
  const root = workspace()
  try {
    const reports = apiReports(root)
    assert.deepEqual(
      reports.map((report) => report.file),
      ["api/p.api.md"]
    )
    const text = reports[0].text
    assert.match(text, /^# @x\/p — public API/)
    assert.match(text, /## src\/index\.ts/)
    assert.match(text, /## src\/Thing\.ts/)
    assert.match(text, /export declare const make: \(n: number\) => string;/)
    assert.match(text, /export declare const old = 1;/)
    assert.doesNotMatch(text, /internal\/helper\.ts/)
    assert.doesNotMatch(text, /A comment the report drops/)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test("a removed export shows as a removed line of the report", () => {
  const root = workspace()
  try {
    const before = apiReports(root)[0].text
    write(
      root,
      "packages/p/src/Thing.ts",
      'import { helper } from "./internal/helper.js"\nexport const make = (n: number): string => helper(n)\n'
    )
    const after = apiReports(root)[0].text
    const removed = before.split("\n").filter((line) => !after.split("\n").includes(line))
    assert.deepEqual(removed, ["export declare const old = 1;"])
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
