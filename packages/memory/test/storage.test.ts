/**
 * Where the bytes of a conversation go: a 10k-message conversation (appended as the ContextService
 * does, snapshots by the default policy, the recall index caught up) stays under a stated multiple of
 * its messages' JSON. The events hold one copy of each message, the snapshot another (deflated since
 * migration 0010), the recall index the text once more (its FTS5 table keeps no copy of its own since
 * migration 0008).
 */
import { ContextService, Message, TokenCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import BetterSqlite3 from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Ctxlog, RecallIndex } from "../src/index.js"
import { tempFile } from "./support/stores.js"

/**
 * The database stays under this multiple of the JSON of the messages it holds (2.38x measured: events
 * 1.5x, FTS index 0.23x, recall entries 0.16x, the snapshot 0.13x deflated; 3.06x with each message's
 * text kept in its recall entry too, before migration 0012; 3.9x with the snapshot as JSON text before
 * 0010, 4.5x before 0008).
 */
const maxMultiple = 2.5

const words = ["context", "window", "agent", "tool", "result", "summary", "token", "budget", "stream", "event"]
const prose = (i: number): string =>
  Array.from({ length: 40 }, (_, k) => `${words[(i + k * 7) % words.length]}${(i * 31 + k) % 97}`).join(" ")

describe("storage", () => {
  it.scoped("a 10k-message conversation stays under the stated multiple of its messages' JSON", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      const stack = Ctxlog.sqlite({ filename, durability: "normal", tokenCounter: TokenCounter.layerHeuristic() })
      let json = 0
      yield* Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        for (let at = 0; at < 10_000; at += 500) {
          const inputs = Array.from({ length: 500 }, (_, k) =>
            (at + k) % 2 === 0 ? Message.user(prose(at + k)) : Message.assistant(prose(at + k))
          )
          const { window } = yield* ctx.appendMessages("conversation", inputs)
          for (const message of window.history.slice(-500)) json += JSON.stringify(message).length
        }
        const index = yield* RecallIndex.RecallIndex
        const found = yield* index.search({ scope: { _tag: "Stream", stream: "conversation" }, query: "agent7" })
        assert.isAbove(found.length, 0)
      }).pipe(Effect.provide(Layer.fresh(stack)))
      const db = new BetterSqlite3(filename)
      db.pragma("wal_checkpoint(TRUNCATE)")
      const parts = db
        .prepare<[], { name: string; bytes: number }>(
          "select name, sum(pgsize) as bytes from dbstat group by name order by bytes desc"
        )
        .all()
      const snapshots = db.prepare<[], { n: number }>("select count(*) as n from snapshots").get()?.n
      // A message's text is kept once, in its event (ADR 0072): its recall entry holds none.
      const textKept = db
        .prepare<[], { n: number }>("select count(*) as n from recall_entries where source = 'message' and text != ''")
        .get()?.n
      // The window's state is kept deflated (a BLOB), not as its JSON text.
      const kinds = db.prepare<[], { kind: string }>("select typeof(state) as kind from snapshots").all()
      const total = parts.reduce((sum, part) => sum + part.bytes, 0)
      db.close()
      const multiple = total / json
      console.log(
        `10k messages: ${json} bytes of message JSON, database ${total} bytes (${multiple.toFixed(2)}x; stated ≤ ${maxMultiple}x), ${snapshots} snapshot row(s):`,
        parts
          .slice(0, 6)
          .map((part) => `${part.name} ${part.bytes}`)
          .join(", ")
      )
      assert.strictEqual(snapshots, 1)
      assert.strictEqual(textKept, 0)
      assert.deepStrictEqual(
        kinds.map((row) => row.kind),
        ["blob"]
      )
      assert.isBelow(multiple, maxMultiple)
    })
  )
})
