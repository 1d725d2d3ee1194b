// Child process of the restart test: the first session over a SQLite file. It fills a conversation past
// the compacting memory's trigger, loads it (one compaction), compacts two windows with tiered
// compaction (`maybeCompact` at Hard pressure, and `compactContext`), prints what it saw as one JSON
// line and exits without closing the database.
import { ContextService, ConversationMemory, Window } from "@ctxlog/core"
import { TieredCompaction } from "@ctxlog/compaction"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { CompactorCalls, exchange, sessionLayer, tiered } from "../support/session.js"

const [filename = "", conversation = "", maybeStream = "", manualStream = ""] = process.argv.slice(2)

const program = Effect.gen(function* () {
  const memory = yield* ConversationMemory.ConversationMemory
  const ctx = yield* ContextService.ContextService
  const calls = yield* CompactorCalls
  for (let i = 1; i <= 8; i++) yield* memory.append(conversation, exchange(i))
  const loaded = yield* memory.load(conversation)
  const memoryCalls = yield* Ref.get(calls)
  for (let i = 1; i <= 20; i++) yield* ctx.appendMessages(maybeStream, exchange(i))
  const maybe = yield* TieredCompaction.maybeCompact(maybeStream, tiered)
  for (let i = 1; i <= 12; i++) yield* ctx.appendMessages(manualStream, exchange(i))
  const manual = yield* TieredCompaction.compactContext(manualStream, 200)
  return {
    loaded,
    memoryCalls,
    calls: yield* Ref.get(calls),
    maybe: { tag: maybe._tag, window: yield* Window.encode(maybe.window) },
    manual: { tag: manual._tag, window: yield* Window.encode(manual.window) }
  }
}).pipe(Effect.provide(sessionLayer(filename)))

Effect.runPromise(program).then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0))
  },
  (cause: unknown) => {
    process.stderr.write(`${String(cause)}\n`)
    process.exit(1)
  }
)
