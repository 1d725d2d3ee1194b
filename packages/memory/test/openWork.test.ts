import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventLog, Message, WorkCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SqliteEventLog } from "../src/index.js"
import BetterSqlite3 from "better-sqlite3"
import { counters as metrics } from "../src/internal/workCounters.js"

/** The stores' work counters, read as their change since the last `reset()` (ADR 0160). */
const counters = WorkCounter.since(metrics)
const reset = counters.reset
/** Driver imports, as their change since this file loaded. */
const work = WorkCounter.since({ imports: metrics.imports })

// Reopening a store does no work the first open did once for the process: the driver module is
// imported once (an import per open was most of reopening a small conversation).
describe("opening a store again", () => {
  it("imports the SQLite driver once per process, however many stores it opens", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ctxlog-open-work-"))
    try {
      const filename = join(dir, "log.db")
      const openAndAppend = (text: string) =>
        Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const log = yield* EventLog.EventLog
              yield* log.append(
                "s",
                [
                  {
                    _tag: "MessageAppended",
                    id: `event-${text}`,
                    message: {
                      id: `message-${text}`,
                      role: "user",
                      kind: "chat",
                      parts: [Message.text(text)],
                      tokens: 1
                    }
                  }
                ],
                "any"
              )
              return yield* log.version("s")
            }).pipe(Effect.provide(SqliteEventLog.layer({ filename })))
          )
        )
      // Counted from here: test files share a worker's process (ADR 0149), so an earlier file may have
      // imported this driver or another one already.
      const start = work.imports
      assert.strictEqual(await openAndAppend("first"), 1)
      const before = work.imports
      for (let index = 0; index < 3; index++) await openAndAppend(`again ${index}`)
      assert.strictEqual(work.imports - before, 0)
      assert.isAtMost(before - start, 1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

// Opening an up-to-date file checks its migrations with one read of `kysely_migration`, synchronously,
// and writes nothing (ADR 0085): the check was two statements behind a promise and a retry schedule.
describe("the migration check on open", () => {
  it("reads one statement on an up-to-date file and writes nothing; a new file is migrated", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ctxlog-open-migrations-"))
    try {
      const filename = join(dir, "log.db")
      const open = () => Effect.runPromise(Effect.scoped(Effect.asVoid(SqliteEventLog.make({ filename }))))
      reset()
      await open()
      const firstOpen = counters.migrationReads
      const applied = () => {
        const raw = new BetterSqlite3(filename, { readonly: true })
        try {
          return raw.prepare(`select count(*) as n from "kysely_migration"`).get()
        } finally {
          raw.close()
        }
      }
      const migrated = applied()
      reset()
      for (let index = 0; index < 3; index++) await open()
      console.log(
        `migration reads: first open ${firstOpen}, three reopens ${counters.migrationReads}; migrations recorded ${JSON.stringify(migrated)}`
      )
      assert.isAtLeast(firstOpen, 1)
      assert.strictEqual(counters.migrationReads, 3)
      assert.deepStrictEqual(applied(), migrated)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
