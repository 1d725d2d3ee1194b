// Verified reads (issue 22, items 1 and 2): every reading command refuses a damaged stream with exit code
// 3, naming the stream and the first bad version, on a SQLite file and on PostgreSQL. Flipped bytes, a
// deleted middle row, a truncated tail with the `streams` row left and with it fixed, and a chain
// recomputed after an edit (with and without the HMAC key, with and without a head kept elsewhere). What
// an unkeyed, unanchored log cannot detect is asserted too (RELIABILITY.md's table).
import { randomUUID } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { EventHash } from "@ctxlog/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { ctxlogInProcess, type Result, tempDir } from "./support/cli.js"
import { postgresTarget, quote, type Raw, seed, sqliteTargetIn, type Target } from "./support/targets.js"

const temp = tempDir("ctxlog-damage-")
afterAll(() => temp.cleanup())

const key = "inspector damage key"
const keyEnv = "CTXLOG_TEST_DAMAGE_KEY"
process.env[keyEnv] = key

/** Every command that reads a stream, as run on `stream`. */
const readers = (stream: string): ReadonlyArray<ReadonlyArray<string>> => [
  ["window", stream],
  ["window", stream, "--at", "2", "--full"],
  ["blame", stream],
  ["events", stream],
  ["diff", stream, "1", "2"],
  ["message", stream, "@1"],
  ["render", stream],
  ["export", stream],
  ["heads", stream],
  ["verify", stream],
  ["streams"]
]

const run = (target: Target, args: ReadonlyArray<string>, extra: ReadonlyArray<string> = []) => {
  const [command = "", ...rest] = args
  return ctxlogInProcess([command, ...target.args, ...rest, ...extra])
}

/** Every reading command exits 3 naming the stream and `version`. */
const allRefuse = async (target: Target, stream: string, version: number, extra: ReadonlyArray<string> = []) => {
  for (const args of readers(stream)) {
    const result = await run(target, args, extra)
    assert.strictEqual(result.code, 3, `${args.join(" ")}: ${result.stderr}`)
    assert.include(result.stderr, `"${stream}" version ${version}`, args.join(" "))
    // One error, printed once, and what to do next.
    assert.strictEqual(result.stderr.split(`"${stream}" version ${version}`).length, 2, result.stderr)
    assert.include(result.stderr, "ctxlog verify <stream>")
  }
}

/** Every reading command succeeds (exit 0). */
const allServe = async (target: Target, stream: string, extra: ReadonlyArray<string> = []) => {
  for (const args of readers(stream)) {
    // render: the sample events hold no PromptRendered (exit 1 after a verified read).
    const result: Result = await run(target, args, extra)
    assert.strictEqual(result.code, args[0] === "render" ? 1 : 0, `${args.join(" ")}: ${result.stderr}`)
  }
}

const headOf = async (target: Target, stream: string, extra: ReadonlyArray<string> = []) => {
  const result = await run(target, ["heads", stream], extra)
  assert.strictEqual(result.code, 0, result.stderr)
  return result.stdout.trim()
}

const withRaw = async (target: Target, body: (raw: Raw) => Promise<void>) => {
  const raw = await target.raw()
  try {
    await raw.disableTriggers()
    await body(raw)
  } finally {
    await raw.close()
  }
}

/** Rewrite event 3 and recompute every later link (unkeyed, as someone without the key can) and the row. */
const recompute = (stream: string) => async (raw: Raw) => {
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
  const [row] = await raw.rows(`select head_hash from streams where stream_id = ${quote(stream)}`)
  const head = EventHash.parseHead(String(row?.head_hash))
  const forged =
    head.keyId === undefined ? previous : `${EventHash.keyedPrefix}${head.keyId}:${previous}:${head.seal ?? ""}`
  await raw.exec(`update streams set head_hash = ${quote(forged)} where stream_id = ${quote(stream)}`)
}

/** Delete the last two events; with `fixRow`, rewrite the row to match what is left. */
const truncate = (stream: string, fixRow: boolean) => async (raw: Raw) => {
  await raw.exec(`delete from events where stream_id = ${quote(stream)} and stream_version > 6`)
  if (!fixRow) return
  const [last] = await raw.rows(`select hash from events where stream_id = ${quote(stream)} and stream_version = 6`)
  const [row] = await raw.rows(`select head_hash from streams where stream_id = ${quote(stream)}`)
  const head = EventHash.parseHead(String(row?.head_hash))
  // A keyed row keeps the seal: it cannot be recomputed without the key.
  const forged =
    head.keyId === undefined
      ? String(last?.hash)
      : `${EventHash.keyedPrefix}${head.keyId}:${String(last?.hash)}:${head.seal ?? ""}`
  await raw.exec(`update streams set version = 6, head_hash = ${quote(forged)} where stream_id = ${quote(stream)}`)
}

const targets = [
  ["SQLite file", () => sqliteTargetIn(temp.dir)],
  ["PostgreSQL", postgresTarget]
] as const

for (const [label, makeTarget] of targets) {
  describe(`${label}: verified reads`, () => {
    it("flipped bytes: every command exits 3 at the changed version; --unverified and export --force read it", async () => {
      const target = await makeTarget()
      const stream = await seed(target, undefined, 8, 6)
      await allServe(target, stream)
      await withRaw(target, async (raw) => {
        await raw.exec(
          `update events set data = replace(data, 'hello', 'jello') where stream_id = ${quote(stream)} and stream_version = 3`
        )
      })
      await allRefuse(target, stream, 3)
      const window = await run(target, ["window", stream, "--unverified"])
      assert.strictEqual(window.code, 0, window.stderr)
      const forced = await run(target, ["export", stream, "--force"])
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.include(forced.stdout, "jello")
    })

    it("a deleted middle row: every command exits 3 at the missing version", async () => {
      const target = await makeTarget()
      const stream = await seed(target, undefined, 8, 6)
      await withRaw(target, (raw) =>
        raw.exec(`delete from events where stream_id = ${quote(stream)} and stream_version = 4`)
      )
      await allRefuse(target, stream, 4)
      const verify = await run(target, ["verify", stream])
      assert.include(verify.stdout.replace(/\n +/g, " "), "(versions): version 4 is missing")
    })

    it("a truncated tail with the streams row left: every command exits 3 at the first missing version", async () => {
      const target = await makeTarget()
      const stream = await seed(target, undefined, 8, 6)
      await withRaw(target, truncate(stream, false))
      await allRefuse(target, stream, 7)
    })

    it("a truncated tail with the row fixed: unkeyed only a kept head catches it; keyed the row's seal does", async () => {
      // Two databases: `streams` lists every stream, and a keyed one is refused without its key.
      const target = await makeTarget()
      const keyedTarget = await makeTarget()
      const plain = await seed(target, undefined, 8, 6)
      const keyed = await seed(keyedTarget, key, 8, 6)
      const kept = await headOf(target, plain)
      assert.match(kept, new RegExp(`^${plain}@8:[0-9a-f]{64}$`))
      const headsFile = join(temp.dir, `${randomUUID()}.heads`)
      writeFileSync(headsFile, `# kept elsewhere\n${kept}\n`)
      await withRaw(target, truncate(plain, true))
      await withRaw(keyedTarget, truncate(keyed, true))
      // Unkeyed and unanchored: a consistent shorter stream (documented limit).
      await allServe(target, plain)
      await allRefuse(target, plain, 7, ["--expect-head", kept])
      await allRefuse(target, plain, 7, ["--heads-file", headsFile])
      await allRefuse(keyedTarget, keyed, 6, ["--key-env", keyEnv])
    })

    it("a chain recomputed after an edit: unkeyed only a kept head catches it; keyed the key does", async () => {
      const target = await makeTarget()
      const keyedTarget = await makeTarget()
      // No snapshot: one folded before the edit would differ from a replay, which verify also checks.
      const plain = await seed(target, undefined, 8)
      const keyed = await seed(keyedTarget, key, 8, 6)
      const keptPlain = await headOf(target, plain)
      const keptKeyed = await headOf(keyedTarget, keyed, ["--key-env", keyEnv])
      await withRaw(target, recompute(plain))
      await withRaw(keyedTarget, recompute(keyed))
      await allServe(target, plain)
      await allRefuse(target, plain, 8, ["--expect-head", keptPlain])
      await allRefuse(keyedTarget, keyed, 3, ["--key-env", keyEnv])
      await allRefuse(keyedTarget, keyed, 3, ["--key-env", keyEnv, "--expect-head", keptKeyed])
      // A keyed stream read without its key is refused as such.
      await allRefuse(keyedTarget, keyed, 1)
    })
  })
}
