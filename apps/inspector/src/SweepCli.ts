/**
 * `ctxlog whatif` as a sweep: which streams (`--all`, `--match`, a stream argument; `--db` and `--pg`
 * repeated; `--import DIR`: the files `ctxlog import` reads, any of its formats, each session a stream), which policies (`--policy FILE` repeated, or
 * `--config`), how to print (text with progress on a TTY, `--json`, `--markdown`, `--lost`), and the
 * gate (`--fail-on`). The command handler in `Cli.ts` hands these options here.
 *
 * @since 0.5.0
 */
import { readFileSync } from "node:fs"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Import from "./importers/Import.js"
import * as Pipeline from "./Pipeline.js"
import * as Source from "./Source.js"
import * as Sweep from "./Sweep.js"
import * as SweepPool from "./SweepPool.js"
import * as SweepReport from "./SweepReport.js"

/** A sweep could not run, or its gate failed; the message says which and why. @since 0.5.0 */
export class SweepFailed extends Schema.TaggedError<SweepFailed>()("SweepFailed", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/** The options of a sweep, as `whatif` parses them. @since 0.5.0 */
export interface Options {
  readonly db: ReadonlyArray<string>
  readonly pg: ReadonlyArray<string>
  readonly json: boolean
  readonly unverified: boolean
  readonly hmacKey: string | undefined
  readonly stream: Option.Option<string>
  readonly config: Option.Option<string>
  readonly all: boolean
  readonly match: ReadonlyArray<string>
  readonly importDir: Option.Option<string>
  readonly importBudget: Option.Option<number>
  readonly policy: ReadonlyArray<string>
  readonly markdown: boolean
  readonly lost: boolean
  readonly failOn: ReadonlyArray<string>
  readonly workers: Option.Option<number>
}

/** Whether the options ask for a sweep rather than the one-stream table. @since 0.5.0 */
export const isSweep = (options: Options): boolean =>
  options.all ||
  options.match.length > 0 ||
  Option.isSome(options.importDir) ||
  options.db.length > 1 ||
  options.pg.length > 1 ||
  (options.db.length > 0 && options.pg.length > 0) ||
  options.policy.length > 0 ||
  options.failOn.length > 0 ||
  options.markdown ||
  options.lost ||
  Option.isSome(options.workers)

const decodeSettings = Schema.decodeUnknownEither(Schema.parseJson(Pipeline.Settings))

/** Read and check a policy file (as `--policy` takes it; `serve --policy` too). @since 0.8.0 */
export const candidateOf = (file: string): Effect.Effect<Sweep.Candidate, SweepFailed> =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => readFileSync(file, "utf8"),
      catch: (cause) =>
        new SweepFailed({ detail: `${file}: ${cause instanceof Error ? cause.message : String(cause)}` })
    })
    const decoded = decodeSettings(text)
    if (Either.isLeft(decoded)) return yield* new SweepFailed({ detail: `${file}: ${decoded.left.message}` })
    return { name: file.replace(/^.*[\\/]/, ""), settings: decoded.right }
  })

/** A `--match` pattern: `*` any run of characters, the rest literal. */
const matcher = (patterns: ReadonlyArray<string>) => {
  const regexes = patterns.map(
    (pattern) =>
      new RegExp(
        `^${pattern
          .split("*")
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
          .join(".*")}$`
      )
  )
  return (stream: string) => regexes.length === 0 || regexes.some((regex) => regex.test(stream))
}

/** The jobs the options select. */
const jobsOf = (options: Options): Effect.Effect<ReadonlyArray<SweepPool.Job>, SweepFailed> =>
  Effect.gen(function* () {
    const read: SweepPool.ReadSpec = {
      integrity: options.unverified ? "unverified" : "verified",
      ...(options.hmacKey === undefined ? {} : { hmacKey: options.hmacKey })
    }
    const selected = matcher(options.match)
    const wanted = Option.getOrUndefined(options.stream)
    if (wanted === undefined && !options.all && options.match.length === 0 && Option.isNone(options.importDir)) {
      return yield* new SweepFailed({ detail: "whatif: name a stream, or sweep with --all, --match or --import" })
    }
    const jobs: Array<SweepPool.Job> = []
    const useDefault = options.db.length === 0 && options.pg.length === 0 && Option.isNone(options.importDir)
    const targets: ReadonlyArray<{ readonly _tag: "sqlite" | "postgres"; readonly where: string }> = [
      ...(useDefault ? [Source.defaultDb] : options.db).map((where) => ({ _tag: "sqlite" as const, where })),
      ...options.pg.map((where) => ({ _tag: "postgres" as const, where }))
    ]
    for (const target of targets) {
      const streams = yield* Effect.scoped(
        Effect.gen(function* () {
          const source =
            target._tag === "sqlite"
              ? yield* Source.sqlite(target.where, { integrity: "unverified" })
              : yield* Source.postgres(target.where, { integrity: "unverified" })
          return yield* source.streams()
        })
      ).pipe(Effect.mapError((error) => new SweepFailed({ detail: error.message })))
      for (const info of streams) {
        if (wanted !== undefined ? info.stream !== wanted : !selected(info.stream)) continue
        jobs.push(
          target._tag === "sqlite"
            ? { _tag: "sqlite", file: target.where, stream: info.stream, read, size: info.version }
            : { _tag: "postgres", url: target.where, stream: info.stream, read, size: info.version }
        )
      }
    }
    if (Option.isSome(options.importDir)) {
      const dir = options.importDir.value
      const files = yield* Effect.try({
        try: () => Import.filesOf(dir),
        catch: (cause) =>
          new SweepFailed({ detail: `--import ${dir}: ${cause instanceof Error ? cause.message : String(cause)}` })
      })
      const budget = Option.getOrUndefined(options.importBudget)
      for (const file of files) {
        const stream = SweepPool.fileStream(file)
        if (wanted !== undefined ? stream !== wanted : !selected(stream)) continue
        jobs.push({
          _tag: "import",
          file,
          provider: "openai",
          model: "gpt-4.1",
          ...(budget === undefined ? {} : { budget })
        })
      }
    }
    if (jobs.length === 0) {
      return yield* new SweepFailed({
        detail: `whatif: no stream matched${wanted === undefined ? "" : ` ${JSON.stringify(wanted)}`}${options.match.length === 0 ? "" : ` --match ${options.match.join(", ")}`}`
      })
    }
    return jobs
  })

/**
 * Run the sweep the options describe, print it, and fail with the gate's reasons when a `--fail-on`
 * condition holds for a policy (after printing).
 * @since 0.5.0
 */
export const run = (options: Options): Effect.Effect<SweepReport.Verdict, SweepFailed> =>
  Effect.gen(function* () {
    const conditions: Array<SweepReport.Condition> = []
    for (const text of options.failOn) {
      const parsed = SweepReport.parseCondition(text)
      if (parsed instanceof SweepReport.BadCondition) return yield* new SweepFailed({ detail: parsed.message })
      conditions.push(parsed)
    }
    const files = [...options.policy, ...Option.toArray(options.config)]
    const candidates: Array<Sweep.Candidate> = [{ name: "recorded-replayed", settings: {} }]
    if (files.length > 0) candidates.length = 0
    for (const file of files) candidates.push(yield* candidateOf(file))
    const jobs = yield* jobsOf(options)
    const workers = Math.max(1, Math.min(Option.getOrElse(options.workers, SweepPool.defaultWorkers), jobs.length))
    const tty = process.stderr.isTTY === true && !options.json
    const outcomes = yield* SweepPool.runAll(jobs, candidates, {
      workers,
      progress: tty
        ? (done, total) => {
            process.stderr.write(`\rctxlog whatif: ${done}/${total} streams replayed`)
            if (done === total) process.stderr.write("\n")
          }
        : undefined
    })
    const verdict = SweepReport.verdictOf(outcomes, candidates, conditions, {
      pricer: Sweep.defaultPricer(undefined).name,
      workers
    })
    yield* Console.log(
      options.json
        ? JSON.stringify(verdict, null, 2)
        : options.markdown
          ? SweepReport.markdown(verdict, { lost: options.lost })
          : SweepReport.text(verdict, { lost: options.lost })
    )
    if (verdict.failures.length > 0) {
      return yield* new SweepFailed({
        detail: `${verdict.failures.length} of ${jobs.length} streams could not be read: ${verdict.failures.map((failure) => `${failure.stream} (${failure.error})`).join("; ")}`
      })
    }
    const failing = verdict.gate.filter((result) => result.failed)
    if (failing.length > 0) {
      return yield* new SweepFailed({
        detail: `gate failed: ${failing.map((result) => `${result.reason}`).join("; ")}`
      })
    }
    return verdict
  })
