/**
 * The `ctxlog` command line (`@effect/cli`). Every command reads through a read-only {@link Source}
 * (`--db` SQLite file, default `./.ctxlog/ctxlog.db`, or `--pg` URL) except `import` and `erase`, and prints text
 * or, with `--json`, one JSON document. A failure prints `ctxlog: <what was wrong>` on stderr and
 * exits non-zero.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { type EventCodec, type EventLog, WindowEvent } from "@ctxlog/core"
import { Anchor, Erasure, LogReader, PostgresEventLog, Signing, SqliteEventLog } from "@ctxlog/memory"
import { CacheModel, RenderRecord } from "@ctxlog/providers"
import type { Policy } from "@ctxlog/turn"
import { Args, Command, Options } from "@effect/cli"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Import from "./importers/Import.js"
import * as Session from "./importers/Session.js"
import * as Inspect from "./Inspect.js"
import * as Pipeline from "./Pipeline.js"
import * as Queries from "./Queries.js"
import * as Restore from "./Restore.js"
import { damagedExit } from "./Report.js"
import * as Server from "./Server.js"
import * as MessageView from "./MessageView.js"
import * as Source from "./Source.js"
import * as SubjectCli from "./SubjectCli.js"
import * as SweepCli from "./SweepCli.js"
import { didYouMean, summarize } from "./Suggest.js"
import * as Transfer from "./Transfer.js"

/** A command failed; the message says what was wrong. @since 0.1.0 */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  detail: Schema.String,
  /** The exit code: 1, or {@link damagedExit} when the log is damaged. */
  exitCode: Schema.optionalWith(Schema.Number, { default: () => 1 })
}) {
  override get message(): string {
    return this.detail
  }
}

const db = Options.text("db").pipe(
  Options.withDefault(Source.defaultDb),
  Options.withDescription("SQLite database file (opened read-only; never created)")
)
const pgUrl = Options.text("pg").pipe(
  Options.optional,
  Options.withDescription("PostgreSQL connection URL (instead of --db)")
)
const json = Options.boolean("json").pipe(Options.withDescription("print one JSON document"))
const common = { db, pg: pgUrl, json }

/** What a read can fail with besides a usage error: storage, damage, an event that does not decode. @since 0.2.0 */
export type ReadFailure = EventLog.StoreError | EventLog.TamperDetected | EventCodec.EventDecodeError

/** `--key-env NAME`: the key is read from the environment, never passed on the command line (`ps`, history). */
const keyEnv = Options.text("key-env").pipe(
  Options.optional,
  Options.withDescription(
    "name of the environment variable holding the log's HMAC key (never pass the key itself on the command line)"
  )
)
const unverified = Options.boolean("unverified").pipe(
  Options.withDescription("skip the integrity check (hash chain, streams row, snapshot seal): a trusted store only")
)
const expectHead = Options.text("expect-head").pipe(
  Options.repeated,
  Options.withDescription("<stream>@<version>:<hash> kept elsewhere (ctxlog heads); the log must still hold it")
)
const headsFile = Options.text("heads-file").pipe(
  Options.optional,
  Options.withDescription("a file of heads kept elsewhere, one <stream>@<version>:<hash> a line")
)
const keyringFile = Options.text("keyring").pipe(
  Options.optional,
  Options.withDescription(
    "a keyring file of writers' public keys (JSON, Signing.formatKeyring): every batch must be signed by a key it holds, not revoked"
  )
)
const anchorsFile = Options.text("anchors").pipe(
  Options.optional,
  Options.withDescription(
    "heads an anchor kept outside the database (its JSON-lines file or SQLite database): each must still be in the log"
  )
)
/** What every reading command takes: where, how to print, and how to verify. */
const reading = { ...common, unverified, keyEnv, expectHead, headsFile, keyring: keyringFile, anchors: anchorsFile }
const stream = Args.text({ name: "stream" }).pipe(Args.withDescription("the stream (conversation) id"))
const at = Options.integer("at").pipe(Options.optional, Options.withDescription("stream version (default: the head)"))

interface CommonOptions {
  readonly db: string
  readonly pg: Option.Option<string>
  readonly json: boolean
}

interface ReadingOptions extends CommonOptions {
  readonly unverified: boolean
  readonly keyEnv: Option.Option<string>
  readonly expectHead: ReadonlyArray<string>
  readonly headsFile: Option.Option<string>
  readonly keyring: Option.Option<string>
  readonly anchors: Option.Option<string>
}

/** The HMAC key named by `--key-env`, if given; an unset or empty variable is an error naming it. */
const keyFrom = (name: Option.Option<string>): Effect.Effect<string | undefined, CommandFailed> =>
  Option.match(name, {
    onNone: () => Effect.succeed(undefined),
    onSome: (variable) => {
      const value = process.env[variable]
      return value === undefined || value === ""
        ? Effect.fail(new CommandFailed({ detail: `--key-env ${variable}: the environment variable is not set` }))
        : Effect.succeed(value)
    }
  })

const readText = (file: string) =>
  Effect.try({
    try: () => readFileSync(file, "utf8"),
    catch: (cause) =>
      new Transfer.ImportError({ file, line: 0, detail: cause instanceof Error ? cause.message : String(cause) })
  })

/** The heads given with `--expect-head` and `--heads-file`, by stream. */
const expectedHeads = (
  options: ReadingOptions
): Effect.Effect<ReadonlyMap<string, LogReader.Head>, CommandFailed | Transfer.ImportError> =>
  Effect.gen(function* () {
    const heads = new Map<string, LogReader.Head>()
    const add = (text: string, where: string) => {
      const parsed = LogReader.parseHead(text)
      if (parsed === undefined) {
        return Effect.fail(
          new CommandFailed({
            detail: `${where}: expected <stream>@<version>:<64 hex sha256>, got ${JSON.stringify(text.slice(0, 100))}`
          })
        )
      }
      heads.set(parsed.stream, parsed.head)
      return Effect.void
    }
    for (const text of options.expectHead) yield* add(text, "--expect-head")
    if (Option.isSome(options.headsFile)) {
      const file = options.headsFile.value
      const lines = (yield* readText(file)).split("\n")
      for (const [index, line] of lines.entries()) {
        if (line.trim() !== "" && !line.startsWith("#")) yield* add(line, `${file}, line ${index + 1}`)
      }
    }
    return heads
  })

/** The keyring named by `--keyring`, read and checked (a bad entry is an error naming it). */
const keyringFrom = (file: Option.Option<string>) =>
  Option.match(file, {
    onNone: () => Effect.succeed(undefined),
    onSome: (path) =>
      Effect.flatMap(readText(path), (text) =>
        Effect.try({
          try: () => Signing.parseKeyring(text, `--keyring ${path}`),
          catch: (cause) => new CommandFailed({ detail: cause instanceof Error ? cause.message : String(cause) })
        })
      )
  })

/** The heads kept by an anchor, named by `--anchors`, by stream. */
const anchorsFrom = (file: Option.Option<string>) =>
  Option.match(file, {
    onNone: () => Effect.succeed(undefined),
    onSome: (path) =>
      Anchor.read(path).pipe(
        Effect.map(Anchor.byStream),
        Effect.mapError((error) => new CommandFailed({ detail: `--anchors: ${error.message}` }))
      )
  })

const readOptions = (options: ReadingOptions) =>
  Effect.gen(function* () {
    const key = yield* keyFrom(options.keyEnv)
    const heads = yield* expectedHeads(options)
    const keyring = yield* keyringFrom(options.keyring)
    const anchors = yield* anchorsFrom(options.anchors)
    return {
      integrity: options.unverified ? ("unverified" as const) : ("verified" as const),
      // `LogReader.Options.hmacKey` (memory) is exact, `?: ChainKey`.
      ...(key === undefined ? {} : { hmacKey: key }),
      expectedHeads: heads,
      ...(keyring === undefined ? {} : { keyring }),
      ...(anchors === undefined ? {} : { anchors })
    }
  })

const open = (options: ReadingOptions) =>
  Effect.flatMap(readOptions(options), (read) =>
    Option.match(options.pg, {
      onNone: () => Source.sqlite(options.db, read),
      onSome: (url) => Source.postgres(url, read)
    })
  )

/**
 * The width text layouts fit: the terminal's on a TTY, else `COLUMNS`, else 80. Lines of listings are cut
 * there with `…` (`--json`, `message` and `window --full` print everything whole).
 */
const columns = (): number => {
  if (process.stdout.isTTY && process.stdout.columns > 0) return process.stdout.columns
  const fromEnv = Number(process.env.COLUMNS)
  return Number.isInteger(fromEnv) && fromEnv >= 40 ? fromEnv : 80
}

const clip = (text: string, width: number) => {
  const chars = [...text]
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join("")}…`
}

/** Print `value` as JSON, or the text layout (whole, or each line fitted to {@link columns}). */
const out = (options: CommonOptions, value: unknown, text: () => string, fit = true) =>
  Console.log(
    options.json
      ? JSON.stringify(value, null, 2)
      : fit
        ? text()
            .split("\n")
            .map((line) => clip(line, columns()))
            .join("\n")
        : text()
  )

/** Wrap a line at {@link columns}, continuing indented (problems are read whole, never cut). */
const wrap = (line: string, indent = "    ") => {
  const width = columns()
  const out: Array<string> = []
  let current = ""
  for (const word of line.split(" ")) {
    if (current !== "" && [...current].length + 1 + [...word].length > width) {
      out.push(current)
      current = `${indent}${word}`
    } else current = current === "" ? word : `${current} ${word}`
  }
  out.push(current)
  return out.join("\n")
}

/** `lead  rest` on one line when it fits {@link columns}, else `rest` on the next line, indented: `lead` (an id) is never cut. */
const keepWhole = (lead: string, rest: string) =>
  [...lead].length + 2 + [...rest].length <= columns() ? `${lead}  ${rest}` : `${lead}\n      ${rest}`

/** The end of an id, enough to tell messages apart and to pass to `ctxlog message`. */
const shortId = (id: string) => (id.length <= 13 ? id : `…${id.slice(-12)}`)

const pad = (value: string | number, width: number) => String(value).padEnd(width)
const padStart = (value: string | number, width: number) => String(value).padStart(width)
const time = (ms: number) => (ms > 0 ? new Date(ms).toISOString().slice(0, 16).replace("T", " ") : "-")

/**
 * A table; when it is wider than {@link columns}, column `flex` (text) is narrowed and its cells cut, or
 * with `key` (an id) the table is stacked: each key on a line of its own, whole, the other cells on the
 * next line, indented and aligned. Ids are never cut: every other command needs them whole.
 */
const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
  flex?: number,
  key?: number
): string => {
  if (key !== undefined) {
    const whole = table(header, rows)
    if (whole.split("\n").every((line) => [...line].length <= columns())) return whole
    const others = <A>(row: ReadonlyArray<A>) => row.filter((_, index) => index !== key)
    return table(others(header), rows.map(others))
      .split("\n")
      .flatMap((line, index) => [String((index === 0 ? header : rows[index - 1])?.[key] ?? ""), `    ${line}`])
      .join("\n")
  }
  const natural = header.map((name, index) =>
    Math.max(name.length, ...rows.map((row) => [...String(row[index] ?? "")].length))
  )
  const total = natural.reduce((sum, width) => sum + width, 0) + 2 * (natural.length - 1)
  const widths =
    flex === undefined || total <= columns()
      ? natural
      : natural.map((width, index) => (index === flex ? Math.max(8, width - (total - columns())) : width))
  const cut =
    flex === undefined || widths === natural
      ? rows
      : rows.map((row) =>
          row.map((cell, index) => (index === flex && typeof cell === "string" ? clip(cell, widths[index] ?? 8) : cell))
        )
  const line = (cells: ReadonlyArray<string | number>) =>
    cells
      .map((cell, index) =>
        typeof cell === "number" ? padStart(cell, widths[index] ?? 0) : pad(cell, widths[index] ?? 0)
      )
      .join("  ")
      .trimEnd()
  return [line(header), ...cut.map(line)].join("\n")
}

// streams ----------------------------------------------------------------------------------------

const owner = Options.text("owner").pipe(
  Options.optional,
  Options.withDescription("only the streams of this owner (tenant)")
)

const streamsCommand = Command.make("streams", { ...reading, owner }, (options) =>
  Effect.scoped(
    Effect.gen(function* () {
      const source = yield* open(options)
      const infos = yield* source.streams(Option.getOrUndefined(options.owner))
      const summaries: Array<Queries.StreamSummary> = []
      const damage: Array<{ readonly stream: string; readonly error: EventLog.TamperDetected }> = []
      for (const info of infos) {
        // A damaged stream is listed as such; the others are still summarized, and the run exits 3.
        const summary = yield* Effect.either(
          Effect.gen(function* () {
            const all = yield* Inspect.entries(source, info.stream, { types: Queries.summaryTypes })
            const { window } = yield* Inspect.windowAt(source, info.stream, info.version)
            return Queries.summarize(info.stream, all, window, info.updatedAt)
          })
        )
        if (Either.isRight(summary)) summaries.push(summary.right)
        else if (summary.left._tag === "TamperDetected") damage.push({ stream: info.stream, error: summary.left })
        else return yield* summary.left
      }
      yield* out(
        options,
        summaries,
        () =>
          summaries.length === 0 && damage.length === 0
            ? "no streams"
            : [
                ...(summaries.length === 0
                  ? []
                  : [
                      table(
                        ["STREAM", "EVENTS", "TOKENS", "TURNS", "RENDERS", "COMPACT", "SEAMS", "LAST ACTIVITY"],
                        summaries.map((s) => [
                          s.stream,
                          s.events,
                          s.tokens,
                          s.turns,
                          s.renders,
                          s.compactions,
                          s.seams,
                          time(s.lastActivity)
                        ]),
                        undefined,
                        0
                      )
                    ]),
                ...damage.map((d) => `DAMAGED ${d.stream} at version ${d.error.version}`)
              ].join("\n"),
        false
      )
      const first = damage[0]
      if (first !== undefined) return yield* first.error
    })
  )
).pipe(
  Command.withDescription(
    "list conversations (of one owner with --owner): events, tokens now, last activity, compactions, seams"
  )
)

// events -----------------------------------------------------------------------------------------

const eventsCommand = Command.make(
  "events",
  {
    ...reading,
    stream,
    from: Options.integer("from").pipe(Options.optional),
    to: Options.integer("to").pipe(Options.optional),
    type: Options.text("type").pipe(Options.repeated, Options.withDescription("only events of this type (repeatable)")),
    decisions: Options.boolean("decisions").pipe(
      Options.withDescription("only the compaction tiers' decisions not to act (CompactionDecided), one line per tier")
    )
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        for (const type of options.type) {
          if (!WindowEvent.eventTypes.some((known) => known === type)) {
            return yield* new CommandFailed({
              detail: `--type ${type}: no such event type${didYouMean(type, WindowEvent.eventTypes) || ` (types: ${summarize([...WindowEvent.eventTypes], 6)})`}`
            })
          }
        }
        const source = yield* open(options)
        const headVersion = yield* Inspect.head(source, options.stream)
        const from = yield* Inspect.resolveVersion(options.stream, headVersion, Option.getOrUndefined(options.from))
        const to = yield* Inspect.resolveVersion(options.stream, headVersion, Option.getOrUndefined(options.to))
        const all = yield* Inspect.entries(source, options.stream, {
          from: Option.isSome(options.from) ? from : 1,
          to,
          types: options.decisions ? ["CompactionDecided"] : options.type
        })
        if (options.decisions) {
          const decisions = Queries.decisionLines(all)
          return yield* out(options, decisions, () =>
            decisions.length === 0
              ? "no decisions recorded (CompactionDecided: written by the turn since 0.8.0)"
              : decisions
                  .map(
                    (line) =>
                      `${padStart(line.version, 6)}  ${pad(line.step, 8)} ${pad(line.tier, 9)} ${pad(line.reason, 20)} ${padStart(line.usedTokens, 7)} / ${padStart(line.thresholdTokens, 7)} tokens${line.detail === undefined ? "" : `  ${line.detail}`}`
                  )
                  .join("\n")
          )
        }
        const lines = Queries.eventLines(all)
        yield* out(options, lines, () =>
          lines
            .map(
              (line) =>
                `${padStart(line.version, 6)}  ${pad(line.type, 24)} v${line.schemaVersion}  ${line.mark === null ? "  " : line.mark === "compaction" ? "◆ " : line.mark === "seam" ? "▲ " : "○ "}${line.summary}`
            )
            .join("\n")
        )
      })
    )
).pipe(
  Command.withDescription(
    "the log, one line per event (◆ compaction, ▲ seam, ○ decision not to compact); --decisions: those decisions, one line per tier"
  )
)

// window -----------------------------------------------------------------------------------------

const bar = (tokens: number, budget: number | null, width = 30) => {
  if (budget === null || budget <= 0) return ""
  const filled = Math.min(width, Math.round((tokens / budget) * width))
  return `${"█".repeat(filled)}${"░".repeat(width - filled)}`
}

const windowText = (view: Queries.PartitionView, use: Queries.Usage, from: number) => {
  const lines: Array<string> = [
    `window at version ${view.version} (folded from ${from === 0 ? "the first event" : `the snapshot at version ${from}`})`
  ]
  const section = (name: string, rows: ReadonlyArray<Queries.MessageRow>) => {
    lines.push("", `${name} (${rows.reduce((t, r) => t + r.tokens, 0)} tokens, ${rows.length} messages)`)
    for (const row of rows) {
      const flags = [
        row.pinned ? "pinned" : "",
        row.seamLevel === null ? "" : `seam L${row.seamLevel}`,
        row.kind === "chat" ? "" : row.kind
      ]
        .filter((flag) => flag !== "")
        .join(",")
      lines.push(
        `  ${padStart(row.tokens, 6)}  ${pad(row.role, 9)} ${pad(shortId(row.id), 13)}  ${flags === "" ? "" : `[${flags}] `}${row.preview}`
      )
    }
  }
  section("system", view.system)
  section("knowledge", view.knowledge)
  lines.push("", `task state (${view.taskState.tokens} tokens)`)
  lines.push(`  goal: ${view.taskState.goal ?? "-"}`)
  for (const subgoal of view.taskState.subgoals) lines.push(`  - ${subgoal}`)
  if (view.signals.length > 0) {
    lines.push(`  signals: ${view.signals.map((signal) => `${signal.text} (${signal.tokens})`).join("; ")}`)
  }
  section("history", view.history)
  lines.push("", `usage${use.budget === null ? " (budget unknown: pass --budget)" : ` vs budget ${use.budget}`}`)
  for (const line of use.lines) {
    lines.push(
      `  ${pad(line.name, 20)} ${padStart(line.tokens, 8)}  ${padStart(use.budget === null ? "" : `${line.percent}%`, 6)}  ${bar(line.tokens, use.budget)}`
    )
  }
  lines.push(
    `  ${pad("used", 20)} ${padStart(use.used, 8)}  ${padStart(use.budget === null ? "" : `${Math.round((use.used / use.budget) * 1000) / 10}%`, 6)}`
  )
  if (use.free !== null) lines.push(`  ${pad("free", 20)} ${padStart(use.free, 8)}`)
  return lines.join("\n")
}

const windowCommand = Command.make(
  "window",
  {
    ...reading,
    stream,
    at,
    budget: Options.integer("budget").pipe(Options.optional, Options.withDescription("budget to compare against")),
    full: Options.boolean("full").pipe(
      Options.withDescription("every message whole (text, tool calls and results, reasoning)")
    )
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const source = yield* open(options)
        const headVersion = yield* Inspect.head(source, options.stream)
        const version = yield* Inspect.resolveVersion(options.stream, headVersion, Option.getOrUndefined(options.at))
        const { window, from } = yield* Inspect.windowAt(source, options.stream, version)
        const context = yield* Inspect.renderContext(source, options.stream, version)
        const budget = Option.getOrElse(options.budget, () => context.budget)
        const view = Queries.partitions(window)
        const use = Queries.usage(window, budget, context.toolTokens)
        // Whole messages in JSON always; in text with --full.
        const whole = [...window.system, ...window.knowledge, ...window.history].map((message) => ({
          id: message.id,
          parts: MessageView.partsOf(message)
        }))
        yield* out(
          options,
          { window: view, usage: use, foldedFrom: from, messages: whole },
          () => (options.full ? fullText(view, whole, use, from) : windowText(view, use, from)),
          !options.full
        )
      })
    )
).pipe(Command.withDescription("the window at a version by partition, tokens per message, usage vs the budget"))

const fullText = (
  view: Queries.PartitionView,
  whole: ReadonlyArray<{ readonly id: string; readonly parts: ReadonlyArray<MessageView.PartView> }>,
  use: Queries.Usage,
  from: number
) => {
  const parts = new Map(whole.map((message) => [message.id, message.parts]))
  const lines = [
    `window at version ${view.version} (folded from ${from === 0 ? "the first event" : `the snapshot at version ${from}`})`
  ]
  for (const [name, rows] of [
    ["system", view.system],
    ["knowledge", view.knowledge],
    ["history", view.history]
  ] as const) {
    lines.push("", `═══ ${name} (${rows.reduce((t, r) => t + r.tokens, 0)} tokens, ${rows.length} messages)`)
    for (const row of rows) {
      lines.push(
        "",
        `── ${row.role} ${row.id} (${row.tokens} tokens${row.kind === "chat" ? "" : `, ${row.kind}`}${row.pinned ? ", pinned" : ""})`
      )
      for (const part of parts.get(row.id) ?? []) lines.push(MessageView.partText(part))
    }
  }
  lines.push("", `task state (${view.taskState.tokens} tokens)`, `  goal: ${view.taskState.goal ?? "-"}`)
  for (const subgoal of view.taskState.subgoals) lines.push(`  - ${subgoal}`)
  lines.push("", `used ${use.used}${use.budget === null ? "" : ` of ${use.budget}`} tokens`)
  return lines.join("\n")
}

// message ----------------------------------------------------------------------------------------

const messageCommand = Command.make(
  "message",
  {
    ...reading,
    stream,
    ref: Args.text({ name: "id|@version" }).pipe(
      Args.withDescription("a message id (or a unique prefix or suffix of one), or @N: the message event N put there")
    ),
    at
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const source = yield* open(options)
        const headVersion = yield* Inspect.head(source, options.stream)
        const version = yield* Inspect.resolveVersion(options.stream, headVersion, Option.getOrUndefined(options.at))
        const all = yield* Inspect.entries(source, options.stream, { to: version })
        const { window } = yield* Inspect.windowAt(source, options.stream, version)
        const found = MessageView.find(all, window, options.ref)
        if (found._tag !== "Found") {
          return yield* new CommandFailed({
            detail: `stream "${options.stream}" at version ${version}: ${found.detail}`
          })
        }
        yield* out(options, found.detail, () => MessageView.text(found.detail), false)
      })
    )
).pipe(
  Command.withDescription(
    "one message whole: text, tool call and its result, reasoning, media as metadata; its tokens and origin"
  )
)

// render -----------------------------------------------------------------------------------------

const renderCommand = Command.make(
  "render",
  {
    ...reading,
    stream,
    at,
    turn: Options.integer("turn").pipe(
      Options.optional,
      Options.withDescription("the last render of turn K (1-based)")
    ),
    body: Options.boolean("body").pipe(
      Options.withDescription(
        "print the request body alone, byte for byte (no header, no newline added): pipe it to jq or curl --data-binary @-"
      )
    )
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const source = yield* open(options)
        const check = yield* Inspect.renderAt(source, options.stream, {
          ...Option.match(options.at, { onNone: () => ({}), onSome: (value) => ({ at: value }) }),
          ...Option.match(options.turn, { onNone: () => ({}), onSome: (value) => ({ turn: value }) })
        })
        if (options.body) {
          // Only a body that verifies is printed: what a pipe receives is exactly what was sent.
          if (!check.verified || check.body === null) {
            return yield* new CommandFailed({
              detail: `render at version ${check.version} ${check.verified ? "has no request body to print" : `does not verify (${check.problem ?? "unknown"}): no body printed`}`
            })
          }
          const body = check.body
          yield* Effect.async<void>((resume) => {
            process.stdout.write(body, () => resume(Effect.void))
          })
          return
        }
        yield* out(
          options,
          check,
          () =>
            [
              `render at version ${check.version} (turn ${check.turn}) for ${check.provider}/${check.model}`,
              check.verified
                ? `verified: sha256 ${check.sha256}`
                : `MISMATCH: ${check.problem ?? "unknown"}\nrecorded sha256 ${check.recordedSha256}`,
              ...(check.body === null ? [] : ["", check.body])
            ].join("\n"),
          false
        )
        if (!check.verified) {
          return yield* new CommandFailed({ detail: `render at version ${check.version} does not verify` })
        }
      })
    )
).pipe(
  Command.withDescription("the exact request of a turn, rebuilt from the log and checked against its recorded hash")
)

// blame ------------------------------------------------------------------------------------------

const touchText = (touch: Queries.Touch) => `${touch.action} by v${touch.version}`
const partitionShort: Readonly<Record<string, string>> = { system: "sys", knowledge: "know", history: "hist" }

const blameCommand = Command.make("blame", { ...reading, stream, at }, (options) =>
  Effect.scoped(
    Effect.gen(function* () {
      const source = yield* open(options)
      const headVersion = yield* Inspect.head(source, options.stream)
      const version = yield* Inspect.resolveVersion(options.stream, headVersion, Option.getOrUndefined(options.at))
      const all = yield* Inspect.entries(source, options.stream, { to: version })
      const result = Queries.blame(all, version)
      yield* out(options, result, () =>
        [
          `blame at version ${result.version}: ${result.messages.length} messages in the window, ${result.removed.length} removed`,
          "",
          table(
            ["PART", "ID", "ROLE", "TOKENS", "PUT THERE", "LAST CHANGE", "TEXT"],
            result.messages.map((row) => [
              partitionShort[row.partition] ?? row.partition,
              shortId(row.id),
              row.role,
              row.tokens,
              `v${row.addedBy.version} ${row.addedBy.type}`,
              row.lastChangedBy === null ? "-" : `${row.lastChangedBy.action} v${row.lastChangedBy.version}`,
              row.preview
            ]),
            6
          ),
          ...(result.removed.length === 0
            ? []
            : [
                "",
                "removed:",
                table(
                  ["ID", "ROLE", "TOKENS", "PUT THERE", "REMOVED"],
                  result.removed.map((row) => [
                    shortId(row.id),
                    row.role,
                    row.tokens,
                    `v${row.addedBy.version} ${row.addedBy.type}`,
                    touchText(row.removedBy)
                  ]),
                  4
                )
              ])
        ].join("\n")
      )
    })
  )
).pipe(Command.withDescription("each message with the event that put it there and the last that changed it"))

// diff -------------------------------------------------------------------------------------------

const diffCommand = Command.make(
  "diff",
  { ...reading, stream, from: Args.integer({ name: "N" }), to: Args.integer({ name: "M" }) },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const source = yield* open(options)
        const headVersion = yield* Inspect.head(source, options.stream)
        const from = yield* Inspect.resolveVersion(options.stream, headVersion, options.from)
        const to = yield* Inspect.resolveVersion(options.stream, headVersion, options.to)
        const a = yield* Inspect.windowAt(source, options.stream, from)
        const b = yield* Inspect.windowAt(source, options.stream, to)
        const result = Queries.diff(a.window, b.window)
        yield* out(options, result, () =>
          [
            `diff ${result.from} → ${result.to}: +${result.added.length} -${result.removed.length} ~${result.changed.length}; tokens ${result.tokens.before.total} → ${result.tokens.after.total}`,
            ...result.added.map(
              (row) =>
                `+ ${pad(row.partition, 9)} ${pad(shortId(row.id), 13)} ${padStart(row.tokens, 6)}  ${row.preview}`
            ),
            ...result.removed.map(
              (row) =>
                `- ${pad(row.partition, 9)} ${pad(shortId(row.id), 13)} ${padStart(row.tokens, 6)}  ${row.preview}`
            ),
            ...result.changed.map(
              (row) =>
                `~ ${pad(row.partition, 9)} ${pad(shortId(row.id), 13)} ${row.tokensBefore} → ${row.tokensAfter}  ${row.after}`
            ),
            ...(result.taskState === null
              ? []
              : [`~ task state: goal ${result.taskState.before.goal ?? "-"} → ${result.taskState.after.goal ?? "-"}`]),
            ...(result.signals.before === result.signals.after
              ? []
              : [`~ signals: ${result.signals.before} → ${result.signals.after}`])
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("messages added, removed and changed between two versions"))

// verify -----------------------------------------------------------------------------------------

/** The streams a command checks: the one named (which must exist), or every stream. */
const streamNames = (source: Source.Source, name: Option.Option<string>) =>
  Option.match(name, {
    onNone: () => Effect.map(source.streams(), (infos) => infos.map((info) => info.stream)),
    onSome: (one) => Effect.as(Inspect.head(source, one), [one])
  })

const damaged = (problem: Inspect.Problem, command: string) =>
  new CommandFailed({
    exitCode: damagedExit,
    detail: `${command} failed: stream "${problem.stream}" version ${problem.version} (${problem.check}): ${problem.detail}`
  })

const headText = (head: LogReader.Head | null) =>
  head === null ? "broken" : `${head.version}:${head.hash.slice(0, 12)}…`

/** A stream a kept head (an anchor, an expected head) names that the log does not hold: one problem, nothing read. */
const missingStream = (stream: string, check: Inspect.Problem["check"], detail: string): Inspect.StreamCheck => ({
  stream,
  events: 0,
  head: null,
  keyed: false,
  snapshot: null,
  rendersVerified: 0,
  rendersNotRebuildable: 0,
  batches: [],
  problems: [{ stream, version: 1, check, detail }]
})

const verifyCommand = Command.make(
  "verify",
  {
    ...reading,
    stream: Args.text({ name: "stream" }).pipe(Args.optional),
    renders: Options.boolean("renders").pipe(Options.withDescription("also rebuild every render and check its hash"))
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const read = yield* readOptions(options)
        // verify reports every problem itself: the reader does not stop at the first.
        const source = yield* open({ ...options, unverified: true })
        const names = yield* streamNames(source, options.stream)
        const checks: Array<Inspect.StreamCheck> = []
        for (const name of names) {
          const expectedHead = read.expectedHeads.get(name)
          checks.push(
            yield* Inspect.verifyStream(source, name, {
              renders: options.renders,
              key: read.hmacKey,
              expectedHead,
              keyring: read.keyring,
              anchors: read.anchors?.get(name)
            })
          )
        }
        for (const [stream, kept] of read.anchors ?? new Map<string, ReadonlyArray<Anchor.AnchoredHead>>()) {
          const last = kept.reduce((a, b) => (b.version > a.version ? b : a))
          if (!names.includes(stream) && Option.isNone(options.stream)) {
            checks.push(
              missingStream(
                stream,
                "anchor",
                `anchored at version ${last.version} (${new Date(last.anchoredAt).toISOString()}), but the log has no such stream (erased, deleted or rolled back)`
              )
            )
          }
        }
        for (const stream of read.expectedHeads.keys()) {
          if (!names.includes(stream) && Option.isNone(options.stream)) {
            checks.push(
              missingStream(
                stream,
                "expected-head",
                "a head is kept for this stream, but the log has no such stream (erased or deleted)"
              )
            )
          }
        }
        const first = checks.flatMap((check) => check.problems)[0]
        yield* out(
          options,
          { ok: first === undefined, streams: checks },
          () =>
            [
              ...checks.map(
                (check) =>
                  `${keepWhole(`${check.problems.length === 0 ? "ok  " : "FAIL"}  ${check.stream}`, `${check.events} events  head ${headText(check.head)}  snapshot ${check.snapshot ?? "-"}`)}${options.renders ? `\n      renders ${check.rendersVerified} verified, ${check.rendersNotRebuildable} not rebuildable` : ""}${check.batches
                    .map(
                      (batch) =>
                        `\n      batch ${batch.firstVersion}-${batch.lastVersion}  ${batch.writer}  key ${batch.keyId}  ${batch.status}`
                    )
                    .join("")}`
              ),
              ...checks.flatMap((check) =>
                check.problems.map((problem) =>
                  wrap(`  stream ${problem.stream} version ${problem.version} (${problem.check}): ${problem.detail}`)
                )
              )
            ].join("\n"),
          false
        )
        if (first !== undefined) return yield* damaged(first, "verify")
      })
    )
).pipe(
  Command.withDescription(
    "check every event decodes, versions, the hash chain (HMAC with --key-env), the streams row, snapshot seals and replays, heads kept elsewhere; print each head"
  )
)

const headsCommand = Command.make(
  "heads",
  { ...reading, stream: Args.text({ name: "stream" }).pipe(Args.optional) },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const read = yield* readOptions(options)
        const source = yield* open({ ...options, unverified: true })
        const names = yield* streamNames(source, options.stream)
        const heads: Array<{ stream: string; version: number; hash: string }> = []
        for (const name of names) {
          const expectedHead = read.expectedHeads.get(name)
          const checked = yield* source.verify(name, {
            key: read.hmacKey,
            expectedHead,
            keyring: read.keyring,
            anchors: read.anchors?.get(name)
          })
          const problem = checked.integrity.problems[0]
          // A head is only worth keeping when the log verifies up to it.
          if (problem !== undefined) return yield* damaged(problem, "heads")
          const head = checked.integrity.head
          if (head !== undefined) heads.push({ stream: name, ...head })
        }
        yield* out(options, heads, () => heads.map((head) => LogReader.formatHead(head.stream, head)).join("\n"), false)
      })
    )
).pipe(
  Command.withDescription(
    "print each stream's verified head as <stream>@<version>:<hash>: keep it elsewhere, check it with verify --expect-head / --heads-file"
  )
)

// export / import --------------------------------------------------------------------------------

const exportCommand = Command.make(
  "export",
  {
    ...reading,
    stream,
    force: Options.boolean("force").pipe(Options.withDescription("export a stream that does not verify (as stored)"))
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        // A damaged stream is refused unless forced: an import would give it a fresh, valid chain.
        const source = yield* open({ ...options, unverified: options.unverified || options.force })
        yield* Inspect.head(source, options.stream)
        const raws = yield* source.events(options.stream)
        // Every event must decode: an export is something `import` can read back.
        yield* Inspect.decodeAll(raws)
        yield* Console.log(Transfer.exportJsonl(options.stream, raws).trimEnd())
      })
    )
).pipe(
  Command.withDescription(
    `write a stream as ${Transfer.format} JSONL (format version ${Transfer.formatVersion}) to stdout`
  )
)

const importCommand = Command.make(
  "import",
  {
    ...common,
    paths: Args.text({ name: "path" }).pipe(
      Args.atLeast(1),
      Args.withDescription("files or folders (a folder: every .jsonl / .json file under it)")
    ),
    format: Options.choice("format", ["auto", ...Session.formats]).pipe(
      Options.withDefault("auto" as const),
      Options.withDescription("the input format (default: detected from the content)")
    ),
    as: Options.text("stream").pipe(
      Options.optional,
      Options.withDescription("the stream to write (default: from the file); only when the run has one session")
    ),
    provider: Options.choice("provider", ["anthropic", "openai", "ollama", "default"]).pipe(
      Options.withDefault("openai" as const),
      Options.withDescription("openai-chat, ai-sdk: the builder each call is rendered with")
    ),
    model: Options.text("model").pipe(
      Options.withDefault("gpt-4.1"),
      Options.withDescription("openai-chat, ai-sdk, openai-responses: the model (the session formats record their own)")
    ),
    budget: Options.integer("budget").pipe(
      Options.optional,
      Options.withDescription("openai-chat: run tiered compaction at this token budget")
    ),
    keyEnv
  },
  (options) =>
    Effect.gen(function* () {
      // Read first: a missing key fails before anything is parsed or written.
      const key = yield* keyFrom(options.keyEnv)
      const target: Transfer.Target = Option.match(options.pg, {
        onNone: () => ({ _tag: "sqlite", filename: options.db }),
        onSome: (url) => ({ _tag: "postgres", url })
      })
      // Progress for large folders, on a terminal only (stderr: stdout stays the report).
      const tty = process.stderr.isTTY === true
      const progress = (done: number, total: number, file: string) => {
        if (!tty || total < 2) return
        process.stderr.write(`\r\x1b[2Kimport ${done}/${total} ${clip(file.replace(/^.*[\\/]/, ""), 50)}`)
        if (done === total) process.stderr.write("\n")
      }
      const report = yield* Import.run(
        options.paths,
        target,
        {
          format: options.format,
          stream: Option.getOrUndefined(options.as),
          provider: options.provider,
          model: options.model,
          budget: Option.getOrUndefined(options.budget),
          hmacKey: key
        },
        progress
      )
      const [only] = report.imported
      // One file that failed: its own error, as before (the file and line, and nothing written).
      const [failure] = report.failed
      if (report.files === 1 && report.imported.length === 0 && failure !== undefined) {
        return yield* new CommandFailed({
          detail: failure.line > 0 || failure.stream === undefined ? messageOf(failure) : failure.detail
        })
      }
      const unknown = Object.entries(report.unknown)
      yield* out(
        options,
        {
          ...(report.imported.length === 1 && only !== undefined
            ? { stream: only.stream, events: only.events, version: only.version }
            : {}),
          files: report.files,
          sessions: report.imported,
          failed: report.failed,
          unknown: report.unknown
        },
        () =>
          [
            ...report.imported.map(
              (session) =>
                `imported ${session.events} events into stream "${session.stream}" (version ${session.version})${
                  session.calls === undefined ? "" : `: ${session.format}, ${session.calls} model calls`
                }`
            ),
            ...(unknown.length === 0
              ? []
              : [`unknown line types (skipped): ${unknown.map(([type, n]) => `${type} ×${n}`).join(", ")}`]),
            ...report.failed.map((failed) => `failed: ${messageOf(failed)}; nothing of it was written`)
          ].join("\n"),
        false
      )
      if (report.failed.length > 0) {
        return yield* new CommandFailed({
          detail: `${report.failed.length} of ${report.failed.length + report.imported.length} imports failed (listed above)`
        })
      }
    })
).pipe(
  Command.withDescription(
    "import sessions (ctxlog JSONL exports, Claude Code sessions, Codex rollouts, OpenAI Responses / Agents items, AI SDK messages, OpenAI-chat transcripts) as new streams, one per session (atomic; HMAC-keyed with --key-env)"
  )
)

/** A failed import as one line: the file and line, or the stream, and what was wrong. */
const messageOf = (failed: Import.Failed): string =>
  failed.line > 0
    ? `${failed.file}, line ${failed.line}: ${failed.detail}`
    : failed.stream !== undefined
      ? failed.detail
      : `${failed.file}: ${failed.detail}`

// erase ------------------------------------------------------------------------------------------

const eraseCommand = Command.make(
  "erase",
  {
    ...common,
    stream: Args.optional(stream),
    actor: Options.text("actor").pipe(Options.withDescription("who erases (kept in the audit row)")),
    reason: Options.text("reason").pipe(Options.withDescription("why (kept in the audit row)")),
    ...SubjectCli.eraseOptions
  },
  (given) =>
    Option.match(given.subject, {
      onSome: (subject) =>
        Option.isSome(given.stream)
          ? Effect.fail(new CommandFailed({ detail: "erase takes a stream or --subject, not both" }))
          : SubjectCli.eraseSubject({ ...given, subject }).pipe(
              Effect.flatMap((receipt) => out(given, receipt, () => SubjectCli.receiptText(receipt), false)),
              Effect.mapError((error) => new CommandFailed({ detail: error.message }))
            ),
      onNone: () =>
        Option.match(given.stream, {
          onNone: () => Effect.fail(new CommandFailed({ detail: "erase needs a stream (or --subject SUBJECT)" })),
          onSome: (stream) => eraseStream({ ...given, stream })
        })
    })
).pipe(
  Command.withDescription(
    "erase a conversation (events, snapshots, recall entries, owner) and record who, why and what in the audit table; or, with --subject, a subject's sealed content in every stream, with a signed receipt"
  )
)

const eraseStream = (
  options: CommonOptions & { readonly stream: string; readonly actor: string; readonly reason: string }
) =>
  Effect.scoped(
    Effect.gen(function* () {
      // The one command besides import that writes: through the store, whose erasure is the only
      // transaction the append-only triggers let delete events. A missing SQLite file is an error.
      const context = yield* Option.match(options.pg, {
        onNone: () => SqliteEventLog.make({ filename: options.db, create: false }),
        onSome: (url) => PostgresEventLog.make({ url, maxConnections: 2 })
      })
      const record = yield* Context.get(context, Erasure.Erasure).erase(options.stream, {
        actor: options.actor,
        reason: options.reason
      })
      yield* out(
        options,
        record,
        () =>
          `erased stream "${record.stream}": ${record.events} events (version ${record.lastVersion}, head ${record.headHash.slice(0, 12)}…), by ${record.actor}: ${record.reason}`,
        false
      )
    })
  ).pipe(Effect.mapError((error) => new CommandFailed({ detail: error.message })))

// verify-receipt ---------------------------------------------------------------------------------

const verifyReceiptCommand = Command.make(
  "verify-receipt",
  {
    json,
    file: Args.text({ name: "receipt" }).pipe(Args.withDescription("the receipt file (JSON) erase --subject wrote")),
    keyring: Options.text("keyring").pipe(Options.withDescription("the keyring file of writers' public keys"))
  },
  (options) =>
    Effect.gen(function* () {
      const checked = yield* Effect.mapError(
        SubjectCli.verifyReceiptFile(options.file, options.keyring),
        (error) => new CommandFailed({ detail: error.message })
      )
      yield* out(
        { ...options, db: "", pg: Option.none() },
        checked,
        () =>
          checked.ok
            ? `receipt of subject "${checked.subject}" verifies: signed by "${checked.writer}" (key ${checked.keyId})`
            : `receipt does not verify:\n${checked.problems.map((problem) => `  ${problem}`).join("\n")}`,
        false
      )
      if (!checked.ok) return yield* new CommandFailed({ detail: `receipt ${options.file} does not verify` })
    })
).pipe(Command.withDescription("check an erasure receipt offline: its signature and its key in a keyring"))
// restore ----------------------------------------------------------------------------------------

const restoreCommand = Command.make(
  "restore",
  {
    ...common,
    stream,
    compaction: Args.text({ name: "compaction" }).pipe(
      Args.withDescription("the id of the Compacted event to undo (ctxlog events lists it, ◆)")
    )
  },
  (options) =>
    Effect.gen(function* () {
      // Writes one event (CompactionReverted) through the context service; a missing file is an error.
      const target: Restore.Target = Option.match(options.pg, {
        onNone: () => ({ _tag: "sqlite" as const, file: options.db }),
        onSome: (url) => ({ _tag: "postgres" as const, url })
      })
      const restored = yield* Restore.restoreIn(target, options.stream, options.compaction)
      yield* out(options, restored, () => Restore.describe(restored), false)
    }).pipe(
      Effect.mapError(
        (error) =>
          new CommandFailed({
            detail:
              typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error)
          })
      )
    )
).pipe(
  Command.withDescription(
    "undo a compaction as an event (CompactionReverted): its summary leaves, the messages it replaced come back from the log"
  )
)

// whatif -----------------------------------------------------------------------------------------

const decodeSettings = Schema.decodeUnknownEither(Schema.parseJson(Pipeline.Settings))

/** The sweep's options (`SweepCli`): `--db` and `--pg` repeated replace the one of every other command. */
const sweepOptions = {
  db: Options.text("db").pipe(
    Options.repeated,
    Options.withDescription(`SQLite database file, repeatable for a sweep (default ${Source.defaultDb})`)
  ),
  pg: Options.text("pg").pipe(Options.repeated, Options.withDescription("PostgreSQL connection URL, repeatable")),
  all: Options.boolean("all").pipe(Options.withDescription("sweep every stream of the logs")),
  match: Options.text("match").pipe(
    Options.repeated,
    Options.withDescription("sweep the streams whose id matches (* for any characters), repeatable")
  ),
  import: Options.text("import").pipe(
    Options.optional,
    Options.withDescription(
      "sweep a folder of sessions in any format `ctxlog import` reads (Claude Code, Codex, Responses, AI SDK, OpenAI chat), imported in memory, nothing written"
    )
  ),
  importBudget: Options.integer("import-budget").pipe(
    Options.optional,
    Options.withDescription("--import: the token budget the transcripts are recorded at (tiered compaction)")
  ),
  policy: Options.text("policy").pipe(
    Options.repeated,
    Options.withDescription("a candidate policy (JSON, as --config), repeatable; the recording is the baseline")
  ),
  markdown: Options.boolean("markdown").pipe(Options.withDescription("print the sweep as markdown (a PR comment)")),
  lost: Options.boolean("lost").pipe(
    Options.withDescription("list every item a policy lost, with stream, call and event")
  ),
  failOn: Options.text("fail-on").pipe(
    Options.repeated,
    Options.withDescription("exit non-zero when a policy meets it: 'cost>+2%', 'lost>0', 'overflow>0', 'failed>0'")
  ),
  workers: Options.integer("workers").pipe(
    Options.optional,
    Options.withDescription("worker threads (default: the machine's available parallelism)")
  )
}

const whatifCommand = Command.make(
  "whatif",
  {
    ...reading,
    ...sweepOptions,
    stream: stream.pipe(Args.optional),
    config: Options.text("config").pipe(
      Options.optional,
      Options.withDescription(
        "JSON file: turn-policy fields that replace the recorded ones (builder, render, compaction, seams, deferred, inputShare) and pricing; without it the recorded policy is replayed"
      )
    )
  },
  (given) => {
    // A sweep (many streams or policies, a gate) is SweepCli's; one stream and one policy print the table below.
    const sweepOf = { ...given, hmacKey: undefined, importDir: given.import }
    if (SweepCli.isSweep(sweepOf) || Option.isNone(given.stream)) {
      return Effect.flatMap(keyFrom(given.keyEnv), (hmacKey) => SweepCli.run({ ...sweepOf, hmacKey })).pipe(
        Effect.asVoid,
        Effect.mapError((error) => new CommandFailed({ detail: error.message }))
      )
    }
    const options = {
      ...given,
      stream: given.stream.value,
      db: given.db[0] ?? Source.defaultDb,
      pg: Option.fromNullable(given.pg[0])
    }
    return Effect.scoped(
      Effect.gen(function* () {
        const source = yield* open(options)
        yield* Inspect.head(source, options.stream)
        const configFile = Option.getOrUndefined(options.config)
        let settings: Pipeline.Settings = {}
        if (configFile !== undefined) {
          const decoded = decodeSettings(yield* readText(configFile))
          if (Either.isLeft(decoded))
            return yield* new CommandFailed({ detail: `${configFile}: ${decoded.left.message}` })
          settings = decoded.right
        }
        const { pricing: pricingOverride, ...overrides } = settings
        const all = yield* Inspect.entries(source, options.stream)
        const input = Pipeline.inputOf(all)
        // A log written before the turn module records no policy: take the builder of its last render.
        const lastSpec = all
          .flatMap((entry) =>
            entry.event._tag === "PromptRendered" && entry.event.render !== undefined ? [entry.event.render] : []
          )
          .at(-1)
        const recordedBuilder = lastSpec === undefined ? undefined : RenderRecord.decodeConfig(lastSpec)
        const firstPolicy = input.turns.find((turn) => turn.policy !== undefined)?.policy
        const fallback = firstPolicy ?? (recordedBuilder === undefined ? undefined : { builder: recordedBuilder })
        const builder = overrides.builder ?? fallback?.builder
        if (fallback === undefined && builder === undefined) {
          return yield* new CommandFailed({
            detail: `${configFile ?? "whatif"}: no "builder" given and the stream records no policy or rebuildable render to take it from`
          })
        }
        const policyOf = (recorded: Policy.Policy | undefined): Policy.Policy => ({
          ...(recorded ?? fallback ?? { builder: builder ?? { provider: "default", model: "unknown" } }),
          ...overrides
        })
        const replayedPolicy = policyOf(firstPolicy)
        const equal = firstPolicy !== undefined && Object.keys(overrides).length === 0
        // Both runs are priced by the cache model at the recorded calls' times; the replay carries the
        // unknown prefix (system prompt, tools) the recording's first usage revealed.
        const times = all.flatMap((entry) => (entry.event._tag === "PromptRendered" ? [entry.recordedAt] : []))
        const unknownPrefix = CacheModel.predict(all).unknownPrefix
        const baseline = Pipeline.callStats(all, { pricing: pricingOverride })
        const usageCost = all.reduce(
          (sum, entry) =>
            entry.event._tag === "UsageReported"
              ? sum + CacheModel.priceUsage(entry.event, { pricing: pricingOverride }).cost
              : sum,
          0
        )
        const events = yield* Pipeline.run(options.stream, input, policyOf)
        const replayed = Pipeline.callStats(
          events.map(
            (event, index): Queries.Entry => ({
              version: index + 1,
              eventId: event.id,
              type: event._tag,
              schemaVersion: 0,
              recordedAt: 0,
              event
            })
          ),
          { pricing: pricingOverride, times, unknownPrefix }
        )
        const count = Math.max(baseline.length, replayed.length)
        const calls = Array.from({ length: count }, (_, index) => ({
          turn: baseline[index]?.turn ?? replayed[index]?.turn ?? 0,
          call: baseline[index]?.call ?? replayed[index]?.call ?? 0,
          recorded: baseline[index] ?? null,
          whatif: replayed[index] ?? null
        }))
        const total = (stats: ReadonlyArray<Pipeline.CallStat>) => ({
          calls: stats.length,
          tokensSent: stats.reduce((t, s) => t + s.tokensSent, 0),
          compactions: stats.reduce((t, s) => t + s.compactions, 0),
          dropped: stats.reduce((t, s) => t + s.dropped, 0),
          cacheRead: stats.reduce((t, s) => t + s.cacheRead, 0),
          cacheWrite: stats.reduce((t, s) => t + s.cacheWrite, 0),
          compactorCost: Math.round(stats.reduce((t, s) => t + s.compactorCost, 0) * 1e6) / 1e6,
          cost: Math.round(stats.reduce((t, s) => t + s.cost, 0) * 1e6) / 1e6
        })
        const totals = {
          recorded: total(baseline),
          whatif: total(replayed),
          // What the recorded usage cost, priced by the same table: the figure a faithful replay reproduces.
          recordedUsageCost: usageCost === 0 ? null : Math.round(usageCost * 1e6) / 1e6
        }
        const delta =
          totals.recorded.tokensSent === 0
            ? 0
            : (totals.whatif.tokensSent - totals.recorded.tokensSent) / totals.recorded.tokensSent
        const reuse = (value: number | null | undefined) =>
          value === null || value === undefined ? "-" : `${Math.round(value * 100)}%`
        const pair = (a: string | number, b: string | number) => `${a}→${b}`
        yield* out(options, { policy: replayedPolicy, equalPolicies: equal, calls, totals, delta }, () =>
          [
            table(
              ["CALL", "SENT→WHAT-IF", "COMP", "DROP", "REUSE", "COST $"],
              calls.map((row) => [
                `${row.turn}.${row.call}`,
                pair(row.recorded?.tokensSent ?? "-", row.whatif?.tokensSent ?? "-"),
                pair(row.recorded?.compactions ?? "-", row.whatif?.compactions ?? "-"),
                pair(row.recorded?.dropped ?? "-", row.whatif?.dropped ?? "-"),
                pair(reuse(row.recorded?.prefixReuse), reuse(row.whatif?.prefixReuse)),
                pair(row.recorded?.cost.toFixed(4) ?? "-", row.whatif?.cost.toFixed(4) ?? "-")
              ])
            ),
            "",
            `recorded: ${totals.recorded.calls} model calls, ${totals.recorded.tokensSent} tokens sent, ${totals.recorded.compactions} compactions, $${totals.recorded.cost.toFixed(4)}`,
            `what-if:  ${totals.whatif.calls} model calls, ${totals.whatif.tokensSent} tokens sent, ${totals.whatif.compactions} compactions, $${totals.whatif.cost.toFixed(4)}`,
            `input cost by the cache model (cache reads, writes and the compactor's calls included)${
              totals.recordedUsageCost === null
                ? ""
                : `; the recorded usage cost $${totals.recordedUsageCost.toFixed(4)}`
            }`,
            equal
              ? `the recorded policy, replayed: ${(delta * 100).toFixed(2)}% difference in tokens sent (a faithful replay is within 1%)`
              : `${delta <= 0 ? "" : "+"}${(delta * 100).toFixed(1)}% tokens sent under the what-if policy, over the same ${totals.recorded.calls} model calls`
          ].join("\n")
        )
      })
    )
  }
).pipe(
  Command.withDescription(
    "replay the conversation through the turn module under its recorded policy or another; per model call, both runs side by side; with --all, --match, --import or --policy, a sweep of many streams under several policies, with a gate (--fail-on)"
  )
)

// cache ------------------------------------------------------------------------------------------

const cacheCommand = Command.make("cache", { ...reading, stream }, (options) =>
  Effect.scoped(
    Effect.gen(function* () {
      const source = yield* open(options)
      yield* Inspect.head(source, options.stream)
      const entries = yield* Inspect.entries(source, options.stream)
      const report = CacheModel.predict(entries)
      const figures = CacheModel.accuracy(report)
      const start = report.calls[0]?.at ?? 0
      const usd = (value: number) => value.toFixed(4)
      const split = (value: CacheModel.Split | null) =>
        value === null ? "-" : `${value.cacheRead}/${value.cacheWrite}/${value.uncached}`
      const percent = (value: number | null) =>
        value === null ? "-" : `${value >= 0 ? "+" : ""}${(value * 100).toFixed(0)}%`
      yield* out(options, { ...report, accuracy: figures }, () =>
        [
          table(
            ["V", "+S", "PROMPT", "PREDICTED R/W/U", "RECORDED R/W/U", "READ ERR", "CLASS", "COST $", "CAUSE"],
            report.calls.map((call) => [
              call.version,
              Math.round((call.at - start) / 1000),
              call.predicted.promptTokens,
              split(call.predicted),
              split(call.recorded),
              percent(call.readError),
              `${call.predicted.class}${call.recorded === null ? "" : `/${call.recorded.class}`}`,
              `${usd(call.predicted.cost)}${call.recorded === null ? "" : `/${usd(call.recorded.cost)}`}`,
              call.cause === null
                ? ""
                : `${call.cause.kind}${call.cause.divergedAt === null ? "" : ` at ${call.cause.divergedAt}`}${
                    call.cause.events.length === 0
                      ? ""
                      : ` (${call.cause.events.map((e) => `v${e.version} ${e.type}`).join(", ")})`
                  }`
            ]),
            8
          ),
          "",
          report.causes.length === 0
            ? "no call missed the cache"
            : table(
                ["CAUSE", "CALLS", "LOST $"],
                report.causes.map((cause) => [cause.kind, cause.calls, usd(cause.lost)])
              ),
          "",
          `predicted input cost $${usd(report.totals.predicted.cost)} (read ${report.totals.predicted.cacheRead}, written ${report.totals.predicted.cacheWrite}, uncached ${report.totals.predicted.uncached} tokens)`,
          report.totals.recorded === null
            ? "no usage recorded"
            : `recorded input cost $${usd(report.totals.recorded.cost)} (read ${report.totals.recorded.cacheRead}, written ${report.totals.recorded.cacheWrite}, uncached ${report.totals.recorded.uncached} tokens); ${figures.recorded} calls: cache read within ±10% on ${(figures.readWithin10 * 100).toFixed(0)}%, class agrees on ${(figures.classAgrees * 100).toFixed(0)}%`,
          ...(report.unknownPrefix === null
            ? []
            : [`unknown prefix: ${report.unknownPrefix.tokens} tokens, ${report.unknownPrefix.note}`]),
          `prices and rules: table ${report.table} (R/W/U: cache read / cache write / uncached input tokens)`
        ].join("\n")
      )
    })
  )
).pipe(
  Command.withDescription(
    "predict each model call's prompt-cache reads and writes from the renders and their times, beside the recorded usage, and name what broke the cache"
  )
)

// serve ------------------------------------------------------------------------------------------

/** Resolves with the first SIGINT or SIGTERM the process gets (its listeners removed either way). */
const stopSignal = Effect.async<NodeJS.Signals>((resume) => {
  const stop = (signal: NodeJS.Signals) => resume(Effect.succeed(signal))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  return Effect.sync(() => {
    process.off("SIGINT", stop)
    process.off("SIGTERM", stop)
  })
})

const serveCommand = Command.make(
  "serve",
  {
    ...reading,
    port: Options.integer("port").pipe(Options.withDefault(4317)),
    host: Options.text("host").pipe(Options.withDefault("127.0.0.1")),
    policy: Options.text("policy").pipe(
      Options.repeated,
      Options.withDescription(
        "a policy (JSON, as whatif --policy) the viewer can compare with the recording, repeatable"
      )
    ),
    readOnly: Options.boolean("read-only").pipe(
      Options.withDescription(
        "no Restore button: the viewer writes nothing (it writes only a restore's CompactionReverted)"
      )
    )
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const policies = yield* Effect.forEach(options.policy, SweepCli.candidateOf)
        const source = yield* open(options)
        const restore: Restore.Target | undefined = options.readOnly
          ? undefined
          : Option.match(options.pg, {
              onNone: () => ({ _tag: "sqlite" as const, file: options.db }),
              onSome: (url) => ({ _tag: "postgres" as const, url })
            })
        const server = yield* Server.start(source, { port: options.port, host: options.host, policies, restore })
        yield* Console.log(`ctxlog viewer on ${server.url} (${source.target}); Ctrl-C to stop`)
        // Ctrl-C (or a SIGTERM) is how a viewer is meant to stop: the server closes with the scope and
        // the command exits 0, not with the signal's 130 that `pnpm ctxlog serve` reports as a failure.
        const signal = yield* stopSignal
        yield* Console.log(`ctxlog viewer stopped (${signal})`)
      })
    )
).pipe(Command.withDescription("a local web time-travel viewer"))

/** The root command. @since 0.1.0 */
export const command = Command.make("ctxlog").pipe(
  Command.withDescription("inspect ctxlog event logs"),
  Command.withSubcommands([
    streamsCommand,
    eventsCommand,
    windowCommand,
    renderCommand,
    blameCommand,
    diffCommand,
    verifyCommand,
    exportCommand,
    importCommand,
    eraseCommand,
    verifyReceiptCommand,
    restoreCommand,
    headsCommand,
    messageCommand,
    whatifCommand,
    cacheCommand,
    serveCommand
  ])
)

/** Every option name a command takes (for "did you mean" on a mistyped one). @since 0.2.0 */
export const optionNames: ReadonlyArray<string> = [
  ...["db", "pg", "json", "unverified", "key-env", "expect-head", "heads-file", "keyring", "anchors", "owner"],
  ...["from", "to", "type"],
  ...["at", "budget", "full", "turn", "renders", "force", "format", "stream", "provider", "model", "actor"],
  ...["reason", "config", "port", "host", "help", "version", "wizard", "completions", "log-level"],
  ...["all", "match", "import", "import-budget", "policy", "markdown", "lost", "fail-on", "workers"],
  ...["subject", "master-key-env", "signer-key", "writer", "receipt"]
]

/** Run the CLI on `argv` (as `process.argv`). @since 0.1.0 */
/** The package's version (package.json sits one level above both src/ and dist/), shown by `--version`. */
const version = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { readonly version: string }
).version

export const run = Command.run(command, { name: "ctxlog", version })
