// The admin URL the PostgreSQL test server setup provides (packages/memory/test/support/postgresServer.ts),
// and a fresh database on it for each test that needs one.
import { randomUUID } from "node:crypto"
import { inject } from "@effect/vitest"
import pg from "pg"

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the test server: tests create their own databases on it. */
    readonly pgUrl: string
  }
}

/** Create a new, empty database on the test server; returns its URL. */
export const freshDatabase = async (prefix = "ctxlog_inspector"): Promise<string> => {
  const admin = inject("pgUrl")
  const name = `${prefix}_${randomUUID().replaceAll("-", "").slice(0, 12)}`
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
}
