/**
 * Captures the environment snapshot at the start of a turn: the workspace, the git branch and short
 * status when the workspace is a repository (through the `git` executable; no git or not a repository
 * leaves `git` out), the files the agent changed in recent turns (given by the caller, who saw the
 * writes), the current task, and the date from Effect's `Clock`. The snapshot's schema and its
 * rendering as the turn reminder are `@ctxlog/providers`' `EnvSnapshot`.
 *
 * @since 0.1.0
 */
import { execFile } from "node:child_process"
import { promises as fs } from "node:fs"
import * as path from "node:path"
import type { EnvSnapshot } from "@ctxlog/providers"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The workspace cannot be read (missing, not a directory). @since 0.1.0 */
export class CaptureError extends Schema.TaggedError<CaptureError>()("CaptureError", {
  workspace: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `environment snapshot of ${this.workspace}: ${this.detail}`
  }
}

/** What the caller knows that the file system does not. @since 0.1.0 */
export interface CaptureInput {
  /** Files the agent changed in recent turns (absolute or workspace-relative), oldest first. */
  readonly changedFiles?: ReadonlyArray<string>
  readonly task?: EnvSnapshot.Task
  /** How long one git command may take (default 5 seconds); a slower git counts as no repository. */
  readonly gitTimeoutMs?: number
}

/** Run git in `cwd`; `undefined` when it fails (not a repository, no git, timeout). */
const git = (cwd: string, args: ReadonlyArray<string>, timeout: number): Effect.Effect<string | undefined> =>
  Effect.async<string | undefined>((resume) => {
    const child = execFile(
      "git",
      [...args],
      { cwd, timeout, maxBuffer: 1024 * 1024, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" } },
      (error, stdout) => resume(Effect.succeed(error === null ? stdout : undefined))
    )
    return Effect.sync(() => child.kill())
  })

const relative = (workspace: string, file: string): string => {
  const absolute = path.resolve(workspace, file)
  const inside = path.relative(workspace, absolute)
  return inside.startsWith("..") || path.isAbsolute(inside) ? absolute : inside.split(path.sep).join("/")
}

const unique = (items: ReadonlyArray<string>): ReadonlyArray<string> => {
  // Keep the most recent mention of each file, in order of its last change.
  const seen = new Set<string>()
  const out: Array<string> = []
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]
    if (item === undefined || seen.has(item)) continue
    seen.add(item)
    out.unshift(item)
  }
  return out
}

/**
 * Take the snapshot of `workspace`.
 * @since 0.1.0
 */
export const capture = (
  workspace: string,
  input: CaptureInput = {}
): Effect.Effect<EnvSnapshot.EnvSnapshot, CaptureError> =>
  Effect.gen(function* () {
    const root = path.resolve(workspace)
    const stat = yield* Effect.tryPromise({
      try: () => fs.stat(root),
      catch: (cause) => new CaptureError({ workspace, detail: cause instanceof Error ? cause.message : String(cause) })
    })
    if (!stat.isDirectory()) return yield* new CaptureError({ workspace, detail: "not a directory" })
    const timeout = input.gitTimeoutMs ?? 5000
    const inside = yield* git(root, ["rev-parse", "--is-inside-work-tree"], timeout)
    const gitState =
      inside?.trim() === "true"
        ? yield* Effect.all({
            branch: git(root, ["rev-parse", "--abbrev-ref", "HEAD"], timeout),
            short: git(root, ["rev-parse", "--short", "HEAD"], timeout),
            status: git(root, ["status", "--short", "--untracked-files=normal"], timeout)
          })
        : undefined
    const now = yield* Clock.currentTimeMillis
    const branchOf = (state: NonNullable<typeof gitState>) => {
      const branch = state.branch?.trim()
      // A repository without commits has no HEAD to name: git prints HEAD and fails on --short.
      if (branch === undefined || branch.length === 0) return "(no commits yet)"
      return branch === "HEAD" ? `detached at ${state.short?.trim() ?? "?"}` : branch
    }
    return {
      workspace: root,
      date: new Date(now).toISOString().slice(0, 10),
      ...(gitState === undefined
        ? {}
        : {
            git: {
              branch: branchOf(gitState),
              status: (gitState.status ?? "").split("\n").filter((line) => line.trim().length > 0)
            }
          }),
      changedFiles: unique((input.changedFiles ?? []).map((file) => relative(root, file))),
      // Schema data (`EnvSnapshot`): what it decodes from has no undefined key, so neither does this.
      ...(input.task === undefined ? {} : { task: input.task })
    } satisfies EnvSnapshot.EnvSnapshot
  })
