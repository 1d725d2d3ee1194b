// Child process of the window-cache test: append `count` messages to a shared SQLite stream through a
// ContextService, each recording the id of the message it was decided after. Prints {"done":count}.
import { ContextService, Ids, RecallSource, TokenCounter } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SqliteEventLog } from "../../src/index.js"
import { appendAfterLast } from "../support/chain.js"

const [filename = "", stream = "", label = "child", countArg = "20"] = process.argv.slice(2)

const service = ContextService.layer().pipe(
  Layer.provideMerge(SqliteEventLog.layer({ filename, busyTimeoutMs: 30_000, durability: "normal" })),
  Layer.provide(Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerUuidV7, RecallSource.layerEmpty))
)

const program = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  for (let i = 0; i < Number(countArg); i++) yield* appendAfterLast(ctx, stream, `${label}-${i}`)
  return { done: Number(countArg) }
}).pipe(Effect.provide(service))

Effect.runPromise(program).then(
  (outcome) => process.stdout.write(`${JSON.stringify(outcome)}\n`),
  (cause: unknown) => {
    process.stdout.write(`${JSON.stringify({ outcome: "error", message: String(cause) })}\n`)
    process.exitCode = 1
  }
)
