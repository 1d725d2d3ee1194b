/**
 * PostgreSQL for this package's tests: the server comes from `@ctxlog/memory`'s vitest global setup
 * (`packages/memory/test/support/postgresServer.ts`: a throwaway cluster, stopped after the run, or
 * `CTXLOG_TEST_PG_URL`); each saver gets a database of its own, made from a template that is migrated
 * once, and dropped when the saver is done.
 */
import { randomUUID } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"
import { CtxlogSaver } from "../../src/index.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the test server (given by the global setup). */
    readonly pgUrl: string
  }
}

const adminUrl = (): string => inject("pgUrl")

const urlOf = (name: string): string => {
  const url = new URL(adminUrl())
  url.pathname = `/${name}`
  return url.toString()
}

const admin = async <A>(use: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: adminUrl() })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

let template: Promise<string> | undefined

/** A migrated, empty database to copy (`create database … template`): copying is faster than migrating. */
const templateDatabase = (): Promise<string> => {
  template ??= (async () => {
    const name = `ctxlog_lg_template_${randomUUID().replaceAll("-", "").slice(0, 12)}`
    await admin((client) => client.query(`create database ${name}`))
    const saver = new CtxlogSaver({ postgres: urlOf(name) })
    // Opening migrates the schema; a read of a missing checkpoint opens the database and writes nothing.
    await saver.getTuple({ configurable: { thread_id: "template" } })
    await saver.close()
    return name
  })()
  return template
}

/** A new, empty, migrated database; returns its URL and a function that drops it. */
export const freshDatabase = async (): Promise<{ readonly url: string; readonly drop: () => Promise<void> }> => {
  const from = await templateDatabase()
  const name = `ctxlog_lg_${randomUUID().replaceAll("-", "").slice(0, 16)}`
  await admin((client) => client.query(`create database ${name} template ${from}`))
  return {
    url: urlOf(name),
    drop: () => admin((client) => client.query(`drop database if exists ${name}`).then(() => undefined))
  }
}
