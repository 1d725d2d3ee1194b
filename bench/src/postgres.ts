// A throwaway PostgreSQL server for the PostgreSQL scenarios: the memory package's test cluster
// (initdb into a temp dir as the postgres user, pg_ctl on 127.0.0.1 and a free port, stopped when the
// process exits, also on an interrupt), with fsync on. With CTXLOG_BENCH_PG_URL set, that server is used.
import pg from "pg"
import { startCluster } from "../../packages/memory/test/support/cluster.js"

/** A running server: its admin URL and how to stop it. */
export interface Server {
  readonly adminUrl: string
  readonly stop: () => void
  /** Create an empty database and return its URL. */
  readonly database: (name: string) => Promise<string>
}

const withDatabases = (adminUrl: string, stop: () => void): Server => ({
  adminUrl,
  stop,
  database: async (name) => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(`drop database if exists ${name}`)
      await client.query(`create database ${name}`)
    } finally {
      await client.end()
    }
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return url.toString()
  }
})

/** Start a server, or say why not (the PostgreSQL scenarios are then skipped with that note). */
export const startServer = async (): Promise<Server | string> => {
  const fromEnv = process.env.CTXLOG_BENCH_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") return withDatabases(fromEnv, () => {})
  try {
    // Default durability (fsync on): the bench compares stores, not a crippled server.
    const cluster = await startCluster({ fsync: true })
    return withDatabases(cluster.url, cluster.destroy)
  } catch (cause) {
    return `could not start PostgreSQL: ${cause instanceof Error ? cause.message : String(cause)}`
  }
}
