// `pnpm release:pack [folder]`: every published package (packages/* and the `ctxlog` command, apps/inspector)
// built and packed into installable tarballs, until the first publish (issue 41). Default folder: release/
// (ignored by git). Writes packed.json there (what .ci/run's later steps reuse through CTXLOG_PACKED_DIR) and
// prints the one `npm install` that puts them in a project of yours.
import { mkdirSync } from "node:fs"
import { relative, resolve } from "node:path"
import { packFolder, publishedDirs } from "./pack-packages.mjs"

const root = resolve(import.meta.dirname, "..")
const destination = resolve(process.argv[2] ?? resolve(root, "release"))
mkdirSync(destination, { recursive: true })
const started = Date.now()
const packed = await packFolder(publishedDirs(), destination)
for (const { manifest, tarball } of packed)
  console.log(`release:pack: ${manifest.name}@${manifest.version} → ${relative(process.cwd(), tarball)}`)
console.log(`release:pack: ${packed.length} tarballs in ${((Date.now() - started) / 1000).toFixed(0)} s`)
console.log(`install them all in your project (npm resolves the ones you do not import too):`)
console.log(`  npm install ${packed.map(({ tarball }) => tarball).join(" ")} effect better-sqlite3`)
