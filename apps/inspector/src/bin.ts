#!/usr/bin/env node
/**
 * The `ctxlog` executable; exit codes and error output as {@link report} describes them (0 ok, 1 error,
 * 2 usage, 3 damaged log).
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { optionNames, run } from "./Cli.js"
import { report } from "./Report.js"

const program = Effect.suspend(() => run(process.argv)).pipe(Effect.provide(NodeContext.layer))

Effect.runPromiseExit(program).then((exit) => {
  const { code, stderr } = report(exit, process.argv.slice(2), optionNames)
  if (stderr !== "") process.stderr.write(stderr)
  process.exitCode = code
})
