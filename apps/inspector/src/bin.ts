#!/usr/bin/env node
/**
 * The `ctxlog` executable. Exit codes: 0 ok; 1 an error (printed once as `ctxlog: <message>` on
 * stderr); 2 a usage error (unknown command or option, bad value: @effect/cli prints it); 3 the log is
 * damaged (a verified read, `verify` or `heads` found a broken chain, a `streams` row or snapshot that does
 * not match, or a head kept elsewhere that is no longer in the chain).
 *
 * @since 0.1.0
 */
import { ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { damagedExit, run } from "./Cli.js"

const program = Effect.suspend(() => run(process.argv)).pipe(Effect.provide(NodeContext.layer))

const damageAdvice =
  "ctxlog: nothing from the damaged stream was shown. `ctxlog verify <stream>` lists every problem; restore the database from a backup (or a verified export), or pass --unverified to read it as stored."

Effect.runPromiseExit(program).then((exit) => {
  if (Exit.isSuccess(exit)) return
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") {
    const error = failure.value
    // @effect/cli has printed the usage problem already.
    if (ValidationError.isValidationError(error)) {
      process.exitCode = 2
      return
    }
    const tag = typeof error === "object" && error !== null ? Reflect.get(error, "_tag") : undefined
    const message = error instanceof Error ? error.message : String(error)
    if (tag === "TamperDetected") {
      process.stderr.write(`ctxlog: the log is damaged: ${message}\n${damageAdvice}\n`)
      process.exitCode = damagedExit
      return
    }
    process.stderr.write(`ctxlog: ${message}\n`)
    const code = typeof error === "object" && error !== null ? Reflect.get(error, "exitCode") : undefined
    process.exitCode = typeof code === "number" ? code : 1
    return
  }
  process.stderr.write(`ctxlog: ${Cause.pretty(exit.cause)}\n`)
  process.exitCode = 1
})
