import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ContextService, EventLog, Ids, Message, TokenCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { Ctxlog } from "../src/index.js"
import { freshDatabase } from "./support/postgres.js"

const tempFile = () => join(mkdtempSync(join(tmpdir(), "ctxlog-open-")), "agent.db")

const append = (text: string) =>
  Effect.flatMap(ContextService.ContextService, (ctx) => ctx.appendMessages("chat-1", [Message.user(text)]))

const texts = Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load("chat-1")).pipe(
  Effect.map((window) => window.history.map((message) => Message.textOf(message)))
)

const fixedMillis = 1_700_000_000_000
// A clock stopped at one instant: the recorded timestamps then show which clock the layer used.
const fixedClock: Clock.Clock = {
  [Clock.ClockTypeId]: Clock.ClockTypeId,
  unsafeCurrentTimeMillis: () => fixedMillis,
  currentTimeMillis: Effect.succeed(fixedMillis),
  unsafeCurrentTimeNanos: () => BigInt(fixedMillis) * 1_000_000n,
  currentTimeNanos: Effect.succeed(BigInt(fixedMillis) * 1_000_000n),
  sleep: () => Effect.void
}

describe("Ctxlog one-line layers", () => {
  it.effect("sqlite: append, reopen with create: false and load what was written", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      yield* append("The build fails with E0425").pipe(Effect.provide(Ctxlog.sqlite({ filename })))
      const loaded = yield* texts.pipe(Effect.provide(Ctxlog.sqlite({ filename, create: false })))
      assert.deepStrictEqual(loaded, ["The build fails with E0425"])
    })
  )

  it.effect("sqlite create: false (or readonly) on a missing file is a DatabaseNotFound naming it", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      for (const options of [{ create: false }, { readonly: true }]) {
        const result = yield* Effect.either(texts.pipe(Effect.provide(Ctxlog.sqlite({ filename, ...options }))))
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "DatabaseNotFound")
          assert.include(result.left.message, filename)
        }
      }
      // Nothing was created on the way.
      const fresh = yield* Effect.either(texts.pipe(Effect.provide(Ctxlog.sqlite({ filename, create: false }))))
      assert.isTrue(Either.isLeft(fresh))
    })
  )

  it.effect("sqlite readonly: loads work, appends fail with a StoreError and write nothing", () =>
    Effect.gen(function* () {
      const filename = tempFile()
      yield* append("first").pipe(Effect.provide(Ctxlog.sqlite({ filename })))
      const outcome = yield* Effect.gen(function* () {
        const before = yield* texts
        const appended = yield* Effect.either(append("second"))
        return { before, appended }
      }).pipe(Effect.provide(Ctxlog.sqlite({ filename, readonly: true })))
      assert.deepStrictEqual(outcome.before, ["first"])
      assert.isTrue(Either.isLeft(outcome.appended))
      if (Either.isLeft(outcome.appended)) assert.strictEqual(outcome.appended.left._tag, "StoreError")
      const after = yield* texts.pipe(Effect.provide(Ctxlog.sqlite({ filename })))
      assert.deepStrictEqual(after, ["first"])
    })
  )

  it.effect("memory: overrides replace the token counter, ids and clock", () =>
    Effect.gen(function* () {
      const result = yield* Effect.gen(function* () {
        yield* append("one two three four five six seven eight")
        const window = yield* Effect.flatMap(ContextService.ContextService, (ctx) => ctx.load("chat-1"))
        const log = yield* EventLog.EventLog
        const envelopes = yield* Stream.runCollect(log.read("chat-1"))
        return { window, envelopes: [...envelopes] }
      }).pipe(
        Effect.provide(
          Ctxlog.memory({
            tokenCounter: TokenCounter.layerHeuristic(1),
            ids: Ids.layerSequential("t"),
            clock: fixedClock
          })
        )
      )
      const message = result.window.history[0]
      assert.isDefined(message)
      assert.isTrue(message?.id.startsWith("t-"))
      // One token per character (plus the per-message overhead) under the heuristic override.
      assert.isTrue((message?.tokens ?? 0) >= "one two three four five six seven eight".length)
      assert.strictEqual(result.envelopes[0]?.recordedAt, fixedMillis)
    })
  )

  it.effect("postgres: append through one layer; a second one loads it and recalls it by full-text search", () =>
    Effect.gen(function* () {
      const url = yield* freshDatabase("ctxlog_layer")
      yield* append("The parser fails with E0425 on unresolved names").pipe(Effect.provide(Ctxlog.postgres({ url })))
      const recalled = yield* Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const { window } = yield* ctx.injectSemanticRecall("chat-1", "E0425 unresolved", 500)
        const all = [...window.system, ...window.knowledge, ...window.history]
        return { loaded: yield* texts, injected: all.filter((message) => message.kind === "recall").length }
      }).pipe(Effect.provide(Ctxlog.postgres({ url })))
      assert.deepStrictEqual(recalled.loaded, ["The parser fails with E0425 on unresolved names"])
      assert.isAtLeast(recalled.injected, 1)
    })
  )
})
