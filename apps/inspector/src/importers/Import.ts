/**
 * `ctxlog import`: files and folders in, one stream per session out. The format is detected from the
 * content (or forced); each session is read, recorded and written on its own, so a malformed session
 * writes nothing while the others of the same run still import; what failed is reported with its
 * file and line. Line types a reader does not know are counted, never fatal.
 *
 * @since 0.8.0
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import type { EventLog, WindowEvent } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Pipeline from "../Pipeline.js"
import * as Transfer from "../Transfer.js"
import * as AiSdk from "./AiSdk.js"
import * as ClaudeCode from "./ClaudeCode.js"
import * as Codex from "./Codex.js"
import * as Responses from "./Responses.js"
import { type FileRead, type Format, isRecord, record } from "./Session.js"

/** The first objects of a text: its JSONL lines, or the items of its JSON document. */
const sample = (text: string): { readonly lines: ReadonlyArray<Record<string, unknown>>; readonly json: unknown } => {
  const body = text.replace(/^\uFEFF/, "")
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    json = undefined
  }
  const lines: Array<Record<string, unknown>> = []
  for (const raw of body.split("\n").slice(0, 50)) {
    if (raw.trim() === "") continue
    try {
      const value: unknown = JSON.parse(raw)
      if (isRecord(value)) lines.push(value)
    } catch {
      // A line that is not JSON: the reader names it.
    }
  }
  return { lines, json }
}

/**
 * The format of a file, from its content: a `ctxlog.events` export, a Claude Code session, a Codex
 * rollout, or a JSON document of OpenAI chat messages, Responses / Agents items or AI SDK messages.
 * Undecided: `ctxlog` (whose reader then names what is wrong).
 * @since 0.8.0
 */
export const detect = (text: string): Format => {
  const { lines, json } = sample(text)
  if (lines[0]?.format === Transfer.format) return "ctxlog"
  if (json === undefined || (lines.length > 1 && !Array.isArray(json))) {
    if (ClaudeCode.looksLike(lines)) return "claude-code"
    if (Codex.looksLike(lines)) return "codex"
    return "ctxlog"
  }
  const items: ReadonlyArray<unknown> = Array.isArray(json)
    ? json
    : isRecord(json) && Array.isArray(json.messages)
      ? json.messages
      : isRecord(json) && Array.isArray(json.items)
        ? json.items
        : isRecord(json) && Array.isArray(json.input)
          ? json.input
          : []
  if (Responses.looksLike(items)) return "openai-responses"
  if (AiSdk.looksLike(items)) return "ai-sdk"
  return "openai-chat"
}

/** Every file a path names: a file itself, or the `.jsonl` / `.json` files under a folder, sorted. @since 0.8.0 */
export const filesOf = (path: string): ReadonlyArray<string> => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return [path]
  const out: Array<string> = []
  for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith(".")) continue
    const full = join(path, entry.name)
    if (entry.isDirectory()) out.push(...filesOf(full))
    else if (/\.jsonl?$/i.test(entry.name)) out.push(full)
  }
  return out
}

/** What the older single-stream formats need from the command line. @since 0.8.0 */
export interface Options {
  readonly format: Format | "auto"
  /** The stream to write (only when the run has one session). */
  readonly stream?: string | undefined
  /** openai-chat / ai-sdk / openai-responses: the builder their calls are rendered with. */
  readonly provider: "anthropic" | "openai" | "ollama" | "default"
  readonly model: string
  readonly budget?: number | undefined
  readonly hmacKey?: string | undefined
}

/** One session ready to write. */
interface Ready {
  readonly file: string
  readonly format: Format
  readonly stream: string
  readonly events: ReadonlyArray<WindowEvent.WindowEvent>
  readonly metadata: ReadonlyArray<EventLog.EventMetadata>
  readonly recordedAt?: ReadonlyArray<number> | undefined
  readonly calls?: number | undefined
}

/** A session written. @since 0.8.0 */
export interface Imported {
  readonly file: string
  readonly format: Format
  readonly stream: string
  readonly events: number
  readonly version: number
  /** Model calls (`PromptRendered`), for the session formats. */
  readonly calls?: number | undefined
}

/** A file or session that was not written, and why. @since 0.8.0 */
export interface Failed {
  readonly file: string
  readonly stream?: string | undefined
  /** 1-based; 0 when the problem is not one line's. */
  readonly line: number
  readonly detail: string
}

/** What a run did. @since 0.8.0 */
export interface Report {
  readonly files: number
  readonly imported: ReadonlyArray<Imported>
  readonly failed: ReadonlyArray<Failed>
  /** Line (and block) types no reader knew, counted over every file. */
  readonly unknown: Readonly<Record<string, number>>
}

const readText = (file: string) =>
  Effect.try({
    try: () => readFileSync(file, "utf8"),
    catch: (cause) =>
      new Transfer.ImportError({ file, line: 0, detail: cause instanceof Error ? cause.message : String(cause) })
  })

/** A session file's reader, by format. @since 0.8.0 */
export const readSessions = (
  file: string,
  text: string,
  format: Exclude<Format, "ctxlog" | "openai-chat">,
  options: Pick<Options, "provider" | "model">
): Effect.Effect<FileRead, Transfer.ImportError> => {
  switch (format) {
    case "claude-code":
      return ClaudeCode.read(file, text)
    case "codex":
      return Codex.read(file, text)
    case "openai-responses":
      return Responses.read(file, text, options.model)
    case "ai-sdk":
      return AiSdk.read(file, text, options)
  }
}

/**
 * The sessions of one file, as events, nothing written (the older formats through their own paths):
 * what `import` writes, and what a sweep's `--import` replays.
 * @since 0.8.0
 */
export const sessionsOf = (
  file: string,
  options: Options
): Effect.Effect<ReadonlyArray<Session>, Transfer.ImportError | Pipeline.PipelineError> =>
  prepare(file, options, {}).pipe(
    Effect.map((sessions) => sessions.flatMap((session) => ("events" in session ? [session] : [])))
  )

/** One session of a file, as events (what {@link sessionsOf} returns). @since 0.8.0 */
export interface Session {
  readonly file: string
  readonly format: Format
  readonly stream: string
  readonly events: ReadonlyArray<WindowEvent.WindowEvent>
  /** Each event's time (ms since the epoch), when the format records them. */
  readonly recordedAt?: ReadonlyArray<number> | undefined
}

/** The sessions of one file, as events (the older formats through their own paths). */
const prepare = (
  file: string,
  options: Options,
  unknown: Record<string, number>
): Effect.Effect<ReadonlyArray<Ready | Failed>, Transfer.ImportError | Pipeline.PipelineError> =>
  Effect.gen(function* () {
    const text = yield* readText(file)
    const format = options.format === "auto" ? detect(text) : options.format
    if (format === "ctxlog") {
      const parsed = yield* Transfer.parseJsonl(file, text)
      return [
        { file, format, stream: options.stream ?? parsed.stream, events: parsed.events, metadata: parsed.metadata }
      ]
    }
    if (format === "openai-chat") {
      let json: unknown
      try {
        json = JSON.parse(text.replace(/^\uFEFF/, ""))
      } catch (cause) {
        return yield* new Transfer.ImportError({
          file,
          line: 0,
          detail: `not JSON (${cause instanceof Error ? cause.message : String(cause)})`
        })
      }
      const messages = yield* Pipeline.fromOpenAIChat(json).pipe(
        Effect.mapError((error) => new Transfer.ImportError({ file, line: 0, detail: error.message }))
      )
      const stream = options.stream ?? file.replace(/^.*[\\/]/, "").replace(/\.json$/i, "")
      const policy = Pipeline.importPolicy(
        {
          provider: options.provider,
          model: options.model,
          ...(options.budget === undefined ? {} : { contextWindow: options.budget })
        },
        options.budget !== undefined
      )
      const events = yield* Pipeline.run(stream, Pipeline.turnsOf(messages), () => policy)
      return [{ file, format, stream, events, metadata: [] }]
    }
    const read = yield* readSessions(file, text, format, options)
    for (const [type, n] of Object.entries(read.unknown)) unknown[type] = (unknown[type] ?? 0) + n
    // Every session of the file is recorded before any is written: a file that fails writes nothing.
    const out: Array<Ready> = []
    for (const session of read.sessions) {
      const stream = read.sessions.length === 1 && options.stream !== undefined ? options.stream : session.stream
      const recorded = yield* record({ ...session, stream })
      out.push({
        file,
        format,
        stream,
        events: recorded.events,
        metadata: recorded.metadata,
        recordedAt: recorded.recordedAt,
        calls: recorded.calls
      })
    }
    return out
  })

/**
 * Import every file the paths name into `target`: each session its own stream, written atomically; a
 * failure is reported and the run goes on. `progress` is told after each file (the CLI draws it on a TTY).
 * @since 0.8.0
 */
export const run = (
  paths: ReadonlyArray<string>,
  target: Transfer.Target,
  options: Options,
  progress: (done: number, total: number, file: string) => void = () => {}
): Effect.Effect<Report> =>
  Effect.gen(function* () {
    const files: Array<string> = []
    const failed: Array<Failed> = []
    let unreadable = 0
    for (const path of paths) {
      try {
        files.push(...filesOf(path))
      } catch (cause) {
        // A path that cannot be read is a failure of its own; the other paths still import.
        failed.push({ file: path, line: 0, detail: cause instanceof Error ? cause.message : String(cause) })
        unreadable++
      }
    }
    const imported: Array<Imported> = []
    const unknown: Record<string, number> = {}
    for (const [index, file] of files.entries()) {
      const sessions = yield* Effect.either(prepare(file, options, unknown))
      if (sessions._tag === "Left") {
        const error = sessions.left
        failed.push({
          file,
          line: error._tag === "ImportError" ? error.line : 0,
          detail: error._tag === "ImportError" ? error.detail : error.message
        })
      } else {
        for (const session of sessions.right) {
          if (!("events" in session)) continue
          const written = yield* Effect.either(
            Transfer.write(target, session.stream, session.events, {
              metadata: session.metadata,
              recordedAt: session.recordedAt,
              hmacKey: options.hmacKey
            })
          )
          if (written._tag === "Left") {
            failed.push({ file, stream: session.stream, line: 0, detail: written.left.message })
            continue
          }
          imported.push({
            file,
            format: session.format,
            stream: session.stream,
            events: written.right.written,
            version: written.right.nextExpectedVersion,
            ...(session.calls === undefined ? {} : { calls: session.calls })
          })
        }
      }
      progress(index + 1, files.length, file)
    }
    return { files: files.length + unreadable, imported, failed, unknown }
  })
