// The cache model's prediction beside the recorded usage, call by call, for the real sessions of
// fixtures/sessions (or the files and folders given): how issue 37's accuracy figures are investigated
// (ADR 0138, ADR 0141). Each line: the call, the predicted and recorded prompt / cache read / write and
// class, the read error, and the cause the model names. Run from the repository root:
//   node $(node scripts/ts-bundle.mjs apps/inspector/scripts/cache-calls.ts) [PATH…]
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CacheModel } from "@ctxlog/providers"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { Cli, Inspect, Source } from "../src/index.js"

const root = fileURLToPath(new URL("../../../fixtures/sessions/", import.meta.url))
const paths = process.argv.length > 2 ? process.argv.slice(2) : [join(root, "claude-code"), join(root, "codex")]
const temp = mkdtempSync(join(tmpdir(), "ctxlog-cache-calls-"))
const db = join(temp, "log.db")

const pad = (value: string | number, width: number) => String(value).padStart(width)
const splitText = (split: CacheModel.Split | null) =>
  split === null
    ? pad("-", 30)
    : `${pad(split.promptTokens, 7)} ${pad(split.cacheRead, 7)} ${pad(split.cacheWrite, 7)} ${pad(split.class, 7)}`

const program = Effect.gen(function* () {
  yield* Cli.run(["node", "ctxlog", "import", "--db", db, ...paths]).pipe(Effect.provide(NodeContext.layer))
  const source = yield* Source.sqlite(db)
  const streams = yield* source.streams()
  for (const { stream } of streams) {
    const entries = yield* Inspect.entries(source, stream)
    const report = CacheModel.predict(entries)
    const accuracy = CacheModel.accuracy(report)
    console.log(
      `\n== ${stream}  unknown prefix ${report.unknownPrefix?.tokens ?? 0} (warm ${report.unknownPrefix?.warmTokens ?? 0})  within ±10% ${Math.round(accuracy.readWithin10 * accuracy.recorded)}/${accuracy.recorded}  class ${Math.round(accuracy.classAgrees * accuracy.recorded)}/${accuracy.recorded}  cost $${report.totals.predicted.cost.toFixed(4)} vs recorded $${(report.totals.recorded?.cost ?? 0).toFixed(4)} (${accuracy.costRatio === null ? "-" : `${((accuracy.costRatio - 1) * 100).toFixed(1)}%`})`
    )
    console.log(
      "  #      gap |  predicted: prompt    read   write   class |   recorded: prompt    read   write   class |  error  cause"
    )
    let previous: number | undefined
    for (const [index, call] of report.calls.entries()) {
      const gap = previous === undefined ? "" : `${Math.round((call.at - previous) / 1000)}s`
      previous = call.at
      const error = call.readError === null ? "-" : `${(call.readError * 100).toFixed(1)}%`
      const within =
        call.recorded === null
          ? " "
          : (
                call.recorded.cacheRead === 0
                  ? call.predicted.cacheRead === 0
                  : Math.abs(call.predicted.cacheRead - call.recorded.cacheRead) <= 0.1 * call.recorded.cacheRead
              )
            ? " "
            : "*"
      const agrees = call.recorded === null || call.recorded.class === call.predicted.class ? " " : "!"
      console.log(
        `${pad(index + 1, 3)} ${pad(gap, 8)} | ${splitText(call.predicted)} | ${splitText(call.recorded)} | ${pad(error, 7)}${within}${agrees} ${call.cause === null ? "" : `${call.cause.kind}: ${call.cause.detail}`}`
      )
    }
  }
})

try {
  await Effect.runPromise(Effect.scoped(program))
} finally {
  rmSync(temp, { recursive: true, force: true })
}
