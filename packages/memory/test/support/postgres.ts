import { randomUUID } from "node:crypto"
import { EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import pg from "pg"
import { inject } from "vitest"
import { PostgresEventLog } from "../../src/index.js"

/** The admin URL of the test server (see postgresServer.ts). */
export const adminUrl = (): string => inject("pgUrl")

/** Create an empty database on the test server and return its URL. */
export const freshDatabase = (label: string): Effect.Effect<string, EventLog.StoreError> =>
  Effect.tryPromise({
    try: async () => {
      const name = `ctxlog_${label}_${randomUUID().replaceAll("-", "").slice(0, 12)}`
      const client = new pg.Client({ connectionString: adminUrl() })
      await client.connect()
      try {
        await client.query(`create database ${name}`)
      } finally {
        await client.end()
      }
      const url = new URL(adminUrl())
      url.pathname = `/${name}`
      return url.toString()
    },
    catch: (cause) => new EventLog.StoreError({ operation: "create test database", detail: String(cause) })
  })

/** A PostgreSQL log layer over a fresh database. */
export const layer = (label: string, options: Omit<PostgresEventLog.Options, "url"> = {}) =>
  Layer.unwrapEffect(Effect.map(freshDatabase(label), (url) => PostgresEventLog.layer({ ...options, url })))
