// Packs workspace packages into a folder as a user gets them (`pnpm pack`: `workspace:` ranges rewritten,
// `files` applied), once their `dist` is current. `turbo run build` for them comes first: a cache hit after
// CI's build step or an earlier pack, otherwise one build of each. Then `pnpm pack` runs without the
// packages' `prepack` script, which would run tsc again for every package (3–6 s each, twice per CI run:
// scripts/pack-check.mjs and integration's packed-tarball tests). A publish still runs `prepack`.
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
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
 * Build (through turbo's cache) and pack each package directory in `dirs` (relative to the repository root,
 * e.g. `packages/core`) into `destination`; each one's directory, manifest and tarball path, in order.
 */
export const packPackages = async (dirs, destination) => {
  const packed = dirs.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"))
    const file = `${manifest.name.replace("@", "").replace("/", "-")}-${manifest.version}.tgz`
    return { dir, manifest, tarball: join(destination, file) }
  })
  const filters = packed.map(({ manifest }) => `--filter=${manifest.name}`)
  await exec("pnpm", ["exec", "turbo", "run", "build", "--output-logs=errors-only", ...filters], root)
  for (const { dir } of packed) {
    await exec("pnpm", ["pack", "--pack-destination", destination], join(root, dir), {
      ...process.env,
      npm_config_ignore_scripts: "true"
    })
  }
  return packed
}
