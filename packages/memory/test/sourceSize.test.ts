import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// Issue 27: no file over 500 lines in `packages/memory/src` (one module per service, small backends).
const limit = 500
const root = fileURLToPath(new URL("../src", import.meta.url))

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith(".ts") ? [path] : []
  })

describe("source layout", () => {
  it(`keeps every file in packages/memory/src at or under ${limit} lines`, () => {
    const files = sourceFiles(root)
    expect(files.length).toBeGreaterThan(20)
    const sizes = files.map((file) => ({
      file: relative(root, file),
      lines: readFileSync(file, "utf8").split("\n").length - 1
    }))
    const largest = [...sizes].sort((a, b) => b.lines - a.lines).slice(0, 3)
    console.log(`largest: ${largest.map(({ file, lines }) => `${file} ${lines}`).join(", ")}`)
    expect(sizes.filter(({ lines }) => lines > limit)).toEqual([])
  })
})
