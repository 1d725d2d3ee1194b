#!/usr/bin/env node
/**
 * The `ctxlog` executable; exit codes and error output as {@link report} describes them (0 ok, 1 error,
 * 2 usage, 3 damaged log).
 *
 * @since 0.1.0
 */
import * as Otel from "@ctxlog/providers/otel"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { optionNames, run } from "./Cli.js"
import { report } from "./Report.js"

// Colour only on a terminal, and never with NO_COLOR (https://no-color.org): @effect/cli styles its help
// and usage errors with ANSI escapes, which are dropped here otherwise.
const colour = process.stdout.isTTY === true && (process.env.NO_COLOR ?? "") === ""
const ansi = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g")
const plain = (values: ReadonlyArray<unknown>) =>
  values.map((value) => (typeof value === "string" ? value.replace(ansi, "") : value))

const program = Console.consoleWith((base) =>
  Effect.suspend(() => run(process.argv)).pipe(
    Effect.provide(NodeContext.layer),
    // The one switch: OTEL_EXPORTER_OTLP_ENDPOINT (and the standard OpenTelemetry environment) exports spans.
    Effect.provide(Otel.layerFromEnv({ serviceName: "ctxlog" })),
    colour
      ? (effect) => effect
      : Effect.withConsole({
          ...base,
          log: (...values: ReadonlyArray<unknown>) => base.log(...plain(values)),
          error: (...values: ReadonlyArray<unknown>) => base.error(...plain(values))
        })
  )
)

Effect.runPromiseExit(program).then((exit) => {
  const { code, stderr } = report(exit, process.argv.slice(2), optionNames)
  if (stderr !== "") process.stderr.write(stderr)
  process.exitCode = code
})
