import * as Effect from "effect/Effect"
import { assert, describe, expect, layer } from "@effect/vitest"
import { postgres, RawSql, sqliteFile } from "./support/stores.js"

// The schema the migrations produce, compared with the checked-in snapshots in test/__snapshots__.
// A change here is a change to the on-disk format: add a migration, never edit a released one.

const sqliteSchema = Effect.flatMap(RawSql, (raw) =>
  raw.rows(
    `select type, name, tbl_name, sql from sqlite_master
     where name not like 'sqlite_%' and name not like 'recall_fts_%' order by type, name`
  )
)

const postgresSchema = Effect.flatMap(RawSql, (raw) =>
  Effect.all({
    columns: raw.rows(
      `select table_name, column_name, data_type, is_nullable, column_default, is_identity, generation_expression
       from information_schema.columns where table_schema = 'public' order by table_name, ordinal_position`
    ),
    indexes: raw.rows(
      `select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by indexname`
    ),
    triggers: raw.rows(
      `select event_object_table, trigger_name, event_manipulation, action_timing, action_statement
       from information_schema.triggers where trigger_schema = 'public' order by trigger_name, event_manipulation`
    ),
    truncateTriggers: raw.rows(
      `select tgname from pg_trigger where not tgisinternal and tgrelid = 'events'::regclass order by tgname`
    )
  })
)

describe("schema", () => {
  layer(sqliteFile())("SQLite", (it) => {
    it.effect("matches the checked-in snapshot", () =>
      Effect.gen(function* () {
        const schema = yield* sqliteSchema
        assert.isTrue(schema.some((row) => row.name === "events_reject_update"))
        yield* Effect.promise(() =>
          expect(`${JSON.stringify(schema, null, 2)}\n`).toMatchFileSnapshot("./__snapshots__/schema.sqlite.json")
        )
      })
    )
  })

  layer(postgres("schema"), { timeout: "60 seconds" })("PostgreSQL", (it) => {
    it.effect("matches the checked-in snapshot", () =>
      Effect.gen(function* () {
        const schema = yield* postgresSchema
        assert.isTrue(schema.truncateTriggers.length === 3)
        yield* Effect.promise(() =>
          expect(`${JSON.stringify(schema, null, 2)}\n`).toMatchFileSnapshot("./__snapshots__/schema.postgres.json")
        )
      })
    )
  })
})
