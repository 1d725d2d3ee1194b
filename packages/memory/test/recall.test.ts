import { ContextService, Message, RecallSource, TokenCounter } from "@ctxlog/core"
import { freshStream } from "@ctxlog/testing"
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { Embedder, FullTextRecall, RecallIndex, Redaction, SqliteEventLog } from "../src/index.js"
import { withContextOnly } from "./support/stores.js"

describe("Redaction", () => {
  it("removes common secrets and keeps ordinary text", () => {
    const text = [
      "key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX1234 and sk-ant-api03-abcdefghijklmnopqrstuv",
      "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.signature",
      "aws AKIAIOSFODNN7EXAMPLE github ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "password=hunter2hunter2 api_key: 'abcdef123456'",
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
      "the task-list and a bearer of news stay"
    ].join("\n")
    const redacted = Redaction.defaults.redact(text)
    for (const secret of [
      "ABCDEFGHIJKLMNOPQRSTUVWX1234",
      "api03-abcdefghijklmnopqrstuv",
      "eyJhbGciOiJIUzI1NiJ9",
      "AKIAIOSFODNN7EXAMPLE",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "hunter2hunter2",
      "abcdef123456",
      "MIIEow"
    ]) {
      assert.notInclude(redacted, secret)
    }
    assert.include(redacted, "password=[REDACTED]")
    assert.include(redacted, "the task-list and a bearer of news stay")
  })

  it("applies custom rules to every string of a value, and none changes nothing", () => {
    const redactor = Redaction.make([{ name: "ticket", pattern: /TICKET-\d+/, replacement: "TICKET-?" }])
    const value = { a: "see TICKET-12 and TICKET-13", b: ["TICKET-1"], c: 3, d: null }
    assert.deepStrictEqual(Redaction.redactValue(redactor, value), {
      a: "see TICKET-? and TICKET-?",
      b: ["TICKET-?"],
      c: 3,
      d: null
    })
    assert.deepStrictEqual(Redaction.redactValue(Redaction.none, value), value)
  })
})

// A test embedder: texts mentioning "preferred" point one way, everything else the other.
const embedder = Layer.succeed(Embedder.Embedder, {
  model: "test-two-dimensions",
  embed: (texts) =>
    Effect.succeed(texts.map((text, index) => (index === 0 || text.includes("preferred") ? [1, 0] : [0, 1])))
})
const failingEmbedder = Layer.succeed(Embedder.Embedder, {
  model: "down",
  embed: () => Effect.fail(new Embedder.EmbedError({ model: "down", detail: "service unavailable" }))
})

const store = withContextOnly(SqliteEventLog.layer({ filename: ":memory:", chunkChars: 200 }))

layer(store)("FullTextRecall", (it) => {
  it.effect("re-ranks full-text candidates with an Embedder when one is provided", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const stream = freshStream("embed")
      yield* ctx.appendMessages(stream, [
        Message.user("zeppelin zeppelin zeppelin"),
        Message.user("zeppelin, the preferred one")
      ])
      const plain = yield* (yield* RecallSource.RecallSource).recall({
        kind: "recall",
        stream,
        query: "zeppelin",
        budget: 500
      })
      assert.include(Message.textOf(plain[0]?.message ?? Message.user("")), "zeppelin zeppelin zeppelin")
      const reranked = yield* Effect.flatMap(FullTextRecall.make(), (source) =>
        source.recall({ kind: "recall", stream, query: "zeppelin", budget: 500 })
      ).pipe(Effect.provide(embedder))
      assert.include(Message.textOf(reranked[0]?.message ?? Message.user("")), "preferred")
      const failed = yield* Effect.flatMap(FullTextRecall.make(), (source) =>
        Effect.either(source.recall({ kind: "recall", stream, query: "zeppelin", budget: 500 }))
      ).pipe(Effect.provide(failingEmbedder))
      assert.isTrue(Either.isLeft(failed) && failed.left._tag === "RecallError")
    })
  )

  it.effect("a hit larger than the budget comes back as an excerpt around the match", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const counter = yield* TokenCounter.TokenCounter
      const stream = freshStream("long")
      const filler = (from: number) => Array.from({ length: 400 }, (_, n) => `line ${from + n} ok`).join("\n")
      yield* ctx.appendMessages(stream, [
        Message.assistant("", [Message.toolCall("c1", "bash", { command: "make" })]),
        Message.tool("c1", `${filler(0)}\nfatal: linker cannot find -lzeppelin\n${filler(400)}`)
      ])
      const source = yield* RecallSource.RecallSource
      const hits = yield* source.recall({ kind: "recall", stream, query: "cannot find lzeppelin", budget: 100 })
      assert.strictEqual(hits.length, 1)
      const text = Message.textOf(hits[0]?.message ?? Message.user(""))
      assert.include(text, "linker cannot find -lzeppelin")
      assert.include(text, "…")
      assert.isAtMost(counter.countMessage(hits[0]?.message ?? Message.user("")), 100)
      assert.isAbove(counter.countMessage(hits[0]?.message ?? Message.user("")), 50)
      const strict = yield* Effect.flatMap(FullTextRecall.make({ minExcerptTokens: 0 }), (plain) =>
        plain.recall({ kind: "recall", stream, query: "cannot find lzeppelin", budget: 100 })
      )
      assert.deepStrictEqual(strict, [])
    })
  )

  it.effect("chunks documents and finds the chunk that answers", () =>
    Effect.gen(function* () {
      const index = yield* RecallIndex.RecallIndex
      const owner = freshStream("owner")
      const paragraphs = Array.from({ length: 8 }, (_, n) => `Section ${n}. ${"filler words here. ".repeat(6)}`)
      paragraphs[5] = "Section 5. The rollback command is ctxlog-undo --to-version."
      const { chunks } = yield* index.ingestDocument(owner, "manual", paragraphs.join("\n\n"))
      assert.isAbove(chunks, 3)
      const hits = yield* index.search({ scope: RecallIndex.documentsOf(owner), query: "rollback command" })
      assert.include(hits[0]?.text ?? "", "ctxlog-undo")
      assert.strictEqual(hits[0]?.documentId, "manual")
      assert.isTrue(hits.every((hit) => hit.text.length <= 200))
      const other = yield* index.search({ scope: RecallIndex.documentsOf(`${owner}-other`), query: "rollback command" })
      assert.deepStrictEqual(other, [])
    })
  )

  it.effect("a query with no searchable words finds nothing", () =>
    Effect.gen(function* () {
      const index = yield* RecallIndex.RecallIndex
      const ctx = yield* ContextService.ContextService
      const stream = freshStream("empty")
      yield* ctx.appendMessages(stream, [Message.user("anything at all")])
      assert.deepStrictEqual(yield* index.search({ scope: RecallIndex.inStream(stream), query: "  ?!  " }), [])
      // FTS syntax in a query is just words.
      const hits = yield* index.search({ scope: RecallIndex.inStream(stream), query: 'anything" OR NEAR(' })
      assert.strictEqual(hits.length, 1)
    })
  )
})
