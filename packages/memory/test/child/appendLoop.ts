// Child process of the append kill test: open the SQLite file (or PostgreSQL URL) given and append batches of 1–4 messages
// to two streams through the window service (snapshots every few events), forever or `limit` batches.
// Before each append it writes "begin <stream> <batch> <size>" and after it is acknowledged
// "ack <stream> <batch> <version>" to stdout with a synchronous write (a pipe keeps what was written when
// the process is killed). It starts when the parent says "go"; the parent SIGKILLs it at a random moment.
import { writeSync } from "node:fs"
import { ContextService, Ids, Message, RecallSource, TokenCounter } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { PostgresEventLog, SqliteEventLog } from "../../src/index.js"
import { waitForGo } from "../support/kill.js"

const [filename = "", firstBatchArg = "0", limitArg = "0"] = process.argv.slice(2)
const firstBatch = Number(firstBatchArg)
const limit = Number(limitArg)

const say = (line: string) => {
  writeSync(1, `${line}\n`)
}

const service = ContextService.layer().pipe(
  Layer.provideMerge(
    filename.startsWith("postgres")
      ? PostgresEventLog.layer({ url: filename, snapshotEvery: 7, maxConnections: 2 })
      : SqliteEventLog.layer({ filename, busyTimeoutMs: 30_000, snapshotEvery: 7 })
  ),
  Layer.provide(Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerUuidV7, RecallSource.layerEmpty))
)

/** Message `index` of `size` in a batch: its id says which batch it belongs to and how big the batch is. */
const message = (stream: string, batch: number, index: number, size: number) => ({
  id: `${stream}:${batch}:${index}/${size}`,
  role: "user" as const,
  kind: "chat" as const,
  parts: [Message.text(`batch ${batch} message ${index} of ${size}: ${"lorem ipsum ".repeat(20 + index * 7)}`)],
  tokens: 60
})

const program = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  say("ready")
  for (let batch = firstBatch; limit === 0 || batch < firstBatch + limit; batch++) {
    const stream = batch % 2 === 0 ? "kill-a" : "kill-b"
    const size = 1 + ((batch * 7) % 4)
    say(`begin ${stream} ${batch} ${size}`)
    const outcome = yield* ctx.run(stream, () =>
      Either.right(
        Array.from({ length: size }, (_, index) => ({
          _tag: "MessageAppended" as const,
          message: message(stream, batch, index, size)
        }))
      )
    )
    say(`ack ${stream} ${batch} ${outcome.window.version}`)
  }
  say("done")
}).pipe(Effect.provide(service))

waitForGo()
  .then(() => Effect.runPromise(program))
  .then(
    () => process.exit(0),
    (cause: unknown) => {
      say(`failed ${String(cause).replaceAll("\n", " ")}`)
      process.exit(1)
    }
  )
