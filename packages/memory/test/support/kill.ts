// Runs a child process (a TypeScript file under tsx, on the sources) and SIGKILLs it at a chosen moment:
// shared by the kill tests. The child writes lines to stdout; the parent gets every line written before
// the kill (the pipe keeps them).
import { spawn } from "node:child_process"
import * as Effect from "effect/Effect"

/** What a child wrote before it ended, and whether it ended by itself (it printed "done"). */
export interface ChildRun {
  readonly lines: ReadonlyArray<string>
  readonly finished: boolean
  /** Milliseconds from its "ready" line to its exit (for calibration only; never asserted). */
  readonly readyToExitMs: number
}

/**
 * Start `node --conditions=@ctxlog/source --import tsx script ...args` in `cwd`; once it prints "ready",
 * SIGKILL it after `killAfterMs` (never when undefined). Fails when the child printed a "failed" line.
 */
export const runChild = (cwd: string, script: string, args: ReadonlyArray<string>, killAfterMs: number | undefined) =>
  Effect.async<ChildRun, Error>((resume) => {
    const child = spawn(process.execPath, ["--conditions=@ctxlog/source", "--import", "tsx", script, ...args], {
      cwd,
      stdio: ["ignore", "pipe", "inherit"]
    })
    let output = ""
    let readyAt: number | undefined
    let timer: NodeJS.Timeout | undefined
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (readyAt === undefined && output.includes("ready\n")) {
        readyAt = performance.now()
        if (killAfterMs !== undefined) timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs)
      }
    })
    child.on("error", (cause) => resume(Effect.fail(cause)))
    child.on("close", () => {
      if (timer !== undefined) clearTimeout(timer)
      const lines = output.split("\n").filter((line) => line.length > 0)
      const failed = lines.find((line) => line.startsWith("failed"))
      if (failed !== undefined) resume(Effect.fail(new Error(`the child failed: ${failed}`)))
      else
        resume(
          Effect.succeed({
            lines,
            finished: lines.includes("done"),
            readyToExitMs: readyAt === undefined ? 0 : performance.now() - readyAt
          })
        )
    })
    return Effect.sync(() => {
      if (timer !== undefined) clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })
