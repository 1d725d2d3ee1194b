/**
 * The command line as people read it: one help page per command, written by hand (what it does,
 * examples, the flags, the environment variables, the prompt's slash commands), plain text with no
 * escape codes; and the check of an argument list against the same flags, so a mistake is one
 * sentence naming the flag and the value, with the nearest flag or the values it takes.
 *
 * `bin.ts` answers `--help` and refuses bad arguments here, before `@effect/cli` parses; the flags
 * of each command here are the ones `Cli.ts` defines (a test compares them).
 *
 * @since 0.3.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { commandLine } from "./Invocation.js"
import { providerNames } from "./Provider.js"
import { editDistance } from "./Sessions.js"

/** What a flag takes. @since 0.3.0 */
export type Kind =
  | { readonly _tag: "text"; readonly value: string }
  | { readonly _tag: "integer"; readonly value: string }
  | { readonly _tag: "choice"; readonly values: ReadonlyArray<string> }
  | { readonly _tag: "boolean" }

/** One flag of a command. @since 0.3.0 */
export interface Flag {
  readonly name: string
  readonly kind: Kind
  readonly help: string
}

const text = (value: string): Kind => ({ _tag: "text", value })
const integer = (value: string): Kind => ({ _tag: "integer", value })

const storageFlags: ReadonlyArray<Flag> = [
  {
    name: "db",
    kind: text("FILE"),
    help: "the SQLite log (default .ctxlog/ctxlog.db in the current directory)"
  },
  { name: "pg", kind: text("URL"), help: "a PostgreSQL log instead: postgres://user:pass@host:5432/db" }
]

const providerFlags: ReadonlyArray<Flag> = [
  {
    name: "provider",
    kind: { _tag: "choice", values: providerNames },
    help: "offline (default: a scripted echo model, no network, no key), anthropic, openai (Chat Completions), openai-responses or ollama"
  },
  { name: "model", kind: text("NAME"), help: "the model (default: the provider's, e.g. gpt-5, claude-sonnet-4-5)" },
  { name: "base-url", kind: text("URL"), help: "the API root, e.g. http://127.0.0.1:8080/v1 for a local server" },
  { name: "context-window", kind: integer("N"), help: "the model's context window in tokens" },
  { name: "max-output-tokens", kind: integer("N"), help: "the output reserve: max_tokens of every request" }
]

/** A command: its flags and its help page. @since 0.3.0 */
export interface CommandHelp {
  readonly name: "run" | "demo" | "sessions"
  readonly summary: string
  readonly flags: ReadonlyArray<Flag>
  /** The page's body above the flags: what it does, with examples. */
  readonly about: ReadonlyArray<string>
  /** The page's end: environment, prompt commands. */
  readonly notes: ReadonlyArray<string>
}

const environment = [
  "Environment:",
  "  OPENAI_API_KEY     the key for --provider openai and openai-responses",
  "  ANTHROPIC_API_KEY  the key for --provider anthropic",
  "  OLLAMA_HOST        where --provider ollama finds it (default 127.0.0.1:11434)",
  "  NO_COLOR           set: no colours (none either when output is not a terminal)"
]

/** Every command, in the order the top page lists them. @since 0.3.0 */
export const commands: ReadonlyArray<CommandHelp> = [
  {
    name: "run",
    summary: "chat with the agent in a workspace, or run one --task",
    flags: [
      { name: "workspace", kind: text("DIR"), help: "the only directory the tools may touch (default: here)" },
      { name: "task", kind: text("TEXT"), help: "run this one task, print the answer and exit" },
      { name: "session", kind: text("ID"), help: "resume a session of the log (see: sessions)" },
      ...providerFlags,
      ...storageFlags,
      { name: "quiet", kind: { _tag: "boolean" }, help: "print only errors and the final answer" }
    ],
    about: [
      "Chat with a coding agent that reads, searches, edits and tests code in one",
      "workspace. Every change to what it sends the model is an event in the log.",
      "",
      "Examples:",
      "  ctxlog-agent run --workspace ~/proj",
      '  ctxlog-agent run --workspace ~/proj --task "why does npm test fail?"',
      "  OPENAI_API_KEY=sk-… ctxlog-agent run --provider openai --model gpt-5",
      "  ctxlog-agent run --provider openai --base-url http://127.0.0.1:8080/v1",
      "  ctxlog-agent run --session agent-20260301-101500-a1b2c3 --db ~/proj/log.db"
    ],
    notes: [
      ...environment,
      "",
      "At the prompt: Enter sends; a paste is one message; a line ending in \\",
      '  continues; lines between two """ lines are one message.',
      "  /help     the prompt's commands     /exit, /quit  end the session",
      "  /reload --model NAME --context-window N …  another model from the next turn",
      '  /call TOOL {json}  (offline model) call a tool: /call list_dir {"path":"."}',
      "Ctrl-C stops an answer (the part that came is kept) and prints the command",
      "that resumes the session with the same provider, model and window (exit 130)."
    ]
  },
  {
    name: "demo",
    summary: "a scripted, offline 40-turn run on a sample project",
    flags: [
      ...storageFlags,
      {
        name: "run-dir",
        kind: text("DIR"),
        help: "where the sample project is copied (default: a new temp directory)"
      },
      { name: "quiet", kind: { _tag: "boolean" }, help: "print only errors" }
    ],
    about: [
      "Copy a small JavaScript project with a real bug and play a 40-turn plan on it",
      "with the offline model: tool outputs fill the window, compaction and seams",
      "keep it in budget, the bug is fixed and the tests pass. No network, no key.",
      "Without --db each run writes a fresh log (.ctxlog/demo-….db here).",
      "",
      "Examples:",
      "  ctxlog-agent demo",
      "  ctxlog-agent demo --run-dir /tmp/shop --db /tmp/shop.db"
    ],
    notes: []
  },
  {
    name: "sessions",
    summary: "list the agent's sessions in a log, most recent first",
    flags: storageFlags,
    about: [
      "List the agent's sessions: tokens in the window, turns, compactions, seams,",
      "events and last activity. Reads only: a log that does not exist is an error.",
      "",
      "Examples:",
      "  ctxlog-agent sessions",
      "  ctxlog-agent sessions --db ~/proj/.ctxlog/ctxlog.db"
    ],
    notes: []
  }
]

const flagUsage = (flag: Flag): string => {
  switch (flag.kind._tag) {
    case "boolean":
      return `--${flag.name}`
    case "choice":
      return `--${flag.name} ${flag.kind.values.join("|")}`
    default:
      return `--${flag.name} ${flag.kind.value}`
  }
}

/** Words of `text` in lines of at most `width` columns, each after `indent`. */
const wrap = (text: string, width: number, indent: string): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ")) {
    if (line.length > 0 && indent.length + line.length + 1 + word.length > width) {
      lines.push(`${indent}${line}`)
      line = word
    } else line = line.length === 0 ? word : `${line} ${word}`
  }
  if (line.length > 0) lines.push(`${indent}${line}`)
  return lines
}

/** Where `ctxlog-agent` in the examples is not on the PATH (from the sources), what to type instead. */
const programNote = (): ReadonlyArray<string> => {
  const program = commandLine([]).trimEnd()
  return program === "ctxlog-agent" ? [] : ["", "Here ctxlog-agent is:", `  ${program}`]
}

/** The help page of a command, plain text within 80 columns. @since 0.3.0 */
export const page = (command: CommandHelp): string =>
  [
    `ctxlog-agent ${command.name}: ${command.summary}`,
    "",
    ...command.about,
    ...programNote(),
    "",
    "Options:",
    ...command.flags.flatMap((flag) => [`  ${flagUsage(flag)}`, ...wrap(flag.help, 80, "      ")]),
    ...(command.notes.length === 0 ? [] : ["", ...command.notes])
  ].join("\n")

/** The top help page: the commands, and where each one's help is. @since 0.3.0 */
export const topPage = (): string =>
  [
    "ctxlog-agent: a coding agent on ctxlog; every change to its context window is an",
    "event in a log you can open later (pnpm ctxlog window|render|serve …).",
    "",
    "Commands:",
    ...commands.map((command) => `  ${command.name.padEnd(9)} ${command.summary}`),
    "",
    "Each command's options: ctxlog-agent COMMAND --help",
    ...programNote(),
    "",
    ...environment
  ].join("\n")

/** A command line `bin.ts` can refuse before parsing: which flag, which value, what instead. @since 0.3.0 */
export class BadArgument extends Schema.TaggedError<BadArgument>()("BadArgument", {
  command: Schema.String,
  argument: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    const help = commandLine(this.command === "" ? ["--help"] : [this.command, "--help"])
    return `${this.argument}: ${this.detail}; see the options with: ${help}`
  }
}

/** The nearest of `names` to `word` (by edit distance), when it is close enough to be a typo. */
const nearestName = (word: string, names: ReadonlyArray<string>): string | undefined => {
  const ranked = names
    .map((name) => ({ name, distance: editDistance(word, name) }))
    .sort((a, b) => a.distance - b.distance)
  const best = ranked[0]
  return best !== undefined && best.distance <= Math.max(2, Math.floor(word.length / 3)) ? best.name : undefined
}

const builtIn = new Set(["help", "h", "version", "wizard", "completions", "log-level"])

/** What `bin.ts` does with an argument list. @since 0.3.0 */
export type Checked = { readonly _tag: "help"; readonly text: string } | { readonly _tag: "parse" }

/**
 * Read `args` (after the program) against the commands: `--help` anywhere gives its page; an unknown
 * command or flag (with the nearest name), a value not among a choice's, a count that is not a whole
 * positive number, a flag without its value is a {@link BadArgument}; anything else goes to the parser.
 * @since 0.3.0
 */
export const check = (args: ReadonlyArray<string>): Either.Either<Checked, BadArgument> => {
  const wantsHelp = args.includes("--help") || args.includes("-h")
  const first = args[0]
  if (first === undefined || first.startsWith("-")) {
    if (wantsHelp || first === undefined) return Either.right({ _tag: "help", text: topPage() })
    if (first === "--version") return Either.right({ _tag: "parse" })
    return Either.left(
      new BadArgument({ command: "", argument: first, detail: `give a command first (${names.join(", ")})` })
    )
  }
  const command = commands.find((known) => known.name === first)
  if (command === undefined) {
    const near = nearestName(first, names)
    return Either.left(
      new BadArgument({
        command: "",
        argument: first,
        detail: `not a command${near === undefined ? "" : ` (did you mean ${near}?)`}; the commands are ${names.map((name) => `'${name}'`).join(", ")}`
      })
    )
  }
  if (wantsHelp) return Either.right({ _tag: "help", text: page(command) })
  const rest = args.slice(1)
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index] ?? ""
    if (!word.startsWith("--")) {
      return Either.left(
        new BadArgument({
          command: command.name,
          argument: word,
          detail: `not an option of ${command.name} (a value with spaces needs quotes, e.g. --task "fix the tests")`
        })
      )
    }
    const [name = "", inline] = word.slice(2).split(/=(.*)/s)
    if (builtIn.has(name)) return Either.right({ _tag: "parse" })
    const flag = command.flags.find((known) => known.name === name)
    if (flag === undefined) {
      const near = nearestName(
        name,
        command.flags.map((known) => known.name)
      )
      return Either.left(
        new BadArgument({
          command: command.name,
          argument: `--${name}`,
          detail: `not an option of ${command.name}${near === undefined ? "" : ` (did you mean --${near}?)`}`
        })
      )
    }
    if (flag.kind._tag === "boolean") continue
    const value = inline ?? rest[++index]
    if (value === undefined || (inline === undefined && value.startsWith("--"))) {
      return Either.left(
        new BadArgument({
          command: command.name,
          argument: `--${name}`,
          detail: `needs a value (${flagUsage(flag)})`
        })
      )
    }
    const bad = badValue(flag, value)
    if (bad !== undefined) {
      return Either.left(new BadArgument({ command: command.name, argument: `--${name} ${value}`, detail: bad }))
    }
  }
  return Either.right({ _tag: "parse" })
}

const names = commands.map((command) => command.name)

const badValue = (flag: Flag, value: string): string | undefined => {
  switch (flag.kind._tag) {
    case "choice": {
      if (flag.kind.values.includes(value)) return undefined
      const near = nearestName(value, flag.kind.values)
      return `not a ${flag.name}${near === undefined ? "" : ` (did you mean ${near}?)`}; it is one of ${flag.kind.values.join(", ")}`
    }
    case "integer":
      return /^[1-9][0-9]*$/.test(value) ? undefined : "not a whole number of tokens above 0"
    default:
      return undefined
  }
}
