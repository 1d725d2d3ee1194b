import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EventLog, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { SqliteEventLog } from "../src/index.js"
import { work } from "../src/internal/drivers.js"

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
      assert.strictEqual(await openAndAppend("first"), 1)
      const before = work.imports
      for (let index = 0; index < 3; index++) await openAndAppend(`again ${index}`)
      assert.strictEqual(work.imports - before, 0)
      assert.isAtMost(work.imports, 1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
