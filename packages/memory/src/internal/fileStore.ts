import { EventLog, Validation } from "@ctxlog/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import {
  AmbiguousFileId,
  FileCorrupted,
  type FileInfo,
  FileNotFound,
  type FileProblem,
  type FileStore,
  InvalidFileRequest,
  linesOf,
  sha256Of,
  type StoredOutput
} from "../FileStore.js"
import type * as Redaction from "../Redaction.js"
import type { Backend } from "./backend.js"

const hex = /^[0-9a-f]+$/

/** The file store over a backend; `scope` is the store's owner (undefined: every stream). */
export const make = (
  backend: Backend,
  options: { readonly scope: string | undefined; readonly redactor: Redaction.Redactor }
): FileStore.Service => {
  const { scope, redactor } = options

  const checkStream = (stream: string) => {
    const problem = Validation.streamIdProblem(stream)
    return problem === undefined
      ? Effect.void
      : Effect.fail(new InvalidFileRequest({ field: "stream", detail: `the stream id ${problem}` }))
  }

  const info = (row: {
    readonly stream_id: string
    readonly sha256: string
    readonly bytes: number
    readonly lines: number
    readonly created_at: number
  }): FileInfo => ({
    stream: row.stream_id,
    sha256: row.sha256,
    bytes: Number(row.bytes),
    lines: Number(row.lines),
    createdAt: Number(row.created_at)
  })

  const put: FileStore.Service["put"] = (stream, raw) =>
    Effect.gen(function* () {
      yield* checkStream(stream)
      // Redacted like an event: a secret that never enters the database cannot leak from it.
      const content = redactor.redact(raw)
      const sha256 = sha256Of(content)
      if (scope !== undefined) {
        const owner = yield* backend.query("read stream owner", (db) =>
          db.selectFrom("stream_owners").select("owner").where("stream_id", "=", stream).executeTakeFirst()
        )
        if (owner !== undefined && owner.owner !== scope) {
          return yield* new EventLog.OwnerMismatch({ stream, requested: scope, current: owner.owner })
        }
      }
      const now = yield* Clock.currentTimeMillis
      const row = {
        stream_id: stream,
        sha256,
        owner: scope ?? null,
        content,
        bytes: Buffer.byteLength(content, "utf8"),
        lines: linesOf(content).length,
        created_at: now
      }
      yield* backend.query("store file", (db) =>
        db
          .insertInto("files")
          .values(row)
          .onConflict((conflict) => conflict.columns(["stream_id", "sha256"]).doNothing())
          .execute()
      )
      const stored = yield* backend.query("store file", (db) =>
        db
          .selectFrom("files")
          .select(["stream_id", "sha256", "owner", "bytes", "lines", "created_at"])
          .where("stream_id", "=", stream)
          .where("sha256", "=", sha256)
          .executeTakeFirst()
      )
      if (stored === undefined) {
        return yield* new EventLog.StoreError({ operation: "store file", detail: "the row is gone after its insert" })
      }
      if (scope !== undefined && stored.owner !== scope) {
        return yield* new EventLog.OwnerMismatch({ stream, requested: scope, current: stored.owner })
      }
      return info(stored)
    })

  const read: FileStore.Service["read"] = (stream, id, range = {}) =>
    Effect.gen(function* () {
      yield* checkStream(stream)
      const key = id.trim().toLowerCase()
      if (key.length < 8 || key.length > 64 || !hex.test(key)) {
        return yield* new InvalidFileRequest({
          field: "id",
          detail: `${JSON.stringify(id.slice(0, 80))} is not a SHA-256 or a prefix of 8 to 64 hex digits`
        })
      }
      const rows = yield* backend.query("read file", (db) => {
        let query = db
          .selectFrom("files")
          .select(["stream_id", "sha256", "content", "bytes", "lines", "created_at"])
          .where("stream_id", "=", stream)
        // The key is hex only, so it holds no LIKE wildcard.
        query = key.length === 64 ? query.where("sha256", "=", key) : query.where("sha256", "like", `${key}%`)
        if (scope !== undefined) query = query.where("owner", "=", scope)
        return query.limit(2).execute()
      })
      const row = rows[0]
      if (row === undefined) return yield* new FileNotFound({ stream, id })
      if (rows.length > 1) return yield* new AmbiguousFileId({ stream, id, matches: rows.length })
      const actual = sha256Of(row.content)
      if (actual !== row.sha256) return yield* new FileCorrupted({ stream, sha256: row.sha256, actual })
      const lines = linesOf(row.content)
      const total = lines.length
      const from = range.fromLine ?? 1
      const to = Math.min(range.toLine ?? total, total)
      if (!Number.isInteger(from) || from < 1 || (total > 0 && from > total)) {
        return yield* new InvalidFileRequest({ field: "fromLine", detail: `${from} is not a line of 1..${total}` })
      }
      if (!Number.isInteger(to) || (range.toLine !== undefined && range.toLine < from)) {
        return yield* new InvalidFileRequest({ field: "toLine", detail: `${range.toLine} is before fromLine ${from}` })
      }
      const whole = range.fromLine === undefined && range.toLine === undefined
      return {
        sha256: row.sha256,
        content: whole ? row.content : lines.slice(from - 1, to).join("\n"),
        fromLine: total === 0 ? 0 : from,
        toLine: to,
        totalLines: total,
        bytes: Number(row.bytes)
      }
    })

  const list: FileStore.Service["list"] = (stream) =>
    backend
      .query("list files", (db) => {
        let query = db
          .selectFrom("files")
          .select(["stream_id", "sha256", "bytes", "lines", "created_at"])
          .where("stream_id", "=", stream)
        if (scope !== undefined) query = query.where("owner", "=", scope)
        return query.orderBy("created_at").orderBy("sha256").execute()
      })
      .pipe(Effect.map((rows) => rows.map(info)))

  const verify: FileStore.Service["verify"] = (stream, referenced: ReadonlyArray<StoredOutput> = []) =>
    Effect.gen(function* () {
      const rows = yield* backend.query("verify files", (db) => {
        let query = db.selectFrom("files").select(["sha256", "content"]).where("stream_id", "=", stream)
        if (scope !== undefined) query = query.where("owner", "=", scope)
        return query.orderBy("sha256").execute()
      })
      const problems: Array<FileProblem> = []
      const present = new Set<string>()
      for (const row of rows) {
        present.add(row.sha256)
        const actual = sha256Of(row.content)
        if (actual !== row.sha256) {
          problems.push({
            stream,
            sha256: row.sha256,
            check: "content-hash",
            detail: `the stored text hashes to ${actual.slice(0, 16)}…`
          })
        }
      }
      for (const handle of referenced) {
        if (!present.has(handle.sha256)) {
          problems.push({
            stream,
            sha256: handle.sha256,
            check: "missing",
            detail: "an event holds this handle but the file store has no such output"
          })
        }
      }
      return problems
    })

  return { put, read, list, verify }
}
