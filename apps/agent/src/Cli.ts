/**
 * The command line (`@effect/cli`): `run` (interactive, `--task` one-shot, `--session` resume), `demo`
 * and `sessions`.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import * as readline from "node:readline"
import { Command, Options } from "@effect/cli"
import { ContextService } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Agent from "./Agent.js"
import * as Demo from "./Demo.js"
import * as Provider from "./Provider.js"
import * as Sessions from "./Sessions.js"
import { newSessionId, readNotes } from "./Sessions.js"
import * as Stack from "./Stack.js"
import * as Tools from "./Tools.js"
import * as Ui from "./Ui.js"

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
const workspace = Options.directory("workspace").pipe(
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

/** Print a failure as one clear line and set a failing exit code (no stack trace for expected errors). */
const reportFailure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.catchAll((error) =>
      Effect.sync(() => {
        const message = error instanceof Error ? error.message : String(error)
        process.stderr.write(`ctxlog-agent: ${message}\n`)
        process.exitCode = 1
      })
    )
  )

/** Lines from stdin, one at a time, with a prompt on a TTY; `undefined` at end of input. */
const lineReader = (ui: Ui.Ui) => {
  const rl = readline.createInterface({ input: process.stdin, terminal: process.stdin.isTTY === true })
  // A Ctrl-C typed while readline owns the terminal becomes the process's SIGINT: the runtime
  // interrupts the running turn and the program ends with a consistent log.
  rl.on("SIGINT", () => process.kill(process.pid, "SIGINT"))
  const iterator = rl[Symbol.asyncIterator]()
  return {
    next: Effect.promise(async () => {
      if (process.stdin.isTTY === true) process.stdout.write(ui.accent("you› "))
      const next = await iterator.next()
      return next.done === true ? undefined : next.value
    }),
    close: Effect.sync(() => rl.close())
  }
}

const run = Command.make(
  "run",
  { task, session, provider, model, baseUrl, contextWindow, maxOutput, workspace, db, pg, quiet },
  (options) =>
    reportFailure(
      Effect.gen(function* () {
        const ui = Ui.make({ quiet: options.quiet })
        const dir = path.resolve(value(options.workspace) ?? process.cwd())
        const chosen = yield* Provider.make({
          provider: options.provider,
          model: value(options.model),
          baseUrl: value(options.baseUrl),
          contextWindow: value(options.contextWindow),
          maxOutputTokens: value(options.maxOutput)
        })
        const tools = Tools.make({ workspace: dir })
        const stream = value(options.session) ?? newSessionId()
        const config: Agent.Config = { stream, provider: chosen, tools, ui }
        const storage = Stack.storageOf({ db: value(options.db), pg: value(options.pg) })
        const oneShot = value(options.task)
        const program = Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const resuming = (yield* ctx.load(stream)).version > 0
          if (value(options.session) !== undefined && !resuming) {
            ui.line(ui.warn(`no session "${stream}" in ${Stack.describeStorage(storage)}: starting it`))
          }
          const window = yield* Agent.open(config, { knowledge: readNotes(dir), goal: oneShot })
          ui.line(
            ui.dim(
              `${resuming ? "resumed" : "session"} ${ui.bold(stream)} · ${chosen.name}/${chosen.model} · window ${chosen.contextWindow} (reserve ${chosen.outputReserve}, budget ${Agent.budgetFor(config)}) · ${window.version} events · ${Stack.describeStorage(storage)}`
            )
          )
          if (oneShot !== undefined) {
            const report = yield* Agent.turn(config, oneShot)
            if (options.quiet) process.stdout.write(`${report.answer}\n`)
            return
          }
          const reader = lineReader(ui)
          yield* Effect.gen(function* () {
            for (;;) {
              const line = yield* reader.next
              if (line === undefined) break
              const text = line.trim()
              if (text.length === 0) continue
              if (text === "/exit" || text === "/quit") break
              yield* Agent.turn(config, text)
            }
          }).pipe(Effect.ensuring(reader.close))
          ui.line(ui.dim(`resume with: ctxlog-agent run --session ${stream}`))
        }).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() =>
              process.stderr.write(
                `\ninterrupted: the log is consistent; resume with: ctxlog-agent run --session ${stream}\n`
              )
            )
          )
        )
        yield* program.pipe(Effect.provide(Stack.layer(storage, Agent.budgetFor(config))))
      })
    )
).pipe(Command.withDescription("Chat with the agent in a workspace (one line per turn), or run one --task"))

const sessions = Command.make("sessions", { db, pg }, (options) =>
  reportFailure(
    Effect.gen(function* () {
      const storage = Stack.storageOf({ db: value(options.db), pg: value(options.pg) })
      const rows = yield* Sessions.list.pipe(Effect.provide(Stack.layer(storage, 10_000)))
      process.stdout.write(`${Sessions.format(rows)}\n`)
    })
  )
).pipe(Command.withDescription("List the agent's sessions: tokens, turns, compactions, last activity"))

const runDir = Options.directory("run-dir", { exists: "either" }).pipe(
  Options.withDescription("where the sample workspace is copied (default: a new temp directory)"),
  Options.optional
)

// The demo is scratch work: SQLite's `normal` durability (still crash-consistent in WAL mode) keeps it fast.
const demoStorage = (storage: Stack.Storage): Stack.Storage =>
  storage._tag === "sqlite" ? { ...storage, durability: "normal" } : storage

const demo = Command.make("demo", { db, pg, runDir, quiet }, (options) =>
  reportFailure(
    Demo.run({
      storage: demoStorage(Stack.storageOf({ db: value(options.db), pg: value(options.pg) })),
      runDir: value(options.runDir),
      ui: Ui.make({ quiet: options.quiet })
    })
  )
).pipe(Command.withDescription("A scripted, offline run on a sample project: compaction, seams, a bug fixed"))

/** The `ctxlog-agent` command. @since 0.1.0 */
export const command = Command.make("ctxlog-agent").pipe(
  Command.withDescription("A coding agent on ctxlog: every change to its context window is an event in a log"),
  Command.withSubcommands([run, demo, sessions])
)

/** Parse `argv` and run. @since 0.1.0 */
export const cli = Command.run(command, { name: "ctxlog-agent", version: "0.1.0" })
