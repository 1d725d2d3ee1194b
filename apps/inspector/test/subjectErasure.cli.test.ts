// `ctxlog erase --subject` and `ctxlog verify-receipt` (issue 43, items 3-5): a subject's sealed content
// in two streams (one a summary derived from the other) is erased through the CLI, which writes a signed
// receipt; `verify-receipt` accepts it with the keyring and rejects it once a field is changed;
// `verify --keyring` still passes on every stream. On a SQLite file and a PostgreSQL database.
import { randomBytes, randomUUID } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { EventLog, type WindowEvent } from "@ctxlog/core"
import { PostgresEventLog, Sealing, Signing, SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ctxlogInProcess, tempDir } from "./support/cli.js"
import { freshDatabase } from "./support/pgUrl.js"

const temp = tempDir("ctxlog-subject-")
afterAll(() => temp.cleanup())

const officer = Signing.generate("dpo")
const keyringFile = join(temp.dir, "keyring.json")
const keyFile = join(temp.dir, "dpo.pem")
writeFileSync(keyringFile, Signing.formatKeyring([officer.entry]))
writeFileSync(keyFile, officer.privateKeyPem)
const masterKey = randomBytes(32)
process.env.CTXLOG_TEST_MASTER_KEY = masterKey.toString("hex")

const chat = (id: string, text: string): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id,
  message: { id: `m-${id}`, role: "user", kind: "chat", parts: [{ type: "text", text }], tokens: 3 }
})

type Opened = Effect.Effect<Context.Context<SqliteEventLog.Services>, unknown, Scope.Scope>

const options = {
  sealing: {
    masterKey: new Uint8Array(masterKey),
    subjectOf: (stream: string) => (stream === "carol-1" ? "carol" : undefined)
  },
  signer: Signing.signer("dpo", officer.privateKeyPem)
}

const write = (open: Opened) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const log = Context.get(yield* open, EventLog.EventLog)
        yield* log.append("carol-1", [chat("c-1", "carol's private note")], "no_stream")
        const carol = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("carol-1")))
        yield* log.append("shared", [chat("s-1", "shared words")], "no_stream")
        yield* Sealing.derivedFrom(carol, log.append("shared", [chat("s-2", "about carol's private note")], 1))
      })
    )
  )

const targets: ReadonlyArray<
  readonly [string, () => Promise<{ readonly args: ReadonlyArray<string>; readonly open: Opened }>]
> = [
  [
    "SQLite",
    async () => {
      const filename = join(temp.dir, `${randomUUID()}.db`)
      return { args: ["--db", filename], open: SqliteEventLog.make({ filename, ...options }) }
    }
  ],
  [
    "PostgreSQL",
    async () => {
      const url = await freshDatabase()
      return { args: ["--pg", url], open: PostgresEventLog.make({ url, maxConnections: 2, ...options }) }
    }
  ]
]

for (const [label, target] of targets) {
  describe(`ctxlog erase --subject on ${label}`, () => {
    it("erases a subject, writes a signed receipt that verify-receipt checks offline", async () => {
      const { args, open } = await target()
      await write(open)
      const receiptFile = join(temp.dir, `${randomUUID()}.receipt.json`)
      const subjectArgs = ["--subject", "carol", "--actor", "dpo", "--reason", "art. 17"]
      const keyArgs = ["--master-key-env", "CTXLOG_TEST_MASTER_KEY", "--signer-key", keyFile, "--writer", "dpo"]

      const unsigned = await ctxlogInProcess([
        "erase",
        ...args,
        ...subjectArgs,
        "--master-key-env",
        "CTXLOG_TEST_MASTER_KEY"
      ])
      assert.notStrictEqual(unsigned.code, 0)
      assert.match(unsigned.stderr, /--signer-key/)

      const erased = await ctxlogInProcess(["erase", ...args, ...subjectArgs, ...keyArgs, "--receipt", receiptFile])
      assert.strictEqual(erased.code, 0, erased.stderr)
      assert.match(erased.stdout, /erased subject "carol": 1 key\(s\) destroyed/)
      assert.match(erased.stdout, /unreadable summary shared s-2|unreadable message shared s-2/)

      const checked = await ctxlogInProcess(["verify-receipt", receiptFile, "--keyring", keyringFile])
      assert.strictEqual(checked.code, 0, checked.stderr)
      assert.match(checked.stdout, /receipt of subject "carol" verifies: signed by "dpo"/)

      const receipt = JSON.parse(readFileSync(receiptFile, "utf8")) as { readonly reason: string }
      const forged = join(temp.dir, `${randomUUID()}.forged.json`)
      writeFileSync(forged, JSON.stringify({ ...receipt, reason: "nothing to see" }))
      const rejected = await ctxlogInProcess(["verify-receipt", forged, "--keyring", keyringFile])
      assert.notStrictEqual(rejected.code, 0)
      assert.match(rejected.stdout, /does not match/)

      for (const stream of ["carol-1", "shared"]) {
        const verified = await ctxlogInProcess(["verify", ...args, "--keyring", keyringFile, stream])
        assert.strictEqual(verified.code, 0, `${stream}: ${verified.stdout}${verified.stderr}`)
      }
    }, 60_000)
  })
}
