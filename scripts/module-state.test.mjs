import assert from "node:assert/strict"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { test } from "node:test"
import { fileURLToPath } from "node:url"
import { check, findingsIn } from "./module-state.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const allowed = JSON.parse(readFileSync(path.join(here, "module-state-allow.json"), "utf8")).allowed

test("the repository has no module-level mutable state outside the allow-list, and every entry is used", () => {
  const { found, unexplained, unused } = check(path.join(here, ".."), allowed)
  assert.deepEqual(unexplained, [])
  assert.deepEqual(unused, [])
  assert.equal(found.length, allowed.length)
  for (const entry of allowed) assert.ok(entry.reason.length > 20, `${entry.file} ${entry.name}: a reason, not a word`)
})

test("module level is what runs when the module loads: top-level let, new Map/WeakMap/Lru, static fields", () => {
  const text = `
    let counter = 0
    var legacy = 1
    const cache = new Map<string, number>()
    const holder = { memo: new WeakMap<object, string>() }
    const lru = Lru.make<string, number>(4)
    new Map().set("a", 1)
    export class Registry { static readonly byName = new Map(); readonly own = new Map() }
    export const fresh = () => { let local = 0; const perCall = new Map(); return [local, perCall] }
    export function build() { const inFunction = new WeakMap(); return inFunction }
    const constant = 3
  `
  assert.deepEqual(findingsIn("sample.ts", text), [
    { name: "counter", what: "let" },
    { name: "legacy", what: "var" },
    { name: "cache", what: "new Map" },
    { name: "holder", what: "new WeakMap" },
    { name: "lru", what: "Lru.make" },
    { name: "(statement)", what: "new Map" },
    { name: "byName", what: "new Map" }
  ])
})

test("a finding off the list fails, and so does an entry without a reason or matching nothing", () => {
  const root = mkdtempSync(path.join(tmpdir(), "module-state-"))
  try {
    mkdirSync(path.join(root, "packages", "p", "src"), { recursive: true })
    writeFileSync(path.join(root, "packages", "p", "src", "a.ts"), "let n = 0\nexport const next = () => ++n\n")
    const none = check(root, [])
    assert.deepEqual(none.unexplained, [{ file: "packages/p/src/a.ts", name: "n", what: "let" }])
    const entry = { file: "packages/p/src/a.ts", name: "n", what: "let" }
    assert.deepEqual(check(root, [{ ...entry, reason: "" }]).unexplained.length, 1)
    assert.deepEqual(check(root, [{ ...entry, reason: "a counter the tests read" }]).unexplained, [])
    const stale = { file: "packages/p/src/gone.ts", name: "m", what: "new Map", reason: "was here" }
    assert.deepEqual(check(root, [{ ...entry, reason: "a counter the tests read" }, stale]).unused, [stale])
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
