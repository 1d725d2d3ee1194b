// The one-line layer from TypeScript: Ctxlog.sqlite provides ContextService with its log, token
// counter, ids, clock and recall source. Run (after `pnpm build`): compile with tsc, then node.
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService, Message } from "@ctxlog/core"
import { Ctxlog } from "@ctxlog/memory"
import { Effect } from "effect"

const filename = join(mkdtempSync(join(tmpdir(), "ctxlog-example-")), "agent.db")

const program = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  yield* ctx.appendMessages("chat-1", [
    Message.user("The build fails with E0425 in parser.rs"),
    Message.assistant("E0425 is an unresolved name; checking parser.rs.")
  ])
  const window = yield* ctx.load("chat-1")
  return `loaded: version ${window.version}, ${window.history.length} messages, ${window.tokens.total} tokens`
})

const line = await Effect.runPromise(program.pipe(Effect.provide(Ctxlog.sqlite({ filename }))))
console.log(line)
