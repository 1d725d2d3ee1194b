// Child process of the cross-process race test: open the shared SQLite file, wait for the common start
// time, append one batch at the expected version given (1 by default), print the outcome as JSON, exit.
import { randomUUID } from "node:crypto"
import { EventLog, type WindowEvent } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { SqliteEventLog } from "../../src/index.js"

const [filename = "", stream = "", startAt = "0", label = "child", expectedArg = "1"] = process.argv.slice(2)
const expected = expectedArg === "no_stream" ? "no_stream" : Number(expectedArg)

// Not @ctxlog/testing: it imports vitest, which only runs inside the test runner.
const events = (count: number): ReadonlyArray<WindowEvent.WindowEvent> =>
  Array.from({ length: count }, (_, index) => ({
    _tag: "MessageAppended",
    id: randomUUID(),
    message: { id: `${label}-${index}`, role: "user", kind: "chat", parts: [{ type: "text", text: label }], tokens: 2 }
  }))

const program = Effect.gen(function* () {
  const log = yield* EventLog.EventLog
  yield* Effect.sleep(Math.max(0, Number(startAt) - Date.now()))
  const result = yield* Effect.either(log.append(stream, events(2), expected))
  if (result._tag === "Right") return { outcome: "written", version: result.right.nextExpectedVersion }
  const error = result.left
  return error._tag === "ConcurrencyConflict"
    ? { outcome: "conflict", actual: error.actual }
    : { outcome: "error", tag: error._tag, message: error.message }
}).pipe(Effect.provide(SqliteEventLog.layer({ filename, busyTimeoutMs: 30_000 })))

Effect.runPromise(program).then(
  (outcome) => process.stdout.write(`${JSON.stringify(outcome)}\n`),
  (cause: unknown) => {
    process.stdout.write(`${JSON.stringify({ outcome: "error", message: String(cause) })}\n`)
    process.exitCode = 1
  }
)
