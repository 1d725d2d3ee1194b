import type BetterSqlite3 from "better-sqlite3"
import { add, counters } from "./workCounters.js"

// Taking SQLite's write lock (BEGIN IMMEDIATE) without SQLite's busy handler. That handler sleeps 1, 2,
// 5, 10, 15, 20, 25, 25, 25, 50, 50, 100, 100, … ms between tries: with several writer processes on one
// file, whose transactions hold the lock for a fraction of a millisecond, a writer that lost one try
// sleeps far past the next release, and one in a loop takes the lock again before the sleepers wake. In
// the bench's four-writer run, raw better-sqlite3 writers and ours alike spent most of their time in waits
// over 5 ms, one append waited 3 s, and totals swung 2x between identical runs (issue 24). Here a writer
// that finds the lock taken tries again after a short, jittered pause that grows to at most 2 ms, so it
// gets the lock soon after it is released. The connection's `busy_timeout` bounds the whole wait, and is
// in force again for every other statement.

const sleeper = new Int32Array(new SharedArrayBuffer(4))

/** The longest pause between two tries, in milliseconds. */
export const longestPauseMs = 2

const busy = (cause: unknown): boolean =>
  typeof cause === "object" &&
  cause !== null &&
  "code" in cause &&
  typeof cause.code === "string" &&
  cause.code.startsWith("SQLITE_BUSY")

/**
 * Run `block`, a write transaction that starts with BEGIN IMMEDIATE, trying again while the lock is held
 * elsewhere, up to `timeoutMs` in all. A try that failed on the lock wrote nothing (its transaction was
 * never begun, or was rolled back), so `block` runs again from the start.
 */
export const make = (raw: BetterSqlite3.Database, timeoutMs: number) => {
  const noWait = raw.prepare("pragma busy_timeout = 0")
  const restore = raw.prepare(`pragma busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`)
  return <A>(block: () => A): A => {
    noWait.get()
    try {
      const deadline = performance.now() + timeoutMs
      let pause = 0.05
      for (;;) {
        try {
          return block()
        } catch (cause) {
          if (!busy(cause) || performance.now() >= deadline) throw cause
        }
        add(counters.lockWaits)
        // Blocks this thread for the pause, as SQLite's own handler does (better-sqlite3 is synchronous).
        Atomics.wait(sleeper, 0, 0, pause * (0.5 + Math.random()))
        pause = Math.min(pause * 1.5, longestPauseMs)
      }
    } finally {
      restore.get()
    }
  }
}
