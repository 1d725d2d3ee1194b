// A log an auditor accepts (issue 43, items 1 and 2), on SQLite and PostgreSQL: the tamper cases (an
// edit with the chain and the `streams` row recomputed; a truncation with the row fixed; a deleted middle
// event; a batch swapped between streams) are each caught on a signed log (naming the writer of the
// batch) and on an unkeyed log whose heads were anchored outside the database. Raw SQL plays the
// attacker with write access (triggers dropped); `LogReader.verify` is the auditor, holding only public
// keys and the anchor file.
import { EventHash, EventLog } from "@ctxlog/core"
import { sampleEvents } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Anchor, LogReader, PostgresEventLog, Signing, SqliteEventLog } from "../src/index.js"
import { disableTriggers, quote } from "./support/forge.js"
import { freshDatabase } from "./support/postgres.js"
import { postgresRawLayer, RawSql, sqliteRawLayer, tempFile } from "./support/stores.js"

type Raw = RawSql["Type"]

interface Target {
  readonly open: (
    options: Pick<SqliteEventLog.Options, "signer" | "anchor" | "hmacKey">
  ) => Effect.Effect<Context.Context<SqliteEventLog.Services>, unknown, Scope.Scope>
  readonly reader: Effect.Effect<LogReader.LogReader.Service, unknown, Scope.Scope>
  readonly raw: Effect.Effect<Raw, unknown, Scope.Scope>
}

const sqliteTarget: Effect.Effect<Target> = Effect.sync(() => {
  const filename = tempFile()
  return {
    open: (options) => SqliteEventLog.make({ ...options, filename }),
    reader: LogReader.makeSqlite({ filename, integrity: "unverified" }),
    raw: Effect.map(Layer.build(sqliteRawLayer(filename)), Context.get(RawSql))
  }
})

const postgresTarget: Effect.Effect<Target, unknown> = Effect.map(freshDatabase("signed"), (url) => ({
  open: (options) => PostgresEventLog.make({ ...options, url }),
  reader: LogReader.makePostgres({ url, integrity: "unverified" }),
  raw: Effect.map(Layer.build(postgresRawLayer(url)), Context.get(RawSql))
}))

const alice = Signing.generate("alice")
const bob = Signing.generate("bob")
const keyring = Signing.parseKeyring(Signing.formatKeyring([alice.entry, bob.entry]))

/** Stream "a" by alice and stream "b" by bob: batches of 2, 2 and 1 events each (versions 1-2, 3-4, 5). */
const writeSigned = (target: Target) =>
  Effect.gen(function* () {
    for (const [stream, key] of [
      ["a", alice],
      ["b", bob]
    ] as const) {
      const context = yield* target.open({ signer: Signing.signer(key.entry.writer, key.privateKeyPem) })
      const log = Context.get(context, EventLog.EventLog)
      yield* log.append(stream, sampleEvents(2, `${stream} one`), "no_stream")
      yield* log.append(stream, sampleEvents(2, `${stream} two`), 2)
      yield* log.append(stream, sampleEvents(1, `${stream} three`), 4)
    }
  })

/** The same streams unkeyed and unsigned, every head anchored to a file (every append). */
const writeAnchored = (target: Target) =>
  Effect.scoped(
    Effect.gen(function* () {
      const path = tempFile("anchors.jsonl")
      const context = yield* target.open({ anchor: { sink: Anchor.file(path), everyAppends: 1, everyMs: 0 } })
      const log = Context.get(context, EventLog.EventLog)
      for (const stream of ["a", "b"]) {
        yield* log.append(stream, sampleEvents(2, `${stream} one`), "no_stream")
        yield* log.append(stream, sampleEvents(2, `${stream} two`), 2)
        yield* log.append(stream, sampleEvents(1, `${stream} three`), 4)
      }
      return path
    })
  )

/** Recompute a stream's unkeyed chain from version 1 over what is stored, and fix its `streams` row to match. */
const rechain = (raw: Raw, stream: string) =>
  Effect.gen(function* () {
    const rows = yield* raw.rows(
      `select stream_version, event_id, type, schema_version, data from events where stream_id = ${quote(stream)} order by stream_version`
    )
    let previous = EventHash.genesis
    let version = 0
    for (const row of rows) {
      version = Number(row.stream_version)
      previous = EventHash.chain(previous, {
        stream,
        version,
        eventId: String(row.event_id),
        type: String(row.type),
        schemaVersion: Number(row.schema_version),
        data: String(row.data)
      })
      yield* raw.exec(
        `update events set hash = ${quote(previous)} where stream_id = ${quote(stream)} and stream_version = ${version}`
      )
    }
    yield* raw.exec(
      `update streams set version = ${version}, head_hash = ${quote(previous)} where stream_id = ${quote(stream)}`
    )
  })

/** The four tampers, each on stream "a" (and "b" for the swap), as an attacker with the database does them. */
const tampers = {
  "an event edited, the chain and the streams row recomputed": (raw: Raw) =>
    Effect.gen(function* () {
      yield* raw.exec(
        `update events set data = replace(data, 'a two', 'FORGED') where stream_id = 'a' and stream_version = 3`
      )
      yield* rechain(raw, "a")
    }),
  "the last event deleted, the streams row fixed": (raw: Raw) =>
    Effect.gen(function* () {
      yield* raw.exec(`delete from events where stream_id = 'a' and stream_version = 5`)
      yield* rechain(raw, "a")
    }),
  "a middle event deleted": (raw: Raw) => raw.exec(`delete from events where stream_id = 'a' and stream_version = 3`),
  "a batch swapped between streams, both chains and rows recomputed": (raw: Raw) =>
    Effect.gen(function* () {
      // a's versions 3-4 go to b and b's to a, through a parking stream (the unique index on versions).
      yield* raw.exec(
        `insert into streams (stream_id, version, head_hash, created_at, updated_at) values ('x', 0, '', 0, 0)`
      )
      for (const [from, to] of [
        ["a", "x"],
        ["b", "a"],
        ["x", "b"]
      ] as const) {
        yield* raw.exec(
          `update events set stream_id = ${quote(to)} where stream_id = ${quote(from)} and stream_version in (3, 4)`
        )
        yield* raw.exec(
          `update batch_signatures set stream_id = ${quote(to)} where stream_id = ${quote(from)} and first_version = 3`
        )
      }
      yield* raw.exec(`delete from streams where stream_id = 'x'`)
      yield* rechain(raw, "a")
      yield* rechain(raw, "b")
    })
} as const

const targets = [
  ["SQLite", sqliteTarget],
  ["PostgreSQL", postgresTarget]
] as const

for (const [label, makeTarget] of targets) {
  describe(`${label}: signed batches and anchored heads`, () => {
    for (const [name, tamper] of Object.entries(tampers)) {
      it.scoped(`${name}: caught on a signed log, naming the writer; caught on an anchored unkeyed log`, () =>
        Effect.gen(function* () {
          // Signed.
          const signedTarget = yield* makeTarget
          yield* writeSigned(signedTarget)
          const signedReader = yield* signedTarget.reader
          const honest = yield* signedReader.verify("a", { keyring })
          assert.deepStrictEqual(honest.integrity.problems, [])
          assert.deepStrictEqual(
            honest.integrity.batches?.map((batch) => [
              batch.firstVersion,
              batch.lastVersion,
              batch.writer,
              batch.status
            ]),
            [
              [1, 2, "alice", "ok"],
              [3, 4, "alice", "ok"],
              [5, 5, "alice", "ok"]
            ]
          )
          const raw = yield* signedTarget.raw
          yield* disableTriggers(raw)
          yield* tamper(raw)
          const signed = yield* signedReader.verify("a", { keyring })
          const signatureProblems = signed.integrity.problems.filter((problem) => problem.check === "signature")
          assert.isAbove(signatureProblems.length, 0, JSON.stringify(signed.integrity.problems))
          // The problem names the writer of the batch that no longer verifies.
          assert.isTrue(
            signatureProblems.some((problem) => problem.detail.includes('signed by "alice"')),
            JSON.stringify(signatureProblems)
          )

          // Anchored, unkeyed, unsigned.
          const anchoredTarget = yield* makeTarget
          const path = yield* writeAnchored(anchoredTarget)
          const anchors = Anchor.byStream(yield* Anchor.read(path))
          const anchoredReader = yield* anchoredTarget.reader
          assert.deepStrictEqual(
            (yield* anchoredReader.verify("a", { anchors: anchors.get("a") })).integrity.problems,
            []
          )
          const anchoredRaw = yield* anchoredTarget.raw
          yield* disableTriggers(anchoredRaw)
          yield* tamper(anchoredRaw)
          const anchored = yield* anchoredReader.verify("a", { anchors: anchors.get("a") })
          assert.isAbove(anchored.integrity.problems.length, 0)
          // Where the unkeyed chain is consistent again (the attacker recomputed it), the anchor catches it.
          const unkeyedAlone = yield* anchoredReader.verify("a")
          if (unkeyedAlone.integrity.problems.length === 0) {
            assert.isTrue(
              anchored.integrity.problems.some((problem) => problem.check === "anchor"),
              JSON.stringify(anchored.integrity.problems)
            )
          }
        })
      )
    }

    it.scoped(
      "without the anchor the recomputed chain and the fixed truncation pass the unkeyed check (the control)",
      () =>
        Effect.gen(function* () {
          const target = yield* makeTarget
          const path = yield* writeAnchored(target)
          const raw = yield* target.raw
          yield* disableTriggers(raw)
          yield* tampers["an event edited, the chain and the streams row recomputed"](raw)
          yield* tampers["the last event deleted, the streams row fixed"](raw)
          const reader = yield* target.reader
          assert.deepStrictEqual((yield* reader.verify("a")).integrity.problems, [])
          const anchors = Anchor.byStream(yield* Anchor.read(path)).get("a")
          const details = (yield* reader.verify("a", { anchors })).integrity.problems.map((problem) => problem.detail)
          assert.isTrue(
            details.some((detail) => detail.includes("chain recomputed")),
            details.join("; ")
          )
          assert.isTrue(
            details.some((detail) => detail.includes("a truncation or a rollback")),
            details.join("; ")
          )
        })
    )

    it.scoped(
      "a whole last batch removed with its signature row is a consistent shorter signed log: only an anchor catches it",
      () =>
        Effect.gen(function* () {
          const target = yield* makeTarget
          const path = tempFile("anchors.jsonl")
          yield* Effect.scoped(
            Effect.gen(function* () {
              const context = yield* target.open({
                signer: Signing.signer("alice", alice.privateKeyPem),
                anchor: { sink: Anchor.file(path), everyAppends: 1, everyMs: 0 }
              })
              const log = Context.get(context, EventLog.EventLog)
              yield* log.append("a", sampleEvents(2), "no_stream")
              yield* log.append("a", sampleEvents(1), 2)
            })
          )
          const raw = yield* target.raw
          yield* disableTriggers(raw)
          yield* raw.exec(`delete from events where stream_id = 'a' and stream_version = 3`)
          yield* raw.exec(`delete from batch_signatures where stream_id = 'a' and first_version = 3`)
          yield* rechain(raw, "a")
          const reader = yield* target.reader
          assert.deepStrictEqual((yield* reader.verify("a", { keyring })).integrity.problems, [])
          const anchors = Anchor.byStream(yield* Anchor.read(path)).get("a")
          const caught = yield* reader.verify("a", { keyring, anchors })
          assert.deepStrictEqual(
            caught.integrity.problems.map((problem) => [problem.check, problem.version]),
            [["anchor", 3]]
          )
        })
    )

    it.scoped("key rotation: batches signed with a writer's old and new keys both verify and name the writer", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        const old = Signing.generate("carol")
        const fresh = Signing.generate("carol")
        yield* Effect.scoped(
          Effect.flatMap(target.open({ signer: Signing.signer("carol", old.privateKeyPem) }), (context) =>
            Context.get(context, EventLog.EventLog).append("c", sampleEvents(2), "no_stream")
          )
        )
        yield* Effect.scoped(
          Effect.flatMap(target.open({ signer: Signing.signer("carol", fresh.privateKeyPem) }), (context) =>
            Context.get(context, EventLog.EventLog).append("c", sampleEvents(2), 2)
          )
        )
        const reader = yield* target.reader
        const both = Signing.parseKeyring(Signing.formatKeyring([old.entry, fresh.entry]))
        const rotated = yield* reader.verify("c", { keyring: both })
        assert.deepStrictEqual(rotated.integrity.problems, [])
        assert.deepStrictEqual(
          rotated.integrity.batches?.map((batch) => [batch.writer, batch.keyId, batch.status]),
          [
            ["carol", old.entry.keyId, "ok"],
            ["carol", fresh.entry.keyId, "ok"]
          ]
        )
        // The old key dropped from the keyring: its batch is signed by an unknown key.
        const onlyNew = yield* reader.verify("c", {
          keyring: Signing.parseKeyring(Signing.formatKeyring([fresh.entry]))
        })
        assert.deepStrictEqual(
          onlyNew.integrity.problems.map((problem) => [problem.check, problem.version]),
          [["signature", 1]]
        )
        assert.include(onlyNew.integrity.problems[0]?.detail, 'signed by "carol"')
        assert.include(onlyNew.integrity.problems[0]?.detail, "not in the keyring")
        // Revoked: every batch the key signed is rejected, naming the writer and the revocation.
        const revoked = yield* reader.verify("c", {
          keyring: Signing.parseKeyring(
            Signing.formatKeyring([{ ...old.entry, revoked: "2026-11-28: laptop stolen" }, fresh.entry])
          )
        })
        assert.deepStrictEqual(
          revoked.integrity.batches?.map((batch) => batch.status),
          ["revoked", "ok"]
        )
        assert.include(revoked.integrity.problems[0]?.detail, "revoked (2026-11-28: laptop stolen)")
        // A key listed for another writer than the batch names.
        const misnamed = yield* reader.verify("c", {
          keyring: Signing.parseKeyring(Signing.formatKeyring([old.entry, { ...fresh.entry, writer: "mallory" }]))
        })
        assert.deepStrictEqual(
          misnamed.integrity.batches?.map((batch) => batch.status),
          ["ok", "wrong-writer"]
        )
        // An unsigned batch appended later (a store opened without the key) is reported, with its versions.
        yield* Effect.scoped(
          Effect.flatMap(target.open({}), (context) =>
            Context.get(context, EventLog.EventLog).append("c", sampleEvents(1), 4)
          )
        )
        const unsigned = yield* reader.verify("c", { keyring: both })
        assert.deepStrictEqual(
          unsigned.integrity.problems.map((problem) => [problem.check, problem.version, problem.detail]),
          [["signature", 5, "version 5 is not in any signed batch (written unsigned, or the signature removed)"]]
        )
      })
    )

    it.scoped("a log written before signatures and anchors opens, verifies as before, and takes signed appends", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        yield* Effect.scoped(
          Effect.flatMap(target.open({}), (context) =>
            Context.get(context, EventLog.EventLog).append("old", sampleEvents(3), "no_stream")
          )
        )
        // The schema of the release before: migrations 0014 and 0015 (issue 43) only add tables.
        const raw = yield* target.raw
        yield* raw.exec("drop table batch_signatures")
        yield* raw.exec("drop table subject_keys")
        yield* raw.exec("drop table subject_erasures")
        // 0016 came later: empty on PostgreSQL (whose migrator wants the names in order), a rebuild of
        // `events` on SQLite that this older file has had already (eventPositions.test.ts covers its upgrade).
        const later = raw.dialect === "postgres" ? ", '0016_event_positions'" : ""
        yield* raw.exec(
          `delete from kysely_migration where name in ('0014_batch_signatures', '0015_subject_erasure'${later})`
        )
        const before = yield* Effect.scoped(Effect.flatMap(target.reader, (reader) => reader.verify("old")))
        assert.deepStrictEqual(before.integrity.problems, [])
        assert.deepStrictEqual(before.integrity.batches, [])
        assert.strictEqual(before.integrity.head?.version, 3)
        // A current store migrates it in place and appends, signed.
        yield* Effect.scoped(
          Effect.flatMap(target.open({ signer: Signing.signer("alice", alice.privateKeyPem) }), (context) =>
            Context.get(context, EventLog.EventLog).append("old", sampleEvents(2), 3)
          )
        )
        const reader = yield* target.reader
        const after = yield* reader.verify("old")
        assert.deepStrictEqual(after.integrity.problems, [])
        assert.strictEqual(after.integrity.head?.version, 5)
        // With a keyring, the old unsigned events are named as unsigned; the new batch verifies, by alice.
        const audited = yield* reader.verify("old", { keyring })
        assert.deepStrictEqual(
          audited.integrity.problems.map((problem) => problem.detail),
          ["versions 1-3 are not in any signed batch (written unsigned, or the signature removed)"]
        )
        assert.deepStrictEqual(
          audited.integrity.batches?.map((batch) => [batch.firstVersion, batch.writer, batch.status]),
          [[4, "alice", "ok"]]
        )
      })
    )
  })
}
