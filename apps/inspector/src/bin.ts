#!/usr/bin/env node
/**
 * The `ctxlog` executable. Errors are printed as `ctxlog: <message>` on stderr with exit code 1;
 * usage errors (unknown command, bad option) exit with 2.
 *
 * @since 0.1.0
 */
import { ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { run } from "./Cli.js"

const program = Effect.suspend(() => run(process.argv)).pipe(Effect.provide(NodeContext.layer))

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
    process.stderr.write(`ctxlog: ${error instanceof Error ? error.message : String(error)}\n`)
  } else {
    process.stderr.write(`ctxlog: ${Cause.pretty(exit.cause)}\n`)
  }
  process.exitCode = 1
})
