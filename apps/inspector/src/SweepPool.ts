/**
 * Where a sweep's streams come from and how they are spread over threads. A {@link Job} names one
 * stream in a log (`--db` or `--pg`, opened read-only and verified in the thread that replays it) or
 * one transcript file of an import folder (run through the `import --format openai-chat` pipeline in
 * memory, nothing written). {@link runAll} hands jobs to `workers` worker threads (default: the
 * machine's available parallelism), one job at a time each, and returns the results in job order.
 *
 * @since 0.5.0
 */
import { readFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { pathToFileURL } from "node:url"
import * as Effect from "effect/Effect"
import * as Inspect from "./Inspect.js"
import * as Pipeline from "./Pipeline.js"
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
  | { readonly _tag: "sqlite"; readonly file: string; readonly stream: string; readonly read: ReadSpec }
  | { readonly _tag: "postgres"; readonly url: string; readonly stream: string; readonly read: ReadSpec }
  | {
      readonly _tag: "transcript"
      readonly file: string
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
export type Outcome = { readonly ok: true; readonly result: Sweep.StreamResult } | ({ readonly ok: false } & JobFailure)

const label = (job: Job): string =>
  job._tag === "sqlite"
    ? `sqlite:${job.file}`
    : job._tag === "postgres"
      ? `postgres:${job.url.replace(/\/\/[^@/]*@/, "//***@")}`
      : `transcript:${job.file}`

const nameOf = (job: Job): string =>
  job._tag === "transcript" ? job.file.replace(/^.*[\\/]/, "").replace(/\.json$/i, "") : job.stream

/** A transcript run through the import pipeline, as entries (nothing written). */
const transcriptEntries = (job: Extract<Job, { _tag: "transcript" }>) =>
  Effect.gen(function* () {
    const text = yield* Effect.try({
      try: () => readFileSync(job.file, "utf8"),
      catch: (cause) => new Error(`${job.file}: ${cause instanceof Error ? cause.message : String(cause)}`)
    })
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text.replace(/^\uFEFF/, "")),
      catch: (cause) => new Error(`${job.file}: not JSON (${cause instanceof Error ? cause.message : String(cause)})`)
    })
    const messages = yield* Pipeline.fromOpenAIChat(json).pipe(
      Effect.mapError((error) => new Error(`${job.file}: ${error.message}`))
    )
    const policy = Pipeline.importPolicy(
      {
        provider: job.provider,
        model: job.model,
        ...(job.budget === undefined ? {} : { contextWindow: job.budget })
      },
      job.budget !== undefined
    )
    const events = yield* Pipeline.run(nameOf(job), Pipeline.turnsOf(messages), () => policy)
    return events.map(
      (event, index): Queries.Entry => ({
        version: index + 1,
        eventId: event.id,
        type: event._tag,
        schemaVersion: 0,
        recordedAt: 0,
        event
      })
    )
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
    const entries = job._tag === "transcript" ? yield* transcriptEntries(job) : yield* logEntries(job)
    const result = yield* Sweep.sweepStream(nameOf(job), label(job), entries, candidates, pricerFor)
    return { ok: true as const, result }
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

/** The default number of workers: the machine's available parallelism. @since 0.5.0 */
export const defaultWorkers = (): number => Math.max(1, availableParallelism())

/**
 * Run every job on `workers` worker threads (never more than there are jobs), each job whole on one
 * thread; `progress` is told after each. Results come back in job order.
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
    const feed = (thread: Worker) => {
      if (next >= jobs.length) return
      const index = next++
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
