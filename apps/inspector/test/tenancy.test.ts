// `streams --owner` lists one tenant's conversations; `erase` removes one under audit. On a SQLite file and
// a PostgreSQL database written by stores acting for two owners.
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { EventLog } from "@ctxlog/core"
import { sampleEvents } from "@ctxlog/testing"
import { PostgresEventLog, SqliteEventLog } from "@ctxlog/memory"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ctxlogInProcess, tempDir } from "./support/cli.js"
import { freshDatabase } from "./support/pgUrl.js"

const temp = tempDir("ctxlog-tenancy-")
afterAll(() => temp.cleanup())

const parse = (result: { readonly code: number; readonly stdout: string; readonly stderr: string }): unknown => {
  assert.strictEqual(result.code, 0, result.stderr)
  return JSON.parse(result.stdout)
}
const names = (value: unknown): ReadonlyArray<unknown> =>
  Array.isArray(value)
    ? value.map((row: unknown) => (typeof row === "object" && row !== null ? Reflect.get(row, "stream") : row))
    : []

type Opened = Effect.Effect<Context.Context<SqliteEventLog.Services>, unknown, Scope.Scope>

/** Write `stream` through a store acting for `owner`. */
const write = (open: Opened, stream: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(open, (context) =>
        Context.get(context, EventLog.EventLog).append(stream, sampleEvents(3), "no_stream")
      )
    )
  )

const targets: ReadonlyArray<
  readonly [string, () => Promise<{ readonly args: ReadonlyArray<string>; readonly as: (owner: string) => Opened }>]
> = [
  [
    "SQLite",
    async () => {
      const filename = join(temp.dir, `${randomUUID()}.db`)
      return { args: ["--db", filename], as: (owner) => SqliteEventLog.make({ filename, owner }) }
    }
  ],
  [
    "PostgreSQL",
    async () => {
      const url = await freshDatabase()
      return { args: ["--pg", url], as: (owner) => PostgresEventLog.make({ url, owner, maxConnections: 2 }) }
    }
  ]
]

for (const [label, target] of targets) {
  describe(`ctxlog on ${label} with owners`, () => {
    it("streams --owner lists one owner's streams; erase removes one and prints its audit record", async () => {
      const { args, as } = await target()
      await write(as("alice"), "alice-1")
      await write(as("alice"), "alice-2")
      await write(as("bob"), "bob-1")

      assert.deepStrictEqual(names(parse(await ctxlogInProcess(["streams", ...args, "--json"]))), [
        "alice-1",
        "alice-2",
        "bob-1"
      ])
      assert.deepStrictEqual(names(parse(await ctxlogInProcess(["streams", ...args, "--owner", "alice", "--json"]))), [
        "alice-1",
        "alice-2"
      ])
      assert.deepStrictEqual(names(parse(await ctxlogInProcess(["streams", ...args, "--owner", "bob", "--json"]))), [
        "bob-1"
      ])
      assert.deepStrictEqual(parse(await ctxlogInProcess(["streams", ...args, "--owner", "carol", "--json"])), [])

      const erased = parse(
        await ctxlogInProcess(["erase", ...args, "--actor", "dpo", "--reason", "user request 7", "alice-1", "--json"])
      )
      assert.deepInclude(erased, { stream: "alice-1", owner: "alice", events: 3, lastVersion: 3, actor: "dpo" })
      assert.deepStrictEqual(names(parse(await ctxlogInProcess(["streams", ...args, "--owner", "alice", "--json"]))), [
        "alice-2"
      ])
      // verify still passes on what is left.
      assert.strictEqual(Reflect.get(Object(parse(await ctxlogInProcess(["verify", ...args, "--json"]))), "ok"), true)
      // A second erasure of the same stream has nothing to erase, and says so.
      const again = await ctxlogInProcess(["erase", ...args, "--actor", "dpo", "--reason", "again", "alice-1"])
      assert.notStrictEqual(again.code, 0)
      assert.match(again.stderr, /no events to erase/)
    }, 120_000)
  })
}
