// Issue 25 item 2: large tool outputs live once, content-addressed, in the log's database; the event and
// the window hold a handle with a preview; reads (whole or by lines) check the hash; tenancy, erasure and
// verify reach the store. On a SQLite file and on PostgreSQL.
import { ContextService, EventLog, Message, TokenCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type * as Scope from "effect/Scope"
import { Ctxlog, Erasure, FileStore, LogReader } from "../src/index.js"
import { freshDatabase } from "./support/postgres.js"
import { postgresRawLayer, RawSql, sqliteRawLayer, tempFile } from "./support/stores.js"

type Open = (owner?: string) => Layer.Layer<Ctxlog.Services, unknown>

const stores: ReadonlyArray<{
  readonly name: string
  readonly open: Effect.Effect<
    {
      readonly open: Open
      readonly raw: Layer.Layer<RawSql>
      /** The read-only, verifying reader the inspector uses (`ctxlog verify`). */
      readonly reader: Effect.Effect<LogReader.LogReader.Service, unknown, Scope.Scope>
    },
    unknown
  >
}> = [
  {
    name: "SQLite file",
    open: Effect.sync(() => {
      const filename = tempFile()
      return {
        open: (owner?: string) =>
          Ctxlog.sqlite({
            filename,
            tokenCounter: TokenCounter.layerHeuristic(4),
            owner
          }),
        raw: sqliteRawLayer(filename),
        reader: LogReader.makeSqlite({ filename })
      }
    })
  },
  {
    name: "PostgreSQL",
    open: Effect.map(freshDatabase("files"), (url) => ({
      open: (owner?: string) =>
        Ctxlog.postgres({
          url,
          tokenCounter: TokenCounter.layerHeuristic(4),
          owner
        }),
      raw: postgresRawLayer(url),
      reader: LogReader.makePostgres({ url })
    }))
  }
]

/** A 200 KB tool output: numbered lines, so ranges are checkable. */
const bigOutput = Array.from({ length: 4000 }, (_, i) => `line ${i + 1}: ${"x".repeat(40)}`).join("\n")

const turn = (content: string, id = "call-1"): ReadonlyArray<Message.MessageInput> => [
  Message.user("run the build"),
  Message.assistant("", [Message.toolCall(id, "run_command", { command: "npm run build" })]),
  Message.tool(id, content)
]

const resultOf = (messages: ReadonlyArray<{ readonly parts: ReadonlyArray<Message.Part> }>) =>
  messages.flatMap((message) => Message.toolResultsOf(message))[0]

for (const store of stores) {
  describe(`FileStore on ${store.name}`, () => {
    it.effect(
      "a 200 KB tool output: the event holds a handle; read whole and by lines; verify; erasure removes it",
      () =>
        Effect.gen(function* () {
          const { open, raw, reader } = yield* store.open
          assert.isAbove(Buffer.byteLength(bigOutput), 200_000)
          // What `ctxlog verify` reports for the stream: its stored-output problems (LogReader.verify).
          const readerProblems = Effect.scoped(
            Effect.flatMap(reader, (read) => read.verify("s")).pipe(
              Effect.map((verified) => verified.integrity.problems.filter((p) => p.check === "stored-output"))
            )
          ).pipe(Effect.orDie)
          yield* Effect.gen(function* () {
            const ctx = yield* ContextService.ContextService
            const files = yield* FileStore.FileStore
            const log = yield* EventLog.EventLog
            const inputs = yield* FileStore.offload("s", turn(bigOutput))
            const appended = yield* ctx.appendMessages("s", inputs)
            // The event holds the handle and the preview, not the output.
            const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("s"))).map(
              (envelope) => envelope.event
            )
            const stored = resultOf(
              events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message] : []))
            )
            const handle = stored === undefined ? undefined : FileStore.handleOf(stored)
            assert.isDefined(handle)
            if (handle === undefined || stored === undefined) return
            assert.strictEqual(handle.sha256, FileStore.sha256Of(bigOutput))
            assert.strictEqual(handle.bytes, Buffer.byteLength(bigOutput))
            assert.strictEqual(handle.lines, 4000)
            assert.strictEqual(handle.tokens, Math.ceil(bigOutput.length / 4))
            assert.isBelow(stored.content.length, 2_500)
            const [first, ...rest] = stored.content.split("\n")
            assert.strictEqual(first, FileStore.handleLine(handle))
            // A pruning stub keeps the first line (at most 100 characters): the stub points at the handle.
            assert.isAtMost(first?.length ?? 999, 100)
            assert.strictEqual(rest[0], `line 1: ${"x".repeat(40)}`)
            assert.include(stored.content, `read_output {"id":"${FileStore.shortId(handle.sha256)}"}`)
            // The window holds the same handle and counts only the preview.
            const window = appended.window
            const held = resultOf(window.history)
            assert.deepStrictEqual(held === undefined ? undefined : FileStore.handleOf(held), handle)
            // A pruning stub keeps the first line, which names the id the model reads it by.
            assert.strictEqual(
              FileStore.shortIdIn(`[tool output pruned: run_command, 9 chars] ${first}`),
              FileStore.shortId(handle.sha256)
            )
            assert.isBelow(window.tokens.total, 1_000)
            // Read whole (by the short id the model sees) and by a line range.
            const whole = yield* files.read("s", FileStore.shortId(handle.sha256))
            assert.strictEqual(whole.content, bigOutput)
            assert.strictEqual(whole.totalLines, 4000)
            const part = yield* files.read("s", handle.sha256, { fromLine: 10, toLine: 12 })
            assert.strictEqual(
              part.content,
              ["line 10", "line 11", "line 12"].map((l) => `${l}: ${"x".repeat(40)}`).join("\n")
            )
            assert.deepStrictEqual([part.fromLine, part.toLine], [10, 12])
            // Stored once: the same output again writes no second row.
            yield* ctx.appendMessages("s", yield* FileStore.offload("s", turn(bigOutput, "call-2")))
            assert.strictEqual((yield* files.list("s")).length, 1)
            // Bad requests are typed and name what was wrong.
            const bad = yield* Effect.either(files.read("s", "zz"))
            assert.isTrue(Either.isLeft(bad) && bad.left._tag === "InvalidFileRequest")
            const range = yield* Effect.either(files.read("s", handle.sha256, { fromLine: 5000 }))
            assert.isTrue(Either.isLeft(range) && range.left._tag === "InvalidFileRequest")
            const missing = yield* Effect.either(files.read("s", "0123456789abcdef"))
            assert.isTrue(Either.isLeft(missing) && missing.left._tag === "FileNotFound")
            // Small outputs stay inline.
            const small = yield* FileStore.offload("s", turn("ok", "call-3"))
            const smallResult = resultOf(small)
            assert.isUndefined(smallResult === undefined ? undefined : FileStore.handleOf(smallResult))
            assert.strictEqual(smallResult?.content, "ok")
            // verify: intact, then every referenced handle present.
            const referenced = FileStore.referencedIn((yield* ctx.load("s")).history)
            assert.deepStrictEqual(referenced, [handle])
            assert.deepStrictEqual(yield* files.verify("s", referenced), [])
            assert.deepStrictEqual(yield* readerProblems, [])
            // Changed behind ctxlog's back: verify and read both say so.
            yield* Effect.flatMap(RawSql, (sql) =>
              sql.exec("update files set content = 'tampered' where stream_id = 's'")
            ).pipe(Effect.provide(raw), Effect.orDie)
            const problems = yield* files.verify("s", referenced)
            assert.deepStrictEqual(
              problems.map((problem) => [problem.sha256, problem.check]),
              [[handle.sha256, "content-hash"]]
            )
            const seen = yield* readerProblems
            assert.strictEqual(seen.length, 1)
            assert.match(seen[0]?.detail ?? "", /its text was changed/)
            const corrupt = yield* Effect.either(files.read("s", handle.sha256))
            assert.isTrue(Either.isLeft(corrupt) && corrupt.left._tag === "FileCorrupted")
            // Audited erasure removes the stream's files with its events.
            const record = yield* Erasure.erase("s", { actor: "test", reason: "user asked" })
            assert.strictEqual(record.stream, "s")
            assert.deepStrictEqual(yield* files.list("s"), [])
            const gone = yield* Effect.either(files.read("s", handle.sha256))
            assert.isTrue(Either.isLeft(gone) && gone.left._tag === "FileNotFound")
            const after = yield* files.verify("s", referenced)
            assert.deepStrictEqual(
              after.map((problem) => problem.check),
              ["missing"]
            )
            const rows = yield* Effect.flatMap(RawSql, (sql) => sql.rows("select count(*) as n from files")).pipe(
              Effect.provide(raw),
              Effect.orDie
            )
            assert.strictEqual(Number(rows[0]?.n), 0)
          }).pipe(Effect.provide(open()))
        }),
      60_000
    )

    it.effect(
      "tenancy: a scoped store reads only its owner's files and cannot write into another owner's stream",
      () =>
        Effect.gen(function* () {
          const { open } = yield* store.open
          const sha = yield* Effect.gen(function* () {
            const ctx = yield* ContextService.ContextService
            const inputs = yield* FileStore.offload("alice-1", turn(bigOutput), { thresholdBytes: 1000 })
            yield* ctx.appendMessages("alice-1", inputs)
            const result = resultOf(inputs)
            const handle = result === undefined ? undefined : FileStore.handleOf(result)
            assert.isDefined(handle)
            assert.strictEqual((yield* FileStore.read("alice-1", handle?.sha256 ?? "")).content, bigOutput)
            return handle?.sha256 ?? ""
          }).pipe(Effect.provide(open("alice")))
          yield* Effect.gen(function* () {
            const files = yield* FileStore.FileStore
            const read = yield* Effect.either(files.read("alice-1", sha))
            assert.isTrue(Either.isLeft(read) && read.left._tag === "FileNotFound")
            const put = yield* Effect.either(files.put("alice-1", "bob's text"))
            assert.isTrue(Either.isLeft(put) && put.left._tag === "OwnerMismatch")
            assert.deepStrictEqual(yield* files.list("alice-1"), [])
          }).pipe(Effect.provide(open("bob")))
          // The administrator's view sees it.
          const admin = yield* FileStore.read("alice-1", sha).pipe(Effect.provide(open()))
          assert.strictEqual(admin.content, bigOutput)
        }),
      60_000
    )
  })
}
