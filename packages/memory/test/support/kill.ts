// Runs a child process (a TypeScript file on the sources, bundled once by scripts/ts-bundle.mjs) and SIGKILLs
// it at a chosen moment: shared by the kill tests. The child writes lines to stdout; the parent gets every
// line written before the kill (the pipe keeps them). Loading takes much of a child's life, so a child is
// spawned ahead (it loads, then waits for "go" on stdin) while the parent checks the previous
// one's file.
import { spawn } from "node:child_process"
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import { bundledEntrySync } from "../../../../scripts/ts-bundle.mjs"

/** What a child wrote before it ended, and whether it ended by itself (it printed "done"). */
export interface ChildRun {
  readonly lines: ReadonlyArray<string>
  readonly finished: boolean
  /** Milliseconds from its "ready" line to its exit (for calibration only; never asserted). */
  readonly readyToExitMs: number
}

/** When to kill a child: `ms` milliseconds after the first line it prints that starts with `after`. */
export interface KillPoint {
  readonly after: string
  readonly ms: number
}

/** A spawned child that loads and waits for `start`. */
export interface PreparedChild {
  /** Say "go"; SIGKILL it at `kill` (a number: ms after its "ready" line; undefined: never). */
  readonly start: (kill: KillPoint | number | undefined) => Effect.Effect<ChildRun, Error>
  /** Kill it without starting it (cleanup). */
  readonly abort: () => void
}

/** For a child script: resolves when the parent says "go" on stdin; exits when stdin closes first. */
export const waitForGo = (): Promise<void> =>
  new Promise((resolve) => {
    const end = () => process.exit(0)
    process.stdin.once("end", end)
    process.stdin.once("data", () => {
      process.stdin.off("end", end)
      process.stdin.pause()
      resolve()
    })
  })

/** Spawn `script` (bundled) with `args` in `cwd`; it waits for `start`. */
export const prepareChild = (cwd: string, script: string, args: ReadonlyArray<string>): PreparedChild => {
  const child = spawn(process.execPath, [bundledEntrySync(resolve(cwd, script)), ...args], {
    cwd,
    stdio: ["pipe", "pipe", "inherit"]
  })
  let output = ""
  let readyAt: number | undefined
  let point: KillPoint | undefined
  let timer: NodeJS.Timeout | undefined
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
    if (readyAt === undefined && output.includes("ready\n")) readyAt = performance.now()
    const at = point
    if (timer === undefined && at !== undefined && output.split("\n").some((line) => line.startsWith(at.after))) {
      timer = setTimeout(() => child.kill("SIGKILL"), at.ms)
    }
  })
  const closed = new Promise<Error | undefined>((resolve) => {
    child.on("error", (cause) => resolve(cause))
    child.on("close", () => resolve(undefined))
  })
  return {
    abort: () => {
      child.kill("SIGKILL")
    },
    start: (kill) =>
      Effect.async<ChildRun, Error>((resume) => {
        point = typeof kill === "number" ? { after: "ready", ms: kill } : kill
        child.stdin.end("go\n")
        void closed.then((cause) => {
          if (timer !== undefined) clearTimeout(timer)
          const lines = output.split("\n").filter((line) => line.length > 0)
          const failed = lines.find((line) => line.startsWith("failed"))
          if (cause !== undefined) resume(Effect.fail(cause))
          else if (failed !== undefined) resume(Effect.fail(new Error(`the child failed: ${failed}`)))
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
  }
}

/**
 * Run `runs` children one after the other, each spawned while the previous one runs: `args(run)` are the
 * arguments of child `run`, `kill(run)` its kill point, `after(run, result)` checks what it left.
 */
export const runKilled = <A, E, R>(
  cwd: string,
  script: string,
  runs: number,
  args: (run: number) => ReadonlyArray<string>,
  kill: (run: number) => KillPoint | number | undefined,
  after: (run: number, result: ChildRun) => Effect.Effect<A, E, R>
): Effect.Effect<ReadonlyArray<A>, E | Error, R> =>
  Effect.suspend(() => {
    let next: PreparedChild | undefined = runs > 0 ? prepareChild(cwd, script, args(0)) : undefined
    return Effect.gen(function* () {
      const results: Array<A> = []
      for (let run = 0; run < runs && next !== undefined; run++) {
        const current: PreparedChild = next
        next = run + 1 < runs ? prepareChild(cwd, script, args(run + 1)) : undefined
        results.push(yield* after(run, yield* current.start(kill(run))))
      }
      return results
    }).pipe(Effect.ensuring(Effect.sync(() => next?.abort())))
  })

/** Spawn a child and run it at once (see `prepareChild`). */
export const runChild = (
  cwd: string,
  script: string,
  args: ReadonlyArray<string>,
  kill: KillPoint | number | undefined
): Effect.Effect<ChildRun, Error> => Effect.suspend(() => prepareChild(cwd, script, args).start(kill))
