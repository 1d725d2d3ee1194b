import { randomUUID } from "node:crypto"
import { EventLog, type WindowEvent } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
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

/** A `MessageAppended` event of `stream` with ids derived from its index ("<stream>-e<i>", "<stream>-m<i>"). */
export const message = (stream: string, index: number): WindowEvent.WindowEvent => ({
  _tag: "MessageAppended",
  id: `${stream}-e${index}`,
  message: {
    id: `${stream}-m${index}`,
    role: "user",
    kind: "chat",
    parts: [{ type: "text", text: `message ${index} of ${stream}` }],
    tokens: 3
  }
})

/** A pg client of its own (not a store's pool), ended with the scope. */
export const client = (url: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const connection = new pg.Client({ connectionString: url })
      await connection.connect()
      return connection
    }),
    (connection) => Effect.promise(() => connection.end())
  )

export const query = (connection: pg.Client, text: string, values: Array<unknown> = []) =>
  Effect.promise(() => connection.query<Record<string, unknown>>(text, values))

/** The log of a store over `url` (its own pool), open while the caller's scope is. */
export const logOver = (url: string, options: Omit<PostgresEventLog.Options, "url"> = {}) =>
  Effect.map(Layer.build(PostgresEventLog.layer({ ...options, url })), (context) =>
    Context.get(context, EventLog.EventLog)
  )

/** Backends of this database waiting for a lock (seen from `observer`). */
export const waitingOnLocks = (observer: pg.Client) =>
  Effect.map(
    query(
      observer,
      `select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`
    ),
    ({ rows }) => Number(rows[0]?.n ?? 0)
  )

/**
 * Wait until `fiber` ends or some backend waits for a lock, whichever is seen first (polled; no time is
 * asserted): "done" or "waiting".
 */
export const doneOrWaiting = <A, E>(fiber: Fiber.RuntimeFiber<A, E>, observer: pg.Client) =>
  Effect.gen(function* () {
    for (;;) {
      if ((yield* Fiber.poll(fiber))._tag === "Some") return "done" as const
      if ((yield* waitingOnLocks(observer)) > 0) return "waiting" as const
      yield* Effect.sleep("5 millis")
    }
  })
