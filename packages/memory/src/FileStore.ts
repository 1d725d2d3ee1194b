/**
 * The file store: large tool outputs kept once, content-addressed (SHA-256 of the text), in the same
 * database as the log (SQLite or PostgreSQL, table `files`, migration `0008_files`). The event and the
 * window hold a handle instead — the tool result part's `stored` (`Message.StoredOutput`: hash, bytes,
 * lines, tokens) and a `content` that is a preview starting with a line naming the output and how to
 * read it, which is exactly what every builder sends the model. A pruning stub keeps that first line,
 * so a stubbed output still points at its handle.
 *
 * Files belong to a stream: they are keyed by `(stream, sha256)` (the same output twice in a stream is
 * stored once), written with the store's owner and read only by it (a scoped store), and an erasure of
 * the stream deletes them in its transaction. Every read checks the text against its hash.
 *
 * @since 0.4.0
 */
import { createHash } from "node:crypto"
import { type EventLog, Message, TokenCounter } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** No file of this id in the stream (or not the scoped store's). @since 0.4.0 */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", {
  stream: Schema.String,
  id: Schema.String
}) {
  override get message(): string {
    return `no stored output "${this.id}" in stream "${this.stream}"`
  }
}

/** A short id matches more than one stored output. @since 0.4.0 */
export class AmbiguousFileId extends Schema.TaggedError<AmbiguousFileId>()("AmbiguousFileId", {
  stream: Schema.String,
  id: Schema.String,
  matches: Schema.Int
}) {
  override get message(): string {
    return `stored output id "${this.id}" matches ${this.matches} outputs in stream "${this.stream}": give more of the hash`
  }
}

/** A read request is malformed (bad id, bad line range); nothing was read. @since 0.4.0 */
export class InvalidFileRequest extends Schema.TaggedError<InvalidFileRequest>()("InvalidFileRequest", {
  field: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `file store request: ${this.field}: ${this.detail}`
  }
}

/** A stored text no longer hashes to its id: the database was changed outside ctxlog. @since 0.4.0 */
export class FileCorrupted extends Schema.TaggedError<FileCorrupted>()("FileCorrupted", {
  stream: Schema.String,
  sha256: Schema.String,
  actual: Schema.String
}) {
  override get message(): string {
    return `stored output ${this.sha256} in stream "${this.stream}" hashes to ${this.actual}: it was changed`
  }
}

/** A stored output's description. @since 0.4.0 */
export interface FileInfo {
  readonly stream: string
  readonly sha256: string
  readonly bytes: number
  readonly lines: number
  readonly createdAt: number
}

/** What a read returns: the text of lines `fromLine..toLine` (1-based, inclusive) of `totalLines`. @since 0.4.0 */
export interface FileText {
  readonly sha256: string
  readonly content: string
  readonly fromLine: number
  readonly toLine: number
  readonly totalLines: number
  readonly bytes: number
}

/** A problem `verify` found. @since 0.4.0 */
export interface FileProblem {
  readonly stream: string
  readonly sha256: string
  readonly check: "content-hash" | "missing"
  readonly detail: string
}

/** Lines to read (1-based, inclusive); either end may be left out. @since 0.4.0 */
export interface LineRange {
  readonly fromLine?: number
  readonly toLine?: number
}

/** The file store of a durable log. @since 0.4.0 */
export class FileStore extends Context.Tag("@ctxlog/memory/FileStore")<FileStore, FileStore.Service>() {}

/** @since 0.4.0 */
export declare namespace FileStore {
  /** @since 0.4.0 */
  export interface Service {
    /** Store `content` for `stream` (idempotent: the same text again writes nothing). */
    readonly put: (
      stream: string,
      content: string
    ) => Effect.Effect<FileInfo, InvalidFileRequest | EventLog.OwnerMismatch | EventLog.StoreError>
    /** Read a stored output whole or by lines; `id` is its SHA-256 or a unique prefix of 8+ hex digits. */
    readonly read: (
      stream: string,
      id: string,
      range?: LineRange
    ) => Effect.Effect<
      FileText,
      FileNotFound | AmbiguousFileId | InvalidFileRequest | FileCorrupted | EventLog.StoreError
    >
    /** The stream's stored outputs, oldest first. */
    readonly list: (stream: string) => Effect.Effect<ReadonlyArray<FileInfo>, EventLog.StoreError>
    /**
     * Check every stored output of `stream` against its hash, and that each handle in `referenced` (the
     * `stored` parts of the stream's events, see {@link referencedIn}) has its file.
     */
    readonly verify: (
      stream: string,
      referenced?: ReadonlyArray<Message.StoredOutput>
    ) => Effect.Effect<ReadonlyArray<FileProblem>, EventLog.StoreError>
  }
}

/** The hex SHA-256 of a text's UTF-8 bytes. @since 0.4.0 */
export const sha256Of = (content: string): string => createHash("sha256").update(content, "utf8").digest("hex")

/** Lines of a text: a trailing newline ends the last line rather than starting an empty one. @since 0.4.0 */
export const linesOf = (content: string): ReadonlyArray<string> => {
  if (content.length === 0) return []
  const lines = content.split("\n")
  if (lines.at(-1) === "") lines.pop()
  return lines
}

/** The short id a handle line shows (the first 16 hex digits of the hash). @since 0.4.0 */
export const shortId = (sha256: string): string => sha256.slice(0, 16)

/** The first line of a stored output's preview: what it is and how to read it (under 100 characters). @since 0.4.0 */
export const handleLine = (stored: Message.StoredOutput): string =>
  `[stored output id=${shortId(stored.sha256)}, ${stored.bytes} bytes, ${stored.lines} lines: use read_output]`

/**
 * The preview the model sees in place of a stored output: the handle line, the first lines of the
 * output within `previewChars`, and a note on how to read the rest.
 * @since 0.4.0
 */
export const preview = (content: string, stored: Message.StoredOutput, previewChars: number): string => {
  const lines = linesOf(content)
  const shown: Array<string> = []
  let used = 0
  for (const line of lines) {
    const cost = line.length + 1
    if (used + cost > previewChars) {
      if (shown.length === 0) shown.push(`${line.slice(0, Math.max(0, previewChars - 1))}…`)
      break
    }
    shown.push(line)
    used += cost
  }
  const id = shortId(stored.sha256)
  return [
    handleLine(stored),
    ...shown,
    `[showing ${shown.length} of ${stored.lines} lines; read_output {"id":"${id}"} returns it whole, with "start" and "end" a line range]`
  ].join("\n")
}

/** Settings of {@link offload}. @since 0.4.0 */
export interface OffloadOptions {
  /** Tool outputs of more UTF-8 bytes than this are stored (default 16,384). */
  readonly thresholdBytes?: number
  /** Characters of the output shown in the preview (default 2,000). */
  readonly previewChars?: number
  /** Tool call ids whose results stay inline whatever their size (e.g. the `read_output` calls). */
  readonly keepInline?: ReadonlySet<string>
}

/**
 * Store the large tool outputs of `messages` (about to be appended to `stream`) and replace each by its
 * handle: `stored` set, `content` the preview, so the event and the window hold the handle and the
 * window counts only the preview. Everything else is returned as it was.
 * @since 0.4.0
 */
export const offload = (
  stream: string,
  messages: ReadonlyArray<Message.MessageInput>,
  options: OffloadOptions = {}
): Effect.Effect<
  ReadonlyArray<Message.MessageInput>,
  InvalidFileRequest | EventLog.OwnerMismatch | EventLog.StoreError,
  FileStore | TokenCounter.TokenCounter
> =>
  Effect.gen(function* () {
    const threshold = options.thresholdBytes ?? 16_384
    const previewChars = options.previewChars ?? 2000
    if (!Number.isInteger(threshold) || threshold < 0) {
      return yield* new InvalidFileRequest({
        field: "thresholdBytes",
        detail: `${threshold} is not a non-negative integer`
      })
    }
    if (!Number.isInteger(previewChars) || previewChars < 1) {
      return yield* new InvalidFileRequest({
        field: "previewChars",
        detail: `${previewChars} is not a positive integer`
      })
    }
    const store = yield* FileStore
    const counter = yield* TokenCounter.TokenCounter
    return yield* Effect.forEach(messages, (message) => {
      const large = message.parts.some(
        (part) =>
          part.type === "tool_result" &&
          part.stored === undefined &&
          options.keepInline?.has(part.toolCallId) !== true &&
          Buffer.byteLength(part.content, "utf8") > threshold
      )
      if (!large) return Effect.succeed(message)
      return Effect.map(
        Effect.forEach(message.parts, (part) => {
          if (
            part.type !== "tool_result" ||
            part.stored !== undefined ||
            options.keepInline?.has(part.toolCallId) === true ||
            Buffer.byteLength(part.content, "utf8") <= threshold
          ) {
            return Effect.succeed(part)
          }
          return Effect.map(store.put(stream, part.content), (info): Message.Part => {
            const stored: Message.StoredOutput = {
              sha256: info.sha256,
              bytes: info.bytes,
              lines: info.lines,
              tokens: counter.count(part.content)
            }
            return { ...part, content: preview(part.content, stored, previewChars), stored }
          })
        }),
        (parts): Message.MessageInput => ({ ...message, parts })
      )
    })
  })

/** The handles in a run of messages (e.g. the history of every event of a stream), by hash. @since 0.4.0 */
export const referencedIn = (
  messages: Iterable<{ readonly parts: ReadonlyArray<Message.Part> }>
): ReadonlyArray<Message.StoredOutput> => {
  const found = new Map<string, Message.StoredOutput>()
  for (const message of messages) {
    for (const result of Message.toolResultsOf(message)) {
      if (result.stored !== undefined && !found.has(result.stored.sha256))
        found.set(result.stored.sha256, result.stored)
    }
  }
  return [...found.values()]
}

/** Read a stored output through the `FileStore` in context. @since 0.4.0 */
export const read = (
  stream: string,
  id: string,
  range?: LineRange
): Effect.Effect<
  FileText,
  FileNotFound | AmbiguousFileId | InvalidFileRequest | FileCorrupted | EventLog.StoreError,
  FileStore
> => Effect.flatMap(FileStore, (store) => store.read(stream, id, range))
