import { EventLog } from "@ctxlog/core"
import { freshStream } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { PostgresEventLog } from "../src/index.js"
import { message } from "./support/postgres.js"
import { type Cluster, startCluster } from "./support/postgresServer.js"

// The PostgreSQL server crashes (`pg_ctl stop -m immediate`) under writers and comes back: every writer
// sees typed StoreErrors while it is down (never an uncaught ECONNRESET, which would end this process),
// succeeds again after, and no acknowledged event is lost. A private cluster: the shared test server
// must not be restarted under the other test files.

const writers = 4

interface Tally {
  readonly acknowledged: ReadonlyArray<string>
  readonly storeErrors: number
  readonly otherErrors: ReadonlyArray<string>
}

/**
 * Append events one by one until `enough` were acknowledged after `restarted` turned true. A failed
 * append is retried with the same event (a retry of a batch that did commit is acknowledged as such).
 */
const writer = (log: EventLog.EventLog.Service, stream: string, restarted: Ref.Ref<boolean>, enough: number) =>
  Effect.gen(function* () {
    const acknowledged: Array<string> = []
    const otherErrors: Array<string> = []
    let storeErrors = 0
    let afterRestart = 0
    let index = 0
    while (afterRestart < enough) {
      const next = message(stream, index)
      const result = yield* Effect.either(log.append(stream, [next], "any"))
      if (result._tag === "Right") {
        acknowledged.push(next.id)
        index++
        if (yield* Ref.get(restarted)) afterRestart++
      } else {
        if (result.left._tag === "StoreError") storeErrors++
        else otherErrors.push(`${result.left._tag}: ${result.left.message}`)
        yield* Effect.sleep("50 millis")
      }
    }
    return { acknowledged, storeErrors, otherErrors } satisfies Tally
  })

describe("PostgreSQL restarted under writers", () => {
  it.live(
    `${writers} writers get StoreErrors while the server is down, recover after, and lose no acknowledged event`,
    () =>
      Effect.gen(function* () {
        const cluster = yield* Effect.acquireRelease(
          Effect.promise(() => startCluster()),
          (started: Cluster) => Effect.sync(() => started.destroy())
        )
        const context = yield* Layer.build(PostgresEventLog.layer({ url: cluster.url, maxConnections: writers }))
        const log = Context.get(context, EventLog.EventLog)
        const restarted = yield* Ref.make(false)
        const streams = Array.from({ length: writers }, (_, index) => freshStream(`restart-${index}`))
        const fibers = yield* Effect.forEach(streams, (stream) => Effect.fork(writer(log, stream, restarted, 20)))
        // Let them write, crash the server, keep it down a while, start it again.
        yield* Effect.sleep("1 second")
        yield* Effect.sync(() => cluster.stop("immediate"))
        yield* Effect.sleep("1500 millis")
        yield* Effect.sync(() => cluster.start())
        yield* Ref.set(restarted, true)
        const tallies = yield* Effect.forEach(fibers, Fiber.join)

        for (const [at, tally] of tallies.entries()) {
          assert.deepStrictEqual(tally.otherErrors, [], `writer ${at}`)
          assert.isAbove(tally.storeErrors, 0, `writer ${at} saw the server down`)
          const stored = yield* Stream.runCollect(log.read(streams[at] ?? "")).pipe(
            Effect.map((chunk) => new Set(Chunk.toReadonlyArray(chunk).map((envelope) => envelope.eventId)))
          )
          const lost = tally.acknowledged.filter((id) => !stored.has(id))
          assert.deepStrictEqual(lost, [], `writer ${at} lost acknowledged events`)
          assert.isAtLeast(tally.acknowledged.length, 20)
        }
      }).pipe(Effect.scoped),
    300_000
  )
})
