// Tamper evidence of the per-operation catch-up (issue 15, item 4 follow-up): a process keeps a window
// in its ContextService cache; another process appends; the new event is edited in the database before
// the first process's next operation. That operation reads only the new events, checks each one's link
// from the hash kept beside the cached window, and fails with TamperDetected naming stream and version;
// the cached window is dropped. `integrity: "unverified"` serves the edit (the check is what stops it).
import { ContextService, Message, type Window } from "@ctxlog/core"
import { freshStream } from "@ctxlog/testing"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { Ctxlog } from "../src/index.js"
import { disableTriggers, forgeEvent } from "./support/forge.js"
import { freshDatabase } from "./support/postgres.js"
import { postgresRawLayer, RawSql, sqliteRawLayer, tempFile } from "./support/stores.js"

const key = "catch-up test key: 32 bytes of secret"
const otherKey = "an attacker's own key"

interface StoreOptions {
  readonly hmacKey?: string
  readonly integrity?: "verified" | "unverified"
}

/** One database: a process (a `ContextService` with its own cache) opened on it per call, and raw SQL. */
interface Target {
  readonly open: (options: StoreOptions) => Effect.Effect<ContextService.ContextService.Service, unknown, Scope.Scope>
  readonly raw: Effect.Effect<RawSql["Type"], unknown, Scope.Scope>
}

const serviceOf = (layer: Layer.Layer<ContextService.ContextService, unknown>) =>
  Effect.map(Layer.build(layer), Context.get(ContextService.ContextService))

const sqliteTarget: Effect.Effect<Target> = Effect.sync(() => {
  const filename = tempFile()
  return {
    open: (options) => serviceOf(Ctxlog.sqlite({ ...options, filename })),
    raw: Effect.map(Layer.build(sqliteRawLayer(filename)), Context.get(RawSql))
  }
})

const postgresTarget = Effect.map(
  freshDatabase("catchup"),
  (url): Target => ({
    open: (options) => serviceOf(Ctxlog.postgres({ ...options, url })),
    raw: Effect.map(Layer.build(postgresRawLayer(url)), Context.get(RawSql))
  })
)

/**
 * Replace `marker` by FORGED in the event at `version`, then rechain as `forgeEvent` does. The `streams`
 * row is left alone: a catch-up does not read its head.
 */
const edit = (
  raw: RawSql["Type"],
  stream: string,
  version: number,
  marker: string,
  rechain: "none" | "unkeyed" | { readonly key: string }
) => Effect.andThen(disableTriggers(raw), forgeEvent(raw, stream, version, marker, rechain))

const textOf = (window: Window.Window) => JSON.stringify(window.history)

/** The operation's failure, which must be a `TamperDetected` naming `stream` and `version`. */
const expectTamper = (result: Either.Either<unknown, { readonly _tag: string }>, stream: string, version: number) => {
  assert.isTrue(Either.isLeft(result), "the operation must fail")
  if (Either.isLeft(result)) {
    const error = result.left
    assert.strictEqual(error._tag, "TamperDetected")
    if ("stream" in error && "version" in error) {
      assert.strictEqual(error.stream, stream)
      assert.strictEqual(error.version, version)
    }
    if (error instanceof Error) {
      assert.include(error.message, `stream "${stream}" version ${version}`)
      assert.include(error.message, "hash-chain link")
    }
  }
}

/**
 * Process A writes five messages (its cache holds the window at version 5), process B appends a sixth
 * ("next"), and A's load serves it: the honest catch-up. Returns A and the stream.
 */
const cachedThenAppended = (target: Target, options: StoreOptions, label: string) =>
  Effect.gen(function* () {
    const stream = freshStream(label)
    const a = yield* target.open(options)
    for (const text of ["one", "two", "three", "four", "five"]) yield* a.appendMessages(stream, [Message.user(text)])
    const b = yield* target.open(options)
    yield* b.appendMessages(stream, [Message.assistant("next")])
    const served = yield* a.load(stream)
    assert.strictEqual(served.version, 6)
    assert.include(textOf(served), "next")
    yield* b.appendMessages(stream, [Message.user("seventh")])
    return { a, b, stream }
  })

const targets = [
  ["SQLite file", sqliteTarget],
  ["PostgreSQL", postgresTarget]
] as const

for (const [label, makeTarget] of targets) {
  describe(`${label}: the catch-up of a cached window is chain-checked`, () => {
    const rechains = [
      ["recomputed without the key", "unkeyed"],
      ["recomputed with another key", { key: otherKey }]
    ] as const
    for (const [how, rechain] of rechains) {
      it.scoped(`keyed: a new event edited and the chain ${how} fails the next load and append at its version`, () =>
        Effect.gen(function* () {
          const target = yield* makeTarget
          const raw = yield* target.raw
          const { a, stream } = yield* cachedThenAppended(target, { hmacKey: key }, "keyed")
          yield* edit(raw, stream, 7, "seventh", rechain)
          expectTamper(yield* Effect.either(a.load(stream)), stream, 7)
          // The cached window was dropped: the next operation loads the stream and its check fails too.
          expectTamper(yield* Effect.either(a.appendMessages(stream, [Message.user("more")])), stream, 7)
          const untouched = yield* target.open({ hmacKey: key })
          expectTamper(yield* Effect.either(untouched.load(stream)), stream, 7)
        })
      )
    }

    it.scoped("keyed: an append that conflicts catches up through the edited event and fails at its version", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        const raw = yield* target.raw
        const { a, b, stream } = yield* cachedThenAppended(target, { hmacKey: key }, "conflict")
        yield* b.appendMessages(stream, [Message.assistant("eighth")])
        yield* edit(raw, stream, 8, "eighth", "unkeyed")
        // A's cached window is at 6: its append conflicts (7 and 8 exist), the retry catches up, and the
        // catch-up checks 7 (honest) and 8 (forged).
        expectTamper(yield* Effect.either(a.appendMessages(stream, [Message.user("late")])), stream, 8)
      })
    )

    it.scoped("unkeyed: a new event edited without its hash fails the next operation at its version", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        const raw = yield* target.raw
        const { a, stream } = yield* cachedThenAppended(target, {}, "plain")
        yield* edit(raw, stream, 7, "seventh", "none")
        expectTamper(yield* Effect.either(a.appendMessages(stream, [Message.user("more")])), stream, 7)
      })
    )

    it.scoped(
      "unkeyed: an event the cached window folded, edited with the chain recomputed, fails the catch-up (a fresh load cannot tell)",
      () =>
        Effect.gen(function* () {
          const target = yield* makeTarget
          const raw = yield* target.raw
          const { a, stream } = yield* cachedThenAppended(target, {}, "folded")
          // A holds version 6 with its hash. Event 6 is rewritten and 6 and 7 re-hashed: the chain is
          // consistent, but 7 no longer links to the hash A kept for 6.
          yield* edit(raw, stream, 6, "next", "unkeyed")
          expectTamper(yield* Effect.either(a.load(stream)), stream, 7)
          // Dropped from the cache: A's next load reads the whole stream, whose forged chain holds unkeyed.
          assert.include(textOf(yield* a.load(stream)), "FORGED")
        })
    )

    it.scoped("unverified: the catch-up does not check, and serves the edit", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        const raw = yield* target.raw
        const options: StoreOptions = { hmacKey: key, integrity: "unverified" }
        const { a, stream } = yield* cachedThenAppended(target, options, "fast")
        yield* edit(raw, stream, 7, "seventh", "unkeyed")
        const served = yield* a.load(stream)
        assert.strictEqual(served.version, 7)
        assert.include(textOf(served), "FORGED")
      })
    )

    it.scoped("honest appends by two processes, keyed and unkeyed: every catch-up passes", () =>
      Effect.gen(function* () {
        const target = yield* makeTarget
        for (const options of [{ hmacKey: key }, {}]) {
          const { a, b, stream } = yield* cachedThenAppended(target, options, "honest")
          for (let round = 0; round < 5; round++) {
            yield* a.appendMessages(stream, [Message.user(`a ${round}`)])
            yield* b.appendMessages(stream, [Message.assistant(`b ${round}`)])
          }
          const [fromA, fromB] = [yield* a.load(stream), yield* b.load(stream)]
          assert.strictEqual(fromA.version, 17)
          assert.deepStrictEqual(fromA, fromB)
          assert.deepStrictEqual(fromA, yield* (yield* target.open(options)).load(stream))
        }
      })
    )
  })
}
