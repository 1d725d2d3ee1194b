// What the packed-tarball tests share: the gate, running a command as a user's shell would, and packing
// our packages into a folder. Packing (and so building) and npm against the registry take minutes, so
// these tests run in CI (`CI=true`) or when `CTXLOG_PACK_INSTALL=1`; elsewhere they are skipped.
import { execFile } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { packOnce } from "../../../scripts/pack-packages.mjs"
import { sqliteInstall } from "../../../scripts/sqlite-binding.mjs"
import type { Packed } from "./packed.js"

const run = promisify(execFile)

/** The repository's root. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..")

/** Whether the packed-tarball tests run here. */
export const gated = process.env.CI === "true" || process.env.CTXLOG_PACK_INSTALL === "1"

// The commands run as in a user's shell: no colours, and none of this test runner's own variables.
const cleanEnv = (): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST") && key !== "NODE_OPTIONS")
  ),
  CI: "",
  NO_COLOR: "1",
  FORCE_COLOR: "0"
})

/** Run a command in `cwd` (with `env` added to the clean environment); its stdout, or an error holding its output. */
export const exec = async (
  cmd: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: Readonly<Record<string, string>> = {}
): Promise<string> => {
  try {
    const { stdout } = await run(cmd, [...args], { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...cleanEnv(), ...env } })
    return stdout
  } catch (error) {
    const failure = error as { readonly stdout?: string; readonly stderr?: string; readonly message: string }
    throw new Error(`${cmd} ${args.join(" ")} failed in ${cwd}:\n${failure.stderr ?? ""}\n${failure.stdout ?? ""}`)
  }
}

/**
 * Pack each of `packages/<name>` into `work` (scripts/pack-packages.mjs), or take them from the folder CI packed
 * once for the run (CTXLOG_PACKED_DIR, `pnpm release:pack`); the tarballs' paths, in order.
 */
export const packAll = async (names: ReadonlyArray<string>, work: string): Promise<ReadonlyArray<string>> =>
  (
    await packOnce(
      names.map((name) => `packages/${name}`),
      work
    )
  ).map((packed) => packed.tarball)

/** The tarballs of `names`, packed once by the `packed.ts` global setup; throws why packing failed. */
export const tarballsOf = (packed: Packed, names: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (packed._tag === "Failed") throw new Error(`packing our packages failed:\n${packed.message}`)
  if (packed._tag === "NotGated") throw new Error("the packed-tarball tests are not gated on here")
  return names.map((name) => {
    const tarball = packed.tarballs[name]
    if (tarball === undefined) throw new Error(`${name} is not in packed.ts's packedNames`)
    return tarball
  })
}

/**
 * A user's project in `dir`: a bare ESM package.json, then one `npm install` of our `tarballs` beside
 * effect, better-sqlite3 (the workspace's compiled binding when there is one, so npm does not compile it
 * again) and `deps`. No --legacy-peer-deps, no --force: a peer conflict fails the install with ERESOLVE.
 */
export const installConsumer = async (
  dir: string,
  tarballs: ReadonlyArray<string>,
  deps: ReadonlyArray<string>
): Promise<void> => {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  const sqlite = sqliteInstall("^12.9.0")
  await exec(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...tarballs,
      "effect@^3.22.4",
      ...sqlite.args,
      ...deps
    ],
    dir
  )
  const reused = sqlite.after(dir)
  if (reused !== undefined) console.log(reused)
}
