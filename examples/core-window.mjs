// A context window as an event log, under plain node against the built @ctxlog/core.
// Run: pnpm demo   (builds core, then runs this file)
import { ContextService, EventLog, Message, Window } from "@ctxlog/core"
import { Chunk, Effect, Stream } from "effect"

const stream = "demo-conversation"

const program = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  const log = yield* EventLog.EventLog

  yield* ctx.setSystemPrompt(stream, "You are a careful coding assistant. Use tools to inspect files.")
  yield* ctx.setTaskGoal(stream, "Find why the build fails")

  // Three turns, each with a tool call and its result.
  const turns = [
    ["Why does `pnpm build` fail?", "ls", { path: "." }, "package.json\nsrc/\ntsconfig.json"],
    ["Look at the config.", "read_file", { path: "tsconfig.json" }, '{ "compilerOptions": { "strict": true } }'],
    ["And the sources?", "grep", { pattern: "TODO" }, "src/index.ts:3: // TODO remove any"]
  ]
  for (const [index, [question, tool, input, output]] of turns.entries()) {
    const callId = `call-${index + 1}`
    yield* ctx.appendMessages(stream, [
      Message.user(question),
      Message.assistant(`Let me check with ${tool}.`, [Message.toolCall(callId, tool, input)]),
      Message.tool(callId, output)
    ])
    yield* ctx.completeTurn(stream)
  }

  // Recall from an earlier session, injected right after the system prompt; injecting again replaces it.
  yield* ctx.inject(stream, "recall", ["Earlier: the user prefers minimal diffs."])
  yield* ctx.inject(stream, "recall", ["Earlier: the user prefers minimal diffs and strict TypeScript."])

  // Trim to a small budget: the oldest turns leave the window (never a call without its result).
  const before = yield* ctx.load(stream)
  const trimmed = yield* ctx.trimToBudget(stream, Math.floor(before.tokens.total * 0.7))
  const window = trimmed.window

  console.log(`window v${window.version}: ${window.tokens.total} tokens (was ${before.tokens.total})`)
  for (const message of Window.messages(window)) {
    const text = Message.tokenTextOf(message).replaceAll("\n", " ").slice(0, 60)
    console.log(
      `  [${message.role}/${message.kind}] ${String(message.tokens).padStart(3)} tok  v${message.origin?.version}  ${text}`
    )
  }

  const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
  console.log(`\n${events.length} events in stream "${stream}":`)
  for (const envelope of events) {
    console.log(`  v${String(envelope.version).padStart(2)} ${envelope.type.padEnd(17)} ${envelope.hash.slice(0, 12)}`)
  }

  // The window is a projection: replaying the log gives the same window, byte for byte.
  const replayed = Window.replay(events.map((envelope) => envelope.event))
  const same = JSON.stringify(replayed) === JSON.stringify(window)
  console.log(`\nreplay equals live window: ${same}`)
  if (!same) throw new Error("replay diverged from the live window")
})

Effect.runPromise(program.pipe(Effect.provide(ContextService.layerMemory()))).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
