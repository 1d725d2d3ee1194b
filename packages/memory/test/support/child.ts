import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import { bundledEntrySync } from "../../../../scripts/ts-bundle.mjs"

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** What a child process printed and how it ended. */
export interface ChildOutput {
  readonly stdout: string
  readonly stderr: string
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

/**
 * Run `test/child/<script>` with `args` (bundled by scripts/ts-bundle.mjs) and wait for it to end. A child that exits non-zero or
 * is killed is a defect whose message carries everything it printed on both streams (a rejected
 * `promisify(execFile)` names only the command line, so a failing child's own error was lost).
 */
export const runChild = (script: string, args: ReadonlyArray<string>): Effect.Effect<ChildOutput> =>
  Effect.async<ChildOutput>((resume) => {
    const child = execFile(
      process.execPath,
      [bundledEntrySync(join(packageDir, "test", "child", script)), ...args],
      { cwd: packageDir, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = child.exitCode
        const signal = child.signalCode
        if (error === null && code === 0) {
          resume(Effect.succeed({ stdout, stderr, code, signal }))
          return
        }
        const ended = signal === null ? `exited with ${code ?? "no code"}` : `was killed by ${signal}`
        resume(
          Effect.die(
            new Error(
              `child ${script} ${args.join(" ")} ${ended}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`
            )
          )
        )
      }
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/** The last line a child printed, parsed as JSON. */
export const lastJsonLine = (output: ChildOutput): unknown =>
  JSON.parse(output.stdout.trim().split("\n").pop() ?? "null")
