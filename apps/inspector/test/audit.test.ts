// A log an auditor accepts (issue 43, items 1 and 2) through the CLI, on a SQLite file and on PostgreSQL:
// `ctxlog verify --keyring` names the writer of every batch and fails (exit 3) when a signed batch no
// longer verifies, naming its writer; `ctxlog verify --anchors` catches a truncation with the `streams`
// row fixed that the unkeyed check alone passes. Every reading command checks them too.
import { join } from "node:path"
import { writeFileSync } from "node:fs"
import { EventLog } from "@ctxlog/core"
import { freshStream, sampleEvents } from "@ctxlog/testing"
import { Anchor, PostgresEventLog, Signing, SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { ctxlogInProcess, tempDir } from "./support/cli.js"
import { postgresTarget, quote, type Raw, sqliteTargetIn, type Target } from "./support/targets.js"

const temp = tempDir("ctxlog-audit-")
afterAll(() => temp.cleanup())

const alice = Signing.generate("alice")

/** Open a store on the target's database with the given signer or anchor (its CLI arguments name it). */
const openWith = (target: Target, options: Pick<SqliteEventLog.Options, "signer" | "anchor">) => {
  const [flag, where = ""] = target.args
  return flag === "--db"
    ? SqliteEventLog.make({ filename: where, ...options })
    : PostgresEventLog.make({ url: where, maxConnections: 2, ...options })
}

const write = (target: Target, options: Pick<SqliteEventLog.Options, "signer" | "anchor">) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const log = Context.get(yield* openWith(target, options), EventLog.EventLog)
        const stream = freshStream("audit")
        yield* log.append(stream, sampleEvents(2), "no_stream")
        yield* log.append(stream, sampleEvents(2, "later"), 2)
        return stream
      })
    )
  )

const withRaw = async (target: Target, body: (raw: Raw) => Promise<void>) => {
  const raw = await target.raw()
  try {
    await raw.disableTriggers()
    await body(raw)
  } finally {
    await raw.close()
  }
}

/** Delete the last event and fix the `streams` row to the one before (what an unkeyed check cannot see). */
const truncate = (stream: string) => async (raw: Raw) => {
  const [kept] = await raw.rows(`select hash from events where stream_id = ${quote(stream)} and stream_version = 3`)
  await raw.exec(`delete from events where stream_id = ${quote(stream)} and stream_version = 4`)
  await raw.exec(
    `update streams set version = 3, head_hash = ${quote(String(kept?.hash))} where stream_id = ${quote(stream)}`
  )
}

const targets: ReadonlyArray<readonly [string, () => Promise<Target>]> = [
  ["SQLite", () => sqliteTargetIn(temp.dir)],
  ["PostgreSQL", postgresTarget]
]

for (const [label, makeTarget] of targets) {
  describe(`${label}: verify --keyring and --anchors`, () => {
    it("verify --keyring lists every batch with its writer; a truncated signed log fails naming the writer", async () => {
      const target = await makeTarget()
      const stream = await write(target, { signer: Signing.signer("alice", alice.privateKeyPem) })
      const keyring = join(temp.dir, `${stream}.keyring.json`)
      writeFileSync(keyring, Signing.formatKeyring([alice.entry]))
      const ok = await ctxlogInProcess(["verify", ...target.args, stream, "--keyring", keyring])
      assert.strictEqual(ok.code, 0, ok.stderr)
      assert.include(ok.stdout, `batch 1-2  alice  key ${alice.entry.keyId}  ok`)
      assert.include(ok.stdout, `batch 3-4  alice  key ${alice.entry.keyId}  ok`)
      await withRaw(target, truncate(stream))
      // The unkeyed check alone: a consistent shorter stream.
      assert.strictEqual((await ctxlogInProcess(["verify", ...target.args, stream])).code, 0)
      const caught = await ctxlogInProcess(["verify", ...target.args, stream, "--keyring", keyring])
      assert.strictEqual(caught.code, 3, caught.stderr)
      assert.include(caught.stderr, `"${stream}" version 4 (signature)`)
      assert.include(caught.stderr, 'signed by "alice"')
      assert.include(caught.stdout, "batch 3-4  alice")
      // A verified read with the keyring refuses the stream too.
      const window = await ctxlogInProcess(["window", ...target.args, stream, "--keyring", keyring])
      assert.strictEqual(window.code, 3, window.stderr)
    })

    it("verify --anchors catches a truncation with the streams row fixed; a bad keyring is refused naming the entry", async () => {
      const target = await makeTarget()
      const anchors = join(temp.dir, `${Math.random().toString(36).slice(2)}.anchors.jsonl`)
      const stream = await write(target, { anchor: { sink: Anchor.file(anchors), everyAppends: 1, everyMs: 0 } })
      assert.strictEqual((await ctxlogInProcess(["verify", ...target.args, stream, "--anchors", anchors])).code, 0)
      await withRaw(target, truncate(stream))
      assert.strictEqual((await ctxlogInProcess(["verify", ...target.args, stream])).code, 0)
      const caught = await ctxlogInProcess(["verify", ...target.args, stream, "--anchors", anchors])
      assert.strictEqual(caught.code, 3, caught.stderr)
      assert.include(caught.stderr, `"${stream}" version 4 (anchor)`)
      assert.include(caught.stderr, "a truncation or a rollback")
      const bad = join(temp.dir, "bad.keyring.json")
      writeFileSync(bad, JSON.stringify({ keys: [{ writer: "alice", publicKey: "not a key" }] }))
      const refused = await ctxlogInProcess(["verify", ...target.args, stream, "--keyring", bad])
      assert.notStrictEqual(refused.code, 0)
      assert.include(refused.stderr, "keys.0.publicKey")
    })
  })
}
