/**
 * The file store: large tool outputs kept once, content-addressed (SHA-256 of the text), in the same
 * database as the log (SQLite or PostgreSQL, table `files`, migration `0009_files`). The event and the
 * window hold a handle instead: the tool result part's `content` becomes a preview that starts with a
 * line naming the output and ends with the full handle (hash, bytes, lines, tokens) and how to read it —
 * exactly what every builder sends the model, so renders need nothing new. `handleOf` reads the handle
 * back as a {@link StoredOutput}. A pruning stub keeps the first line, so a stubbed output still names
 * its id (`shortIdIn`).
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

/** The handle of a stored output: its hash, UTF-8 bytes, lines and the tokens of the whole text. @since 0.4.0 */
export const StoredOutput = Schema.Struct({
  sha256: Schema.String.pipe(Schema.pattern(/^[0-9a-f]{64}$/)),
  bytes: Schema.Int.pipe(Schema.nonNegative()),
  lines: Schema.Int.pipe(Schema.nonNegative()),
  tokens: Schema.Int.pipe(Schema.nonNegative())
})
/** @since 0.4.0 */
export type StoredOutput = typeof StoredOutput.Type

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
      referenced?: ReadonlyArray<StoredOutput>
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
export const handleLine = (stored: StoredOutput): string =>
  `[stored output id=${shortId(stored.sha256)}, ${stored.bytes} bytes, ${stored.lines} lines: use read_output]`

/**
 * The preview the model sees in place of a stored output: the handle line, the first lines of the
 * output within `previewChars`, and a note on how to read the rest.
 * @since 0.4.0
 */
export const preview = (content: string, stored: StoredOutput, previewChars: number): string => {
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
  return [handleLine(stored), ...shown, `[showing ${shown.length} of ${stored.lines} lines] ${footer(stored)}`].join(
    "\n"
  )
}

/** The preview's last line: the whole handle, and how to read the output. */
const footer = (stored: StoredOutput): string =>
  `[stored output sha256=${stored.sha256} bytes=${stored.bytes} lines=${stored.lines} tokens=${stored.tokens}; read_output {"id":"${shortId(stored.sha256)}"} returns it whole, with "start" and "end" a line range]`

const footerPattern =
  /\[stored output sha256=([0-9a-f]{64}) bytes=(\d+) lines=(\d+) tokens=(\d+); read_output \{"id":"([0-9a-f]{16})"\}[^\n]*\]$/

/**
 * The handle a tool result part holds, read from its preview; `undefined` for an output that is not
 * stored (or whose preview was stubbed: see {@link shortIdIn}).
 * @since 0.4.0
 */
export const handleOf = (part: { readonly content: string }): StoredOutput | undefined => {
  const match = footerPattern.exec(part.content)
  if (match === null) return undefined
  const [, sha256 = "", bytes = "", lines = "", tokens = "", short = ""] = match
  if (!part.content.startsWith("[stored output id=") || short !== shortId(sha256)) return undefined
  return { sha256, bytes: Number(bytes), lines: Number(lines), tokens: Number(tokens) }
}

/** The short id named in a preview or in the pruning stub of one (its first line). @since 0.4.0 */
export const shortIdIn = (content: string): string | undefined =>
  /\[stored output id=([0-9a-f]{16}),/.exec(content)?.[1]

/** Settings of {@link offload}. @since 0.4.0 */
export interface OffloadOptions {
  /** Tool outputs of more UTF-8 bytes than this are stored (default 16,384). */
  readonly thresholdBytes?: number | undefined
  /** Characters of the output shown in the preview (default 2,000). */
  readonly previewChars?: number | undefined
  /** Tool call ids whose results stay inline whatever their size (e.g. the `read_output` calls). */
  readonly keepInline?: ReadonlySet<string> | undefined
}

/**
 * Store the large tool outputs of `messages` (about to be appended to `stream`) and replace each by its
 * preview holding the handle, so the event and the window hold the handle and the window counts only the
 * preview. Everything else is returned as it was.
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
          handleOf(part) === undefined &&
          options.keepInline?.has(part.toolCallId) !== true &&
          Buffer.byteLength(part.content, "utf8") > threshold
      )
      if (!large) return Effect.succeed(message)
      return Effect.map(
        Effect.forEach(message.parts, (part) => {
          if (
            part.type !== "tool_result" ||
            handleOf(part) !== undefined ||
            options.keepInline?.has(part.toolCallId) === true ||
            Buffer.byteLength(part.content, "utf8") <= threshold
          ) {
            return Effect.succeed(part)
          }
          return Effect.map(store.put(stream, part.content), (info): Message.Part => {
            const stored: StoredOutput = {
              sha256: info.sha256,
              bytes: info.bytes,
              lines: info.lines,
              tokens: counter.count(part.content)
            }
            return { ...part, content: preview(part.content, stored, previewChars) }
          })
        }),
        (parts): Message.MessageInput => ({ ...message, parts })
      )
    })
  })

/** The handles in a run of messages (e.g. the history of every event of a stream), by hash. @since 0.4.0 */
export const referencedIn = (
  messages: Iterable<{ readonly parts: ReadonlyArray<Message.Part> }>
): ReadonlyArray<StoredOutput> => {
  const found = new Map<string, StoredOutput>()
  for (const message of messages) {
    for (const result of Message.toolResultsOf(message)) {
      const handle = handleOf(result)
      if (handle !== undefined && !found.has(handle.sha256)) found.set(handle.sha256, handle)
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
