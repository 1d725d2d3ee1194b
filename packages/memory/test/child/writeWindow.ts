// Child process of the restart test: build a conversation in a SQLite file, print the live window
// (encoded) and exit at once, without closing the database: an acknowledged append must be on disk.
import { ContextService, Ids, Message, TokenCounter, Window, WindowRepository } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FullTextRecall, SqliteEventLog } from "../../src/index.js"

const [filename = "", stream = ""] = process.argv.slice(2)

const live = ContextService.layer().pipe(
  Layer.provideMerge(FullTextRecall.layer()),
  Layer.provideMerge(SqliteEventLog.layer({ filename, snapshotEvery: 4 })),
  Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7))
)

const program = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  yield* ctx.setSystemPrompt(stream, "You are a careful coding agent.")
  yield* ctx.setTaskGoal(stream, "Fix the failing build")
  for (let turn = 0; turn < 6; turn++) {
    yield* ctx.appendMessages(stream, [
      Message.user(`turn ${turn}: please check the logs`),
      Message.assistant("", [Message.toolCall(`call-${turn}`, "bash", { command: `tail -n ${turn + 5} build.log` })]),
      Message.tool(`call-${turn}`, `error at line ${turn * 7}: missing semicolon`),
      Message.assistant(`Found the problem in turn ${turn}.`)
    ])
    yield* ctx.completeTurn(stream)
  }
  yield* ctx.injectSemanticRecall(stream, "missing semicolon", 200)
  const outcome = yield* ctx.trimToBudget(stream, 300)
  // Report the final window as committed (snapshotEvery 4 makes it due): the parent then restores it
  // from the snapshot (plain JSON after a hash check), not by folding the events.
  const repository = yield* WindowRepository.WindowRepository
  yield* repository.committed(stream, outcome.window)
  return yield* Window.encode(outcome.window)
}).pipe(Effect.provide(live))

Effect.runPromise(program).then(
  (encoded) => {
    process.stdout.write(`${JSON.stringify(encoded)}\n`, () => process.exit(0))
  },
  (cause: unknown) => {
    process.stderr.write(`${String(cause)}\n`)
    process.exit(1)
  }
)
