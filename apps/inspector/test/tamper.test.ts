// `ctxlog verify` against tampering (issue 15, item 4), on a SQLite file and on PostgreSQL: with the
// HMAC key (`--key-env`), an event rewritten with the chain recomputed without the key fails; deleting
// the last events fails against the `streams` row; an edited snapshot fails its seal; a keyed log read
// without its key, or with another, fails. The logs are written by the real durable stores. `import
// --key-env` writes a keyed stream that a store opened with the key verifies and extends.
import { randomUUID } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { inflateRawSync } from "node:zlib"
import { EventHash, EventLog, WindowRepository } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ctxlogInProcess, tempDir } from "./support/cli.js"
import { postgresTarget, quote, seed, sqliteTargetIn, type Target } from "./support/targets.js"

const temp = tempDir("ctxlog-tamper-")
afterAll(() => temp.cleanup())

const key = "inspector tamper key"
const keyEnv = "CTXLOG_TEST_TAMPER_KEY"
const otherEnv = "CTXLOG_TEST_TAMPER_OTHER_KEY"
process.env[keyEnv] = key
process.env[otherEnv] = "not the key"

const sqliteTarget = () => sqliteTargetIn(temp.dir)

const verify = (target: Target, stream: string, env?: string) =>
  ctxlogInProcess(["verify", ...target.args, stream, ...(env === undefined ? [] : ["--key-env", env])])

const targets = [
  ["SQLite file", sqliteTarget],
  ["PostgreSQL", postgresTarget]
] as const

for (const [label, makeTarget] of targets) {
  describe(`${label}: ctxlog verify against tampering`, () => {
    it("a keyed log verifies with its key, and fails without it or with another key", async () => {
      const target = await makeTarget()
      const stream = await seed(target, key, 5, 3)
      const good = await verify(target, stream, keyEnv)
      assert.strictEqual(good.code, 0, good.stderr)
      assert.include(good.stdout, "ok  ")
      const none = await verify(target, stream)
      assert.strictEqual(none.code, 3)
      assert.include(none.stderr, `verify failed: stream "${stream}" version 1 (hash-chain): the stream is HMAC-keyed`)
      const wrong = await verify(target, stream, otherEnv)
      assert.strictEqual(wrong.code, 3)
      assert.include(wrong.stderr, "the stream was keyed with another key")
      const unset = await verify(target, stream, "CTXLOG_TEST_TAMPER_UNSET")
      assert.strictEqual(unset.code, 1)
      assert.include(unset.stderr, "--key-env CTXLOG_TEST_TAMPER_UNSET: the environment variable is not set")
    })

    it("an event rewritten with the chain recomputed without the key fails, naming stream and version", async () => {
      const target = await makeTarget()
      const stream = await seed(target, key, 6)
      const raw = await target.raw()
      try {
        await raw.disableTriggers()
        await raw.exec(
          `update events set data = replace(data, 'hello', 'FORGED') where stream_id = ${quote(stream)} and stream_version = 3`
        )
        const rows = await raw.rows(
          `select stream_version, event_id, type, schema_version, data, hash from events where stream_id = ${quote(stream)} order by stream_version`
        )
        let previous = EventHash.genesis
        for (const row of rows) {
          const version = Number(row.stream_version)
          const hash =
            version < 3
              ? String(row.hash)
              : EventHash.chain(previous, {
                  stream,
                  version,
                  eventId: String(row.event_id),
                  type: String(row.type),
                  schemaVersion: Number(row.schema_version),
                  data: String(row.data)
                })
          await raw.exec(
            `update events set hash = ${quote(hash)} where stream_id = ${quote(stream)} and stream_version = ${version}`
          )
          previous = hash
        }
        const [head] = await raw.rows(`select head_hash from streams where stream_id = ${quote(stream)}`)
        const keyId = EventHash.parseHead(String(head?.head_hash)).keyId ?? ""
        await raw.exec(
          `update streams set head_hash = ${quote(`${EventHash.keyedPrefix}${keyId}:${previous}`)} where stream_id = ${quote(stream)}`
        )
      } finally {
        await raw.close()
      }
      const result = await verify(target, stream, keyEnv)
      assert.strictEqual(result.code, 3)
      assert.include(result.stdout, "FAIL")
      assert.include(result.stderr, `verify failed: stream "${stream}" version 3 (hash-chain)`)
    })

    it("deleting the last events fails against the streams row (with or without a key)", async () => {
      const target = await makeTarget()
      const keyed = await seed(target, key, 6)
      const plain = await seed(target, undefined, 6)
      const raw = await target.raw()
      try {
        await raw.disableTriggers()
        await raw.exec(
          `delete from events where stream_id in (${quote(keyed)}, ${quote(plain)}) and stream_version > 4`
        )
      } finally {
        await raw.close()
      }
      for (const [stream, env] of [
        [keyed, keyEnv],
        [plain, undefined]
      ] as const) {
        const result = await verify(target, stream, env)
        assert.strictEqual(result.code, 3)
        assert.include(
          result.stderr,
          `verify failed: stream "${stream}" version 5 (stream-row): the streams row says version 6, but the events end at version 4 (events deleted)`
        )
      }
    })

    it("deleting the last events and rewriting the streams row to match: the keyed row's seal fails (an unkeyed row cannot tell)", async () => {
      const target = await makeTarget()
      const keyed = await seed(target, key, 6)
      const plain = await seed(target, undefined, 6)
      const raw = await target.raw()
      try {
        await raw.disableTriggers()
        for (const stream of [keyed, plain]) {
          await raw.exec(`delete from events where stream_id = ${quote(stream)} and stream_version > 4`)
          const [last] = await raw.rows(
            `select hash from events where stream_id = ${quote(stream)} and stream_version = 4`
          )
          const [row] = await raw.rows(`select head_hash from streams where stream_id = ${quote(stream)}`)
          const head = EventHash.parseHead(String(row?.head_hash))
          // The attacker keeps the key id and the seal they cannot recompute.
          const forged =
            head.keyId === undefined
              ? String(last?.hash)
              : `${EventHash.keyedPrefix}${head.keyId}:${String(last?.hash)}:${head.seal ?? ""}`
          await raw.exec(
            `update streams set version = 4, head_hash = ${quote(forged)} where stream_id = ${quote(stream)}`
          )
        }
      } finally {
        await raw.close()
      }
      const result = await verify(target, keyed, keyEnv)
      assert.strictEqual(result.code, 3)
      assert.include(
        result.stderr,
        `verify failed: stream "${keyed}" version 4 (stream-row): the streams row does not match its seal`
      )
      // Without a key, a consistent prefix is indistinguishable from a shorter stream (documented limit).
      const unkeyed = await verify(target, plain)
      assert.strictEqual(unkeyed.code, 0, unkeyed.stderr)
    })

    it("an edited snapshot fails its seal, naming stream and version", async () => {
      const target = await makeTarget()
      const stream = await seed(target, key, 6, 4)
      const raw = await target.raw()
      try {
        const [row] = await raw.rows(`select state from snapshots where stream_id = ${quote(stream)}`)
        // SQLite keeps the state deflated (a BLOB, memory's migration 0010); PostgreSQL as TEXT.
        const stored: unknown = row?.state
        const state = stored instanceof Uint8Array ? inflateRawSync(stored).toString("utf8") : String(stored)
        assert.include(state, "hello")
        const edited = state.replaceAll("hello", "EDITED")
        await raw.exec(
          `update snapshots set state = ${quote(edited)}, state_hash = ${quote(EventHash.sha256(edited))} where stream_id = ${quote(stream)}`
        )
      } finally {
        await raw.close()
      }
      const result = await verify(target, stream, keyEnv)
      assert.strictEqual(result.code, 3)
      assert.include(
        result.stderr,
        `verify failed: stream "${stream}" version 4 (snapshot): the snapshot is not sealed with the HMAC key`
      )
    })

    it("import --key-env chains the stream with the key: verify and a keyed store accept it, an unkeyed one refuses it", async () => {
      // Event ids are unique across a log: the export goes into another database.
      const origin = await makeTarget()
      const source = await seed(origin, undefined, 5)
      const exported = await ctxlogInProcess(["export", ...origin.args, source])
      const target = await makeTarget()
      assert.strictEqual(exported.code, 0, exported.stderr)
      const file = join(temp.dir, `${randomUUID()}.jsonl`)
      writeFileSync(file, exported.stdout)
      const stream = freshStream("imported")
      const unset = await ctxlogInProcess([
        "import",
        ...target.args,
        file,
        "--stream",
        stream,
        "--key-env",
        "CTXLOG_TEST_TAMPER_UNSET"
      ])
      assert.strictEqual(unset.code, 1)
      assert.include(unset.stderr, "--key-env CTXLOG_TEST_TAMPER_UNSET: the environment variable is not set")
      const imported = await ctxlogInProcess(["import", ...target.args, file, "--stream", stream, "--key-env", keyEnv])
      assert.strictEqual(imported.code, 0, imported.stderr)
      assert.include(imported.stdout, `imported 5 events into stream "${stream}" (version 5)`)

      const good = await verify(target, stream, keyEnv)
      assert.strictEqual(good.code, 0, good.stderr)
      const none = await verify(target, stream)
      assert.strictEqual(none.code, 3)
      assert.include(none.stderr, `verify failed: stream "${stream}" version 1 (hash-chain): the stream is HMAC-keyed`)

      const outcome = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const keyed = yield* target.open(key)
            const log = Context.get(keyed, EventLog.EventLog)
            const records = [...(yield* Stream.runCollect(log.read(stream)))]
            const chain = EventHash.verify(records, key)
            // The keyed store loads it (checked chain and the import's keyed snapshot) and appends to it.
            const loaded = yield* Context.get(keyed, WindowRepository.WindowRepository).load(stream)
            yield* log.append(stream, sampleEvents(1, "after import"), 5)
            const unkeyed = yield* target.open(undefined)
            const refused = yield* Effect.either(
              Context.get(unkeyed, EventLog.EventLog).append(stream, sampleEvents(1), 6)
            )
            return { chain: chain.ok, unkeyedChain: EventHash.verify(records).ok, version: loaded.version, refused }
          })
        )
      )
      assert.isTrue(outcome.chain, "the imported events chain under the key")
      assert.isFalse(outcome.unkeyedChain)
      assert.strictEqual(outcome.version, 5)
      assert.isTrue(
        outcome.refused._tag === "Left" && outcome.refused.left.message.includes("the stream is HMAC-keyed")
      )
      const after = await verify(target, stream, keyEnv)
      assert.strictEqual(after.code, 0, after.stderr)
      assert.include(after.stdout, "ok  ")
    })
  })
}
