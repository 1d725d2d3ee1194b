// Runs the real `ctxlog-agent` binary (its TypeScript sources, bundled once by scripts/ts-bundle.mjs) as a
// child process, and opens the log it wrote. No vitest imports: plain helpers.
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { ContextService, EventLog, Ids, RecallSource, TokenCounter, type Window } from "@ctxlog/core"
import { SqliteEventLog } from "@ctxlog/memory"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { bundledEntry } from "../../../../scripts/ts-bundle.mjs"

/** The package directory (where `src/bin.ts` is). */
export const agentDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/**
 * `src/bin.ts` and what it imports, bundled (an absolute path: a child started in a directory outside the
 * repository runs it too). Built when its sources changed, else the cached bundle (ADR 0108).
 */
export const agentBin = await bundledEntry(join(agentDir, "src", "bin.ts"))

export const argv = (args: ReadonlyArray<string>) => [agentBin, ...args]

/** The environment of a child: no colours, no keys unless given. */
export const childEnv = (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const base = { ...process.env }
  for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"]) delete base[key]
  return { ...base, NO_COLOR: "1", ...env }
}

/** What a finished child printed. */
export interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Run `ctxlog-agent args` to the end, with optional stdin. */
export const runCli = (
  args: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv; readonly input?: string; readonly cwd?: string } = {}
): Promise<Ran> =>
  new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      argv(args),
      { cwd: options.cwd ?? agentDir, env: childEnv(options.env), maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      }
    )
    child.stdin?.end(options.input ?? "")
  })

/** Start `ctxlog-agent args` and keep hold of it (stdin open). */
export const spawnCli = (
  args: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string } = {}
): ChildProcessWithoutNullStreams =>
  spawn(process.execPath, argv(args), { cwd: options.cwd ?? agentDir, env: childEnv(options.env) })

/** Resolve when the child's stdout has printed `pattern` `times` times in all. */
export const waitFor = (child: ChildProcessWithoutNullStreams, pattern: RegExp, times = 1): Promise<string> =>
  new Promise((resolve, reject) => {
    let seen = ""
    const check = () => {
      const matches = seen.match(new RegExp(pattern.source, `${pattern.flags.replace("g", "")}g`)) ?? []
      if (matches.length >= times) {
        child.stdout.off("data", onData)
        child.off("exit", onExit)
        resolve(seen)
      }
    }
    const onData = (data: Buffer) => {
      seen += data.toString()
      check()
    }
    const onExit = (code: number | null) => reject(new Error(`exited (${code}) before ${pattern}:\n${seen}`))
    child.stdout.on("data", onData)
    child.on("exit", onExit)
  })

/** The services to read a database file the agent wrote. */
export const readLayer = (
  filename: string
): Layer.Layer<
  | ContextService.ContextService
  | SqliteEventLog.Services
  | TokenCounter.TokenCounter
  | Ids.Ids
  | RecallSource.RecallSource,
  SqliteEventLog.OpenError
> =>
  ContextService.layer().pipe(
    Layer.provideMerge(SqliteEventLog.layer({ filename })),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7, RecallSource.layerEmpty))
  )

/** Every stored event of a stream and the window the log loads for it. */
export const readStream = (
  filename: string,
  stream: string
): Effect.Effect<
  {
    readonly envelopes: ReadonlyArray<EventLog.Envelope>
    readonly window: Window.Window
    readonly streams: ReadonlyArray<EventLog.StreamInfo>
  },
  unknown
> =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    const ctx = yield* ContextService.ContextService
    const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    const window = yield* ctx.load(stream)
    const streams = yield* log.streams()
    return { envelopes, window, streams }
  }).pipe(Effect.provide(readLayer(filename)))

/** The inspector's package directory (its `src/bin.ts` is the `ctxlog` command). */
const inspectorDir = join(agentDir, "..", "inspector")

/** The inspector's `src/bin.ts`, bundled like the agent's. */
const inspectorBin = await bundledEntry(join(inspectorDir, "src", "bin.ts"))

/** `ctxlog verify --db FILE` (the inspector's verify of every stream), run as a user runs it. */
export const verifyLog = (db: string): Promise<Ran> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [inspectorBin, "verify", "--db", db],
      { cwd: inspectorDir, env: childEnv() },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, stdout, stderr })
      }
    )
  })

/** The lines of an output that are not blank. */
export const linesOf = (text: string): ReadonlyArray<string> =>
  text.split("\n").filter((line) => line.trim().length > 0)

/** The session id a run printed (`session <id>` / `resumed <id>` / the demo's inspector lines). */
export const sessionOf = (stdout: string): string => {
  const match = /(?:session|resumed) ((?:agent|demo)-[0-9-]+-[0-9a-f]+)/.exec(stdout)
  if (match?.[1] === undefined) throw new Error(`no session id in:\n${stdout}`)
  return match[1]
}
