/**
 * Where a sweep's streams come from and how they are spread over threads. A {@link Job} names one
 * stream in a log (`--db` or `--pg`, opened read-only and verified in the thread that replays it) or
 * one file of an import folder, in any format `ctxlog import` reads (detected from its content; run
 * through the import pipeline in memory, nothing written; every session of the file is a stream). {@link runAll} hands jobs to `workers` worker threads (default: the
 * machine's available parallelism), one job at a time each, and returns the results in job order.
 *
 * @since 0.5.0
 */
import { statSync } from "node:fs"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"
import * as Import from "./importers/Import.js"
import * as Inspect from "./Inspect.js"
import type * as Queries from "./Queries.js"
import * as Source from "./Source.js"
import * as Sweep from "./Sweep.js"

/** How the worker reads a log (what `--unverified` and `--key-env` gave). @since 0.5.0 */
export interface ReadSpec {
  readonly integrity: "verified" | "unverified"
  readonly hmacKey?: string
}

/** One stream to sweep. @since 0.5.0 */
export type Job =
  | {
      readonly _tag: "sqlite"
      readonly file: string
      readonly stream: string
      readonly read: ReadSpec
      /** The stream's version (its events), when known: the longest streams are handed out first. @since 0.8.0 */
      readonly size?: number | undefined
    }
  | {
      readonly _tag: "postgres"
      readonly url: string
      readonly stream: string
      readonly read: ReadSpec
      /** The stream's version (its events), when known: the longest streams are handed out first. @since 0.8.0 */
      readonly size?: number | undefined
    }
  | {
      /** A file `ctxlog import` reads (Claude Code, Codex, Responses, AI SDK, OpenAI chat, ctxlog export). */
      readonly _tag: "import"
      readonly file: string
      /** The builder of the formats that record none (OpenAI chat, AI SDK, Responses), and its budget. */
      readonly provider: "anthropic" | "openai" | "ollama" | "default"
      readonly model: string
      readonly budget?: number
    }

/** A job failed before any policy ran (the log could not be read, the transcript is not one). @since 0.5.0 */
export interface JobFailure {
  readonly source: string
  readonly stream: string
  readonly error: string
}

/** What a worker sends back per job. @since 0.5.0 */
export type Outcome =
  | {
      readonly ok: true
      /** One per stream the job held (a log's stream; an imported file's sessions, sidechains apart). */
      readonly results: ReadonlyArray<Sweep.StreamResult>
    }
  | ({ readonly ok: false } & JobFailure)

const label = (job: Job): string =>
  job._tag === "sqlite"
    ? `sqlite:${job.file}`
    : job._tag === "postgres"
      ? `postgres:${job.url.replace(/\/\/[^@/]*@/, "//***@")}`
      : `import:${job.file}`

/** A file's name without its folder and extension. @since 0.8.0 */
export const fileStream = (file: string): string => file.replace(/^.*[\\/]/, "").replace(/\.jsonl?$/i, "")

const nameOf = (job: Job): string => (job._tag === "import" ? fileStream(job.file) : job.stream)

/** A file's sessions run through the import pipeline, each as entries at its recorded times (nothing written). */
const importedEntries = (job: Extract<Job, { _tag: "import" }>) =>
  Effect.gen(function* () {
    const sessions = yield* Import.sessionsOf(job.file, {
      format: "auto",
      provider: job.provider,
      model: job.model,
      budget: job.budget
    }).pipe(
      Effect.mapError(
        (error) =>
          new Error(error._tag === "ImportError" ? `${job.file}:${error.line}: ${error.detail}` : error.message)
      )
    )
    return sessions.map((session) => ({
      stream: session.stream,
      entries: session.events.map(
        (event, index): Queries.Entry => ({
          version: index + 1,
          eventId: event.id,
          type: event._tag,
          schemaVersion: 0,
          recordedAt: session.recordedAt?.[index] ?? 0,
          event
        })
      )
    }))
  })

/** A stream's entries from its log, read and verified in this thread. */
const logEntries = (job: Extract<Job, { _tag: "sqlite" | "postgres" }>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const read = {
        integrity: job.read.integrity,
        ...(job.read.hmacKey === undefined ? {} : { hmacKey: job.read.hmacKey })
      }
      const source =
        job._tag === "sqlite" ? yield* Source.sqlite(job.file, read) : yield* Source.postgres(job.url, read)
      yield* Inspect.head(source, job.stream)
      return yield* Inspect.entries(source, job.stream)
    })
  )

/** Run one job in this thread. @since 0.5.0 */
export const runJob = (
  job: Job,
  candidates: ReadonlyArray<Sweep.Candidate>,
  pricerFor?: Sweep.PricerFor
): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    const streams =
      job._tag === "import" ? yield* importedEntries(job) : [{ stream: job.stream, entries: yield* logEntries(job) }]
    const results: Array<Sweep.StreamResult> = []
    for (const { stream, entries } of streams) {
      results.push(yield* Sweep.sweepStream(stream, label(job), entries, candidates, pricerFor))
    }
    return { ok: true as const, results }
  }).pipe(
    Effect.catchAll((error: { readonly message: string }) =>
      Effect.succeed({ ok: false as const, source: label(job), stream: nameOf(job), error: error.message })
    )
  )

/** What a worker thread is started with. @since 0.5.0 */
export interface WorkerData {
  readonly candidates: ReadonlyArray<Sweep.Candidate>
}

/**
 * The worker entry and the flags it needs: the compiled `.js` beside this module, or, when running
 * from the TypeScript sources (tests, `pnpm` scripts), the `.ts` one loaded through tsx.
 */
const workerEntry = (): {
  readonly entry: string | URL
  readonly eval: boolean
  readonly execArgv: ReadonlyArray<string>
} => {
  if (!import.meta.url.endsWith(".ts")) {
    return { entry: new URL("./SweepWorker.js", import.meta.url), eval: false, execArgv: [] }
  }
  // Node 20 does not load a `.ts` worker through the parent's `--import tsx`: the worker imports
  // tsx's API first and loads its entry through it.
  const require = createRequire(import.meta.url)
  const api = pathToFileURL(join(dirname(require.resolve("tsx/package.json")), "dist/esm/api/index.mjs")).href
  const entry = new URL("./SweepWorker.ts", import.meta.url).href
  return {
    entry: `import(${JSON.stringify(api)}).then((tsx) => tsx.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(entry)}))`,
    eval: true,
    execArgv: ["--conditions=@ctxlog/source"]
  }
}

/** Roughly how many bytes an imported file holds per event (to set files beside logged streams). */
const bytesPerEvent = 1000

/** A job's expected work, to hand out the longest first: a stream's events, a file's bytes scaled alike. */
const weightOf = (job: Job): number => {
  if (job._tag !== "import") return job.size ?? 0
  try {
    return statSync(job.file).size / bytesPerEvent
  } catch {
    return 0
  }
}

/**
 * The order jobs are handed out: the heaviest first (stable among equals), so no thread is left with a
 * long stream while the others are done.
 */
const dispatchOrder = (jobs: ReadonlyArray<Job>): ReadonlyArray<number> => {
  const weights = jobs.map(weightOf)
  return jobs.map((_, index) => index).sort((a, b) => (weights[b] ?? 0) - (weights[a] ?? 0) || a - b)
}

/** The default number of workers: the machine's available parallelism. @since 0.5.0 */
export const defaultWorkers = (): number => Math.max(1, availableParallelism())

/**
 * Run every job on `workers` worker threads (never more than there are jobs), each job whole on one
 * thread, the heaviest first (a stream's `size`, an import file's bytes); `progress` is told after each.
 * Results come back in job order.
 * @since 0.5.0
 */
export const runAll = (
  jobs: ReadonlyArray<Job>,
  candidates: ReadonlyArray<Sweep.Candidate>,
  options: {
    readonly workers?: number | undefined
    readonly progress?: ((done: number, total: number) => void) | undefined
  } = {}
): Effect.Effect<ReadonlyArray<Outcome>> =>
  Effect.async<ReadonlyArray<Outcome>>((resume) => {
    const outcomes: Array<Outcome | undefined> = jobs.map(() => undefined)
    const count = Math.max(1, Math.min(options.workers ?? defaultWorkers(), jobs.length))
    if (jobs.length === 0) {
      resume(Effect.succeed([]))
      return
    }
    const entry = workerEntry()
    const workerData: WorkerData = { candidates }
    const threads: Array<Worker> = []
    let next = 0
    let done = 0
    let finished = false
    const finish = (effect: Effect.Effect<ReadonlyArray<Outcome>>) => {
      if (finished) return
      finished = true
      for (const thread of threads) void thread.terminate()
      resume(effect)
    }
    const order = dispatchOrder(jobs)
    const feed = (thread: Worker) => {
      if (next >= jobs.length) return
      const index = order[next++] ?? 0
      thread.postMessage({ index, job: jobs[index] })
    }
    for (let i = 0; i < count; i++) {
      const thread = new Worker(entry.entry, { workerData, eval: entry.eval, execArgv: [...entry.execArgv] })
      threads.push(thread)
      thread.on("message", (message: { readonly index: number; readonly outcome: Outcome }) => {
        outcomes[message.index] = message.outcome
        done++
        options.progress?.(done, jobs.length)
        if (done === jobs.length) finish(Effect.succeed(outcomes.filter((outcome) => outcome !== undefined)))
        else feed(thread)
      })
      thread.on("error", (error) => {
        finish(Effect.die(error))
      })
      feed(thread)
    }
    return Effect.sync(() => {
      finished = true
      for (const thread of threads) void thread.terminate()
    })
  })
