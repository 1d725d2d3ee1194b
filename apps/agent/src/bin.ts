#!/usr/bin/env node
/**
 * `ctxlog-agent`: parse the command line and run it on Node. A command line that does not parse (an
 * unknown flag or subcommand, a bad value) is one sentence on stderr that says where the help is, and
 * exit code 1.
 *
 * @since 0.1.0
 */
import { stripVTControlCharacters } from "node:util"
import * as Otel from "@ctxlog/providers/otel"
import { HelpDoc, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Either from "effect/Either"
import { cli } from "./Cli.js"
import * as Help from "./Help.js"
import * as Invocation from "./Invocation.js"
import { commandLine } from "./Invocation.js"

const subcommands = new Set(["run", "demo", "sessions"])

/** A parse error as one line, with the help command for the subcommand it was about. */
const parseError = (error: ValidationError.ValidationError): string => {
  const text = stripVTControlCharacters(HelpDoc.toAnsiText(error.error))
    .replace(/\s*\n\s*/g, " ")
    .trim()
  const sub = process.argv.slice(2).find((arg) => subcommands.has(arg))
  const help = commandLine(sub === undefined ? ["--help"] : [sub, "--help"])
  return `ctxlog-agent: ${text.replace(/[.\s]+$/, "")}; see the options with: ${help}\n`
}

// @effect/cli prints a parse error's text itself (Console.error) before failing with it: that copy is
// dropped here so the error is printed once, as one line.
const withoutParseErrorEcho = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.console, (console) => Console.withConsole(self, { ...console, error: () => Effect.void }))

/**
 * The exit code: 130 after Ctrl-C (an interrupted run, as a shell reports SIGINT), 1 after a failure
 * nothing caught, otherwise what the command set (`process.exitCode`, 1 for a reported mistake).
 */
const teardown = (exit: Exit.Exit<unknown, unknown>, onExit: (code: number) => void): void => {
  if (Exit.isFailure(exit)) onExit(Cause.isInterruptedOnly(exit.cause) ? 130 : 1)
  else onExit(typeof process.exitCode === "number" ? process.exitCode : 0)
}

// Started by pnpm as a script (`pnpm --filter @ctxlog/agent start …`, `pnpm demo`), the process runs in
// apps/agent; the person typed the command in INIT_CWD. Paths (the default log .ctxlog/ctxlog.db, a
// relative --db or --workspace) are theirs: the same place `pnpm ctxlog` (the inspector) looks.
Invocation.toInvocationDirectory()

// Help pages and the mistakes a person makes most (an unknown flag, a value not among a choice's) are
// answered from the commands' own table (Help.ts), before the parser.
const checked = Help.check(process.argv.slice(2))
if (Either.isLeft(checked)) {
  process.stderr.write(`ctxlog-agent: ${checked.left.message}\n`)
  process.exitCode = 1
} else if (checked.right._tag === "help") {
  process.stdout.write(`${checked.right.text}\n`)
} else main()

function main() {
  withoutParseErrorEcho(cli(process.argv)).pipe(
    Effect.catchIf(ValidationError.isValidationError, (error) =>
      Effect.sync(() => {
        process.stderr.write(parseError(error))
        process.exitCode = 1
      })
    ),
    Effect.provide(NodeContext.layer),
    // The one switch: OTEL_EXPORTER_OTLP_ENDPOINT (and the standard OpenTelemetry environment) exports
    // the agent's spans over OTLP/HTTP, flushed when the command ends; without it nothing is traced.
    Effect.provide(Otel.layerFromEnv({ serviceName: "ctxlog-agent" })),
    NodeRuntime.runMain({ disableErrorReporting: false, teardown })
  )
}
