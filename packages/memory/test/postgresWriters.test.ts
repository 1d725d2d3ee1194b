/**
 * PostgreSQL writers (ADR 0066): appends on different streams run at once (no lock shared between them),
 * a reader of the whole log still never skips an event that commits after a larger position was read,
 * one stream's expected version still holds between writers, and the common append is one round trip.
 */
import {
  ContextService,
  EventCodec,
  EventHash,
  EventLog,
  Message,
  TokenCounter,
  type WindowEvent,
  WorkCounter
} from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { Kysely, Migrator, PostgresDialect } from "kysely"
import pg from "pg"
import { Ctxlog, PostgresEventLog, RecallIndex } from "../src/index.js"
import { rowsOf } from "../src/internal/appendPlan.js"
import { migrations } from "../src/internal/migrations.js"
import { appendCall } from "../src/internal/postgresBackend.js"
import { counters as metrics } from "../src/internal/workCounters.js"
import { client, doneOrWaiting, freshDatabase, logOver, message, query } from "./support/postgres.js"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

/**
 * Begin a transaction on `connection` that appends `event` to a new `stream` the way the store does
 * (one `ctxlog_append` call) and stays open: a writer caught between its insert and its commit.
 */
const beginHeldAppend = (connection: pg.Client, stream: string, event: WindowEvent.WindowEvent) =>
  Effect.gen(function* () {
    const stored = yield* EventCodec.encodeAll([event])
    const request = { stream, expected: 0, ids: [event.id], stored, metadata: "{}", now: 1 }
    const { rows, head } = rowsOf(request, 0, EventHash.genesis)
    yield* query(connection, "begin")
    const result = yield* query(connection, appendCall, [
      stream,
      0,
      EventHash.genesis,
      null,
      rows.map((row) => row.event_id),
      rows.map((row) => row.type),
      rows.map((row) => row.schema_version),
      rows.map((row) => row.data),
      rows.map((row) => row.hash),
      "{}",
      1,
      head
    ])
    return Number(result.rows[0]?.last_position)
  })

const positionsOf = (envelopes: ReadonlyArray<EventLog.Envelope>) => envelopes.map((envelope) => envelope.position)

describe("PostgreSQL writers", () => {
  // Live clock: the polling below sleeps between looks.
  it.scopedLive(
    "an append on one stream completes while another stream's append is in flight, and a global read waits for the smaller position",
    () =>
      Effect.gen(function* () {
        const url = yield* freshDatabase("writers_held")
        const log = yield* logOver(url)
        yield* log.append("before", [message("before", 1)], 0)
        const held = yield* client(url)
        const observer = yield* client(url)
        const heldPosition = yield* beginHeldAppend(held, "held", message("held", 1))

        // The store's append on another stream, while the held writer has not committed.
        const other = yield* Effect.fork(log.append("other", [message("other", 1)], 0))
        const appended = yield* doneOrWaiting(other, observer)
        assert.strictEqual(appended, "done", "the append on another stream waited for the open one's lock")
        const written = yield* Fiber.join(other)
        assert.isTrue((written.lastPosition ?? 0) > heldPosition, "the held append took the smaller position")

        // A reader of the whole log must not return the other stream's event (the larger position) while
        // the held one (the smaller) may still commit: it waits for it.
        const reader = yield* Effect.fork(Stream.runCollect(log.readAll()))
        const read = yield* doneOrWaiting(reader, observer)
        if (read === "done") {
          const early = positionsOf(Chunk.toReadonlyArray(yield* Fiber.join(reader)))
          assert.fail(`readAll returned positions ${early.join(", ")} while position ${heldPosition} was in flight`)
        }
        yield* query(held, "commit")
        const all = positionsOf(Chunk.toReadonlyArray(yield* Fiber.join(reader)))
        assert.deepStrictEqual(
          all,
          [...all].sort((a, b) => a - b)
        )
        assert.includeMembers(all, [heldPosition, written.lastPosition ?? -1])
        assert.strictEqual(all.length, 3)
      }),
    { timeout: 60_000 }
  )

  it.scoped(
    "four writers on four streams and a reader paging readAll: every event read exactly once, in position order",
    () =>
      Effect.gen(function* () {
        const url = yield* freshDatabase("writers_paging")
        const log = yield* logOver(url, { maxConnections: 8 })
        const perWriter = 40
        let writing = 4
        const writer = (stream: string) =>
          Effect.gen(function* () {
            for (let index = 1; index <= perWriter; index++) {
              yield* log.append(stream, [message(stream, index)], index - 1)
            }
          }).pipe(
            Effect.ensuring(
              Effect.sync(() => {
                writing--
              })
            )
          )
        const seen: Array<EventLog.Envelope> = []
        // Pages of 3 after the last position read, until the writers are done and a read finds nothing new.
        const reader = Effect.gen(function* () {
          for (;;) {
            const finished = writing === 0
            const after = seen[seen.length - 1]?.position ?? 0
            const page = Chunk.toReadonlyArray(yield* Stream.runCollect(log.readAll({ after, limit: 3 })))
            seen.push(...page)
            if (finished && page.length === 0) return
            yield* Effect.yieldNow()
          }
        })
        yield* Effect.all([writer("w1"), writer("w2"), writer("w3"), writer("w4"), reader], {
          concurrency: "unbounded"
        })
        const positions = positionsOf(seen)
        for (let index = 1; index < positions.length; index++) {
          assert.isTrue((positions[index] ?? 0) > (positions[index - 1] ?? 0), `position order at ${index}`)
        }
        const ids = seen.map((envelope) => envelope.eventId)
        assert.strictEqual(new Set(ids).size, ids.length, "an event was read twice")
        assert.strictEqual(ids.length, 4 * perWriter, "an event was never read")
        const everything = Chunk.toReadonlyArray(yield* Stream.runCollect(log.readAll()))
        assert.deepStrictEqual(
          ids,
          everything.map((envelope) => envelope.eventId)
        )
      }),
    { timeout: 120_000 }
  )

  it.scoped("two stores racing on one stream at one expected version: exactly one wins each round", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("writers_race")
      const a = yield* logOver(url)
      const b = yield* logOver(url)
      for (let round = 0; round < 20; round++) {
        const outcomes = yield* Effect.all(
          [
            Effect.either(a.append("s", [message("a", round)], round)),
            Effect.either(b.append("s", [message("b", round)], round))
          ],
          { concurrency: 2 }
        )
        const won = outcomes.filter(Either.isRight)
        assert.strictEqual(won.length, 1, `round ${round}: ${won.length} appends won`)
        for (const outcome of outcomes) {
          if (Either.isLeft(outcome)) assert.strictEqual(outcome.left._tag, "ConcurrencyConflict")
        }
      }
      assert.strictEqual(yield* a.version("s"), 20)
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(a.read("s")))
      assert.deepStrictEqual(
        events.map((envelope) => envelope.version),
        Array.from({ length: 20 }, (_, index) => index + 1)
      )
    })
  )

  it.scoped("two stores racing the same event id onto two streams: one stores it, the other is told", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("writers_ids")
      const a = yield* logOver(url)
      const b = yield* logOver(url)
      for (let round = 0; round < 20; round++) {
        const shared = message("shared", round)
        const outcomes = yield* Effect.all(
          [Effect.either(a.append(`x${round}`, [shared], 0)), Effect.either(b.append(`y${round}`, [shared], 0))],
          { concurrency: 2 }
        )
        assert.strictEqual(outcomes.filter(Either.isRight).length, 1, `round ${round}`)
        for (const outcome of outcomes) {
          if (Either.isLeft(outcome)) assert.strictEqual(outcome.left._tag, "DuplicateEventIds")
        }
      }
    })
  )

  it.scopedLive("an id an open append holds: the store's append waits for it, then is told it is stored", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("writers_held_id")
      const log = yield* logOver(url)
      yield* log.append("warm", [message("warm", 1)], 0)
      const held = yield* client(url)
      const observer = yield* client(url)
      const shared = message("shared", 1)
      yield* beginHeldAppend(held, "x", shared)
      const other = yield* Effect.fork(Effect.either(log.append("y", [shared], 0)))
      // The id is not visible yet: the store's insert waits on the unique index for the open transaction.
      assert.strictEqual(yield* doneOrWaiting(other, observer), "waiting")
      yield* query(held, "commit")
      const outcome = yield* Fiber.join(other)
      assert.isTrue(Either.isLeft(outcome) && outcome.left._tag === "DuplicateEventIds", JSON.stringify(outcome))
      assert.strictEqual(yield* log.version("y"), 0)
    })
  )

  it.scoped("an append to a stream this store wrote last is one round trip, a batch of 100 too", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("writers_trips")
      const a = yield* logOver(url)
      const b = yield* logOver(url)
      reset()
      yield* a.append("s", [message("s", 1)], 0)
      assert.strictEqual(counters.postgresRoundTrips, 2, "first append here: the head, then the call")
      reset()
      yield* a.append("s", [message("s", 2)], 1)
      assert.strictEqual(counters.postgresRoundTrips, 1)
      reset()
      yield* a.append(
        "s",
        Array.from({ length: 100 }, (_, index) => message("s", 3 + index)),
        2
      )
      assert.strictEqual(counters.postgresRoundTrips, 1)
      // Another store moved the stream: the call is refused and brings the head back; a stale expected
      // version is a conflict, the right one writes.
      yield* b.append("s", [message("s", 200)], 102)
      reset()
      const stale = yield* Effect.either(a.append("s", [message("s", 201)], 102))
      assert.isTrue(Either.isLeft(stale) && stale.left._tag === "ConcurrencyConflict")
      const fresh = yield* a.append("s", [message("s", 202)], 103)
      assert.strictEqual(fresh.nextExpectedVersion, 104)
      assert.strictEqual(counters.postgresRoundTrips, 3, "the refused call; then the head and the call")
    })
  )

  it.scoped("ContextService.appendMessages of one message is one round trip and no other query", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("writers_messages")
      const context = yield* Layer.build(Ctxlog.postgres({ url, tokenCounter: TokenCounter.layerHeuristic() }))
      const ctx = Context.get(context, ContextService.ContextService)
      yield* ctx.appendMessages("conversation", [Message.user("hello")])
      reset()
      yield* ctx.appendMessages("conversation", [Message.user("one more message")])
      assert.strictEqual(counters.postgresRoundTrips, 1)
      assert.strictEqual(counters.queries, 0)
    })
  )

  it.scoped("a recall catch-up writes its batch of entries in one round trip, in order", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("writers_catch_up")
      const context = yield* Layer.build(PostgresEventLog.layer({ url }))
      const log = Context.get(context, EventLog.EventLog)
      const index = Context.get(context, RecallIndex.RecallIndex)
      yield* log.append(
        "s",
        Array.from({ length: 50 }, (_, i) => message("s", i)),
        "no_stream"
      )
      reset()
      const caughtUp = yield* index.catchUp()
      assert.strictEqual(caughtUp.events, 50)
      assert.strictEqual(counters.indexStatements, 1, "one round trip for the batch (it was one per entry)")
      const connection = yield* client(url)
      const rows = (yield* query(connection, "select ref from recall_entries order by entry_id")).rows
      assert.deepStrictEqual(
        rows.map((row) => row.ref),
        Array.from({ length: 50 }, (_, i) => `s-m${i}`),
        "the entries' ids follow the events' order"
      )
      const hits = yield* index.search({ scope: { _tag: "Stream", stream: "s" }, query: "message 7", limit: 3 })
      assert.isAbove(hits.length, 0)
    })
  )

  it.scoped("a database migrated before 0011 upgrades on open, keeps its events and appends on", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("writers_upgrade")
      // The schema of the previous release: every migration before 0011.
      yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          const pool = new pg.Pool({ connectionString: url, max: 1 })
          return new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) })
        }),
        (db) =>
          Effect.promise(async () => {
            const before = Object.fromEntries(Object.entries(migrations("postgres")).filter(([name]) => name < "0011"))
            const outcome = await new Migrator({
              db,
              provider: { getMigrations: () => Promise.resolve(before) }
            }).migrateToLatest()
            if (outcome.error !== undefined) throw outcome.error
          }),
        (db) => Effect.promise(() => db.destroy())
      )
      const raw = yield* client(url)
      const functions = yield* query(raw, "select count(*)::int as n from pg_proc where proname = 'ctxlog_append'")
      assert.strictEqual(functions.rows[0]?.n, 0)
      // The old schema holds events written the old way (one row, chained from genesis).
      const stored = yield* EventCodec.encodeAll([message("old", 1)])
      const { rows, head } = rowsOf(
        { stream: "old", expected: 0, ids: ["old-e1"], stored, metadata: "{}", now: 1 },
        0,
        EventHash.genesis
      )
      const row = rows[0]
      assert.isDefined(row)
      yield* query(raw, "insert into streams values ('old', 1, $1, 1, 1)", [head])
      yield* query(
        raw,
        `insert into events (event_id, stream_id, stream_version, type, schema_version, data, metadata, recorded_at, hash)
         values ($1, 'old', 1, $2, $3, $4, '{}', 1, $5)`,
        [row?.event_id, row?.type, row?.schema_version, row?.data, row?.hash]
      )
      const log = yield* logOver(url)
      const applied = yield* query(raw, "select name from kysely_migration where name = '0011_concurrent_appends'")
      assert.strictEqual(applied.rows[0]?.name, "0011_concurrent_appends")
      const result = yield* log.append("old", [message("old", 2)], 1)
      assert.strictEqual(result.nextExpectedVersion, 2)
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("old")))
      assert.deepStrictEqual(
        events.map((envelope) => envelope.eventId),
        ["old-e1", "old-e2"]
      )
    })
  )
})
