// Packs workspace packages into a folder as a user gets them (`pnpm pack`: `workspace:` ranges rewritten,
// `files` applied), once their `dist` is current. `node scripts/build.mjs --if-changed` comes first (ADR
// 0170): nothing after CI's build step or an earlier pack, otherwise one build of every package. Then `pnpm pack` runs without the
// packages' `prepack` script, which would run tsc again for every package (3–6 s each, twice per CI run:
// scripts/pack-check.mjs and integration's packed-tarball tests). A publish still runs `prepack`.
// A folder packed once (`pnpm release:pack`, which .ci/run runs as its "pack" step and names in
// CTXLOG_PACKED_DIR) is reused by every later caller in the run: `packed.json` in it lists what it holds.
import { execFile } from "node:child_process"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { promisify } from "node:util"

const run = promisify(execFile)
const root = resolve(import.meta.dirname, "..")

const exec = async (cmd, args, cwd, env = process.env) => {
  try {
    await run(cmd, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })
  } catch (error) {
    throw new Error(`${cmd} ${args.join(" ")} failed in ${cwd}:\n${error.stderr ?? ""}\n${error.stdout ?? ""}`)
  }
}

/**
 * Build (unless every dist is current) and pack each package directory in `dirs` (relative to the repository root,
 * e.g. `packages/core`) into `destination`; each one's directory, manifest and tarball path, in order.
 */
export const packPackages = async (dirs, destination) => {
  const packed = dirs.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))
    const file = `${manifest.name.replace("@", "").replace("/", "-")}-${manifest.version}.tgz`
    return { dir, manifest, tarball: join(destination, file) }
  })
  await exec(process.execPath, [join(root, "scripts", "build.mjs"), "--if-changed"], root)
  for (const { dir } of packed) {
    await exec("pnpm", ["pack", "--pack-destination", destination], join(root, dir), {
      ...process.env,
      npm_config_ignore_scripts: "true"
    })
  }
  return packed
}

/** Every published package's directory (not private), relative to the root: packages/* and apps/*. */
export const publishedDirs = () =>
  ["packages", "apps"].flatMap((group) =>
    readdirSync(join(root, group))
      .map((name) => `${group}/${name}`)
      .filter((dir) => existsSync(join(root, dir, "package.json")))
      .filter((dir) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")).private !== true)
  )

/** Pack `dirs` into `destination` and write `destination/packed.json` (each dir's name, version, tarball). */
export const packFolder = async (dirs, destination) => {
  const packed = await packPackages(dirs, destination)
  const index = packed.map(({ dir, manifest, tarball }) => ({
    dir,
    name: manifest.name,
    version: manifest.version,
    tarball
  }))
  writeFileSync(join(destination, "packed.json"), `${JSON.stringify(index, null, 2)}\n`)
  return packed
}

/**
 * `packPackages(dirs, destination)`, unless CTXLOG_PACKED_DIR names a folder `packFolder` filled with every one
 * of `dirs` at their current versions: then its tarballs, packed once for the whole run (nothing is copied).
 */
export const packOnce = async (dirs, destination) => {
  const shared = process.env.CTXLOG_PACKED_DIR
  const index = shared === undefined ? undefined : join(shared, "packed.json")
  if (index !== undefined && existsSync(index)) {
    const entries = JSON.parse(readFileSync(index, "utf8"))
    const found = dirs.map((dir) => {
      const entry = entries.find((e) => e.dir === dir)
      const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))
      return entry !== undefined && entry.version === manifest.version && existsSync(entry.tarball)
        ? { dir, manifest, tarball: entry.tarball }
        : undefined
    })
    if (found.every((p) => p !== undefined)) return found
  }
  return packPackages(dirs, destination)
}
