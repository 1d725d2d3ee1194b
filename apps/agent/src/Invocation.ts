/**
 * How to run this agent again, as a command that runs as printed: from the sources in the repository
 * it is `cd <repo> && pnpm --filter @ctxlog/agent --silent start …` (the `ctxlog-agent` binary is not on the
 * PATH there; `--silent`: no pnpm lines around the agent's own, e.g. after an error), from a build it is the binary the process was started as. Paths in it are absolute.
 *
 * @since 0.2.0
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type * as Stack from "./Stack.js"
import { repositoryOf } from "./Workspace.js"

/** Quote one shell word when it needs it. @since 0.2.0 */
export const quote = (word: string): string =>
  /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`

const here = fileURLToPath(import.meta.url)

/** The repository root when the agent runs from its sources in a clone. @since 0.2.0 */
export const sourceRepository = (): string | undefined =>
  here.endsWith(".ts") ? repositoryOf(path.dirname(here)) : undefined

/** A root script of the repository (`pnpm ctxlog …`), runnable from any directory. @since 0.2.0 */
export const rootScript = (script: string, args: ReadonlyArray<string>): string => {
  const repository = sourceRepository()
  const line = `pnpm ${script} ${args.map(quote).join(" ")}`
  return repository === undefined ? line : `cd ${quote(repository)} && ${line}`
}

/** The shell command that runs `ctxlog-agent args` the way this process was started. @since 0.2.0 */
export const commandLine = (args: ReadonlyArray<string>, argv1: string | undefined = process.argv[1]): string => {
  const rest = args.map(quote).join(" ")
  const repository = sourceRepository()
  if (repository !== undefined) return `cd ${quote(repository)} && pnpm --filter @ctxlog/agent --silent start ${rest}`
  if (argv1 === undefined || path.basename(argv1) === "ctxlog-agent") return `ctxlog-agent ${rest}`
  return `node ${quote(path.resolve(argv1))} ${rest}`
}

/** `--db <absolute file>` or `--pg <url, password hidden>`. @since 0.2.0 */
export const storageArgs = (storage: Stack.Storage): ReadonlyArray<string> =>
  storage._tag === "sqlite"
    ? ["--db", storage.filename === ":memory:" ? storage.filename : path.resolve(storage.filename)]
    : ["--pg", storage.url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@")]

/** The provider flags of a session, as `run` takes them. @since 0.3.0 */
export interface ProviderFlags {
  readonly provider: string
  readonly model?: string | undefined
  readonly baseUrl?: string | undefined
  readonly contextWindow?: number | undefined
  readonly maxOutputTokens?: number | undefined
}

/**
 * `--provider … --model … --base-url … --context-window … --max-output-tokens …`: the flags given (or
 * set by `/reload`), so a resumed session talks to the same model with the same window. The default
 * provider (`offline`) is left out.
 * @since 0.3.0
 */
export const providerArgs = (flags: ProviderFlags | undefined): ReadonlyArray<string> =>
  flags === undefined
    ? []
    : [
        ...(flags.provider === "offline" ? [] : ["--provider", flags.provider]),
        ...(flags.model === undefined ? [] : ["--model", flags.model]),
        ...(flags.baseUrl === undefined ? [] : ["--base-url", flags.baseUrl]),
        ...(flags.contextWindow === undefined ? [] : ["--context-window", String(flags.contextWindow)]),
        ...(flags.maxOutputTokens === undefined ? [] : ["--max-output-tokens", String(flags.maxOutputTokens)])
      ]

/**
 * The command that resumes a session: its storage and, when given, the provider flags it runs with
 * (without them a session resumes on the offline model).
 * @since 0.2.0
 */
export const resume = (stream: string, storage: Stack.Storage, flags?: ProviderFlags): string =>
  commandLine(["run", "--session", stream, ...storageArgs(storage), ...providerArgs(flags)])

/**
 * The directory the person typed the command in, when pnpm started this process as a package script
 * (`start` or `demo`: pnpm runs it in `apps/agent` and says where it was invoked in `INIT_CWD`); else
 * `undefined`. A process started by another script (a test run under `pnpm test`) is left alone.
 * @since 0.3.0
 */
export const invocationDirectory = (env: NodeJS.ProcessEnv = process.env): string | undefined =>
  env.npm_package_name === "@ctxlog/agent" &&
  (env.npm_lifecycle_event === "start" || env.npm_lifecycle_event === "demo") &&
  env.INIT_CWD !== undefined &&
  env.INIT_CWD.length > 0
    ? env.INIT_CWD
    : undefined

/**
 * Work from {@link invocationDirectory}: the default log (`.ctxlog/ctxlog.db`), relative paths and the
 * default workspace are then the person's, as for the inspector's `pnpm ctxlog` (one default log).
 * @since 0.3.0
 */
export const toInvocationDirectory = (): void => {
  const dir = invocationDirectory()
  if (dir !== undefined && dir !== process.cwd()) process.chdir(dir)
}
