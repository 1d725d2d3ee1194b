/**
 * The inspector's CLI (`ctxlog …`) as a child process on the sources (bundled once by
 * scripts/ts-bundle.mjs), as a user runs it; its `--json` output parsed.
 */
import { execFile } from "node:child_process"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import { bundledEntrySync } from "../../../../scripts/ts-bundle.mjs"

const require = createRequire(import.meta.url)
const inspectorDir = dirname(require.resolve("@ctxlog/inspector/package.json"))
const tsx = pathToFileURL(
  join(dirname(createRequire(join(inspectorDir, "package.json")).resolve("tsx/package.json")), "dist/esm/index.mjs")
).href
const bin = join(inspectorDir, "src", "bin.ts")

/** The node arguments that run TypeScript sources of the workspace (tsx, the `@ctxlog/source` condition). */
export const sourceArgs = ["--conditions=@ctxlog/source", "--import", tsx]

/** The node arguments that run the CLI from its sources (bundled: built when they changed, ADR 0108). */
export const nodeArgs = [bundledEntrySync(bin)]

/** Run `ctxlog <args>` and parse what it printed (pass `--json`). */
export const ctxlog = (args: ReadonlyArray<string>): Promise<unknown> =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...nodeArgs, ...args],
      { maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`ctxlog ${args.join(" ")} failed: ${stderr}`))
        else resolve(JSON.parse(stdout))
      }
    )
  })
