/**
 * The `ctxlog` command line (`@effect/cli`). Every command reads through a read-only {@link Source}
 * (`--db` SQLite file, default `./.ctxlog/ctxlog.db`, or `--pg` URL) except `import` and `erase`, and prints text
 * or, with `--json`, one JSON document. A failure prints `ctxlog: <what was wrong>` on stderr and
 * exits non-zero.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import type { WindowEvent } from "@ctxlog/core"
import { Erasure, PostgresEventLog, SqliteEventLog } from "@ctxlog/memory"
import { RenderRecord } from "@ctxlog/providers"
import type { Policy } from "@ctxlog/turn"
import { Args, Command, Options } from "@effect/cli"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Inspect from "./Inspect.js"
import * as Pipeline from "./Pipeline.js"
import * as Queries from "./Queries.js"
import * as Server from "./Server.js"
import * as Source from "./Source.js"
import * as Transfer from "./Transfer.js"

/** A command failed; the message says what was wrong. @since 0.1.0 */
export class CommandFailed extends Schema.TaggedError<CommandFailed>()("CommandFailed", {
  detail: Schema.String
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
const stream = Args.text({ name: "stream" }).pipe(Args.withDescription("the stream (conversation) id"))
const at = Options.integer("at").pipe(Options.optional, Options.withDescription("stream version (default: the head)"))

interface CommonOptions {
  readonly db: string
  readonly pg: Option.Option<string>
  readonly json: boolean
}

const open = (options: CommonOptions): Effect.Effect<Source.Source, Source.SourceError, Scope.Scope> =>
  Option.match(options.pg, { onNone: () => Source.sqlite(options.db), onSome: (url) => Source.postgres(url) })

const out = (options: CommonOptions, value: unknown, text: () => string) =>
  Console.log(options.json ? JSON.stringify(value, null, 2) : text())

const pad = (value: string | number, width: number) => String(value).padEnd(width)
const padStart = (value: string | number, width: number) => String(value).padStart(width)
const time = (ms: number) => (ms > 0 ? new Date(ms).toISOString().replace(/\.\d+Z$/, "Z") : "-")

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number>>) => {
  const widths = header.map((name, index) =>
    Math.max(name.length, ...rows.map((row) => String(row[index] ?? "").length))
  )
  const line = (cells: ReadonlyArray<string | number>) =>
    cells
      .map((cell, index) =>
        typeof cell === "number" ? padStart(cell, widths[index] ?? 0) : pad(cell, widths[index] ?? 0)
      )
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

// streams ----------------------------------------------------------------------------------------

const owner = Options.text("owner").pipe(
  Options.optional,
  Options.withDescription("only the streams of this owner (tenant)")
)

const streamsCommand = Command.make("streams", { ...common, owner }, (options) =>
  Effect.scoped(
    Effect.gen(function* () {
      const source = yield* open(options)
      const infos = yield* source.streams(Option.getOrUndefined(options.owner))
      const summaries: Array<Queries.StreamSummary> = []
      for (const info of infos) {
        const all = yield* Inspect.entries(source, info.stream, { types: Queries.summaryTypes })
        const { window } = yield* Inspect.windowAt(source, info.stream, info.version)
        summaries.push(Queries.summarize(info.stream, all, window, info.updatedAt))
      }
      yield* out(options, summaries, () =>
        summaries.length === 0
          ? "no streams"
          : table(
              ["STREAM", "EVENTS", "TOKENS", "TURNS", "RENDERS", "COMPACTIONS", "SEAMS", "LAST ACTIVITY"],
              summaries.map((s) => [
                s.stream,
                s.events,
                s.tokens,
                s.turns,
                s.renders,
                s.compactions,
                s.seams,
                time(s.lastActivity)
              ])
            )
      )
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
    ...common,
    stream,
    from: Options.integer("from").pipe(Options.optional),
    to: Options.integer("to").pipe(Options.optional),
    type: Options.text("type").pipe(Options.repeated, Options.withDescription("only events of this type (repeatable)"))
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const source = yield* open(options)
        const headVersion = yield* Inspect.head(source, options.stream)
        const from = yield* Inspect.resolveVersion(options.stream, headVersion, Option.getOrUndefined(options.from))
        const to = yield* Inspect.resolveVersion(options.stream, headVersion, Option.getOrUndefined(options.to))
        const all = yield* Inspect.entries(source, options.stream, {
          from: Option.isSome(options.from) ? from : 1,
          to,
          types: options.type
        })
        const lines = Queries.eventLines(all)
        yield* out(options, lines, () =>
          lines
            .map(
              (line) =>
                `${padStart(line.version, 6)}  ${pad(line.type, 24)} v${line.schemaVersion}  ${line.mark === null ? "  " : line.mark === "compaction" ? "◆ " : "▲ "}${line.summary}`
            )
            .join("\n")
        )
      })
    )
).pipe(Command.withDescription("the log, one line per event (◆ compaction, ▲ seam)"))

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
        `  ${padStart(row.tokens, 6)}  ${pad(row.role, 9)} ${pad(row.id, 38)} ${flags === "" ? "" : `[${flags}] `}${row.preview}`
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
    ...common,
    stream,
    at,
    budget: Options.integer("budget").pipe(Options.optional, Options.withDescription("budget to compare against"))
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
        yield* out(options, { window: view, usage: use, foldedFrom: from }, () => windowText(view, use, from))
      })
    )
).pipe(Command.withDescription("the window at a version by partition, tokens per message, usage vs the budget"))

// render -----------------------------------------------------------------------------------------

const renderCommand = Command.make(
  "render",
  {
    ...common,
    stream,
    at,
    turn: Options.integer("turn").pipe(Options.optional, Options.withDescription("the last render of turn K (1-based)"))
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const source = yield* open(options)
        const check = yield* Inspect.renderAt(source, options.stream, {
          ...Option.match(options.at, { onNone: () => ({}), onSome: (value) => ({ at: value }) }),
          ...Option.match(options.turn, { onNone: () => ({}), onSome: (value) => ({ turn: value }) })
        })
        yield* out(options, check, () =>
          [
            `render at version ${check.version} (turn ${check.turn}) for ${check.provider}/${check.model}`,
            check.verified
              ? `verified: sha256 ${check.sha256}`
              : `MISMATCH: ${check.problem ?? "unknown"}\nrecorded sha256 ${check.recordedSha256}`,
            ...(check.body === null ? [] : ["", check.body])
          ].join("\n")
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

const touchText = (touch: Queries.Touch) => `${touch.action} by v${touch.version} ${touch.type}`

const blameCommand = Command.make("blame", { ...common, stream, at }, (options) =>
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
            ["PARTITION", "ID", "ROLE", "TOKENS", "PUT THERE", "LAST CHANGE", "TEXT"],
            result.messages.map((row) => [
              row.partition,
              row.id,
              row.role,
              row.tokens,
              touchText(row.addedBy),
              row.lastChangedBy === null ? "-" : touchText(row.lastChangedBy),
              row.preview.slice(0, 50)
            ])
          ),
          ...(result.removed.length === 0
            ? []
            : [
                "",
                "removed:",
                table(
                  ["ID", "ROLE", "TOKENS", "PUT THERE", "REMOVED"],
                  result.removed.map((row) => [
                    row.id,
                    row.role,
                    row.tokens,
                    touchText(row.addedBy),
                    touchText(row.removedBy)
                  ])
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
  { ...common, stream, from: Args.integer({ name: "N" }), to: Args.integer({ name: "M" }) },
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
              (row) => `+ ${pad(row.partition, 9)} ${pad(row.id, 38)} ${padStart(row.tokens, 6)}  ${row.preview}`
            ),
            ...result.removed.map(
              (row) => `- ${pad(row.partition, 9)} ${pad(row.id, 38)} ${padStart(row.tokens, 6)}  ${row.preview}`
            ),
            ...result.changed.map(
              (row) =>
                `~ ${pad(row.partition, 9)} ${pad(row.id, 38)} ${row.tokensBefore} → ${row.tokensAfter}  ${row.after}`
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

/** `--key-env NAME`: the key is read from the environment, never passed on the command line (`ps`, history). */
const keyEnv = Options.text("key-env").pipe(
  Options.optional,
  Options.withDescription(
    "name of the environment variable holding the log's HMAC key (never pass the key itself on the command line)"
  )
)

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

const verifyCommand = Command.make(
  "verify",
  {
    ...common,
    stream: Args.text({ name: "stream" }).pipe(Args.optional),
    renders: Options.boolean("renders").pipe(Options.withDescription("also rebuild every render and check its hash")),
    keyEnv
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const key = yield* keyFrom(options.keyEnv)
        const source = yield* open(options)
        const names = yield* Option.match(options.stream, {
          onNone: () => Effect.map(source.streams(), (infos) => infos.map((info) => info.stream)),
          onSome: (name) => Effect.as(Inspect.head(source, name), [name])
        })
        const checks: Array<Inspect.StreamCheck> = []
        for (const name of names) {
          checks.push(
            yield* Inspect.verifyStream(source, name, {
              renders: options.renders,
              ...(key === undefined ? {} : { key })
            })
          )
        }
        const first = checks.flatMap((check) => check.problems)[0]
        yield* out(options, { ok: first === undefined, streams: checks }, () =>
          [
            ...checks.map(
              (check) =>
                `${check.problems.length === 0 ? "ok  " : "FAIL"}  ${pad(check.stream, 24)} ${padStart(check.events, 7)} events  chain ${check.head === "" ? "broken" : `${check.head.slice(0, 12)}…`}  snapshot ${check.snapshot ?? "-"}${options.renders ? `  renders ${check.rendersVerified} verified, ${check.rendersNotRebuildable} not rebuildable` : ""}`
            ),
            ...checks.flatMap((check) =>
              check.problems.map(
                (problem) =>
                  `  stream ${problem.stream} version ${problem.version} (${problem.check}): ${problem.detail}`
              )
            )
          ].join("\n")
        )
        if (first !== undefined) {
          return yield* new CommandFailed({
            detail: `verify failed: stream "${first.stream}" version ${first.version} (${first.check}): ${first.detail}`
          })
        }
      })
    )
).pipe(
  Command.withDescription(
    "decode every event, contiguous versions, hash chain (HMAC with --key-env), the streams row, snapshot seals and replays"
  )
)

// export / import --------------------------------------------------------------------------------

const exportCommand = Command.make("export", { ...common, stream }, (options) =>
  Effect.scoped(
    Effect.gen(function* () {
      const source = yield* open(options)
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

const readText = (file: string) =>
  Effect.try({
    try: () => readFileSync(file, "utf8"),
    catch: (cause) =>
      new Transfer.ImportError({ file, line: 0, detail: cause instanceof Error ? cause.message : String(cause) })
  })

const importCommand = Command.make(
  "import",
  {
    ...common,
    file: Args.text({ name: "file" }),
    format: Options.choice("format", ["ctxlog", "openai-chat"]).pipe(Options.withDefault("ctxlog" as const)),
    as: Options.text("stream").pipe(
      Options.optional,
      Options.withDescription("the stream to write (default: from the file)")
    ),
    provider: Options.choice("provider", ["anthropic", "openai", "ollama", "default"]).pipe(
      Options.withDefault("openai" as const),
      Options.withDescription("openai-chat: the builder each turn is rendered with")
    ),
    model: Options.text("model").pipe(Options.withDefault("gpt-4.1")),
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
      const text = yield* readText(options.file)
      let streamName: string
      let events: ReadonlyArray<WindowEvent.WindowEvent>
      if (options.format === "ctxlog") {
        const parsed = yield* Transfer.parseJsonl(options.file, text)
        streamName = Option.getOrElse(options.as, () => parsed.stream)
        events = parsed.events
      } else {
        let json: unknown
        try {
          // A leading byte order mark (editors on Windows write one) is not part of the JSON.
          json = JSON.parse(text.replace(/^\uFEFF/, ""))
        } catch (cause) {
          return yield* new Transfer.ImportError({
            file: options.file,
            line: 0,
            detail: `not JSON (${cause instanceof Error ? cause.message : String(cause)})`
          })
        }
        const messages = yield* Pipeline.fromOpenAIChat(json).pipe(
          Effect.mapError((error) => new Transfer.ImportError({ file: options.file, line: 0, detail: error.message }))
        )
        streamName = Option.getOrElse(options.as, () => options.file.replace(/^.*[\\/]/, "").replace(/\.json$/i, ""))
        const budget = Option.getOrUndefined(options.budget)
        const policy = Pipeline.importPolicy(
          {
            provider: options.provider,
            model: options.model,
            ...(budget === undefined ? {} : { contextWindow: budget })
          },
          budget !== undefined
        )
        events = yield* Pipeline.run(streamName, Pipeline.turnsOf(messages), () => policy)
      }
      const target: Transfer.Target = Option.match(options.pg, {
        onNone: () => ({ _tag: "sqlite", filename: options.db }),
        onSome: (url) => ({ _tag: "postgres", url })
      })
      const result = yield* Transfer.write(target, streamName, events, key === undefined ? {} : { hmacKey: key })
      yield* out(
        options,
        { stream: streamName, events: result.written, version: result.nextExpectedVersion },
        () => `imported ${result.written} events into stream "${streamName}" (version ${result.nextExpectedVersion})`
      )
    })
).pipe(
  Command.withDescription(
    "import a ctxlog JSONL export or an OpenAI-chat transcript as a new stream (atomic; HMAC-keyed with --key-env)"
  )
)

// erase ------------------------------------------------------------------------------------------

const eraseCommand = Command.make(
  "erase",
  {
    ...common,
    stream,
    actor: Options.text("actor").pipe(Options.withDescription("who erases (kept in the audit row)")),
    reason: Options.text("reason").pipe(Options.withDescription("why (kept in the audit row)"))
  },
  (options) =>
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
            `erased stream "${record.stream}": ${record.events} events (version ${record.lastVersion}, head ${record.headHash.slice(0, 12)}…), by ${record.actor}: ${record.reason}`
        )
      })
    ).pipe(Effect.mapError((error) => new CommandFailed({ detail: error.message })))
).pipe(
  Command.withDescription(
    "erase a conversation (events, snapshots, recall entries, owner) and record who, why and what in the audit table"
  )
)

// whatif -----------------------------------------------------------------------------------------

const decodeSettings = Schema.decodeUnknownEither(Schema.parseJson(Pipeline.Settings))

const whatifCommand = Command.make(
  "whatif",
  {
    ...common,
    stream,
    config: Options.text("config").pipe(
      Options.optional,
      Options.withDescription(
        "JSON file: turn-policy fields that replace the recorded ones (builder, render, compaction, seams, deferred, inputShare) and pricing; without it the recorded policy is replayed"
      )
    )
  },
  (options) =>
    Effect.scoped(
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
        const recordedPricing = pricingOverride ?? Pipeline.defaultPricing(fallback?.builder.provider ?? "default")
        const pricing = pricingOverride ?? Pipeline.defaultPricing(replayedPolicy.builder.provider)
        const baseline = Pipeline.callStats(all, recordedPricing)
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
          pricing
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
          cost: Math.round(stats.reduce((t, s) => t + s.cost, 0) * 1e6) / 1e6
        })
        const totals = { recorded: total(baseline), whatif: total(replayed) }
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
            equal
              ? `the recorded policy, replayed: ${(delta * 100).toFixed(2)}% difference in tokens sent (a faithful replay is within 1%)`
              : `${delta <= 0 ? "" : "+"}${(delta * 100).toFixed(1)}% tokens sent under the what-if policy, over the same ${totals.recorded.calls} model calls`
          ].join("\n")
        )
      })
    )
).pipe(
  Command.withDescription(
    "replay the conversation through the turn module under its recorded policy or another; per model call, both runs side by side"
  )
)

// serve ------------------------------------------------------------------------------------------

const serveCommand = Command.make(
  "serve",
  {
    ...common,
    port: Options.integer("port").pipe(Options.withDefault(4317)),
    host: Options.text("host").pipe(Options.withDefault("127.0.0.1"))
  },
  (options) =>
    Effect.scoped(
      Effect.gen(function* () {
        const source = yield* open(options)
        const server = yield* Server.start(source, { port: options.port, host: options.host })
        yield* Console.log(`ctxlog viewer on ${server.url} (${source.target}); Ctrl-C to stop`)
        return yield* Effect.never
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
    whatifCommand,
    serveCommand
  ])
)

/** Run the CLI on `argv` (as `process.argv`). @since 0.1.0 */
export const run = Command.run(command, { name: "ctxlog", version: "0.1.0" })
