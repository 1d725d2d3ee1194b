import {
  ContextService,
  EventHash,
  EventLog,
  Message,
  RecallSource,
  TokenCounter,
  Window,
  type WindowEvent,
  WindowRepository
} from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { assert, describe, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { RecallIndex, SnapshotRepository, SnapshotStore } from "../src/index.js"
import { countEvents, postgres, RawSql, sqliteFile, withContext } from "./support/stores.js"

const readAllOf = (stream: string) =>
  Effect.flatMap(EventLog.EventLog, (log) =>
    Stream.runCollect(log.read(stream)).pipe(Effect.map(Chunk.toReadonlyArray))
  )

const backends = [
  ["SQLite file", withContext(sqliteFile({ snapshotEvery: 5 }))],
  ["PostgreSQL", withContext(postgres("durable", { snapshotEvery: 5 }))]
] as const

for (const [label, live] of backends) {
  describe(label, () => {
    layer(live, { timeout: "120 seconds" })((it) => {
      it.effect("UPDATE and DELETE on events issued directly fail, and change nothing", () =>
        Effect.gen(function* () {
          const log = yield* EventLog.EventLog
          const raw = yield* RawSql
          const stream = freshStream()
          yield* log.append(stream, sampleEvents(2), "no_stream")
          const before = yield* countEvents
          const dataBefore = yield* raw.rows(
            `select data from events where stream_id = '${stream}' order by stream_version`
          )
          const update = yield* Effect.either(raw.exec(`update events set data = '{}' where stream_id = '${stream}'`))
          const remove = yield* Effect.either(raw.exec(`delete from events where stream_id = '${stream}'`))
          const removeAll = yield* Effect.either(raw.exec("delete from events"))
          assert.isTrue(Either.isLeft(update), "UPDATE must be rejected")
          assert.isTrue(Either.isLeft(remove), "DELETE must be rejected")
          assert.isTrue(Either.isLeft(removeAll), "DELETE of every row must be rejected")
          if (Either.isLeft(update)) assert.include(update.left, "append-only")
          if (Either.isLeft(remove)) assert.include(remove.left, "append-only")
          if (raw.dialect === "postgres") {
            const truncate = yield* Effect.either(raw.exec("truncate events cascade"))
            assert.isTrue(Either.isLeft(truncate), "TRUNCATE must be rejected")
          }
          assert.strictEqual(yield* countEvents, before)
          assert.deepStrictEqual(
            yield* raw.rows(`select data from events where stream_id = '${stream}' order by stream_version`),
            dataBefore
          )
        })
      )

      it.effect("10 concurrent appends at one expected version: one wins, nine conflict, row count +1 batch", () =>
        Effect.gen(function* () {
          const log = yield* EventLog.EventLog
          const stream = freshStream("race")
          yield* log.append(stream, sampleEvents(1), "no_stream")
          const before = yield* countEvents
          const results = yield* Effect.all(
            Array.from({ length: 10 }, (_, index) =>
              Effect.either(log.append(stream, sampleEvents(3, `r${index}`), 1))
            ),
            { concurrency: "unbounded" }
          )
          const conflicts = results.flatMap((result) =>
            Either.isLeft(result) && result.left._tag === "ConcurrencyConflict" ? [result.left] : []
          )
          assert.strictEqual(results.filter(Either.isRight).length, 1)
          assert.strictEqual(conflicts.length, 9)
          for (const conflict of conflicts) assert.strictEqual(conflict.actual, 4)
          assert.strictEqual(yield* countEvents, before + 3)
          assert.strictEqual(yield* log.version(stream), 4)
        })
      )

      it.effect("stores redacted bytes, hashes them, and keeps secrets out of the recall index", () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const index = yield* RecallIndex.RecallIndex
          const raw = yield* RawSql
          const stream = freshStream("secret")
          const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
          yield* ctx.appendMessages(stream, [
            Message.user(`my key is ${key} and the header is Authorization: Bearer abcdefghijklmnop.qrstuvwx`)
          ])
          const stored = yield* raw.rows(`select data from events where stream_id = '${stream}'`)
          const data = String(stored[0]?.data)
          assert.notInclude(data, key)
          assert.notInclude(data, "abcdefghijklmnop.qrstuvwx")
          assert.include(data, "[REDACTED:api-key]")
          assert.include(data, "Bearer [REDACTED]")
          const envelopes = yield* readAllOf(stream)
          const verified = EventHash.verify(envelopes.map((envelope) => ({ ...envelope, hash: envelope.hash })))
          assert.isTrue(verified.ok)
          const window = yield* ctx.load(stream)
          assert.notInclude(JSON.stringify(window), key)
          const hits = yield* index.search({ scope: RecallIndex.inStream(stream), query: key })
          assert.isTrue(hits.every((hit) => !hit.text.includes(key)))
        })
      )

      it.effect("reads long streams across pages, in order, from any version", () =>
        Effect.gen(function* () {
          const log = yield* EventLog.EventLog
          const stream = freshStream("long")
          const first = yield* log.append(stream, sampleEvents(700), "no_stream")
          yield* log.append(stream, sampleEvents(600), 700)
          const all = yield* readAllOf(stream)
          assert.deepStrictEqual(
            all.map((envelope) => envelope.version),
            Array.from({ length: 1300 }, (_, index) => index + 1)
          )
          assert.isTrue(EventHash.verify(all).ok)
          const tail = yield* Stream.runCollect(log.read(stream, { from: 450, to: 1201 })).pipe(
            Effect.map(Chunk.toReadonlyArray)
          )
          assert.strictEqual(tail.length, 752)
          assert.strictEqual(tail[0]?.version, 450)
          assert.strictEqual(tail[751]?.version, 1201)
          const global = yield* Stream.runCollect(
            log.readAll({ after: (first.lastPosition ?? 0) - 700, limit: 1100 })
          ).pipe(Effect.map(Chunk.toReadonlyArray))
          assert.strictEqual(global.length, 1100)
          assert.isTrue(
            global.every((envelope, index) => index === 0 || envelope.position > (global[index - 1]?.position ?? 0))
          )
        })
      )

      it.effect("keeps metadata and lists streams with counts and last activity", () =>
        Effect.gen(function* () {
          const log = yield* EventLog.EventLog
          const stream = freshStream("meta")
          yield* log.append(stream, sampleEvents(2), "no_stream", {
            actor: "agent",
            turn: 3,
            causationId: "c-1",
            correlationId: "k-1"
          })
          yield* log.append(stream, sampleEvents(1), 2)
          const [first] = yield* readAllOf(stream)
          assert.deepStrictEqual(first?.metadata, { actor: "agent", turn: 3, causationId: "c-1", correlationId: "k-1" })
          const info = (yield* log.streams()).find((candidate) => candidate.stream === stream)
          assert.strictEqual(info?.version, 3)
          assert.isTrue((info?.updatedAt ?? 0) >= (info?.createdAt ?? 1))
        })
      )

      it.effect("forkAt copies a stream up to a version into a new conversation", () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const repository = yield* WindowRepository.WindowRepository
          const stream = freshStream("fork-source")
          const into = freshStream("fork-copy")
          yield* ctx.setSystemPrompt(stream, "You are terse.")
          yield* ctx.appendMessages(stream, [Message.user("first"), Message.assistant("one")])
          const atThree = yield* ctx.load(stream)
          yield* ctx.appendMessages(stream, [Message.user("second")])
          const forked = yield* ctx.forkAt(stream, 3, into)
          assert.strictEqual(forked.window.version, 3)
          const loaded = yield* repository.load(into)
          assert.deepStrictEqual(
            Window.messages(loaded).map(Message.textOf),
            Window.messages(atThree).map(Message.textOf)
          )
          const copied = yield* readAllOf(into)
          assert.deepStrictEqual(
            copied.map((envelope) => envelope.metadata.actor),
            ["fork", "fork", "fork"]
          )
          const unknownVersion = yield* Effect.either(ctx.forkAt(stream, 9, freshStream("fork-bad")))
          assert.isTrue(Either.isLeft(unknownVersion) && unknownVersion.left._tag === "VersionNotFound")
          const existing = yield* Effect.either(ctx.forkAt(stream, 2, into))
          assert.isTrue(Either.isLeft(existing) && existing.left._tag === "ConcurrencyConflict")
        })
      )

      it.effect("snapshots from committed every N events; load = snapshot + tail equals a full replay", () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const repository = yield* WindowRepository.WindowRepository
          const snapshots = yield* SnapshotStore.SnapshotStore
          const stream = freshStream("snap")
          yield* ctx.appendMessages(stream, [Message.user("a"), Message.assistant("b"), Message.user("c")])
          const atThree = yield* repository.loadHeld(stream)
          yield* repository.committed(stream, atThree.window)
          // 3 events since none: not yet due (every 5).
          assert.isTrue(Option.isNone(yield* snapshots.latest(stream, SnapshotRepository.projection)))
          yield* ctx.appendMessages(stream, [Message.assistant("d"), Message.user("e"), Message.assistant("f")])
          const atSix = (yield* repository.catchUp(stream, atThree)).window
          assert.strictEqual(atSix.version, 6)
          yield* repository.committed(stream, atSix)
          const snapshot = Option.getOrThrow(yield* snapshots.latest(stream, SnapshotRepository.projection))
          assert.strictEqual(snapshot.version, 6)
          assert.strictEqual(snapshot.projectionVersion, SnapshotRepository.projectionVersion)
          assert.strictEqual(snapshot.stateHash, EventHash.sha256(snapshot.state))
          yield* ctx.appendMessages(stream, [Message.user("g")])
          const loaded = yield* repository.load(stream)
          const replayed = Window.replay((yield* readAllOf(stream)).map((envelope) => envelope.event))
          assert.deepStrictEqual(loaded, replayed)
          assert.strictEqual(loaded.version, 7)
          yield* repository.committed(stream, loaded)
          // Only 1 event past the snapshot: not yet due.
          assert.strictEqual(
            Option.getOrThrow(yield* snapshots.latest(stream, SnapshotRepository.projection)).version,
            6
          )
          // An older window never replaces a newer snapshot.
          yield* snapshots.save({
            stream,
            projection: SnapshotRepository.projection,
            projectionVersion: SnapshotRepository.projectionVersion,
            version: 3,
            state: JSON.stringify(atThree)
          })
          assert.strictEqual(
            Option.getOrThrow(yield* snapshots.latest(stream, SnapshotRepository.projection)).version,
            6
          )
        })
      )

      it.effect("snapshots by bytes appended since the last one", () =>
        Effect.gen(function* () {
          const log = yield* EventLog.EventLog
          const snapshots = yield* SnapshotStore.SnapshotStore
          const stream = freshStream("bytes")
          let appended = 0
          const repository = SnapshotRepository.make(log, snapshots, {
            every: 0,
            bytes: 1000,
            appendedBytes: () => appended
          })
          const empty = yield* repository.loadHeld(stream)
          yield* log.append(stream, sampleEvents(2), "no_stream")
          appended = 600
          yield* repository.committed(stream, (yield* repository.catchUp(stream, empty)).window)
          assert.isTrue(Option.isNone(yield* snapshots.latest(stream, SnapshotRepository.projection)))
          yield* log.append(stream, sampleEvents(1), 2)
          appended = 1200
          yield* repository.committed(stream, yield* repository.load(stream))
          assert.strictEqual(
            Option.getOrThrow(yield* snapshots.latest(stream, SnapshotRepository.projection)).version,
            3
          )
          // Counted again from the snapshot: 1,200 → 1,700 is not 1,000 more.
          yield* log.append(stream, sampleEvents(1), 3)
          appended = 1700
          yield* repository.committed(stream, yield* repository.load(stream))
          assert.strictEqual(
            Option.getOrThrow(yield* snapshots.latest(stream, SnapshotRepository.projection)).version,
            3
          )
        })
      )

      it.effect("a snapshot of another projection version is ignored and rebuilt", () =>
        Effect.gen(function* () {
          const log = yield* EventLog.EventLog
          const snapshots = yield* SnapshotStore.SnapshotStore
          const stream = freshStream("stale")
          yield* log.append(stream, sampleEvents(3), "no_stream")
          // A snapshot an older release wrote, with a state the current code must not trust.
          const bogus = yield* Window.encode({ ...Window.empty, version: 3 })
          yield* snapshots.save({
            stream,
            projection: SnapshotRepository.projection,
            projectionVersion: SnapshotRepository.projectionVersion - 1,
            version: 3,
            state: JSON.stringify(bogus)
          })
          const repository = SnapshotRepository.make(log, snapshots, { every: 1000 })
          const loaded = yield* repository.load(stream)
          assert.strictEqual(loaded.history.length, 3)
          assert.deepStrictEqual(loaded, Window.replay((yield* readAllOf(stream)).map((envelope) => envelope.event)))
          // The next committed window replaces it at once, whatever the policy says.
          yield* repository.committed(stream, loaded)
          const rebuilt = Option.getOrThrow(yield* snapshots.latest(stream, SnapshotRepository.projection))
          assert.strictEqual(rebuilt.projectionVersion, SnapshotRepository.projectionVersion)
          assert.strictEqual(rebuilt.version, 3)
          assert.deepStrictEqual(yield* repository.load(stream), loaded)
        })
      )

      it.effect("an edited snapshot fails the load naming stream and version (or is rebuilt when asked)", () =>
        Effect.gen(function* () {
          const log = yield* EventLog.EventLog
          const snapshots = yield* SnapshotStore.SnapshotStore
          const raw = yield* RawSql
          const stream = freshStream("tamper")
          yield* log.append(stream, sampleEvents(4), "no_stream")
          const strict = SnapshotRepository.make(log, snapshots, { every: 1 })
          const honest = yield* strict.load(stream)
          yield* strict.committed(stream, honest)
          assert.strictEqual(
            Option.getOrThrow(yield* snapshots.latest(stream, SnapshotRepository.projection)).version,
            4
          )
          // Edit a message's text in place (the stored hash no longer matches).
          const edited = JSON.stringify(honest).replace('"text":"', '"text":"EDITED ')
          assert.notStrictEqual(edited, JSON.stringify(honest))
          yield* raw.exec(
            `update snapshots set state = '${edited.replaceAll("'", "''")}' where stream_id = '${stream}'`
          )
          const failed = yield* Effect.either(strict.load(stream))
          assert.isTrue(Either.isLeft(failed))
          if (Either.isLeft(failed)) {
            assert.strictEqual(failed.left._tag, "TamperDetected")
            assert.include(failed.left.message, stream)
            assert.include(failed.left.message, "version 4")
            assert.include(failed.left.message, "hash")
          }
          const lenient = SnapshotRepository.make(log, snapshots, { every: 1000, onMismatch: "rebuild" })
          const rebuilt = yield* lenient.load(stream)
          assert.deepStrictEqual(rebuilt, honest)
          assert.notInclude(JSON.stringify(rebuilt), "EDITED")
          // The next committed window replaces the edited row, whatever the policy: the strict one loads again.
          yield* lenient.committed(stream, rebuilt)
          assert.deepStrictEqual(yield* strict.load(stream), honest)
        })
      )

      it.effect(
        "a snapshot's state reads in either stored form (deflated, or its JSON text as before migration 0010); bytes that do not inflate fail the load",
        () =>
          Effect.gen(function* () {
            const log = yield* EventLog.EventLog
            const snapshots = yield* SnapshotStore.SnapshotStore
            const raw = yield* RawSql
            const stream = freshStream("stored-form")
            yield* log.append(stream, sampleEvents(4), "no_stream")
            const strict = SnapshotRepository.make(log, snapshots, { every: 1 })
            const honest = yield* strict.load(stream)
            yield* strict.committed(stream, honest)
            const [kind] = yield* raw.rows(
              label === "SQLite file"
                ? `select typeof(state) as kind from snapshots where stream_id = '${stream}'`
                : `select 'text' as kind from snapshots where stream_id = '${stream}'`
            )
            assert.strictEqual(kind?.kind, label === "SQLite file" ? "blob" : "text")
            // The same window as JSON text, its seal untouched: it loads (the seal covers the text).
            const text = JSON.stringify(honest)
            yield* raw.exec(
              `update snapshots set state = '${text.replaceAll("'", "''")}' where stream_id = '${stream}'`
            )
            assert.strictEqual(
              Option.getOrThrow(yield* snapshots.latest(stream, SnapshotRepository.projection)).state,
              text
            )
            assert.deepStrictEqual(yield* strict.load(stream), honest)
            if (label !== "SQLite file") return
            // Bytes that are not a deflated state read as no state: the seal does not match.
            yield* raw.exec(`update snapshots set state = x'00ff11' where stream_id = '${stream}'`)
            const failed = yield* Effect.either(strict.load(stream))
            assert.isTrue(Either.isLeft(failed) && failed.left._tag === "TamperDetected")
          })
      )

      it.effect("recall stays in its scope: stream, owner (never another owner), documents", () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const index = yield* RecallIndex.RecallIndex
          const recall = yield* RecallSource.RecallSource
          const alice1 = freshStream("alice")
          const alice2 = freshStream("alice")
          const bob = freshStream("bob")
          const alice = `alice-${alice1}`
          const bobOwner = `bob-${bob}`
          yield* index.setOwner(alice1, alice)
          yield* index.setOwner(alice2, alice)
          yield* index.setOwner(bob, bobOwner)
          yield* ctx.appendMessages(alice1, [Message.user("The deployment uses the zeppelin cluster in Frankfurt")])
          yield* ctx.appendMessages(alice2, [Message.user("What about the weather today?")])
          yield* ctx.appendMessages(bob, [Message.user("Bob also talks about the zeppelin cluster in Frankfurt")])
          assert.deepStrictEqual(Option.getOrUndefined(yield* index.ownerOf(alice1)), alice)
          assert.deepStrictEqual(
            (yield* index.streamsOf(alice)).map((info) => info.stream).sort(),
            [alice1, alice2].sort()
          )

          const inStream = yield* recall.recall({
            kind: "recall",
            stream: alice1,
            query: "zeppelin cluster",
            budget: 500
          })
          assert.strictEqual(inStream.length, 1)
          assert.strictEqual(inStream[0]?.source?.stream, alice1)

          const cross = yield* recall.recall({ kind: "cross_session", stream: alice2, query: "zeppelin", budget: 500 })
          assert.deepStrictEqual(
            cross.map((hit) => hit.source?.stream),
            [alice1]
          )
          const crossExplicit = yield* recall.recall({
            kind: "cross_session",
            stream: alice2,
            owner: alice,
            query: "zeppelin Frankfurt",
            budget: 500
          })
          assert.isTrue(crossExplicit.every((hit) => hit.source?.stream !== bob))
          const unowned = yield* recall.recall({
            kind: "cross_session",
            stream: freshStream("nobody"),
            query: "zeppelin",
            budget: 500
          })
          assert.deepStrictEqual(unowned, [])

          yield* index.ingestDocument(
            alice,
            "runbook",
            "Restarting the zeppelin cluster: drain nodes first.\n\nThen reboot."
          )
          yield* index.ingestDocument(bobOwner, "bob-notes", "zeppelin secrets of bob")
          const docs = yield* recall.recall({
            kind: "document_rag",
            stream: alice1,
            query: "zeppelin drain",
            budget: 500
          })
          assert.strictEqual(docs.length, 1)
          assert.include(Message.textOf(docs[0]?.message ?? Message.user("")), "drain nodes first")
          // Re-ingesting replaces the chunks.
          yield* index.ingestDocument(alice, "runbook", "Nothing about that anymore.")
          const replaced = yield* recall.recall({
            kind: "document_rag",
            stream: alice1,
            query: "zeppelin",
            budget: 500
          })
          assert.deepStrictEqual(replaced, [])
          const invalid = yield* Effect.either(index.ingestDocument(alice, "", "text"))
          assert.isTrue(Either.isLeft(invalid) && invalid.left._tag === "InvalidDocument")
        })
      )

      it.effect("recall respects the token budget, best hits first", () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const recall = yield* RecallSource.RecallSource
          const stream = freshStream("budget")
          yield* ctx.appendMessages(
            stream,
            Array.from({ length: 12 }, (_, index) => Message.user(`note ${index} about the quartz migration plan`))
          )
          const all = yield* recall.recall({ kind: "recall", stream, query: "quartz migration", budget: 10_000 })
          assert.strictEqual(all.length, 12)
          const some = yield* recall.recall({ kind: "recall", stream, query: "quartz migration", budget: 60 })
          assert.isAbove(some.length, 0)
          assert.isBelow(some.length, 12)
          const counter = yield* TokenCounter.TokenCounter
          assert.isAtMost(
            some.reduce((total, hit) => total + counter.countMessage(hit.message), 0),
            60
          )
          const injected = yield* ctx.injectSemanticRecall(stream, "quartz migration", 60)
          const recalled = injected.window.knowledge.filter((message) => message.kind === "recall")
          assert.isAtMost(
            recalled.reduce((total, message) => total + message.tokens, 0),
            60
          )
          assert.strictEqual(recalled.length, some.length)
        })
      )

      it.effect("facts are indexed from the log and found by entity mention", () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const index = yield* RecallIndex.RecallIndex
          const recall = yield* RecallSource.RecallSource
          const stream = freshStream("facts")
          const facts: ReadonlyArray<WindowEvent.Fact> = [
            { subject: "Ada Lovelace", predicate: "works on", object: "Analytical Engine", sourceMessageId: "m1" },
            {
              subject: "Analytical Engine",
              predicate: "designed by",
              object: "Charles Babbage",
              sourceMessageId: null
            },
            { subject: "Grace Hopper", predicate: "wrote", object: "COBOL", sourceMessageId: null }
          ]
          yield* ctx.run(stream, () => Either.right([{ _tag: "FactsRecorded", facts }]))
          const found = yield* index.factsFor({ _tag: "Stream", stream }, "What did ada lovelace build?")
          assert.deepStrictEqual(
            found.map((fact) => fact.object),
            ["Analytical Engine"]
          )
          const both = yield* index.factsFor({ _tag: "Stream", stream }, "Ada Lovelace and the Analytical Engine")
          assert.deepStrictEqual(both[0]?.subject, "Ada Lovelace")
          assert.strictEqual(both[0]?.mentions, 2)
          assert.strictEqual(both.length, 2)
          assert.deepStrictEqual(yield* index.factsFor({ _tag: "Stream", stream }, "nothing relevant"), [])
          // "Engine" alone is not the entity "Analytical Engine"; "COBOLT" is not "COBOL".
          assert.deepStrictEqual(yield* index.factsFor({ _tag: "Stream", stream }, "COBOLT engine"), [])
          const hits = yield* recall.recall({ kind: "graph_facts", stream, query: "Who is Grace Hopper?", budget: 100 })
          assert.deepStrictEqual(
            hits.map((hit) => Message.textOf(hit.message)),
            ["Grace Hopper wrote COBOL"]
          )
          const window = yield* ctx.load(stream)
          assert.strictEqual(window.version, 1)
        })
      )
    })
  })
}
