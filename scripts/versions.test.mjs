// The versions check of `pnpm check` (scripts/versions.mjs, ADR 0100) on temporary repositories: versions,
// `@since` tags and CHANGELOGs that agree pass; a tag newer than the next release, a package out of step,
// a missing CHANGELOG heading or a fixed group that is not the published packages fail, naming what.
import assert from "node:assert/strict"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { test } from "node:test"
import { fileURLToPath } from "node:url"

const script = fileURLToPath(new URL("./versions.mjs", import.meta.url))

/** A repository with packages a and b (and a private app) as `shape` says; the check's status and output. */
const check = (shape = {}) => {
  const dir = mkdtempSync(path.join(tmpdir(), "ctxlog-versions-"))
  try {
    const { versions = { a: "0.7.0", b: "0.7.0" }, since = "0.7.0", changeset, fixed = ["@x/a", "@x/b"] } = shape
    mkdirSync(path.join(dir, ".changeset"))
    writeFileSync(path.join(dir, ".changeset", "config.json"), JSON.stringify({ fixed: [fixed], linked: [] }))
    writeFileSync(path.join(dir, ".changeset", "README.md"), "# Changesets\n")
    if (changeset !== undefined) writeFileSync(path.join(dir, ".changeset", "one.md"), changeset)
    for (const [name, version] of Object.entries(versions)) {
      const pkg = path.join(dir, "packages", name)
      mkdirSync(path.join(pkg, "src"), { recursive: true })
      writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: `@x/${name}`, version }))
      writeFileSync(path.join(pkg, "src", "index.ts"), `/** One. @since ${since} */\nexport const one = 1\n`)
      if (shape.noChangelog !== name) writeFileSync(path.join(pkg, "CHANGELOG.md"), `# @x/${name}\n\n## ${version}\n`)
    }
    const app = path.join(dir, "apps", "private")
    mkdirSync(path.join(app, "src"), { recursive: true })
    writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "@x/app", version: "0.1.0", private: true }))
    writeFileSync(path.join(app, "src", "index.ts"), "/** @since 9.0.0 */\nexport const app = 1\n")
    const run = spawnSync(process.execPath, [script, dir], { encoding: "utf8" })
    return { status: run.status, output: `${run.stdout}${run.stderr}` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test("versions, tags and CHANGELOGs that agree pass (a private package's tags are not checked)", () => {
  const { status, output } = check()
  assert.equal(status, 0, output)
  assert.match(output, /2 published packages at 0\.7\.0; 2 @since tags ≤ 0\.7\.0/)
})

test("a tag newer than the version fails, naming the file and line", () => {
  const { status, output } = check({ since: "0.8.0" })
  assert.equal(status, 1)
  assert.match(
    output,
    /packages\/a\/src\/index\.ts:1: @since 0\.8\.0 is newer than the next release of @x\/a \(0\.7\.0/
  )
})

test("a pending minor changeset makes the next minor the limit", () => {
  const { status, output } = check({ since: "0.8.0", changeset: '---\n"@x/a": minor\n---\n\nA change.\n' })
  assert.equal(status, 0, output)
  assert.match(output, /≤ 0\.8\.0 \(1 pending changesets, minor\)/)
  assert.equal(check({ since: "0.9.0", changeset: '---\n"@x/a": minor\n---\n\nA change.\n' }).status, 1)
})

test("packages out of step, a missing CHANGELOG heading and a wrong fixed group each fail by name", () => {
  assert.match(
    check({ versions: { a: "0.7.0", b: "0.6.0" } }).output,
    /must share one version: @x\/a@0\.7\.0, @x\/b@0\.6\.0/
  )
  assert.match(check({ noChangelog: "b" }).output, /packages\/b: no CHANGELOG\.md/)
  assert.match(check({ fixed: ["@x/a"] }).output, /"fixed" must be one group of exactly the published packages/)
})
