// Run the `ctxlog` CLI as a child process on its TypeScript sources (bundled once by scripts/ts-bundle.mjs),
// as a user would run the bin.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { transcriptsDir } from "@ctxlog/testing"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { bundledEntry } from "../../../../scripts/ts-bundle.mjs"
import { Cli, Report } from "../../src/index.js"

/** The CLI entry point (TypeScript source). */
export const bin = fileURLToPath(new URL("../../src/bin.ts", import.meta.url))
/** `bin` and what it imports, bundled: built when its sources changed, else the cached bundle (ADR 0108). */
export const bundledBin = await bundledEntry(bin)
/** The shared real transcripts. */
export const transcripts = transcriptsDir()

/** What a CLI run printed and how it exited. */
export interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Run `ctxlog ...args` in `cwd` (NO_COLOR set, unless `env` says otherwise). */
export const ctxlog = (
  args: ReadonlyArray<string>,
  cwd: string,
  env: Readonly<Record<string, string>> = { NO_COLOR: "1" }
): Promise<Result> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [bundledBin, ...args],
      { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      }
    )
  })

/** Parse the stdout of a `--json` run. */
export const json = (result: Result): unknown => {
  if (result.code !== 0) throw new Error(`ctxlog exited ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout)
}

/** A fresh temporary directory and its cleanup. */
export const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Run the CLI in this process (same command tree, same handlers), capturing what it prints: for the
 * many happy-path runs, where a child process per run would only repeat the start-up.
 */
export const ctxlogInProcess = async (args: ReadonlyArray<string>): Promise<Result> => {
  const out: Array<string> = []
  const exit = await Effect.runPromiseExit(
    Console.consoleWith((base) =>
      Cli.run(["node", "ctxlog", ...args]).pipe(
        Effect.provide(NodeContext.layer),
        Effect.withConsole({
          ...base,
          log: (...values: ReadonlyArray<unknown>) => Effect.sync(() => void out.push(values.map(String).join(" ")))
        })
      )
    )
  )
  // The exit code and stderr the bin would give (Report.report).
  return { ...Report.report(exit, args, Cli.optionNames), stdout: `${out.join("\n")}\n` }
}

/**
 * `ctxlog import --format openai-chat` of one of the shared transcripts into the SQLite file `db` (in this
 * process, or by `run`), failing the test with the CLI's stderr unless it exits 0.
 */
export const importTranscript = async (options: {
  readonly db: string
  readonly file: string
  readonly stream?: string
  readonly budget?: number
  readonly json?: boolean
  readonly run?: (args: ReadonlyArray<string>) => Promise<Result>
}): Promise<Result> => {
  const result = await (options.run ?? ctxlogInProcess)([
    "import",
    "--format",
    "openai-chat",
    "--db",
    options.db,
    ...(options.stream === undefined ? [] : ["--stream", options.stream]),
    ...(options.budget === undefined ? [] : ["--budget", String(options.budget)]),
    ...(options.json === true ? ["--json"] : []),
    join(transcripts, options.file)
  ])
  if (result.code !== 0) throw new Error(`ctxlog import ${options.file} exited ${result.code}: ${result.stderr}`)
  return result
}
