import { EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import type pg from "pg"
import { type Backend, describe } from "./backend.js"
import { appendGateKey } from "./migrations.js"
import { add, counters } from "./workCounters.js"

// What PostgreSQL's readers of the whole log and its background catch-up take (ADR 0078): the bound of a
// global read, and a claim only one process holds at a time.

const storeError =
  (operation: string) =>
  (cause: unknown): EventLog.StoreError =>
    new EventLog.StoreError({ operation, detail: describe(cause) })

const connect = (pool: pg.Pool, operation: string) =>
  Effect.tryPromise({ try: () => pool.connect(), catch: storeError(operation) })

// One round trip that holds the gate exclusively only while the server runs it: once the lock is granted,
// every append that took a position before it has committed or rolled back, and none takes one until the
// COMMIT; the largest committed position then is the bound (any position not committed by then is
// larger: the identity only grows). It used to hold the gate for the whole read, across client round
// trips: every append in every process waited for each catch-up's read. A simple (unparameterised) query
// may hold several statements; an error ends the connection (an aborted transaction is not handed back
// to the pool).
const boundQuery = `begin; select pg_advisory_xact_lock(${appendGateKey}); select coalesce(max(global_position), 0) as bound from events; commit`

/** The bound of a global read: every event at or below it is committed (or never will be). */
export const globalBound = (pool: pg.Pool, operation: string): Effect.Effect<number, EventLog.StoreError> =>
  Effect.acquireUseRelease(
    connect(pool, operation),
    (client) =>
      Effect.tryPromise({
        try: async () => {
          add(counters.globalBounds)
          const results: unknown = await client.query(boundQuery)
          const bound: unknown = Array.isArray(results) ? results[2]?.rows?.[0]?.bound : undefined
          if (typeof bound !== "number") throw new Error(`no bound in the gate's answer: ${String(bound)}`)
          return bound
        },
        catch: storeError(operation)
      }),
    (client, exit) => Effect.sync(() => client.release(Exit.isFailure(exit) ? true : undefined))
  )

/** The advisory-lock key of a claim: "ctc" and 24 bits of the name's hash (never the gate's key, "ctxlog"). */
export const claimKey = (name: string): number => {
  let hash = 0
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) % 0x1000000
  return 0x637463000000 + hash
}

/**
 * `Backend.unlessRunningElsewhere` over a pool: a session advisory lock on a connection of its own, tried
 * once. Held, `body` runs and the lock is released after it; held elsewhere, nothing runs. A connection
 * whose unlock failed is ended (its session, and with it the lock, goes). With a pool of one connection
 * `body` always runs (it needs that connection).
 */
export const claimed =
  (pool: pg.Pool, maxConnections: number): Backend["unlessRunningElsewhere"] =>
  (name, body) => {
    if (maxConnections < 2) return Effect.map(body, Option.some)
    const key = claimKey(name)
    const operation = `claim ${name}`
    const claim = Effect.flatMap(connect(pool, operation), (client) =>
      Effect.tryPromise({
        try: async () => {
          add(counters.claimsTried)
          const result = await client.query<{ mine: boolean }>("select pg_try_advisory_lock($1) as mine", [key])
          return { client, mine: result.rows[0]?.mine === true }
        },
        catch: (cause) => {
          client.release(true)
          return storeError(operation)(cause)
        }
      })
    )
    return Effect.acquireUseRelease(
      claim,
      ({ mine }) => (mine ? Effect.map(body, Option.some) : Effect.succeed(Option.none())),
      ({ client, mine }) =>
        mine
          ? Effect.promise(() =>
              client.query("select pg_advisory_unlock($1)", [key]).then(
                () => client.release(),
                (cause: unknown) => client.release(cause instanceof Error ? cause : true)
              )
            )
          : Effect.sync(() => client.release())
    )
  }
