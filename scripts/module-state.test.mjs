import assert from "node:assert/strict"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { test } from "node:test"
import { fileURLToPath } from "node:url"
import { spawnSync } from "node:child_process"
import { cachesIn, check, findingsIn } from "./module-state.mjs"

const here = path.dirname(fileURLToPath(import.meta.url))
const allowed = JSON.parse(readFileSync(path.join(here, "module-state-allow.json"), "utf8")).allowed

test("the repository has no module-level mutable state outside the allow-list, and every entry is used", () => {
  const { found, caches, duplicates, unexplained, unused } = check(path.join(here, ".."), allowed)
  assert.deepEqual(unexplained, [])
  assert.deepEqual(unused, [])
  assert.deepEqual(duplicates, [])
  // Every cache is declared through the cache layer, named after its package and module.
  assert.ok(caches.length >= 20, `${caches.length} caches declared through Caches`)
  for (const cache of caches) {
    const [, pkg] = cache.file.split("/")
    assert.ok(cache.name.startsWith(`${pkg}.`), `${cache.file}: ${cache.name} is named <package>.<module>.<what>`)
  }
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

test("a cache is declared through the cache layer once, at module level, with a literal name", () => {
  const text = `
    const memo = Caches.weak<object, string>("p.a.memo")
    const states = Caches.lru<string, number>("p.a.states", 16)
    const compiled = Caches.slot<string>("p.a.compiled")
    const named = "p.a.dynamic"
    const dynamic = Caches.weak(named)
    export const perCall = () => Caches.lru("p.a.perCall", 4)
  `
  assert.deepEqual(cachesIn("a.ts", text).declared, [
    { name: "p.a.memo", kind: "weak" },
    { name: "p.a.states", kind: "lru" },
    { name: "p.a.compiled", kind: "slot" }
  ])
  assert.deepEqual(findingsIn("a.ts", text), [
    { name: "dynamic", what: "Caches.weak without a literal name" },
    { name: "perCall", what: "Caches.lru per call" }
  ])
  const root = mkdtempSync(path.join(tmpdir(), "module-state-"))
  try {
    mkdirSync(path.join(root, "packages", "p", "src"), { recursive: true })
    writeFileSync(path.join(root, "packages", "p", "src", "a.ts"), 'const one = Caches.weak("p.a.memo")\n')
    writeFileSync(path.join(root, "packages", "p", "src", "b.ts"), 'const two = Caches.lru("p.a.memo", 2)\n')
    assert.deepEqual(check(root, []).duplicates, [{ file: "packages/p/src/b.ts", name: "p.a.memo", kind: "lru" }])
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test("the command fails on a module-level let, new Map or new WeakMap outside the cache layer", () => {
  const root = mkdtempSync(path.join(tmpdir(), "module-state-"))
  try {
    mkdirSync(path.join(root, "packages", "p", "src"), { recursive: true })
    writeFileSync(
      path.join(root, "packages", "p", "src", "a.ts"),
      "let n = 0\nconst byKey = new Map<string, number>()\nconst memo = new WeakMap<object, string>()\nexport const next = () => ++n\n"
    )
    const run = spawnSync(process.execPath, [path.join(here, "module-state.mjs"), root], { encoding: "utf8" })
    assert.equal(run.status, 1)
    for (const line of [
      "packages/p/src/a.ts: module-level let (n) is not on the allow-list",
      "packages/p/src/a.ts: module-level new Map (byKey) is not on the allow-list",
      "packages/p/src/a.ts: module-level new WeakMap (memo) is not on the allow-list"
    ]) {
      assert.ok(run.stderr.includes(line), `${line}\n---\n${run.stderr}`)
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})
