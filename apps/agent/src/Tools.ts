/**
 * The agent's tools, with real effects confined to one workspace directory: `list_dir`, `read_file`
 * (line ranges), `search` (a regular expression over files), `write_file` and `run_command` (an
 * allow-list, a timeout, an output cap). A bad request — a path outside the workspace, a missing file,
 * a command not on the list — is a {@link ToolFailure} that the loop returns to the model as an error
 * result; it never ends the process.
 *
 * @since 0.1.0
 */
import { execFile } from "node:child_process"
import { promises as fs } from "node:fs"
import * as path from "node:path"
import { ArchiveRecall, EventLog, type LanguageModel, type Message } from "@ctxlog/core"
import type { FileStore } from "@ctxlog/memory"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { cutMessage, isCut } from "./ModelCall.js"

/** A tool call the tools refused or could not carry out; its message goes back to the model. @since 0.1.0 */
export class ToolFailure extends Schema.TaggedError<ToolFailure>()("ToolFailure", {
  tool: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.tool}: ${this.detail}`
  }
}

/** What one tool call produced. @since 0.1.0 */
export interface ToolOutput {
  readonly content: string
  readonly isError: boolean
  /** A command's exit code, when the tool ran one. */
  readonly exitCode?: number
}

/** Settings of the tools. @since 0.1.0 */
export interface Config {
  /** The directory every path is resolved in and confined to. */
  readonly workspace: string
  /** Executables `run_command` may start (default {@link defaultAllowList}). */
  readonly allowList?: ReadonlyArray<string>
  /** How long a command may run (default 20 s). */
  readonly timeoutMs?: number
  /** Characters of a command's output kept (default 64,000): the head and the tail. */
  readonly outputCap?: number
  /**
   * Reads a stored tool output (the file store of the session's stream, see {@link readOutputFrom});
   * when given, the `read_output` tool is offered.
   */
  readonly readOutput?: OutputReader
  /**
   * Answers `recall_archived`: what a summary, seam or cycle replaced, from the session's log (see
   * {@link recallArchivedFrom}); when given, the tool is offered.
   */
  readonly recallArchived?: ArchiveReader
}

/** Answers a `recall_archived` call; a failure's message goes back to the model. @since 0.8.0 */
export type ArchiveReader = (
  input: typeof ArchiveRecall.ToolInput.Type
) => Effect.Effect<string, { readonly message: string }>

/** Tokens a `recall_archived` answer may hold by default. @since 0.8.0 */
export const recallBudgetTokens = 2_000

/** The `recall_archived` reader of `stream` in an event log (`ArchiveRecall.recall`). @since 0.8.0 */
export const recallArchivedFrom =
  (log: EventLog.EventLog["Type"], stream: string, budgetTokens: number = recallBudgetTokens): ArchiveReader =>
  (input) =>
    ArchiveRecall.recall(stream, { ...input, budgetTokens }).pipe(Effect.provideService(EventLog.EventLog, log))

/** Reads a stored output whole or by lines; a failure's message goes back to the model. @since 0.1.0 */
export type OutputReader = (
  id: string,
  range: FileStore.LineRange
) => Effect.Effect<FileStore.FileText, { readonly message: string }>

/** The reader of `stream`'s stored outputs in a file store. @since 0.1.0 */
export const readOutputFrom =
  (files: FileStore.FileStore.Service, stream: string): OutputReader =>
  (id, range) =>
    files.read(stream, id, range)

/** The `read_output` tool: a stored tool output whole, or lines start..end. @since 0.1.0 */
export const readOutputSpec: LanguageModel.ToolSpec = {
  name: "read_output",
  description:
    "Read a tool output that was stored because it was large (its preview names it: [stored output id=…]). Whole, or lines start..end (1-based, inclusive).",
  inputSchema: {
    type: "object",
    properties: { id: { type: "string" }, start: { type: "integer" }, end: { type: "integer" } },
    required: ["id"]
  }
}

/** Executables `run_command` may start by default. @since 0.1.0 */
export const defaultAllowList: ReadonlyArray<string> = ["node", "npm", "ls", "cat", "grep", "wc", "head", "tail", "git"]

const json = (schema: { readonly [key: string]: Message.JsonValue }) => schema

/** The tool schemas sent to the model. @since 0.1.0 */
export const specs: ReadonlyArray<LanguageModel.ToolSpec> = [
  {
    name: "list_dir",
    description: "List a directory of the workspace (recursively with depth > 1). Paths are relative to the workspace.",
    inputSchema: json({
      type: "object",
      properties: { path: { type: "string" }, depth: { type: "integer", minimum: 1, maximum: 4 } },
      required: ["path"]
    })
  },
  {
    name: "read_file",
    description: "Read a text file of the workspace, optionally lines start..end (1-based, inclusive).",
    inputSchema: json({
      type: "object",
      properties: { path: { type: "string" }, start: { type: "integer" }, end: { type: "integer" } },
      required: ["path"]
    })
  },
  {
    name: "search",
    description: "Search files of the workspace for a JavaScript regular expression; prints path:line: text.",
    inputSchema: json({
      type: "object",
      properties: { pattern: { type: "string" }, path: { type: "string" }, maxResults: { type: "integer" } },
      required: ["pattern"]
    })
  },
  {
    name: "write_file",
    description: "Write (create or replace) a text file of the workspace.",
    inputSchema: json({
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"]
    })
  },
  {
    name: "run_command",
    description: "Run a command in the workspace (no shell; allow-listed executables only), e.g. `node --test`.",
    inputSchema: json({ type: "object", properties: { command: { type: "string" } }, required: ["command"] })
  }
]

const ListDir = Schema.Struct({ path: Schema.String, depth: Schema.optional(Schema.Int.pipe(Schema.between(1, 4))) })
const ReadFile = Schema.Struct({
  path: Schema.String,
  start: Schema.optional(Schema.Int.pipe(Schema.positive())),
  end: Schema.optional(Schema.Int.pipe(Schema.positive()))
})
const Search = Schema.Struct({
  pattern: Schema.String,
  path: Schema.optional(Schema.String),
  maxResults: Schema.optional(Schema.Int.pipe(Schema.positive()))
})
const WriteFile = Schema.Struct({ path: Schema.String, content: Schema.String })
const RunCommand = Schema.Struct({ command: Schema.String.pipe(Schema.minLength(1)) })
const ReadOutput = Schema.Struct({
  id: Schema.String.pipe(Schema.minLength(1)),
  start: Schema.optional(Schema.Int.pipe(Schema.positive())),
  end: Schema.optional(Schema.Int.pipe(Schema.positive()))
})

const decode = <A, I>(tool: string, schema: Schema.Schema<A, I>, input: unknown) =>
  Either.mapLeft(
    Schema.decodeUnknownEither(schema)(input),
    (error) => new ToolFailure({ tool, detail: `invalid input: ${error.message}` })
  )

/** Keep the head and the tail of `text` within `cap` characters, saying how much was cut. @since 0.1.0 */
export const capOutput = (text: string, cap: number): string => {
  if (text.length <= cap) return text
  const head = Math.floor(cap * 0.6)
  const tail = cap - head
  return `${text.slice(0, head)}\n[... ${text.length - cap} chars cut by the output cap ...]\n${text.slice(text.length - tail)}`
}

/** Split a command line into words: spaces separate, single or double quotes group. No shell features. @since 0.1.0 */
export const splitCommand = (line: string): ReadonlyArray<string> => {
  const words: Array<string> = []
  let current = ""
  let quote: string | undefined
  let started = false
  for (const char of line) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined
      else current += char
    } else if (char === "'" || char === '"') {
      quote = char
      started = true
    } else if (/\s/.test(char)) {
      if (started || current.length > 0) words.push(current)
      current = ""
      started = false
    } else {
      current += char
    }
  }
  if (started || current.length > 0) words.push(current)
  return words
}

const skipDirs = new Set(["node_modules", ".git", ".ctxlog"])

/** The tools over one workspace. @since 0.1.0 */
export interface Tools {
  readonly workspace: string
  readonly specs: ReadonlyArray<LanguageModel.ToolSpec>
  /** Run one tool call; failures come back as error outputs, never as a failed effect. */
  readonly run: (name: string, input: Message.JsonValue) => Effect.Effect<ToolOutput>
}

/** Build the tools over a workspace. @since 0.1.0 */
export const make = (config: Config): Tools => {
  const root = path.resolve(config.workspace)
  const allowList = new Set(config.allowList ?? defaultAllowList)
  const timeoutMs = config.timeoutMs ?? 20_000
  const outputCap = config.outputCap ?? 64_000

  /** Resolve `relative` inside the workspace, following symlinks, or fail naming the path. */
  const resolve = (tool: string, relative: string) =>
    Effect.tryPromise({
      try: async () => {
        const absolute = path.resolve(root, relative)
        const realRoot = await fs.realpath(root)
        // The deepest existing ancestor decides: a symlink inside the workspace may point outside.
        let existing = absolute
        for (;;) {
          try {
            existing = await fs.realpath(existing)
            break
          } catch {
            const parent = path.dirname(existing)
            if (parent === existing) break
            existing = parent
          }
        }
        for (const candidate of [absolute, existing]) {
          const inside = path.relative(candidate === absolute ? root : realRoot, candidate)
          if (inside.startsWith("..") || path.isAbsolute(inside)) throw new Error("outside")
        }
        return absolute
      },
      catch: () =>
        new ToolFailure({
          tool,
          detail: `path "${relative}" is outside the workspace ${root}; use a path relative to the workspace`
        })
    })

  const io = <A>(tool: string, what: string, run: () => Promise<A>) =>
    Effect.tryPromise({
      try: run,
      catch: (error) =>
        new ToolFailure({
          tool,
          detail: `${what}: ${error instanceof Error ? error.message.replace(root, ".") : String(error)}`
        })
    })

  const listDir = (input: typeof ListDir.Type) =>
    Effect.gen(function* () {
      const dir = yield* resolve("list_dir", input.path)
      const lines: Array<string> = []
      const walk = async (at: string, depth: number, indent: string): Promise<void> => {
        const entries = (await fs.readdir(at, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))
        for (const entry of entries) {
          if (skipDirs.has(entry.name)) continue
          const full = path.join(at, entry.name)
          if (entry.isDirectory()) {
            lines.push(`${indent}${entry.name}/`)
            if (depth > 1) await walk(full, depth - 1, `${indent}  `)
          } else if (entry.isSymbolicLink()) {
            lines.push(`${indent}${entry.name} -> (symbolic link, not followed)`)
          } else {
            const stat = await fs.lstat(full)
            lines.push(`${indent}${entry.name} (${stat.size} bytes)`)
          }
        }
      }
      yield* io("list_dir", `cannot list "${input.path}"`, () => walk(dir, input.depth ?? 1, ""))
      return { content: lines.length === 0 ? "(empty directory)" : lines.join("\n"), isError: false }
    })

  const readFile = (input: typeof ReadFile.Type) =>
    Effect.gen(function* () {
      const file = yield* resolve("read_file", input.path)
      const text = yield* io("read_file", `cannot read "${input.path}"`, () => fs.readFile(file, "utf8"))
      if (input.start === undefined && input.end === undefined) return { content: text, isError: false }
      const lines = text.split("\n")
      const start = input.start ?? 1
      const end = Math.min(lines.length, input.end ?? lines.length)
      if (start > end) {
        return yield* new ToolFailure({
          tool: "read_file",
          detail: `"${input.path}" has ${lines.length} lines; the range ${start}..${end} is empty`
        })
      }
      const width = String(end).length
      const body = lines
        .slice(start - 1, end)
        .map((line, index) => `${String(start + index).padStart(width)}| ${line}`)
        .join("\n")
      return { content: `${input.path} lines ${start}-${end} of ${lines.length}\n${body}`, isError: false }
    })

  const search = (input: typeof Search.Type) =>
    Effect.gen(function* () {
      const regex = yield* Effect.try({
        try: () => new RegExp(input.pattern),
        catch: (error) =>
          new ToolFailure({
            tool: "search",
            detail: `bad pattern: ${error instanceof Error ? error.message : String(error)}`
          })
      })
      const base = yield* resolve("search", input.path ?? ".")
      const max = input.maxResults ?? 500
      const hits: Array<string> = []
      const visit = async (at: string): Promise<void> => {
        // Symbolic links are not followed: one may point out of the workspace (or at itself).
        const stat = await fs.lstat(at)
        if (stat.isSymbolicLink()) return
        if (stat.isDirectory()) {
          const entries = (await fs.readdir(at)).sort()
          for (const entry of entries) if (!skipDirs.has(entry) && hits.length < max) await visit(path.join(at, entry))
          return
        }
        if (stat.size > 2_000_000) return
        const lines = (await fs.readFile(at, "utf8")).split("\n")
        for (const [index, line] of lines.entries()) {
          if (hits.length >= max) return
          if (regex.test(line)) hits.push(`${path.relative(root, at)}:${index + 1}: ${line}`)
        }
      }
      yield* io("search", `cannot search "${input.path ?? "."}"`, () => visit(base))
      return {
        content: hits.length === 0 ? `no match for /${input.pattern}/` : hits.join("\n"),
        isError: false
      }
    })

  const writeFile = (input: typeof WriteFile.Type) =>
    Effect.gen(function* () {
      const file = yield* resolve("write_file", input.path)
      yield* io("write_file", `cannot write "${input.path}"`, async () => {
        await fs.mkdir(path.dirname(file), { recursive: true })
        await fs.writeFile(file, input.content)
      })
      return { content: `wrote ${input.content.length} chars to ${input.path}`, isError: false }
    })

  const runCommand = (input: typeof RunCommand.Type) =>
    Effect.gen(function* () {
      const [command = "", ...args] = splitCommand(input.command)
      if (!allowList.has(command)) {
        return yield* new ToolFailure({
          tool: "run_command",
          detail: `"${command}" is not allowed; allowed: ${[...allowList].join(", ")}`
        })
      }
      const executable = command === "node" ? process.execPath : command
      // Interrupting the fiber (Ctrl-C) kills the child through the abort signal.
      return yield* Effect.async<ToolOutput>((resume, signal) => {
        execFile(
          executable,
          args,
          {
            cwd: root,
            timeout: timeoutMs,
            maxBuffer: 16 * 1024 * 1024,
            signal,
            env: { ...process.env, NO_COLOR: "1" }
          },
          (error, stdout, stderr) => {
            const output = capOutput(`${stdout}${stderr.length > 0 ? `\n${stderr}` : ""}`.trim(), outputCap)
            if (error === null) {
              resume(
                Effect.succeed({ content: `$ ${input.command}\n${output}\n[exit 0]`, isError: false, exitCode: 0 })
              )
              return
            }
            const timedOut = error.killed === true && error.signal === "SIGTERM"
            const code = typeof error.code === "number" ? error.code : 1
            const why = timedOut ? `timed out after ${timeoutMs} ms` : `exit ${code}`
            resume(
              Effect.succeed({ content: `$ ${input.command}\n${output}\n[${why}]`, isError: true, exitCode: code })
            )
          }
        )
      })
    })

  // Whole: the stored text itself, byte for byte; a range: a header line, then the lines.
  const readOutput = (input: typeof ReadOutput.Type): Effect.Effect<ToolOutput, ToolFailure> =>
    Effect.suspend(() => {
      const reader = config.readOutput
      if (reader === undefined) return Effect.fail(new ToolFailure({ tool: "read_output", detail: "no file store" }))
      // memory's `FileStore.LineRange` is exact (`fromLine?: number`).
      const range = {
        ...(input.start === undefined ? {} : { fromLine: input.start }),
        ...(input.end === undefined ? {} : { toLine: input.end })
      }
      return reader(input.id, range).pipe(
        Effect.map(
          (text): ToolOutput => ({
            content:
              input.start === undefined && input.end === undefined
                ? text.content
                : `[lines ${text.fromLine}-${text.toLine} of ${text.totalLines}]\n${text.content}`,
            isError: false
          })
        ),
        Effect.mapError((error) => new ToolFailure({ tool: "read_output", detail: error.message }))
      )
    })

  const dispatch = (name: string, input: Message.JsonValue): Effect.Effect<ToolOutput, ToolFailure> => {
    switch (name) {
      case "list_dir":
        return Effect.flatMap(decode(name, ListDir, input), listDir)
      case "read_file":
        return Effect.flatMap(decode(name, ReadFile, input), readFile)
      case "search":
        return Effect.flatMap(decode(name, Search, input), search)
      case "write_file":
        return Effect.flatMap(decode(name, WriteFile, input), writeFile)
      case "run_command":
        return Effect.flatMap(decode(name, RunCommand, input), runCommand)
      case ArchiveRecall.toolSpec.name: {
        const reader = config.recallArchived
        if (reader === undefined) return Effect.fail(new ToolFailure({ tool: name, detail: "no log to recall from" }))
        return Effect.flatMap(decode(name, ArchiveRecall.ToolInput, input), (request) =>
          reader(request).pipe(
            Effect.map((content): ToolOutput => ({ content, isError: false })),
            Effect.mapError((error) => new ToolFailure({ tool: name, detail: error.message }))
          )
        )
      }
      case "read_output":
        if (config.readOutput !== undefined) return Effect.flatMap(decode(name, ReadOutput, input), readOutput)
        return Effect.fail(new ToolFailure({ tool: name, detail: "no stored outputs in this session" }))
      default:
        return Effect.fail(
          new ToolFailure({ tool: name, detail: `no such tool; tools: ${specs.map((spec) => spec.name).join(", ")}` })
        )
    }
  }

  return {
    workspace: root,
    specs: [
      ...specs,
      ...(config.readOutput === undefined ? [] : [readOutputSpec]),
      ...(config.recallArchived === undefined ? [] : [ArchiveRecall.toolSpec])
    ],
    // A call the output limit cut off runs nothing: its arguments are not what the model meant.
    run: (name, input) =>
      (isCut(input) ? Effect.fail(new ToolFailure({ tool: name, detail: cutMessage })) : dispatch(name, input)).pipe(
        Effect.catchAll((failure) =>
          Effect.succeed<ToolOutput>({ content: `error: ${failure.message}`, isError: true })
        )
      )
  }
}
