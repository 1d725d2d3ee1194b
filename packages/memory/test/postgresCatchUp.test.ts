/**
 * PostgreSQL writers and the recall catch-up (ADR 0078): a global read holds the gate only while its bound
 * is taken, so appends go on during the read; and the background catch-up does not start while another
 * process runs one, so writers that pass a batch at once do not each read the whole batch.
 */
import { WorkCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { appendGateKey } from "../src/internal/migrations.js"
import { make } from "../src/internal/postgresBackend.js"
import { claimKey } from "../src/internal/postgresGlobal.js"
import { name as recallProjection } from "../src/internal/recallProjection.js"
import { counters as metrics } from "../src/internal/workCounters.js"
import { client, doneOrWaiting, freshDatabase, logOver, message, query } from "./support/postgres.js"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

describe("PostgreSQL global reads and the recall catch-up", () => {
  // Live clock: the polling sleeps between looks.
  it.scopedLive(
    "a global read holds the gate only for its bound: an append commits while the read runs, past the bound",
    () =>
      Effect.gen(function* () {
        const url = yield* freshDatabase("global_bound")
        const log = yield* logOver(url)
        const before = yield* log.append("before", [message("before", 1)], 0)
        const backend = yield* make({ url, maxConnections: 4 })
        const observer = yield* client(url)
        reset()
        // While the read's query runs, another stream's append: it used to wait for the gate, held until
        // the read's transaction ended (the read would have waited for it in turn).
        const during = (bound: number) =>
          Effect.runPromise(
            Effect.gen(function* () {
              const fiber = yield* Effect.fork(log.append("during", [message("during", 1)], 0))
              const seen = yield* doneOrWaiting(fiber, observer)
              return { seen, bound, appended: seen === "done" ? (yield* Fiber.join(fiber)).lastPosition : undefined }
            })
          )
        const read = yield* backend.readGlobal("read", async (db, bound) => {
          const outcome = await during(bound)
          const rows = await db
            .selectFrom("events")
            .select("global_position")
            .where("global_position", "<=", bound)
            .orderBy("global_position")
            .execute()
          return { ...outcome, positions: rows.map((row) => row.global_position) }
        })
        assert.strictEqual(read.seen, "done", "the append waited for the global read's gate")
        assert.strictEqual(read.bound, before.lastPosition, "the bound is the last position committed before the read")
        assert.isTrue((read.appended ?? 0) > read.bound, "the append during the read took a position past the bound")
        assert.deepStrictEqual(read.positions, [before.lastPosition])
        assert.strictEqual(counters.globalBounds, 1, "one round trip under the gate")
      }),
    { timeout: 60_000 }
  )

  it.scopedLive(
    "a global read still waits for an append in flight, and then sees it",
    () =>
      Effect.gen(function* () {
        const url = yield* freshDatabase("global_wait")
        const log = yield* logOver(url)
        yield* log.append("warm", [message("warm", 1)], 0)
        const backend = yield* make({ url, maxConnections: 4 })
        const held = yield* client(url)
        const observer = yield* client(url)
        // An append that holds the gate shared and has not committed: the bound waits for it.
        yield* query(held, "begin")
        yield* query(held, "select pg_advisory_xact_lock_shared($1)", [appendGateKey])
        yield* query(
          held,
          `insert into streams (stream_id, version, head_hash, created_at, updated_at) values ('h', 1, 'x', 1, 1)`
        )
        const inserted = yield* query(
          held,
          `insert into events (event_id, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, hash)
           values ('h1', 'h', 1, 'MessageAppended', 1, '{}', '{}', 1, 'x') returning global_position`
        )
        const heldPosition = Number(inserted.rows[0]?.global_position)
        const reader = yield* Effect.fork(backend.readGlobal("read", async (_db, bound) => bound))
        assert.strictEqual(yield* doneOrWaiting(reader, observer), "waiting")
        yield* query(held, "commit")
        assert.strictEqual(yield* Fiber.join(reader), heldPosition)
      }),
    { timeout: 60_000 }
  )

  it.scoped("the background catch-up does not start while another process runs one; later it catches up whole", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("catch_up_claim")
      const log = yield* logOver(url, { recallBatch: 2 })
      const other = yield* client(url)
      const key = claimKey(recallProjection)
      // Another process is catching up (it holds the claim).
      yield* query(other, "select pg_advisory_lock($1)", [key])
      reset()
      // Four events wait after this append: two batches, so the append runs the catch-up itself.
      yield* log.append(
        "s",
        Array.from({ length: 4 }, (_, index) => message("s", index)),
        0
      )
      assert.strictEqual(counters.rowsReadToIndex, 0, "it read the batch another process is indexing")
      assert.strictEqual(counters.claimsTried, 1)
      yield* query(other, "select pg_advisory_unlock($1)", [key])
      reset()
      yield* log.append(
        "s",
        Array.from({ length: 4 }, (_, index) => message("s", 4 + index)),
        4
      )
      assert.strictEqual(counters.claimsTried, 1)
      assert.strictEqual(counters.rowsReadToIndex, 8, "each event read once")
      const entries = yield* query(other, "select count(*)::int as n from recall_entries")
      assert.strictEqual(entries.rows[0]?.n, 8)
      const claims = yield* query(other, "select count(*)::int as n from pg_locks where locktype = 'advisory'")
      assert.strictEqual(claims.rows[0]?.n, 0, "the claim was released")
    })
  )

  it.scoped("with a pool of one connection the catch-up takes no claim (it would hold the connection it needs)", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("catch_up_one_connection")
      const log = yield* logOver(url, { recallBatch: 2, maxConnections: 1 })
      reset()
      yield* log.append(
        "s",
        Array.from({ length: 4 }, (_, index) => message("s", index)),
        0
      )
      assert.strictEqual(counters.claimsTried, 0)
      assert.strictEqual(counters.rowsReadToIndex, 4)
      const other = yield* client(url)
      const entries = yield* query(other, "select count(*)::int as n from recall_entries")
      assert.strictEqual(entries.rows[0]?.n, 4)
    })
  )
})
