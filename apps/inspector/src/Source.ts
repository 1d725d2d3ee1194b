/**
 * Where the inspector reads a log: `@ctxlog/memory`'s {@link LogReader} over a SQLite file or PostgreSQL
 * (the one door to the database; the inspector has no SQL of its own). Opening never writes and never
 * creates a database; reads are verified by default (hash chain, `streams` row, snapshot seal, a head
 * kept elsewhere), and damage fails the read with `TamperDetected`.
 *
 * @since 0.1.0
 */
import type { EventCodec, EventLog, WindowEvent } from "@ctxlog/core"
import { LogReader } from "@ctxlog/memory"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"

/** The database could not be opened. @since 0.1.0 */
export class SourceError extends Schema.TaggedError<SourceError>()("SourceError", {
  target: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.target}: ${this.detail}`
  }
}

/** Read-only, verified queries over a log. @since 0.1.0 */
export type Source = LogReader.LogReader.Service

/** A stored event as read, before decoding. @since 0.1.0 */
export type RawEvent = LogReader.StoredEvent

/** A stored window snapshot. @since 0.1.0 */
export type RawSnapshot = LogReader.StoredSnapshot

/** Which events of a stream to read. @since 0.1.0 */
export type Range = LogReader.Range

/** Every failure of a read: storage, or damage found by a verified read. @since 0.1.0 */
export type ReadFailure = EventLog.StoreError | EventLog.TamperDetected

/** The default database path of every command. @since 0.1.0 */
export const defaultDb = "./.ctxlog/ctxlog.db"

/** How to read: verified (default) or not, the HMAC key, heads kept elsewhere. @since 0.1.0 */
export type ReadOptions = LogReader.Options

const opened = (target: string) => (error: LogReader.OpenError) =>
  new SourceError({
    target,
    detail:
      error._tag === "DatabaseNotFound"
        ? "no such database file (the inspector never creates one)"
        : error._tag === "StoreError"
          ? error.detail
          : error.message
  })

/** Open a SQLite file read-only (a missing file is an error, never a new database). @since 0.1.0 */
export const sqlite = (filename: string, options: ReadOptions = {}): Effect.Effect<Source, SourceError, Scope.Scope> =>
  LogReader.makeSqlite({ filename, ...options }).pipe(Effect.mapError(opened(`sqlite:${filename}`)))

/** Open a PostgreSQL database for reading (every query in a `READ ONLY` transaction). @since 0.1.0 */
export const postgres = (url: string, options: ReadOptions = {}): Effect.Effect<Source, SourceError, Scope.Scope> =>
  LogReader.makePostgres({ url, ...options }).pipe(
    Effect.mapError(opened(`postgres:${url.replace(/\/\/[^@/]*@/, "//***@")}`))
  )

/** Decode one stored event with its location in error messages. @since 0.1.0 */
export const decode: (raw: RawEvent) => Effect.Effect<WindowEvent.WindowEvent, EventCodec.EventDecodeError> =
  LogReader.decode

/** The damage a verified read found. @since 0.1.0 */
export const isDamage = (error: { readonly _tag: string }): error is EventLog.TamperDetected =>
  error._tag === "TamperDetected"
