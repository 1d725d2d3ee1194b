import { EventLog, type WindowEvent, WorkCounter } from "@ctxlog/core"
import { freshStream } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { PostgresEventLog, RecallIndex, SqliteEventLog } from "../src/index.js"
import { freshDatabase } from "./support/postgres.js"
import { counters as metrics } from "../src/internal/workCounters.js"
import { RawSql, sqliteRawLayer, postgresRawLayer, tempFile } from "./support/stores.js"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset

// The recall index is a projection of the log: appends write only events and the stream row; the index
// catches up after commit and before every query, several writers may catch up at once, and it can be
// dropped and rebuilt from the log.

const message = (stream: string, index: number, text: string): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `${stream}-e${index}`,
  message: {
    id: `${stream}-m${index}`,
    role: index % 2 === 0 ? "user" : "assistant",
    kind: "chat",
    parts: [{ type: "text", text }],
    tokens: 5
  }
})

const factsEvent = (stream: string): WindowEvent.WindowEvent => ({
  _tag: "FactsRecorded",
  id: `${stream}-facts`,
  facts: [
    { subject: "Ada Lovelace", predicate: "works on", object: "Analytical Engine", sourceMessageId: null },
    { subject: "Grace Hopper", predicate: "wrote", object: "COBOL", sourceMessageId: null }
  ]
})

const words = ["zeppelin", "frankfurt", "cluster", "deploy", "kernel", "socket", "parser", "lexer"]
const textOf = (index: number) =>
  `note ${index}: the ${words[index % words.length]} and the ${words[(index * 3) % words.length]}`

const count = (raw: RawSql["Type"], statement: string) =>
  Effect.map(raw.rows(statement), (rows) => Number(rows[0]?.n ?? -1))

type Opened = Context.Context<SqliteEventLog.Services>

interface Backend {
  readonly label: string
  /** Two independent stores (connections / pools) on one database, plus raw access to it. */
  readonly open: Effect.Effect<
    { readonly a: Opened; readonly b: Opened; readonly raw: RawSql["Type"] },
    SqliteEventLog.OpenError,
    Scope.Scope
  >
}

const backends: ReadonlyArray<Backend> = [
  {
    label: "SQLite file",
    open: Effect.gen(function* () {
      const filename = tempFile()
      const a = yield* Layer.build(SqliteEventLog.layer({ filename, recallBatch: 7 }))
      const b = yield* Layer.build(SqliteEventLog.layer({ filename, recallBatch: 5 }))
      const raw = Context.get(yield* Layer.build(sqliteRawLayer(filename)), RawSql)
      return { a, b, raw }
    })
  },
  {
    label: "PostgreSQL",
    open: Effect.gen(function* () {
      const url = yield* freshDatabase("projection")
      const a = yield* Layer.build(PostgresEventLog.layer({ url, recallBatch: 7 }))
      const b = yield* Layer.build(PostgresEventLog.layer({ url, recallBatch: 5 }))
      const raw = Context.get(yield* Layer.build(postgresRawLayer(url)), RawSql)
      return { a, b, raw }
    })
  }
]

for (const backend of backends) {
  describe(`recall projection (${backend.label})`, () => {
    it.scoped("an append writes no index rows; the next query catches up and finds it", () =>
      Effect.gen(function* () {
        const { a, raw } = yield* backend.open
        const log = Context.get(a, EventLog.EventLog)
        const index = Context.get(a, RecallIndex.RecallIndex)
        const stream = freshStream("lazy")
        yield* log.append(stream, [message(stream, 0, "the zeppelin cluster in Frankfurt")], "no_stream")
        assert.strictEqual(yield* count(raw, "select count(*) as n from recall_entries"), 0)
        const hits = yield* index.search({ scope: { _tag: "Stream", stream }, query: "zeppelin" })
        assert.deepStrictEqual(
          hits.map((hit) => hit.ref),
          [`${stream}-m0`]
        )
        assert.strictEqual(yield* count(raw, "select count(*) as n from recall_entries"), 1)
        const position = yield* count(raw, "select position as n from projection_checkpoints where name = 'recall'")
        assert.strictEqual(position, yield* count(raw, "select max(global_position) as n from events"))
      })
    )

    it.scoped("two stores catching up at once index every event exactly once", () =>
      Effect.gen(function* () {
        const { a, b, raw } = yield* backend.open
        const logA = Context.get(a, EventLog.EventLog)
        const logB = Context.get(b, EventLog.EventLog)
        const streams = [freshStream("two-a"), freshStream("two-b")]
        // Interleaved appends from both stores, more than a batch each, and facts.
        for (let round = 0; round < 12; round++) {
          for (const [at, stream] of streams.entries()) {
            const log = at === 0 ? logA : logB
            yield* log.append(stream, [message(stream, round, textOf(round))], round === 0 ? "no_stream" : round)
          }
        }
        for (const [at, stream] of streams.entries()) {
          yield* (at === 0 ? logA : logB).append(stream, [factsEvent(stream)], 12)
        }
        const results = yield* Effect.all(
          [
            Context.get(a, RecallIndex.RecallIndex).catchUp(),
            Context.get(b, RecallIndex.RecallIndex).catchUp(),
            Context.get(a, RecallIndex.RecallIndex).catchUp(),
            Context.get(b, RecallIndex.RecallIndex).catchUp()
          ],
          { concurrency: "unbounded" }
        )
        const last = yield* count(raw, "select max(global_position) as n from events")
        assert.isTrue(results.every((result) => result.position === last))
        // Each event indexed by exactly one of them (some may have been indexed after an append).
        assert.isAtMost(
          results.reduce((sum, result) => sum + result.events, 0),
          26
        )
        assert.strictEqual(yield* count(raw, "select count(*) as n from recall_entries where source = 'message'"), 24)
        assert.strictEqual(yield* count(raw, "select count(*) as n from facts"), 4)
        if (raw.dialect === "sqlite") {
          assert.strictEqual(yield* count(raw, "select count(*) as n from recall_fts"), 24)
        }
        const hits = yield* Context.get(b, RecallIndex.RecallIndex).search({
          scope: { _tag: "Stream", stream: streams[0] ?? "" },
          query: "zeppelin",
          limit: 50
        })
        assert.deepStrictEqual(
          hits.map((hit) => hit.ref).sort(),
          Array.from({ length: 12 }, (_, round) => round)
            .filter((round) => textOf(round).includes("zeppelin"))
            .map((round) => `${streams[0]}-m${round}`)
            .sort()
        )
      })
    )

    it.scoped("dropped and rebuilt from the log, the index answers the same", () =>
      Effect.gen(function* () {
        const { a, raw } = yield* backend.open
        const log = Context.get(a, EventLog.EventLog)
        const index = Context.get(a, RecallIndex.RecallIndex)
        const stream = freshStream("rebuild")
        for (let round = 0; round < 20; round++) {
          yield* log.append(stream, [message(stream, round, textOf(round))], round === 0 ? "no_stream" : round)
        }
        yield* log.append(stream, [factsEvent(stream)], 20)
        yield* index.ingestDocument("owner-1", "doc-1", "The zeppelin handbook: deploy to Frankfurt.")
        const ask = Effect.all({
          search: index.search({ scope: { _tag: "Stream", stream }, query: "zeppelin kernel", limit: 50 }),
          facts: index.factsFor({ _tag: "Stream", stream }, "Ada Lovelace and Grace Hopper"),
          documents: index.search({ scope: { _tag: "Documents", owner: "owner-1" }, query: "zeppelin" })
        })
        const before = yield* ask
        assert.isAbove(before.search.length, 0)
        assert.strictEqual(before.facts.length, 2)
        assert.strictEqual(before.documents.length, 1)

        // Dropped by hand (what an operator would do to a damaged index): rows gone, checkpoint at 0.
        if (raw.dialect === "sqlite") {
          yield* raw.exec(
            "delete from recall_fts where rowid in (select entry_id from recall_entries where source = 'message')"
          )
        }
        yield* raw.exec("delete from recall_entries where source = 'message'")
        yield* raw.exec("delete from facts")
        yield* raw.exec("update projection_checkpoints set position = 0 where name = 'recall'")
        assert.deepStrictEqual((yield* ask).facts.length, 2, "a query catches up from 0")
        assert.deepStrictEqual(yield* ask, before)

        // And through the exported function, twice: no duplicates.
        const rebuilt = yield* RecallIndex.rebuild.pipe(Effect.provide(a))
        assert.strictEqual(rebuilt.events, yield* count(raw, "select count(*) as n from events"))
        yield* RecallIndex.rebuild.pipe(Effect.provide(a))
        assert.deepStrictEqual(yield* ask, before)
        assert.strictEqual(yield* count(raw, "select count(*) as n from recall_entries where source = 'message'"), 20)
        assert.strictEqual(yield* count(raw, "select count(*) as n from facts"), 2)
      })
    )
  })
}

describe("recall projection work (SQLite)", () => {
  it.scoped(
    "a new entry costs its row and its FTS row, an entry indexed already its insert only; BM25 as a rebuild's",
    () =>
      Effect.gen(function* () {
        const filename = tempFile()
        // A batch larger than what is appended: nothing is indexed until the catch-up measured below.
        const opened = yield* Layer.build(SqliteEventLog.layer({ filename, recallBatch: 1000 }))
        const raw = Context.get(yield* Layer.build(sqliteRawLayer(filename)), RawSql)
        const log = Context.get(opened, EventLog.EventLog)
        const index = Context.get(opened, RecallIndex.RecallIndex)
        const stream = freshStream("work")
        const events = Array.from({ length: 30 }, (_, round) => message(stream, round, textOf(round)))
        yield* log.append(stream, events, "no_stream")
        reset()
        assert.strictEqual((yield* index.catchUp()).events, 30)
        assert.strictEqual(counters.indexStatements, 60)

        // Five messages injected again (indexed already: one insert each, refused) and two new ones.
        const messagesOf = (list: ReadonlyArray<WindowEvent.WindowEvent>) =>
          list.flatMap((event) => (event._tag === "MessageAppended" ? [event.message] : []))
        const fresh = [message(stream, 30, "the zeppelin lexer"), message(stream, 31, "a kernel socket")]
        yield* log.append(
          stream,
          [
            {
              _tag: "MessagesInjected",
              id: `${stream}-injected`,
              kind: "recall",
              messages: [...messagesOf(events.slice(0, 5)), ...messagesOf(fresh)],
              replacesInHistory: false
            }
          ],
          30
        )
        reset()
        assert.strictEqual((yield* index.catchUp()).events, 1)
        assert.strictEqual(counters.indexStatements, 5 + 2 * 2)
        assert.strictEqual(yield* count(raw, "select count(*) as n from recall_entries where source = 'message'"), 32)

        // The index is exact: FTS5 finds it consistent with its content (the view recall_text), and BM25
        // ranks and scores every hit as an index rebuilt from that content does.
        yield* raw.exec("insert into recall_fts (recall_fts, rank) values ('integrity-check', 1)")
        const ranked =
          "select rowid as id, bm25(recall_fts) as score from recall_fts where recall_fts match 'zeppelin OR kernel OR lexer' order by rank, rowid"
        const incremental = yield* raw.rows(ranked)
        assert.isAbove(incremental.length, 5)
        yield* raw.exec("insert into recall_fts (recall_fts) values ('rebuild')")
        assert.deepStrictEqual(yield* raw.rows(ranked), incremental)
      })
  )
})
