// The publish dry run of every published package (issue 41): each tarball as `pnpm release:pack` makes it (or
// the folder CI packed once, CTXLOG_PACKED_DIR) goes through `npm publish --dry-run`, after its packed
// package.json is checked for what a provenance-signed publish from this repository needs:
//   - repository: { type: git, url: git+https://github.com/…, directory: the package's folder }, homepage, bugs;
//   - license (and LICENSE in the tarball), description, engines.node, files, exports (every entry has
//     `types` and `import` or `default`), no `workspace:` range left in any dependency field;
//   - the version is the shared one (scripts/versions.mjs checks the rest of the policy, ADR 0100).
// Usage: node scripts/publish-check.mjs
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { packOnce, publishedDirs } from "./pack-packages.mjs"

const work = mkdtempSync(join(tmpdir(), "ctxlog-publish-"))
const problems = []
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 })

try {
  const packed = await packOnce(publishedDirs(), work)
  const versions = new Set()
  for (const { dir, tarball } of packed) {
    // The manifest as published: pnpm pack has rewritten `workspace:` ranges and applied publishConfig.
    const manifest = JSON.parse(run("tar", ["-xzOf", tarball, "package/package.json"], work))
    const files = run("tar", ["-tzf", tarball], work).split("\n")
    const name = manifest.name
    const want = (ok, what) => {
      if (!ok) problems.push(`${name} (${dir}): ${what}`)
    }
    versions.add(manifest.version)
    want(manifest.repository?.type === "git", "repository.type is not git")
    want(
      /^git\+https:\/\/github\.com\/[^/]+\/[^/]+\.git$/.test(manifest.repository?.url ?? ""),
      `repository.url is not git+https://github.com/<owner>/<repo>.git (provenance links to it): ${manifest.repository?.url}`
    )
    want(
      manifest.repository?.directory === dir,
      `repository.directory is not ${dir}: ${manifest.repository?.directory}`
    )
    want(
      typeof manifest.homepage === "string" && typeof manifest.bugs?.url === "string",
      "homepage or bugs.url missing"
    )
    want(typeof manifest.license === "string" && files.includes("package/LICENSE"), "license or LICENSE file missing")
    want(typeof manifest.description === "string" && manifest.description.length > 0, "description missing")
    want(typeof manifest.engines?.node === "string", "engines.node missing")
    want(Array.isArray(manifest.files) && manifest.files.length > 0, "files missing")
    want(manifest.private !== true, "private")
    const exports = Object.entries(manifest.exports ?? {}).filter(([key]) => key !== "./package.json")
    want(exports.length > 0, "exports missing")
    for (const [key, target] of exports) {
      if (target === null) continue
      const ok = typeof target === "object" && "types" in target && ("import" in target || "default" in target)
      want(ok, `exports["${key}"] has no types and import/default condition`)
    }
    for (const field of ["dependencies", "peerDependencies", "optionalDependencies"])
      for (const [dep, range] of Object.entries(manifest[field] ?? {}))
        want(!String(range).startsWith("workspace:"), `${field}.${dep} is still ${range}`)
    // The dry run: what npm would upload, without uploading (no token needed).
    try {
      const out = run("npm", ["publish", "--dry-run", "--access", "public", "--tag", "latest", tarball], work)
      want(
        out.includes(`${name}@${manifest.version}`),
        `npm publish --dry-run did not report ${name}@${manifest.version}`
      )
      console.log(`ok: npm publish --dry-run ${name}@${manifest.version} (${files.length - 1} files)`)
    } catch (error) {
      problems.push(`${name}: npm publish --dry-run failed:\n${error.stderr ?? ""}${error.stdout ?? ""}`)
    }
  }
  if (versions.size !== 1) problems.push(`the tarballs do not share one version: ${[...versions].join(", ")}`)
  if (problems.length > 0) {
    for (const problem of problems) console.error(`publish-check: ${problem}`)
    process.exitCode = 1
  } else console.log(`publish-check: ${packed.length} packages would publish at ${[...versions][0]}`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
