import { EventLog } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import { PostgresEventLog, SqliteEventLog } from "../src/index.js"
import { adminUrl } from "./support/postgres.js"

const open = <E>(layer: Layer.Layer<EventLog.EventLog, E>) => Effect.either(Effect.provide(EventLog.EventLog, layer))

describe("opening a store", () => {
  it.effect("a SQLite file in a missing directory fails with a StoreError naming it", () =>
    Effect.gen(function* () {
      const result = yield* open(SqliteEventLog.layer({ filename: "/nonexistent-ctxlog-dir/log.db" }))
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left._tag, "StoreError")
        assert.include(result.left.message, "/nonexistent-ctxlog-dir/log.db")
      }
    })
  )

  it.effect("an unreachable PostgreSQL server fails with a StoreError when the layer is built", () =>
    Effect.gen(function* () {
      const url = new URL(adminUrl())
      url.port = "1"
      const result = yield* open(PostgresEventLog.layer({ url: url.toString() }))
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left._tag, "StoreError")
        assert.include(result.left.message, "connect to PostgreSQL")
      }
    })
  )
})
