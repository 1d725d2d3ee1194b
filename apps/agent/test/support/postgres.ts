// The PostgreSQL test server (started by the memory package's postgresServer.ts globalSetup).
import { randomUUID } from "node:crypto"
import * as Effect from "effect/Effect"
import pg from "pg"
import { inject } from "vitest"

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the test server. */
    readonly pgUrl: string
  }
}

/** A new empty database on the test server: its URL. */
export const freshDatabase: Effect.Effect<string> = Effect.promise(async () => {
  const admin = inject("pgUrl")
  const name = `ctxlog_agent_${randomUUID().replaceAll("-", "").slice(0, 12)}`
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  try {
    await client.query(`create database ${name}`)
  } finally {
    await client.end()
  }
  const url = new URL(admin)
  url.pathname = `/${name}`
  return url.toString()
})
