import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Lru } from "../src/index.js"

const root = join(import.meta.dirname, "..", "..", "..")

/** The `.ts` files under `dir`, recursively. */
const sources = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name)
    if (entry.isDirectory()) return sources(full)
    return entry.isFile() && entry.name.endsWith(".ts") ? [full] : []
  })

describe("Lru", () => {
  it("forgets the least recently set or got entry past its capacity; peek and has do not refresh", () => {
    const lru = Lru.make<string, number>(2)
    lru.set("a", 1).set("b", 2)
    assert.strictEqual(lru.get("a"), 1) // a is now the most recent
    lru.set("c", 3) // b leaves
    assert.isFalse(lru.has("b"))
    assert.deepStrictEqual([lru.peek("a"), lru.peek("c"), lru.size], [1, 3, 2])
    assert.strictEqual(lru.peek("a"), 1) // a stays the oldest: peek does not move it
    lru.set("d", 4) // a leaves
    assert.deepStrictEqual([lru.has("a"), lru.has("c"), lru.has("d")], [false, true, true])
    lru.set("c", 30) // re-setting moves c to the newest end
    lru.set("e", 5) // d leaves
    assert.deepStrictEqual([lru.peek("c"), lru.has("d"), lru.peek("e")], [30, false, 5])
    assert.isTrue(lru.delete("c"))
    assert.isFalse(lru.delete("c"))
    lru.clear()
    assert.strictEqual(lru.size, 0)
  })

  it("keeps at least one entry whatever capacity it is given", () => {
    for (const capacity of [0, -3, 1]) {
      const lru = Lru.make<string, string>(capacity)
      lru.set("x", "1").set("y", "2")
      assert.deepStrictEqual([lru.capacity, lru.size, lru.peek("y"), lru.has("x")], [1, 1, "2", false])
    }
  })

  it("is the only LRU: no source file of a package or an app evicts a map's oldest key by hand", () => {
    // The hand-written LRU evicts with `keys().next()` (Map insertion order); ADR 0123, 0161.
    const dirs = ["packages", "apps"].flatMap((top) =>
      readdirSync(join(root, top), { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => join(root, top, entry.name, "src"))
        .filter((dir) => existsSync(dir))
    )
    const files = dirs.flatMap(sources)
    assert.isAbove(files.length, 100)
    const evicting = files
      .filter((file) => /\.keys\(\)\.next\(\)/.test(readFileSync(file, "utf8")))
      .map((file) => relative(root, file).split("\\").join("/"))
    assert.deepStrictEqual(evicting, ["packages/core/src/Lru.ts"])
  })
})
