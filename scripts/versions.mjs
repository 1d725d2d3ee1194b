// Versions, `@since` tags and CHANGELOGs agree (ADR 0100). The published packages (every package.json that
// is not private under packages/ and apps/) share one version, moved only by `changeset version` (they are
// one `fixed` group in .changeset/config.json). This check fails, naming the file, when:
//   - a published package's version differs from the others', or the fixed group is not exactly them;
//   - a `@since X.Y.Z` tag in a published package's src is newer than the next release: the current
//     version when no changeset is pending, else that version bumped by the largest pending bump;
//   - a published package has no CHANGELOG.md, or its CHANGELOG has no `## <version>` heading;
//   - a `@since` tag is not a plain X.Y.Z.
// Usage: node scripts/versions.mjs [root]   (default: the repository root; the test runs it on fixtures)
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"

const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."))
const problems = []

const parse = (text) => text.split(".").map(Number)
const compare = (a, b) => {
  const [x, y] = [parse(a), parse(b)]
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i]
  return 0
}
/** `version` after a changeset bump (0.x: a major is 1.0.0 as changesets does it). */
const bump = (version, kind) => {
  const [major, minor, patch] = parse(version)
  if (kind === "major") return `${major + 1}.0.0`
  if (kind === "minor") return `${major}.${minor + 1}.0`
  if (kind === "patch") return `${major}.${minor}.${patch + 1}`
  return version
}

const manifests = ["packages", "apps"]
  .flatMap((group) =>
    existsSync(join(root, group)) ? readdirSync(join(root, group)).map((name) => join(root, group, name)) : []
  )
  .filter((dir) => existsSync(join(dir, "package.json")))
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) }))
const published = manifests.filter(({ manifest }) => manifest.private !== true)

const versions = new Set(published.map(({ manifest }) => manifest.version))
const version = published[0]?.manifest.version
if (versions.size > 1)
  problems.push(
    `the published packages must share one version: ${published.map(({ manifest }) => `${manifest.name}@${manifest.version}`).join(", ")}`
  )

const config = JSON.parse(readFileSync(join(root, ".changeset", "config.json"), "utf8"))
const fixed = [...(config.fixed?.[0] ?? [])].sort()
const names = published.map(({ manifest }) => manifest.name).sort()
if (config.fixed?.length !== 1 || JSON.stringify(fixed) !== JSON.stringify(names))
  problems.push(
    `.changeset/config.json: "fixed" must be one group of exactly the published packages (${names.join(", ")}), found ${JSON.stringify(config.fixed)}`
  )

// The largest bump the pending changesets ask for (one fixed group: every package moves with it).
const rank = { none: 0, patch: 1, minor: 2, major: 3 }
let pending = "none"
let changesets = 0
for (const file of readdirSync(join(root, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md")) {
  const front = /^---\n([\s\S]*?)\n---/.exec(readFileSync(join(root, ".changeset", file), "utf8").trimStart())
  if (front === null) continue
  changesets += 1
  for (const match of front[1].matchAll(/^\s*["']?[^"':]+["']?\s*:\s*(major|minor|patch)\s*$/gm))
    if (rank[match[1]] > rank[pending]) pending = match[1]
}
const next = version === undefined ? undefined : bump(version, pending)

const sources = (dir) => {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return /\.(ts|tsx|mts)$/.test(name) ? [path] : []
  })
}

let tags = 0
for (const { dir, manifest } of published) {
  for (const file of sources(join(dir, "src"))) {
    const lines = readFileSync(file, "utf8").split("\n")
    lines.forEach((line, index) => {
      for (const match of line.matchAll(/@since\s+(\S+)/g)) {
        tags += 1
        const tag = match[1].replace(/[*/.,;)]+$/, "").replace(/\.$/, "")
        const where = `${relative(root, file)}:${index + 1}`
        if (!/^\d+\.\d+\.\d+$/.test(tag)) problems.push(`${where}: @since ${tag} is not X.Y.Z`)
        else if (next !== undefined && compare(tag, next) > 0)
          problems.push(
            `${where}: @since ${tag} is newer than the next release of ${manifest.name} (${next}: version ${version}, pending bump ${pending})`
          )
      }
    })
  }
  const changelog = join(dir, "CHANGELOG.md")
  if (!existsSync(changelog)) problems.push(`${relative(root, dir)}: no CHANGELOG.md`)
  else if (
    !new RegExp(`^## ${manifest.version.replaceAll(".", "\\.")}\\s*$`, "m").test(readFileSync(changelog, "utf8"))
  )
    problems.push(`${relative(root, changelog)}: no "## ${manifest.version}" heading for the package's version`)
}

if (problems.length > 0) {
  for (const problem of problems) console.error(`versions: ${problem}`)
  process.exit(1)
}
console.log(
  `versions: ${published.length} published packages at ${version}; ${tags} @since tags ≤ ${next} (${changesets} pending changesets, ${pending}); CHANGELOGs have ## ${version}`
)
