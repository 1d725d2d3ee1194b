// Tamper evidence on both durable backends (issue 15, item 4): with an HMAC key, an event rewritten and
// the chain recomputed without the key fails the load; deleted last events fail the load; an edited
// snapshot and an edited event in the tail after it fail the load naming stream and version; a store
// opened with another key, or without the key, refuses the stream; "unverified" loads skip the checks.
import { ContextService, EventHash, EventLog, Message, type Window, WindowRepository } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Ctxlog, PostgresEventLog, SnapshotRepository, SnapshotStore, SqliteEventLog } from "../src/index.js"
import * as SnapshotState from "../src/internal/snapshotState.js"
import { disableTriggers, forgeEvent, quote } from "./support/forge.js"
import { freshDatabase } from "./support/postgres.js"
import { postgresRawLayer, RawSql, sqliteRawLayer, tempFile } from "./support/stores.js"

const key = "tamper-test-key: 32 bytes of secret"
const otherKey = "another key entirely"

type Options = Pick<SqliteEventLog.Options, "hmacKey" | "integrity" | "snapshotEvery">

/** One database, opened as often as a test needs, plus raw SQL on it. */
interface Target {
  readonly open: (options: Options) => Effect.Effect<Context.Context<SqliteEventLog.Services>, unknown, Scope.Scope>
  readonly raw: Effect.Effect<RawSql["Type"], unknown, Scope.Scope>
}

const sqliteTarget: Effect.Effect<Target> = Effect.sync(() => {
  const filename = tempFile()
  return {
    open: (options) => SqliteEventLog.make({ ...options, filename }),
    raw: Effect.map(Layer.build(sqliteRawLayer(filename)), Context.get(RawSql))
  }
})

const postgresTarget: Effect.Effect<Target, EventLog.StoreError> = Effect.map(freshDatabase("tamper"), (url) => ({
  open: (options) => PostgresEventLog.make({ ...options, url }),
  raw: Effect.map(Layer.build(postgresRawLayer(url)), Context.get(RawSql))
}))

/** The log and a fresh repository (nothing cached) of a store opened with `options`. */
const services = (target: Target, options: Options) =>
  Effect.map(target.open(options), (context) => {
    const log = Context.get(context, EventLog.EventLog)
    return {
      log,
      repository: Context.get(context, WindowRepository.WindowRepository),
      snapshots: Context.get(context, SnapshotStore.SnapshotStore),
      /** A repository that snapshots every committed window. */
      eager: SnapshotRepository.make(log, Context.get(context, SnapshotStore.SnapshotStore), {
        every: 1,
        hmacKey: options.hmacKey
      })
    }
  })

/** Rewrite the text of the event at `version`, then recompute the UNKEYED chain from there to the head. */
const rewriteAndRechain = (raw: RawSql["Type"], stream: string, version: number) =>
  Effect.gen(function* () {
    const last = yield* forgeEvent(raw, stream, version, "hello", "unkeyed")
    // The stream row too, keeping whatever key id it showed.
    const [head] = yield* raw.rows(`select head_hash from streams where stream_id = ${quote(stream)}`)
    const keyId = EventHash.parseHead(String(head?.head_hash)).keyId
    const stored = keyId === undefined ? last : `${EventHash.keyedPrefix}${keyId}:${last}`
    yield* raw.exec(`update streams set head_hash = ${quote(stored)} where stream_id = ${quote(stream)}`)
  })

/** The load's failure, which must be a `TamperDetected` naming `stream` and `version`. */
const expectTamper = (
  loaded: Either.Either<Window.Window, WindowRepository.LoadError>,
  stream: string,
  version: number,
  detail: string
) => {
  assert.isTrue(Either.isLeft(loaded), "the load must fail")
  if (Either.isLeft(loaded)) {
    assert.strictEqual(loaded.left._tag, "TamperDetected", loaded.left.message)
    if (loaded.left._tag === "TamperDetected") {
      assert.strictEqual(loaded.left.stream, stream)
      assert.strictEqual(loaded.left.version, version)
    }
    assert.include(loaded.left.message, `stream "${stream}" version ${version}`)
    assert.include(loaded.left.message, detail)
  }
}

const textOf = (window: Window.Window) => JSON.stringify(window.history)

const targets = [
  ["SQLite file", sqliteTarget],
  ["PostgreSQL", postgresTarget]
] as const

for (const [label, makeTarget] of targets) {
  describe(`${label}: tamper evidence`, () => {
    it.scoped(
      "an event rewritten and the chain recomputed without the key: the keyed load fails naming stream and version (the unkeyed one cannot tell)",
      () =>
        Effect.gen(function* () {
          const target = yield* makeTarget
          const raw = yield* target.raw
          const keyed = freshStream("keyed")
          const plain = freshStream("plain")
          const writer = yield* services(target, { hmacKey: key })
          yield* writer.log.append(keyed, sampleEvents(6), "no_stream")
          const honest = yield* writer.repository.load(keyed)
          const unkeyedWriter = yield* services(target, {})
          yield* unkeyedWriter.log.append(plain, sampleEvents(6), "no_stream")
          yield* disableTriggers(raw)
          yield* rewriteAndRechain(raw, keyed, 3)
          yield* rewriteAndRechain(raw, plain, 3)

          const reader = yield* services(target, { hmacKey: key })
          expectTamper(yield* Effect.either(reader.repository.load(keyed)), keyed, 3, "hash-chain link")
          // Without a key the forged chain is consistent: the load serves the forgery. This is what the
          // key is for.
          const unkeyedReader = yield* services(target, {})
          const forged = yield* unkeyedReader.repository.load(plain)
          assert.include(textOf(forged), "FORGED")
          assert.notInclude(textOf(honest), "FORGED")
        })
    )

    it.scoped(
      "a store opened with another key, or without the key, refuses a keyed stream; a keyed one refuses an unkeyed stream",
      () =>
        Effect.gen(function* () {
          const target = yield* makeTarget
          const keyed = freshStream("keyed")
          const plain = freshStream("plain")
          const writer = yield* services(target, { hmacKey: key })
          yield* writer.log.append(keyed, sampleEvents(3), "no_stream")
          const unkeyedWriter = yield* services(target, {})
          yield* unkeyedWriter.log.append(plain, sampleEvents(3), "no_stream")

          const wrong = yield* services(target, { hmacKey: otherKey })
          expectTamper(yield* Effect.either(wrong.repository.load(keyed)), keyed, 1, "another HMAC key")
          const refused = yield* Effect.either(wrong.log.append(keyed, sampleEvents(1), 3))
          assert.isTrue(Either.isLeft(refused))
          if (Either.isLeft(refused)) {
            assert.strictEqual(refused.left._tag, "StoreError")
            assert.include(
              refused.left.message,
              `stream "${keyed}" at version 3: the stream was keyed with another key`
            )
          }

          const none = yield* services(target, {})
          expectTamper(yield* Effect.either(none.repository.load(keyed)), keyed, 1, "hash-chain link")
          const noKey = yield* Effect.either(none.log.append(keyed, sampleEvents(1), 3))
          assert.isTrue(Either.isLeft(noKey))
          if (Either.isLeft(noKey)) assert.include(noKey.left.message, "the stream is HMAC-keyed")

          const keyedOnPlain = yield* Effect.either(writer.log.append(plain, sampleEvents(1), 3))
          assert.isTrue(Either.isLeft(keyedOnPlain))
          if (Either.isLeft(keyedOnPlain)) assert.include(keyedOnPlain.left.message, "written without an HMAC key")
          // Nothing was written by the refused appends, and the right key still loads and appends.
          assert.strictEqual(yield* writer.log.version(keyed), 3)
          assert.strictEqual(yield* writer.log.version(plain), 3)
          yield* writer.log.append(keyed, sampleEvents(1), 3)
          assert.strictEqual((yield* (yield* services(target, { hmacKey: key })).repository.load(keyed)).version, 4)
        })
    )

    it.scoped("deleting the last events fails the load naming stream and version; unverified loads what is left", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        const raw = yield* target.raw
        const stream = freshStream("truncated")
        const writer = yield* services(target, { hmacKey: key })
        yield* writer.log.append(stream, sampleEvents(6), "no_stream")
        yield* disableTriggers(raw)
        yield* raw.exec(`delete from events where stream_id = ${quote(stream)} and stream_version > 4`)
        const reader = yield* services(target, { hmacKey: key })
        expectTamper(yield* Effect.either(reader.repository.load(stream)), stream, 5, "events deleted")
        const fast = yield* services(target, { hmacKey: key, integrity: "unverified" })
        assert.strictEqual((yield* fast.repository.load(stream)).version, 4)
      })
    )

    it.scoped("an edited snapshot (re-hashed without the key) fails the load; unverified loads it", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        const raw = yield* target.raw
        const stream = freshStream("snapshot")
        const writer = yield* services(target, { hmacKey: key })
        yield* writer.log.append(stream, sampleEvents(4), "no_stream")
        yield* writer.eager.committed(stream, yield* writer.eager.load(stream))
        const [row] = yield* raw.rows(`select state, state_hash from snapshots where stream_id = ${quote(stream)}`)
        assert.isTrue(String(row?.state_hash).startsWith(EventHash.keyedPrefix), "a keyed store seals with the key")
        // SQLite keeps the state deflated (a BLOB), PostgreSQL as TEXT; the edit is written back as TEXT,
        // which both read.
        const stored: unknown = row?.state
        const state = stored instanceof Uint8Array ? SnapshotState.decode(stored) : String(stored)
        assert.include(state, "hello")
        const edited = state.replaceAll("hello", "EDITED")
        // The attacker recomputes the unkeyed hash, then tries a seal under a key of their own.
        yield* raw.exec(
          `update snapshots set state = ${quote(edited)}, state_hash = ${quote(EventHash.sha256(edited))} where stream_id = ${quote(stream)}`
        )
        const reader = yield* services(target, { hmacKey: key })
        expectTamper(yield* Effect.either(reader.repository.load(stream)), stream, 4, "not sealed with the HMAC key")
        const [anchor] = yield* raw.rows(
          `select hash from events where stream_id = ${quote(stream)} and stream_version = 4`
        )
        const forgedSeal = EventHash.seal(
          {
            stream,
            projection: SnapshotRepository.projection,
            projectionVersion: SnapshotRepository.projectionVersion,
            version: 4,
            anchor: String(anchor?.hash),
            state: edited
          },
          otherKey
        )
        yield* raw.exec(`update snapshots set state_hash = ${quote(forgedSeal)} where stream_id = ${quote(stream)}`)
        expectTamper(
          yield* Effect.either((yield* services(target, { hmacKey: key })).repository.load(stream)),
          stream,
          4,
          "does not match its seal"
        )
        const fast = yield* services(target, { hmacKey: key, integrity: "unverified" })
        assert.include(textOf(yield* fast.repository.load(stream)), "EDITED")
      })
    )

    for (const keyed of [true, false]) {
      it.scoped(
        `an edited event in the tail after a snapshot fails the load naming stream and version (${keyed ? "keyed" : "unkeyed"}); unverified loads it`,
        () =>
          Effect.gen(function* () {
            const target = yield* makeTarget
            const raw = yield* target.raw
            const stream = freshStream("tail")
            const options: Options = keyed ? { hmacKey: key } : {}
            const writer = yield* services(target, options)
            yield* writer.log.append(stream, sampleEvents(4), "no_stream")
            yield* writer.eager.committed(stream, yield* writer.eager.load(stream))
            yield* writer.log.append(stream, sampleEvents(3, "tail"), 4)
            yield* disableTriggers(raw)
            yield* raw.exec(
              `update events set data = replace(data, 'tail', 'EDITED') where stream_id = ${quote(stream)} and stream_version = 6`
            )
            const reader = yield* services(target, options)
            expectTamper(yield* Effect.either(reader.repository.load(stream)), stream, 6, "hash-chain link")
            const fast = yield* services(target, { ...options, integrity: "unverified" })
            const served = yield* fast.repository.load(stream)
            assert.strictEqual(served.version, 7)
            assert.include(textOf(served), "EDITED")
          })
      )
    }

    it.scoped("an honest keyed log loads through a snapshot and its tail, and the chain is the HMAC chain", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        const raw = yield* target.raw
        const stream = freshStream("honest")
        const writer = yield* services(target, { hmacKey: key })
        yield* writer.log.append(stream, sampleEvents(4), "no_stream")
        yield* writer.eager.committed(stream, yield* writer.eager.load(stream))
        yield* writer.log.append(stream, sampleEvents(2, "after"), 4)
        const rows = yield* raw.rows(
          `select stream_version, event_id, type, schema_version, data, hash from events where stream_id = ${quote(stream)} order by stream_version`
        )
        const records = rows.map((row) => ({
          stream,
          version: Number(row.stream_version),
          eventId: String(row.event_id),
          type: String(row.type),
          schemaVersion: Number(row.schema_version),
          data: String(row.data),
          hash: String(row.hash)
        }))
        const chain = EventHash.verify(records, key)
        assert.isTrue(chain.ok)
        assert.isFalse(EventHash.verify(records).ok)
        const [head] = yield* raw.rows(`select head_hash from streams where stream_id = ${quote(stream)}`)
        if (chain.ok) {
          assert.strictEqual(
            String(head?.head_hash),
            EventHash.formatHead({ stream, version: 6, hash: chain.head }, key)
          )
        }
        const loaded = yield* (yield* services(target, { hmacKey: key })).repository.load(stream)
        assert.strictEqual(loaded.version, 6)
        assert.deepStrictEqual(loaded, yield* WindowRepository.foldTail(writer.log, stream))
      })
    )
  })
}

describe("Ctxlog layers take the key", () => {
  const append = (stream: string, text: string) =>
    Effect.flatMap(ContextService.ContextService, (ctx) => ctx.appendMessages(stream, [Message.user(text)]))
  const load = (stream: string) => Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load(stream))
  const hashes = (stream: string) =>
    Effect.flatMap(EventLog.EventLog, (log) => Stream.runCollect(log.read(stream))).pipe(
      Effect.map((chunk) => [...chunk])
    )

  it.effect("sqlite and postgres: written with hmacKey, a load without it fails with TamperDetected", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("ctxlogkey")
      const filename = tempFile("ctxlog.db")
      const layers = [
        (hmacKey?: string) => Ctxlog.sqlite({ filename, hmacKey }),
        (hmacKey?: string) => Ctxlog.postgres({ url, hmacKey })
      ]
      for (const open of layers) {
        const keyedLayer = open(key)
        const stream = freshStream("ctxlog")
        // One layer per program run, as an application would open it: written, then reopened.
        yield* append(stream, "keyed text").pipe(Effect.provide(keyedLayer))
        assert.strictEqual((yield* load(stream).pipe(Effect.provide(open(key)))).version, 1)
        const records = yield* hashes(stream).pipe(Effect.provide(open(key)))
        assert.isTrue(EventHash.verify(records, key).ok)
        const unkeyed = yield* Effect.either(load(stream).pipe(Effect.provide(open())))
        assert.isTrue(Either.isLeft(unkeyed) && unkeyed.left._tag === "TamperDetected")
      }
    })
  )

  it.effect("memory: the chain is keyed with hmacKey, and unverified loads are available", () =>
    Effect.gen(function* () {
      const stream = freshStream("memory")
      const records = yield* Effect.zipRight(append(stream, "in memory"), hashes(stream)).pipe(
        Effect.provide(Ctxlog.memory({ hmacKey: key }))
      )
      assert.isTrue(EventHash.verify(records, key).ok)
      assert.isFalse(EventHash.verify(records).ok)
      const loaded = yield* Effect.zipRight(append(stream, "fast"), load(stream)).pipe(
        Effect.provide(Ctxlog.memory({ hmacKey: key, integrity: "unverified" }))
      )
      assert.strictEqual(loaded.version, 1)
    })
  )
})
