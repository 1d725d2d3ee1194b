// Child process of the compaction kill test: over the SQLite file or PostgreSQL URL given, append exchanges (a question,
// a tool round trip, an answer) to one stream and compact it: `maybeCompact` (template compactor, a
// small budget so every tier runs) after each exchange and `compactContext` every third. Snapshots every
// few events. Each acknowledged step is written to stdout with a synchronous write (a pipe keeps what
// was written when the process is killed):
//   "ack <version> <id,id,...>"        after an append returned (the ids of the messages it appended)
//   "compact-begin <version> <ms>"     before a compaction (ms: the child's clock, for calibration)
//   "tier <tier>"                      when maybeCompact starts a tier (it is about to write)
//   "compact-end <tag> <version> <ms>" after it returned
// It starts when the parent says "go"; the parent SIGKILLs it at a random moment.
import { writeSync } from "node:fs"
import { ContextService, Ids, Message, RecallSource, TokenCounter } from "@ctxlog/core"
import { CompactionStatus, TieredCompaction } from "@ctxlog/compaction"
import { PostgresEventLog, SqliteEventLog } from "@ctxlog/memory"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { waitForGo } from "../../../packages/memory/test/support/kill.js"
import { countingCompactor, filler } from "../support/session.js"

const [target = "", stream = "", label = "", limitArg = "0"] = process.argv.slice(2)
const limit = Number(limitArg)

const say = (line: string) => {
  writeSync(1, `${line}\n`)
}

/** The tiered-compaction config: about six exchanges reach Hard pressure. */
const config: TieredCompaction.Config = { budget: 2000, cooldownTurns: 1, prune: { keepRecent: 1, minChars: 400 } }

const status = CompactionStatus.layer((report) =>
  Effect.sync(() => {
    if (report._tag === "TierStarted") say(`tier ${report.tier}`)
  })
)

const layer = Layer.mergeAll(ContextService.layer(), countingCompactor, status).pipe(
  Layer.provideMerge(
    target.startsWith("postgres")
      ? PostgresEventLog.layer({ url: target, snapshotEvery: 5, maxConnections: 2 })
      : SqliteEventLog.layer({ filename: target, busyTimeoutMs: 30_000, snapshotEvery: 5 })
  ),
  Layer.provideMerge(Layer.mergeAll(TokenCounter.layerHeuristic(4), Ids.layerUuidV7, RecallSource.layerEmpty))
)

const exchange = (i: number): ReadonlyArray<Message.MessageInput> => [
  Message.user(`${label} question ${i} about src/file${i}.ts ${filler(400)}`),
  Message.assistant("", [Message.toolCall(`${label}-call-${i}`, "read", { path: `src/file${i}.ts` })]),
  Message.tool(`${label}-call-${i}`, filler(i % 2 === 0 ? 900 : 250, `file${i}`)),
  Message.assistant(`${label} answer ${i}`)
]

const program = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  say("ready")
  for (let i = 1; limit === 0 || i <= limit; i++) {
    const appended = yield* ctx.appendMessages(stream, exchange(i))
    const ids = appended.events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message.id] : []))
    say(`ack ${appended.window.version} ${ids.join(",")}`)
    const turn = yield* ctx.completeTurn(stream)
    say(`ack ${turn.window.version} `)
    say(`compact-begin ${turn.window.version} ${performance.now()}`)
    const maybe = yield* TieredCompaction.maybeCompact(stream, config)
    say(`compact-end ${maybe._tag} ${maybe.window.version} ${performance.now()}`)
    if (i % 11 === 0) {
      say(`compact-begin ${maybe.window.version} ${performance.now()}`)
      const manual = yield* TieredCompaction.compactContext(stream, 200)
      say(`compact-end ${manual._tag} ${manual.window.version} ${performance.now()}`)
    }
  }
  say("done")
}).pipe(Effect.provide(layer))

waitForGo()
  .then(() => Effect.runPromise(program))
  .then(
    () => process.exit(0),
    (cause: unknown) => {
      say(`failed ${String(cause).replaceAll("\n", " ")}`)
      process.exit(1)
    }
  )
