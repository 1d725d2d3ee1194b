/**
 * How a finished `ctxlog` run is reported: its exit code and what goes on stderr, printed once.
 *
 * Exit codes: 0 ok; 1 an error (`ctxlog: <message>`); 2 a usage error (unknown command or option, bad
 * value: @effect/cli has printed it already); 3 the log is damaged (a verified read, `verify` or `heads`
 * found a broken chain, a `streams` row or snapshot that does not match, or a head kept elsewhere that
 * the chain no longer holds), with what to do next.
 *
 * @since 0.2.0
 */
import { ValidationError } from "@effect/cli"
import * as Cause from "effect/Cause"
import type * as Exit from "effect/Exit"
import { didYouMean } from "./Suggest.js"

/** The exit code of a run that found the log damaged. @since 0.2.0 */
export const damagedExit = 3

/** The exit code of a usage error. @since 0.2.0 */
export const usageExit = 2

/** What to do about damage, printed after the problem. @since 0.2.0 */
export const damageAdvice =
  "ctxlog: nothing from the damaged stream was shown. `ctxlog verify <stream>` lists every problem; restore the database from a backup (or a verified export), or pass --unverified to read it as stored."

/**
 * A hint for an option of `args` that no command takes (@effect/cli has said it is unknown; this names
 * the nearest known one), or nothing.
 */
const optionHint = (args: ReadonlyArray<string>, known: ReadonlyArray<string>): string => {
  for (const arg of args) {
    if (!arg.startsWith("--")) continue
    const name = arg.slice(2).split("=")[0] ?? ""
    if (known.includes(name)) continue
    const hint = didYouMean(name, known)
    return hint === "" ? "" : `ctxlog: --${name}${hint.replace(/"([^"]+)"/g, "--$1")}\n`
  }
  return ""
}

/**
 * The exit code and stderr text of a finished run; `args` and `options` (the option names commands
 * take) let a usage error name the nearest option.
 * @since 0.2.0
 */
export const report = (
  exit: Exit.Exit<unknown, unknown>,
  args: ReadonlyArray<string> = [],
  options: ReadonlyArray<string> = []
): { readonly code: number; readonly stderr: string } => {
  if (exit._tag === "Success") return { code: 0, stderr: "" }
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "None") return { code: 1, stderr: `ctxlog: ${Cause.pretty(exit.cause)}\n` }
  const error = failure.value
  // @effect/cli has printed the usage problem; add the nearest option when one was mistyped.
  if (ValidationError.isValidationError(error)) return { code: usageExit, stderr: optionHint(args, options) }
  const field = (name: string): unknown =>
    typeof error === "object" && error !== null ? Reflect.get(error, name) : undefined
  const message = error instanceof Error ? error.message : String(error)
  if (field("_tag") === "TamperDetected") {
    return { code: damagedExit, stderr: `ctxlog: the log is damaged: ${message}\n${damageAdvice}\n` }
  }
  const code = field("exitCode")
  return {
    code: typeof code === "number" ? code : 1,
    stderr: `ctxlog: ${message}\n${code === damagedExit ? `${damageAdvice}\n` : ""}`
  }
}
