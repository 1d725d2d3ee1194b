/**
 * Anchored heads (issue 43, item 2): a store opened with `anchor` writes the heads it appended (stream,
 * version, stored hash of the last event) to a sink outside its database on a schedule: every N appends
 * and every T milliseconds, and when the store closes. Whatever rewrites the database cannot rewrite
 * what the sink kept, so `LogReader.verify(stream, { anchors })` (and `ctxlog verify --anchors FILE`)
 * catches a recomputed chain, a truncation with the `streams` row fixed, and a rollback of the whole
 * database to an older genuine state, none of which the unkeyed chain can.
 *
 * Sinks: an append-only JSON-lines file ({@link file}: one line `{"anchoredAt","heads":[…]}` per write,
 * fsynced), a separate SQLite database ({@link sqlite}: table `anchors`), or a command ({@link command}:
 * the same line on its standard input, e.g. to send it to a transparency log or object storage with
 * retention; keep what it stores as a file of those lines to verify against).
 *
 * Cost on the append path: one map entry per append; one sink write per N appends (or per T ms) carrying
 * the latest head of each stream appended since the last write. A failed sink write is logged and its
 * heads are kept for the next one; the appends it followed are committed already.
 *
 * @since 0.8.0
 */
import { execFile } from "node:child_process"
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs"
import { EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { betterSqlite3 } from "./internal/drivers.js"
import { add, counters } from "./internal/workCounters.js"

/** Where anchored heads go. @since 0.8.0 */
export type Sink =
  | { readonly _tag: "File"; readonly path: string }
  | { readonly _tag: "Sqlite"; readonly filename: string }
  | { readonly _tag: "Command"; readonly command: string; readonly args: ReadonlyArray<string> }

/** An append-only JSON-lines file (created if missing; never truncated). @since 0.8.0 */
export const file = (path: string): Sink => ({ _tag: "File", path })

/** A separate SQLite database (table `anchors`, created if missing). @since 0.8.0 */
export const sqlite = (filename: string): Sink => ({ _tag: "Sqlite", filename })

/** A command run once per write with the JSON line on its standard input; a non-zero exit is a failed write. @since 0.8.0 */
export const command = (executable: string, args: ReadonlyArray<string> = []): Sink => ({
  _tag: "Command",
  command: executable,
  args
})

/** When and where a store anchors its heads. @since 0.8.0 */
export interface Options {
  readonly sink: Sink
  /** Write once this many appends went by since the last write (default 100; 0: not by count). */
  readonly everyAppends?: number | undefined
  /** Write every this many milliseconds when heads are pending (default 60,000; 0: not by time). */
  readonly everyMs?: number | undefined
}

/** One anchored head. @since 0.8.0 */
export interface AnchoredHead {
  readonly stream: string
  readonly version: number
  /** The stored hash of the event at `version`. */
  readonly hash: string
  /** Epoch milliseconds of the write that kept it. */
  readonly anchoredAt: number
}

/** What one sink write carries. @since 0.8.0 */
export interface Record {
  readonly anchoredAt: number
  readonly heads: ReadonlyArray<{ readonly stream: string; readonly version: number; readonly hash: string }>
}

/** The JSON line of a write. @since 0.8.0 */
export const formatRecord = (record: Record): string => `${JSON.stringify(record)}\n`

const readError = (where: string, detail: string) =>
  new EventLog.StoreError({ operation: `reading anchors ${where}`, detail })

const isHead = (value: unknown): value is { stream: string; version: number; hash: string } =>
  typeof value === "object" &&
  value !== null &&
  typeof Reflect.get(value, "stream") === "string" &&
  Number.isInteger(Reflect.get(value, "version")) &&
  typeof Reflect.get(value, "hash") === "string" &&
  /^[0-9a-f]{64}$/.test(String(Reflect.get(value, "hash")))

/**
 * Read the heads a sink kept: a SQLite anchor database, or a file of JSON lines (the file sink's, or what
 * a command sink stored). A bad line fails naming it. @since 0.8.0
 */
export const read = (path: string): Effect.Effect<ReadonlyArray<AnchoredHead>, EventLog.StoreError> =>
  Effect.gen(function* () {
    if (!existsSync(path)) return yield* readError(path, "no such file")
    const bytes = yield* Effect.try({
      try: () => readFileSync(path),
      catch: (cause) => readError(path, cause instanceof Error ? cause.message : String(cause))
    })
    if (bytes.subarray(0, 16).toString("latin1") === "SQLite format 3\u0000") {
      const BetterSqlite3 = yield* Effect.mapError(betterSqlite3, (missing) => readError(path, missing.message))
      return yield* Effect.try({
        try: () => {
          const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true })
          try {
            return db
              .prepare<[], { stream_id: string; version: number; hash: string; anchored_at: number }>(
                "select stream_id, version, hash, anchored_at from anchors order by anchored_at, rowid"
              )
              .all()
              .map((row) => ({
                stream: row.stream_id,
                version: Number(row.version),
                hash: row.hash,
                anchoredAt: Number(row.anchored_at)
              }))
          } finally {
            db.close()
          }
        },
        catch: (cause) => readError(path, cause instanceof Error ? cause.message : String(cause))
      })
    }
    const heads: Array<AnchoredHead> = []
    for (const [index, line] of bytes.toString("utf8").split("\n").entries()) {
      if (line.trim() === "") continue
      let parsed: unknown
      try {
        parsed = JSON.parse(line)
      } catch {
        return yield* readError(path, `line ${index + 1} is not JSON`)
      }
      const anchoredAt = typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, "anchoredAt") : undefined
      const listed = typeof parsed === "object" && parsed !== null ? Reflect.get(parsed, "heads") : undefined
      if (typeof anchoredAt !== "number" || !Array.isArray(listed) || !listed.every(isHead)) {
        return yield* readError(
          path,
          `line ${index + 1}: expected {"anchoredAt": <ms>, "heads": [{"stream", "version", "hash"}]}`
        )
      }
      for (const head of listed) heads.push({ stream: head.stream, version: head.version, hash: head.hash, anchoredAt })
    }
    return heads
  })

/** The heads of `heads` by stream. @since 0.8.0 */
export const byStream = (heads: ReadonlyArray<AnchoredHead>): ReadonlyMap<string, ReadonlyArray<AnchoredHead>> => {
  const grouped = new Map<string, Array<AnchoredHead>>()
  for (const head of heads) {
    const list = grouped.get(head.stream)
    if (list === undefined) grouped.set(head.stream, [head])
    else list.push(head)
  }
  return grouped
}

/** What the append path calls: note a head; a sink write when one is due. @since 0.8.0 */
export interface Anchorer {
  /** Note the head an append left; returns the sink write when N appends went by, else `Effect.void`. */
  readonly note: (stream: string, version: number, hash: string) => Effect.Effect<void>
  /** Write the pending heads now (nothing when none are pending). */
  readonly flush: Effect.Effect<void, EventLog.StoreError>
}

const writeFailed = (sink: Sink, cause: unknown) =>
  new EventLog.StoreError({
    operation: `anchoring heads to ${sink._tag === "File" ? sink.path : sink._tag === "Sqlite" ? sink.filename : sink.command}`,
    detail: cause instanceof Error ? cause.message : String(cause)
  })

/** The write of one record to a sink, opened for the store's scope. */
const writer = (
  sink: Sink
): Effect.Effect<(record: Record) => Effect.Effect<void, EventLog.StoreError>, EventLog.StoreError, Scope.Scope> => {
  switch (sink._tag) {
    case "File":
      return Effect.succeed((record) =>
        Effect.try({
          try: () => {
            const fd = openSync(sink.path, "a")
            try {
              writeSync(fd, formatRecord(record))
              fsyncSync(fd)
            } finally {
              closeSync(fd)
            }
          },
          catch: (cause) => writeFailed(sink, cause)
        })
      )
    case "Sqlite":
      return Effect.gen(function* () {
        const BetterSqlite3 = yield* Effect.mapError(betterSqlite3, (missing) => writeFailed(sink, missing.message))
        const db = yield* Effect.acquireRelease(
          Effect.try({
            try: () => {
              const opened = new BetterSqlite3(sink.filename)
              opened.pragma("journal_mode = WAL")
              opened.pragma("synchronous = FULL")
              opened.exec(
                `create table if not exists anchors (
                   anchored_at integer not null, stream_id text not null, version integer not null, hash text not null)`
              )
              return opened
            },
            catch: (cause) => writeFailed(sink, cause)
          }),
          (opened) => Effect.sync(() => opened.close())
        )
        const insert = db.prepare<[number, string, number, string]>(
          "insert into anchors (anchored_at, stream_id, version, hash) values (?, ?, ?, ?)"
        )
        const writeAll = db.transaction((record: Record) => {
          for (const head of record.heads) insert.run(record.anchoredAt, head.stream, head.version, head.hash)
        })
        return (record: Record) =>
          Effect.try({
            try: () => {
              writeAll.immediate(record)
            },
            catch: (cause) => writeFailed(sink, cause)
          })
      })
    case "Command":
      return Effect.succeed((record) =>
        Effect.async<void, EventLog.StoreError>((resume) => {
          const child = execFile(sink.command, [...sink.args], (error) => {
            resume(error === null ? Effect.void : Effect.fail(writeFailed(sink, error)))
          })
          child.stdin?.end(formatRecord(record))
        })
      )
  }
}

/**
 * An anchorer for a store: notes heads, writes them every `everyAppends` appends and every `everyMs`
 * (a fiber of `scope`), and once more when `scope` closes. @since 0.8.0
 */
export const make = (options: Options): Effect.Effect<Anchorer, EventLog.StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const everyAppends = options.everyAppends ?? 100
    const everyMs = options.everyMs ?? 60_000
    if (!Number.isInteger(everyAppends) || everyAppends < 0 || !Number.isInteger(everyMs) || everyMs < 0) {
      return yield* new EventLog.StoreError({
        operation: "open",
        detail: `anchor: everyAppends and everyMs are whole numbers >= 0, got ${everyAppends} and ${everyMs}`
      })
    }
    const write = yield* writer(options.sink)
    const pending = new Map<string, { version: number; hash: string }>()
    let appends = 0
    const flush: Effect.Effect<void, EventLog.StoreError> = Effect.suspend(() => {
      appends = 0
      if (pending.size === 0) return Effect.void
      const heads = [...pending].map(([stream, head]) => ({ stream, version: head.version, hash: head.hash }))
      pending.clear()
      return Effect.flatMap(
        Effect.clockWith((clock) => clock.currentTimeMillis),
        (anchoredAt) =>
          write({ anchoredAt, heads }).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                add(counters.anchorWrites)
                add(counters.headsAnchored, heads.length)
              })
            ),
            // Kept for the next write, unless a newer head of the stream was noted meanwhile.
            Effect.tapError(() =>
              Effect.sync(() => {
                for (const head of heads) {
                  const newer = pending.get(head.stream)
                  if (newer === undefined || newer.version < head.version) pending.set(head.stream, head)
                }
              })
            )
          )
      )
    })
    const logged = Effect.catchAll(flush, (error) => Effect.logWarning(`heads not anchored: ${error.message}`))
    yield* Effect.addFinalizer(() => logged)
    // The first write one period after the open, then every period.
    if (everyMs > 0) yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(everyMs), logged)))
    return {
      note: (stream, version, hash) => {
        const held = pending.get(stream)
        if (held === undefined || held.version < version) pending.set(stream, { version, hash })
        appends++
        return everyAppends > 0 && appends >= everyAppends ? logged : Effect.void
      },
      flush
    }
  })
