/**
 * `RecallIndex.searchEach` answers several scoped searches with one SQLite statement. What it returns
 * for each scope must be what the tier-by-tier queries return for that scope alone (phrase, then every
 * term, then any term, each `ORDER BY bm25, entry_id LIMIT n`, a row kept at its first tier): checked
 * against those queries, run here on their own connection, over real agent transcripts of one owner.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ContextService, EventCodec, Message, RecallSource, TokenCounter, Transcript, WorkCounter } from "@ctxlog/core"
import { transcriptsDir } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Ctxlog, RecallIndex } from "../src/index.js"
import { messagesOf, registerRecallText, searchableText } from "../src/internal/indexing.js"
import { terms, tierBonus } from "../src/internal/search.js"
import { counters } from "../src/internal/workCounters.js"
import { tempFile } from "./support/stores.js"

/** Full-text statements run, as their change since this file loaded (ADR 0160). */
const searchWork = WorkCounter.since({ statements: counters.searchStatements })

const files = [
  "01-sweagent-enigma-ctf-i-got-id.json",
  "04-mini-swe-agent-django-11910.json",
  "06-openhands-codeact-ponyc-4588.json",
  "10-claude-code-agentcmd-navuser-initials.json"
]

interface OracleRow {
  readonly entry_id: number
  readonly stream_id: string | null
  readonly ref: string
  readonly kind: string
  readonly text: string
  readonly score: number
}

/** The search as it ran before `searchEach`: one query per tier, a row kept at its first tier. */
const oracle = (
  db: BetterSqlite3.Database,
  query: string,
  where: string,
  params: ReadonlyArray<string>,
  limit: number
) => {
  const { terms: distinct, words } = terms(query)
  if (distinct.length === 0) return []
  const quoted = distinct.map((term) => `"${term}"`)
  const tiers = [
    ...(words.length > 1 ? [{ match: `"${words.join(" ")}"`, bonus: tierBonus.phrase }] : []),
    ...(distinct.length > 1 ? [{ match: quoted.join(" AND "), bonus: tierBonus.all }] : []),
    { match: quoted.join(" OR "), bonus: 0 }
  ]
  const kinds = RecallIndex.recallableKinds.map((kind) => `'${kind}'`).join(", ")
  const statement = db.prepare<Array<unknown>, OracleRow>(
    `select e.entry_id, e.stream_id, e.ref, e.kind, t.text, ? - bm25(recall_fts) as score
     from recall_fts join recall_entries e on e.entry_id = recall_fts.rowid
     join recall_text t on t.entry_id = e.entry_id
     left join stream_owners o on o.stream_id = e.stream_id
     where recall_fts match ? and e.source = 'message' and ${where} and e.kind in (${kinds})
     order by bm25(recall_fts), e.entry_id limit ?`
  )
  const seen = new Set<number>()
  const rows: Array<OracleRow> = []
  for (const tier of tiers) {
    if (rows.length >= limit) break
    for (const row of statement.all(tier.bonus, tier.match, ...params, limit)) {
      if (seen.has(row.entry_id) || rows.length >= limit) continue
      seen.add(row.entry_id)
      rows.push(row)
    }
  }
  return rows.map(({ stream_id, ref, kind, text, score }) => ({
    stream: stream_id ?? undefined,
    ref,
    kind,
    text,
    score
  }))
}

describe("RecallIndex.searchEach", () => {
  it.scoped("answers each scope as the tier-by-tier queries do, in one statement", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      yield* Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const index = yield* RecallIndex.RecallIndex
        const streams: Array<string> = []
        const texts: Array<string> = []
        for (const [at, file] of files.entries()) {
          const inputs = yield* Transcript.fromTranscriptJson(
            JSON.parse(readFileSync(join(transcriptsDir(), file), "utf8"))
          )
          const stream = `t${at}`
          // Three conversations of one owner, the last of another.
          yield* index.setOwner(stream, at < 3 ? "alice" : "bob")
          yield* ctx.appendMessages(stream, inputs)
          streams.push(stream)
          for (const input of inputs) texts.push(Message.tokenTextOf(input))
        }
        // Queries: a few words of real messages (phrases, near-phrases), single words, nothing searchable.
        const queries = ["", "?!", "error", "the", "django FieldDoesNotExist", "CODE_OF_CONDUCT.md", "activeItem"]
        for (let at = 0; at < texts.length; at += 7) {
          const words = (texts[at] ?? "").split(/\s+/).filter((word) => word.length > 0)
          const start = Math.floor(words.length / 3)
          queries.push(words.slice(start, start + 3 + (at % 9)).join(" "))
          queries.push(words.slice(start, start + 40).join(" "))
        }
        const db = new BetterSqlite3(filename, { readonly: true })
        registerRecallText(db)
        yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
        let compared = 0
        for (const [at, query] of queries.entries()) {
          const limit = [20, 5, 1][at % 3] ?? 20
          const scopes = [
            RecallIndex.inStream("t0"),
            RecallIndex.acrossOwner("alice", "t0"),
            RecallIndex.inStream("t3"),
            RecallIndex.acrossOwner("alice")
          ]
          const before = searchWork.statements
          const each = yield* index.searchEach(scopes.map((scope) => ({ scope, query, limit })))
          assert.isAtMost(searchWork.statements - before, 1, "one statement for every scope")
          const expected = [
            oracle(db, query, "e.stream_id = ?", ["t0"], limit),
            oracle(db, query, "o.owner = ? and e.stream_id <> ?", ["alice", "t0"], limit),
            oracle(db, query, "e.stream_id = ?", ["t3"], limit),
            oracle(db, query, "o.owner = ?", ["alice"], limit)
          ]
          for (const [scope, hits] of each.entries()) {
            const got = hits.map(({ stream, ref, kind, text, score }) => ({ stream, ref, kind, text, score }))
            assert.deepStrictEqual(got, expected[scope], `query "${query.slice(0, 60)}", scope ${scope}`)
            compared += got.length
          }
          // A search of its own answers the same.
          const alone = yield* index.search({ scope: RecallIndex.acrossOwner("alice", "t0"), query, limit })
          assert.deepStrictEqual(alone, each[1])
        }
        // The comparison saw hits, across tiers.
        assert.isAbove(compared, 500)
      }).pipe(
        Effect.provide(Ctxlog.sqlite({ filename, durability: "normal", tokenCounter: TokenCounter.layerHeuristic() }))
      )
    })
  )

  it.scoped("the index a catch-up builds from the stored JSON is the one decoding every event builds", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      yield* Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const index = yield* RecallIndex.RecallIndex
        for (const [at, file] of files.entries()) {
          const inputs = yield* Transcript.fromTranscriptJson(
            JSON.parse(readFileSync(join(transcriptsDir(), file), "utf8"))
          )
          yield* ctx.appendMessages(`t${at}`, inputs)
          yield* ctx.inject(`t${at}`, "recall", [`recalled note ${at}`, `another note ${at}`])
          yield* ctx.inject(`t${at}`, "recall", [])
        }
        yield* index.catchUp()
      }).pipe(
        Effect.provide(Ctxlog.sqlite({ filename, durability: "normal", tokenCounter: TokenCounter.layerHeuristic() }))
      )
      const db = new BetterSqlite3(filename, { readonly: true })
      registerRecallText(db)
      yield* Effect.addFinalizer(() => Effect.sync(() => db.close()))
      const indexed = db
        .prepare(
          "select e.stream_id, e.ref, e.kind, e.role, t.text, e.tokens, e.global_position from recall_entries e join recall_text t on t.entry_id = e.entry_id where e.source = 'message' order by e.entry_id"
        )
        .all()
      const expected: Array<unknown> = []
      const rows = db
        .prepare<
          [],
          { stream_id: string; global_position: number; type: string; schema_version: number; data: string }
        >("select stream_id, global_position, type, schema_version, data from events order by global_position")
        .all()
      for (const row of rows) {
        const event = yield* EventCodec.decode({ type: row.type, schemaVersion: row.schema_version, data: row.data })
        for (const message of messagesOf(event)) {
          const text = searchableText(message)
          if (text.trim() === "") continue
          expected.push({
            stream_id: row.stream_id,
            ref: message.id,
            kind: message.kind,
            role: message.role,
            text,
            tokens: message.tokens,
            global_position: row.global_position
          })
        }
      }
      assert.isAbove(expected.length, 200)
      assert.deepStrictEqual(indexed, expected)
    })
  )
})

describe("FullTextRecall token counts", () => {
  it.scoped("a hit recalled again is not counted again, and comes back the same", () =>
    Effect.gen(function* () {
      let counts = 0
      const counter = TokenCounter.make("counting", (text) => {
        counts++
        return Math.ceil(text.length / 4)
      })
      yield* Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const source = yield* RecallSource.RecallSource
        yield* ctx.appendMessages(
          "s",
          Array.from({ length: 30 }, (_, at) => Message.user(`the parser step ${at} failed on line ${at * 7}`))
        )
        const request = { kind: "recall" as const, stream: "s", query: "parser failed on line", budget: 10_000 }
        counts = 0
        const first = yield* source.recall(request)
        assert.isAbove(counts, 0)
        assert.isAbove(first.length, 5)
        counts = 0
        const again = yield* source.recall(request)
        assert.strictEqual(counts, 0)
        assert.deepStrictEqual(again, first)
      }).pipe(
        Effect.provide(
          Ctxlog.sqlite({
            filename: tempFile(),
            durability: "normal",
            tokenCounter: Layer.succeed(TokenCounter.TokenCounter, counter)
          })
        )
      )
    })
  )
})
