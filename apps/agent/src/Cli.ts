/**
 * The command line (`@effect/cli`): `run` (interactive, `--task` one-shot, `--session` resume), `demo`
 * and `sessions`.
 *
 * @since 0.1.0
 */
import { existsSync } from "node:fs"
import * as path from "node:path"
import { Command, Options } from "@effect/cli"
import { ContextService, EventLog } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { FileStore, RecallIndex } from "@ctxlog/memory"
import * as Agent from "./Agent.js"
import * as Demo from "./Demo.js"
import * as Invocation from "./Invocation.js"
import * as Prompt from "./Prompt.js"
import * as Provider from "./Provider.js"
import * as Sessions from "./Sessions.js"
import { newSessionId, readNotes } from "./Sessions.js"
import * as Stack from "./Stack.js"
import * as Tools from "./Tools.js"
import * as Ui from "./Ui.js"
import * as Workspace from "./Workspace.js"

const db = Options.text("db").pipe(
  Options.withDescription(`SQLite database file (default ${Stack.defaultDb})`),
  Options.optional
)
const pg = Options.text("pg").pipe(Options.withDescription("PostgreSQL URL instead of SQLite"), Options.optional)
const provider = Options.choice("provider", Provider.providerNames).pipe(
  Options.withDescription(
    "offline (scripted, no network; default), anthropic, openai (chat completions), openai-responses or ollama"
  ),
  Options.withDefault("offline" as const)
)
const model = Options.text("model").pipe(Options.optional)
const baseUrl = Options.text("base-url").pipe(Options.withDescription("API root of the provider"), Options.optional)
const contextWindow = Options.integer("context-window").pipe(
  Options.withDescription("the model's context window in tokens"),
  Options.optional
)
const maxOutput = Options.integer("max-output-tokens").pipe(
  Options.withDescription("output reserve: max_tokens of every request"),
  Options.optional
)
const workspace = Options.directory("workspace", { exists: "yes" }).pipe(
  Options.withDescription("the directory the tools may touch (default: the current directory)"),
  Options.optional
)
const task = Options.text("task").pipe(Options.withDescription("one-shot: run this task and exit"), Options.optional)
const session = Options.text("session").pipe(
  Options.withDescription("resume this session from the log"),
  Options.optional
)
const quiet = Options.boolean("quiet").pipe(Options.withDescription("print only errors and the final answer"))

const value = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

/** One line, whatever the message holds. */
const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, " ").trim()

/**
 * Print a failure once, as one sentence on stderr, then the resume hint when a session was open, and
 * set a failing exit code (no stack trace for expected errors).
 */
const reportFailure = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  hint: () => string | undefined = () => undefined,
  storage?: Stack.Storage
) =>
  effect.pipe(
    Effect.catchAll((error) =>
      Effect.sync(() => {
        const damage = damageOf(error, storage)
        if (damage !== undefined) {
          // As the inspector reports a damaged log: what is wrong, what to do, exit code 3; no resume hint.
          process.stderr.write(`ctxlog-agent: ${damage}\n`)
          process.exitCode = damagedExit
          return
        }
        const message = error instanceof Error ? error.message : String(error)
        const next = hint()
        process.stderr.write(`ctxlog-agent: ${oneLine(message)}\n${next === undefined ? "" : `${next}\n`}`)
        process.exitCode = 1
      })
    )
  )

/** The exit code of a run that found the log damaged: the inspector's (`ctxlog`'s) code for it. @since 0.3.0 */
export const damagedExit = 3

/**
 * A damaged log (an event that does not match its hash chain, or does not decode), said as the
 * inspector says it: the stream and version, that nothing was written, and the `ctxlog verify` command
 * that lists every problem. Anything else: `undefined`.
 */
const damageOf = (error: unknown, storage: Stack.Storage | undefined): string | undefined => {
  const tagged = error as { readonly _tag?: unknown; readonly stream?: unknown; readonly message?: unknown }
  if (tagged?._tag !== "TamperDetected" && tagged?._tag !== "EventDecodeError") return undefined
  const stream = typeof tagged.stream === "string" ? tagged.stream : undefined
  const verify = Invocation.rootScript("ctxlog", [
    "verify",
    ...(stream === undefined ? [] : [stream]),
    ...(storage === undefined ? [] : Invocation.storageArgs(storage))
  ])
  return `the log is damaged: ${oneLine(String(tagged.message))}; nothing was written. See every problem with: ${verify}; then restore the database from a backup (or a verified export)`
}

/**
 * What `/help` prints at the prompt (and `run --help` repeats): the slash commands, multi-line input
 * and Ctrl-C, in lines under 80 columns.
 * @since 0.3.0
 */
export const slashHelp = `Commands at the prompt (handled here, never sent to the model):
  /help              this list
  /exit, /quit       end the session (Ctrl-D on an empty line too)
  /reload FLAGS      another provider, model or window from the next turn on,
                     recorded in the log; FLAGS: --provider NAME --model NAME
                     --context-window N --max-output-tokens N --base-url URL
  /call TOOL {json}  offline model: call a tool, e.g. /call list_dir {"path":"."}
Input:
  Enter sends the message; a paste is one message, however many lines it has.
  End a line with \\ to continue it, or put lines between two ${Prompt.blockFence} lines.
  A message over 16 KB is kept whole in the log's file store: the model sees
  its start and reads the rest with its read_output tool.
Ctrl-C stops an answer (what came is kept in the log) and ends the session
with the command that resumes it; at the prompt it clears the line, or on an
empty line ends the session.`

/** The line printed under the session header on a terminal. */
const promptHelp = "type a message, Enter sends · /help for commands · /exit or Ctrl-D ends"

/** The slash command a line starts with (`/help`, `/reload`, …), or undefined for a message (`/usr/bin …` is one). */
const slashCommand = (text: string): string | undefined => /^(\/[a-z]+)(?:\s|$)/.exec(text)?.[1]

/** A SQLite log that is not there: said, and nothing created (no file, no folder). @since 0.3.0 */
export class NoLog extends Schema.TaggedError<NoLog>()("NoLog", { filename: Schema.String, start: Schema.String }) {
  override get message(): string {
    return `no log at ${this.filename} (no such file; nothing was created). A session writes one when it starts: ${this.start}`
  }
}

const mustExist = (storage: Stack.Storage) =>
  storage._tag === "sqlite" && storage.filename !== ":memory:" && !existsSync(storage.filename)
    ? Effect.fail(
        new NoLog({
          filename: path.resolve(storage.filename),
          start: Invocation.commandLine(["run", "--workspace", "DIR", ...Invocation.storageArgs(storage)])
        })
      )
    : Effect.void

/** Resuming from a database file that does not exist: say so, and create nothing. */
const mustHoldSessions = (storage: Stack.Storage, stream: string) =>
  storage._tag === "sqlite" && storage.filename !== ":memory:" && !existsSync(storage.filename)
    ? Effect.fail(
        new Sessions.UnknownSession({
          stream,
          where: `${path.resolve(storage.filename)} (no such file)`,
          nearest: [],
          list: Invocation.commandLine(["sessions", "--db", "FILE"])
        })
      )
    : Effect.void

/** The agent's sessions nearest to a mistyped id. */
const unknownSession = (stream: string, storage: Stack.Storage) =>
  Effect.gen(function* () {
    const recall = yield* RecallIndex.RecallIndex
    const known = yield* recall.streamsOf(Agent.owner)
    return new Sessions.UnknownSession({
      stream,
      where: Stack.describeStorage(storage),
      nearest: Sessions.nearest(
        stream,
        known.map((info) => info.stream)
      ),
      list: Invocation.commandLine(["sessions", ...Invocation.storageArgs(storage)])
    })
  })

/** A `/reload` line the agent cannot read: which word, and what it should be. @since 0.1.0 */
export class ReloadUsage extends Schema.TaggedError<ReloadUsage>()("ReloadUsage", {
  word: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `/reload: ${this.word}: ${this.detail} (usage: ${reloadUsage})`
  }
}

const reloadUsage =
  "/reload [--provider NAME] [--model NAME] [--context-window N] [--max-output-tokens N] [--base-url URL]"

/**
 * Read a `/reload` line against the session's provider options: the flags given replace the current
 * ones; another `--provider` starts from that provider's defaults (model, window, reserve, URL)
 * unless the line sets them too.
 * @since 0.1.0
 */
export const parseReload = (line: string, current: Provider.Options): Either.Either<Provider.Options, ReloadUsage> => {
  const words = line.trim().split(/\s+/).slice(1)
  const given: { -readonly [K in keyof Provider.Options]?: Provider.Options[K] } = {}
  if (words.length === 0) return Either.left(new ReloadUsage({ word: "/reload", detail: "say what to change" }))
  for (let index = 0; index < words.length; index++) {
    const word = words[index] ?? ""
    const [flag = "", inline] = word.startsWith("--") && word.includes("=") ? word.split(/=(.*)/s) : [word, undefined]
    const value = inline ?? words[++index]
    if (value === undefined || value.length === 0) {
      return Either.left(new ReloadUsage({ word: flag, detail: "needs a value" }))
    }
    const count = (): Either.Either<number, ReloadUsage> => {
      const n = Number(value)
      return Number.isInteger(n) && n > 0
        ? Either.right(n)
        : Either.left(new ReloadUsage({ word: flag, detail: `"${value}" is not a positive integer` }))
    }
    switch (flag) {
      case "--provider": {
        const name = Provider.providerNames.find((known) => known === value)
        if (name === undefined) {
          return Either.left(
            new ReloadUsage({ word: flag, detail: `"${value}" is not one of ${Provider.providerNames.join(", ")}` })
          )
        }
        given.provider = name
        break
      }
      case "--model":
        given.model = value
        break
      case "--base-url":
        given.baseUrl = value
        break
      case "--context-window": {
        const n = count()
        if (Either.isLeft(n)) return Either.left(n.left)
        given.contextWindow = n.right
        break
      }
      case "--max-output-tokens": {
        const n = count()
        if (Either.isLeft(n)) return Either.left(n.left)
        given.maxOutputTokens = n.right
        break
      }
      default:
        return Either.left(new ReloadUsage({ word: flag, detail: "is not a /reload option" }))
    }
  }
  const switched = given.provider !== undefined && given.provider !== current.provider
  // Reloaded options are compared whole (deep equality): a provider switch keeps `env` only when set.
  const base: Provider.Options = switched
    ? { provider: given.provider ?? current.provider, ...(current.env === undefined ? {} : { env: current.env }) }
    : current
  return Either.right({ ...base, ...given })
}

/** `run`: chat, a one-shot `--task`, or a resumed `--session`. @since 0.3.0 */
export const run = Command.make(
  "run",
  { task, session, provider, model, baseUrl, contextWindow, maxOutput, workspace, db, pg, quiet },
  (options) => {
    let hint: string | undefined
    return reportFailure(
      Effect.gen(function* () {
        const ui = Ui.make({ quiet: options.quiet })
        const providerOptions: Provider.Options = {
          provider: options.provider,
          model: value(options.model),
          baseUrl: value(options.baseUrl),
          contextWindow: value(options.contextWindow),
          maxOutputTokens: value(options.maxOutput)
        }
        const chosen = yield* Provider.make(providerOptions)
        // Before anything is built: the window must hold the reserve, the tool schemas and a conversation.
        // (The budget depends on the tool schemas, not on the workspace the tools will work in.)
        const budget = yield* Provider.checkWindow(
          chosen,
          Agent.budgetFor({
            provider: chosen,
            tools: Tools.make({
              workspace: process.cwd(),
              readOutput: Agent.noReader,
              recallArchived: Agent.noArchive
            })
          })
        )
        // A server that is not running fails here, before the log is opened: no empty session.
        yield* Provider.reachable(chosen)
        const storage = Stack.storageOf({ db: value(options.db), pg: value(options.pg) })
        const resumeId = value(options.session)
        const given = value(options.workspace)
        const explicit = given === undefined ? undefined : path.resolve(given)
        // A new session's workspace is known now: refuse a bad one before the log is opened.
        if (resumeId === undefined) yield* Workspace.refuseRepository(explicit ?? process.cwd())
        else yield* mustHoldSessions(storage, resumeId)
        const stream = resumeId ?? newSessionId()
        const oneShot = value(options.task)
        const program = Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const found = yield* ctx.load(stream)
          const resuming = found.version > 0
          if (resumeId !== undefined && !resuming)
            return yield* Effect.flatMap(unknownSession(resumeId, storage), Effect.fail)
          // A resumed session works where it started, unless --workspace says otherwise.
          const kept = Workspace.recorded(found)
          const dir = explicit ?? (kept === undefined ? process.cwd() : yield* Workspace.mustExist(stream, kept))
          yield* Workspace.refuseRepository(dir)
          if (resuming && explicit !== undefined && kept !== undefined && explicit !== kept) {
            ui.line(ui.warn(`working in ${explicit} (--workspace), not in the session's workspace ${kept}`))
          }
          const files = yield* FileStore.FileStore
          const tools = Tools.make({
            workspace: dir,
            readOutput: Tools.readOutputFrom(files, stream),
            recallArchived: Tools.recallArchivedFrom(yield* EventLog.EventLog, stream)
          })
          let config: Agent.Config = { stream, provider: chosen, tools, ui }
          let current = providerOptions
          const window = yield* Agent.open(config, {
            knowledge: [Workspace.note(dir), ...readNotes(dir)],
            goal: oneShot
          })
          const hintFor = (flags: Provider.Options) => `resume with: ${Invocation.resume(stream, storage, flags)}`
          hint = hintFor(current)
          ui.line(
            ui.dim(
              ui.fit(
                `${resuming ? "resumed" : "session"} ${stream} · ${chosen.name}/${chosen.model} · window ${chosen.contextWindow} (reserve ${chosen.outputReserve}, budget ${budget}) · ${window.version} events · workspace ${dir} · ${Stack.describeStorage(storage)}`
              )
            )
          )
          if (oneShot !== undefined) {
            const report = yield* Agent.turn(config, oneShot)
            if (options.quiet) process.stdout.write(`${report.answer}\n`)
            ui.line(ui.dim(hint))
            return
          }
          if (process.stdin.isTTY === true) ui.line(ui.dim(promptHelp))
          const reader = Prompt.make(ui)
          yield* Effect.gen(function* () {
            for (;;) {
              const line = yield* reader.next
              if (line === undefined) break
              const text = line.trim()
              if (text.length === 0) continue
              const command = slashCommand(text)
              if (command === "/exit" || command === "/quit") break
              if (command === "/help") {
                ui.line(slashHelp)
                continue
              }
              if (command === "/reload") {
                // Another provider, model or window from the next turn on; a bad line changes nothing.
                const reloaded = yield* Effect.either(
                  Effect.gen(function* () {
                    const next = yield* parseReload(text, current)
                    const provider = yield* Provider.make(next)
                    yield* Provider.reachable(provider)
                    const nextConfig: Agent.Config = { ...config, provider }
                    const budget = yield* Agent.reload(nextConfig)
                    config = nextConfig
                    current = next
                    hint = hintFor(current)
                    ui.line(
                      ui.dim(
                        ui.fit(
                          `reloaded · ${provider.name}/${provider.model} · window ${provider.contextWindow} (reserve ${provider.outputReserve}, budget ${budget})`
                        )
                      )
                    )
                  })
                )
                if (Either.isLeft(reloaded)) {
                  const error = reloaded.left
                  ui.line(ui.warn(oneLine(error instanceof Error ? error.message : String(error))))
                }
                continue
              }
              if (command !== undefined && command !== "/call") {
                ui.line(ui.warn(`${command} is not a command here (/help lists them); nothing was sent`))
                continue
              }
              yield* Agent.turn(config, text)
            }
          }).pipe(Effect.ensuring(reader.close))
          ui.line(ui.dim(hint))
        }).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() =>
              process.stderr.write(
                `\ninterrupted: the log is consistent; ${hint ?? `resume with: ${Invocation.resume(stream, storage, providerOptions)}`}\n`
              )
            )
          )
        )
        yield* program.pipe(Effect.provide(Stack.layer(storage, budget)))
      }),
      () => hint,
      Stack.storageOf({ db: value(options.db), pg: value(options.pg) })
    )
  }
).pipe(Command.withDescription("Chat with the agent in a workspace (one line per turn), or run one --task"))

/** `sessions`: the agent's sessions in a log. @since 0.3.0 */
export const sessions = Command.make("sessions", { db, pg }, (options) => {
  const storage = Stack.storageOf({ db: value(options.db), pg: value(options.pg) })
  return reportFailure(
    Effect.gen(function* () {
      // A listing reads: a log that is not there is a mistake, and nothing is created for it.
      yield* mustExist(storage)
      const rows = yield* Sessions.list.pipe(Effect.provide(Stack.layer(storage, 10_000)))
      process.stdout.write(`${Sessions.format(rows, Sessions.listingWidth())}\n`)
    }),
    () => undefined,
    storage
  )
}).pipe(Command.withDescription("List the agent's sessions: tokens, turns, compactions, last activity"))

const runDir = Options.directory("run-dir", { exists: "either" }).pipe(
  Options.withDescription("where the sample workspace is copied (default: a new temp directory)"),
  Options.optional
)

// The demo is scratch work: SQLite's `normal` durability (still crash-consistent in WAL mode) keeps it fast.
const demoStorage = (storage: Stack.Storage): Stack.Storage =>
  storage._tag === "sqlite" ? { ...storage, durability: "normal" } : storage

/** `demo`: the scripted offline run. @since 0.3.0 */
export const demo = Command.make("demo", { db, pg, runDir, quiet }, (options) => {
  const stream = newSessionId("demo")
  // Without --db, every run writes a fresh log of its own, so it shows the numbers the README describes
  // (a shared log would let cross-session recall bring earlier runs into this one).
  const storage = demoStorage(
    Stack.storageOf({
      db: value(options.db) ?? path.join(path.dirname(Stack.defaultDb), `${stream}.db`),
      pg: value(options.pg)
    })
  )
  const hint = () => `resume with: ${Invocation.resume(stream, storage)}`
  return reportFailure(
    Effect.gen(function* () {
      const dir = value(options.runDir)
      if (dir !== undefined) yield* Workspace.refuseRepository(path.resolve(dir))
      yield* Demo.run({ storage, stream, runDir: dir, ui: Ui.make({ quiet: options.quiet }) }).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() => process.stderr.write(`\ninterrupted: the log is consistent; ${hint()}\n`))
        )
      )
    }),
    hint
  )
}).pipe(Command.withDescription("A scripted, offline run on a sample project: compaction, seams, a bug fixed"))

/** The `ctxlog-agent` command. @since 0.1.0 */
export const command = Command.make("ctxlog-agent").pipe(
  Command.withDescription("A coding agent on ctxlog: every change to its context window is an event in a log"),
  Command.withSubcommands([run, demo, sessions])
)

/** Parse `argv` and run. @since 0.1.0 */
export const cli = Command.run(command, { name: "ctxlog-agent", version: "0.1.0" })
