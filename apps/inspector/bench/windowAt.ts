// `window --at` near the end of a 100k-event stream: from the stored snapshot (what the CLI and the
// viewer do; the snapshot is 20 events behind the head) against a full replay from the first event.
// Only the newest snapshot of a stream is stored, so a version before it replays from the start. Printed, not asserted: numbers depend on the
// machine. Run: pnpm --filter @ctxlog/inspector bench  (BENCH_EVENTS to change the stream length)
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventLog, type WindowEvent, WindowRepository } from "@ctxlog/core"
import { Redaction, SqliteEventLog } from "@ctxlog/memory"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { Inspect, Queries, Source } from "../src/index.js"

const total = Number(process.env.BENCH_EVENTS ?? 100_000)
const dir = mkdtempSync(join(tmpdir(), "ctxlog-bench-inspector-"))
const filename = join(dir, "long.db")
const stream = "long"
/** Events appended after the snapshot. */
const tail = 20

// Mostly cheap events (goals, signals, renders' neighbours), one message in five: the recall index
// that every appended message feeds would otherwise dominate the time to build the stream.
const event = (i: number): WindowEvent.WindowEvent =>
  i % 50 === 49
    ? { _tag: "TurnCompleted", id: `e${i}` }
    : i % 5 === 0
      ? {
          _tag: "MessageAppended",
          id: `e${i}`,
          message: {
            id: `m${i}`,
            role: i % 2 === 0 ? "user" : "assistant",
            kind: "chat",
            parts: [{ type: "text", text: `message ${i} `.repeat(8) }],
            tokens: 24
          }
        }
      : i % 500 === 499
        ? { _tag: "HistoryTrimmed", id: `e${i}`, budget: 4000, removedIds: [`m${i - 399}`, `m${i - 394}`] }
        : { _tag: "SubgoalsSet", id: `e${i}`, subgoals: [`step ${i}`], tokens: 3 }

const time = async <A>(label: string, run: () => Promise<A>): Promise<A> => {
  const started = performance.now()
  const result = await run()
  console.log(`${label.padEnd(52)} ${(performance.now() - started).toFixed(1).padStart(9)} ms`)
  return result
}

const main = Effect.gen(function* () {
  const context = yield* SqliteEventLog.make({
    filename,
    durability: "normal",
    redaction: Redaction.none,
    snapshotEvery: 1
  })
  const log = Context.get(context, EventLog.EventLog)
  const snapshotAt = total - tail
  for (let start = 0; start < snapshotAt; start += 5000) {
    const batch = Array.from({ length: Math.min(5000, snapshotAt - start) }, (_, k) => event(start + k))
    yield* log.append(stream, batch, start)
  }
  // The repository saves a snapshot when told of an append (as a running agent's ContextService tells it
  // after each one); the agent then appends a few more events, so the head is past the snapshot.
  const repository = Context.get(context, WindowRepository.WindowRepository)
  yield* repository.committed(stream, yield* repository.load(stream))
  yield* log.append(
    stream,
    Array.from({ length: tail }, (_, k) => event(snapshotAt + k)),
    snapshotAt
  )
}).pipe(Effect.scoped)

await time(`write ${total} events and a head snapshot`, () => Effect.runPromise(main))
await Effect.runPromise(
  Effect.scoped(
    Effect.gen(function* () {
      const source = yield* Source.sqlite(filename)
      // A verified read checks the whole stream once per process (what every command pays first).
      yield* Effect.promise(() =>
        time("verify the stream (chain, streams row, snapshot seal)", () => Effect.runPromise(source.version(stream)))
      )
      const head = yield* source.version(stream)
      const at = head - 5
      const fromSnapshot = yield* Effect.promise(() =>
        time(`window --at ${at} (snapshot + tail)`, () => Effect.runPromise(Inspect.windowAt(source, stream, at)))
      )
      const full = yield* Effect.promise(() =>
        time(`window --at ${at} (full replay from version 1)`, () =>
          Effect.runPromise(Effect.map(Inspect.entries(source, stream, { to: at }), (all) => Queries.windowAt(all, at)))
        )
      )
      console.log(
        `folded from ${fromSnapshot.from === 0 ? "version 0 (no snapshot used)" : `the snapshot at ${fromSnapshot.from}`}; same window: ${JSON.stringify(fromSnapshot.window) === JSON.stringify(full)}`
      )
    })
  )
)
rmSync(dir, { recursive: true, force: true })
