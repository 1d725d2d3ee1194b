/**
 * The environment snapshot (the seed's `env`): what an agent's world looks like at the start of a
 * turn — the workspace, the git branch and short status when it is a repository, the files the agent
 * changed in recent turns, the current task or todo list, and the date. The snapshot is plain data (a
 * `Schema`, so it can be stored or sent as JSON); `reminder` renders it as the builder's turn reminder
 * under a {@link ReminderPolicy}, capped in tokens. The capture (git, the file system) lives with the
 * agent; this module does no I/O.
 *
 * Rebuilds need nothing more: a render records its `turnReminder` text in `PromptRendered`'s spec, so a
 * re-render sends the same bytes without the snapshot.
 *
 * @since 0.1.0
 */
import type { TokenCounter } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/** Git's view of the workspace. @since 0.1.0 */
export const GitState = Schema.Struct({
  /** The current branch, or `HEAD` (detached) / the short commit. */
  branch: Schema.String,
  /** `git status --short` lines, in git's order (empty when clean). */
  status: Schema.Array(Schema.String)
})
/** @since 0.1.0 */
export type GitState = typeof GitState.Type

/** The task the agent works on: a goal and a todo list, either may be missing. @since 0.1.0 */
export const Task = Schema.Struct({
  goal: Schema.optional(Schema.String),
  todos: Schema.optional(Schema.Array(Schema.String))
})
/** @since 0.1.0 */
export type Task = typeof Task.Type

/** An environment snapshot. @since 0.1.0 */
export const EnvSnapshot = Schema.Struct({
  /** The workspace root, as the agent names it. */
  workspace: Schema.String,
  /** The date of the turn, `YYYY-MM-DD` (UTC). */
  date: Schema.String,
  /** Absent when the workspace is not a git repository (or git is not installed). */
  git: Schema.optional(GitState),
  /** Files the agent changed in recent turns, relative to the workspace, most recent last. */
  changedFiles: Schema.Array(Schema.String),
  task: Schema.optional(Task)
})
/** @since 0.1.0 */
export type EnvSnapshot = typeof EnvSnapshot.Type

/** How a snapshot becomes the turn reminder. @since 0.1.0 */
export interface ReminderPolicy {
  /** Standing instructions put before the snapshot (the agent's old constant reminder). */
  readonly preamble?: string
  /** The reminder's cap in tokens; the budget reserves this much for it. */
  readonly maxTokens: number
  /** At most this many status lines and changed files are listed (default 20 each). */
  readonly maxListed?: number
}

/** A reminder policy setting is out of range, or the preamble alone passes the cap. @since 0.1.0 */
export class InvalidReminderPolicy extends Schema.TaggedError<InvalidReminderPolicy>()("InvalidReminderPolicy", {
  field: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `reminder policy: ${this.field}: ${this.detail}`
  }
}

type Line = { readonly text: string; readonly rank: number }

const section = (title: string, items: ReadonlyArray<string>, rank: number, limit: number): ReadonlyArray<Line> => {
  if (items.length === 0) return []
  const shown = items.slice(-limit)
  const hidden = items.length - shown.length
  return [
    { text: `${title}:`, rank: 0 },
    ...(hidden > 0 ? [{ text: `  (${hidden} earlier not shown)`, rank: 0 }] : []),
    ...shown.map((item) => ({ text: `  ${item}`, rank }))
  ]
}

/** Every line of a snapshot's reminder with its drop rank (higher ranks are dropped first to fit). */
const linesOf = (snapshot: EnvSnapshot, limit: number): ReadonlyArray<Line> => [
  { text: `<environment date="${snapshot.date}">`, rank: 0 },
  { text: `Workspace: ${snapshot.workspace}`, rank: 0 },
  ...(snapshot.git === undefined
    ? [{ text: "Git: not a repository", rank: 0 }]
    : [
        {
          text: `Git branch: ${snapshot.git.branch}${snapshot.git.status.length === 0 ? " (clean)" : ""}`,
          rank: 0
        },
        ...section("Git status", snapshot.git.status, 3, limit)
      ]),
  ...(snapshot.task?.goal === undefined ? [] : [{ text: `Task: ${snapshot.task.goal}`, rank: 1 }]),
  ...section("Todo", snapshot.task?.todos ?? [], 1, limit),
  ...section("Files you changed recently", snapshot.changedFiles, 2, limit),
  { text: "</environment>", rank: 0 }
]

/**
 * The turn reminder: the preamble, then the snapshot, within `maxTokens` by `count`. What does not fit
 * goes in this order: git status lines, then the oldest changed files, then todos (each dropped line is
 * counted in a closing note); the workspace, branch and date always stay. Deterministic: the same
 * snapshot and policy give the same bytes.
 * @since 0.1.0
 */
export const reminder = (
  snapshot: EnvSnapshot,
  policy: ReminderPolicy,
  count: TokenCounter.TokenCounter.Service["count"]
): Either.Either<string, InvalidReminderPolicy> => {
  if (!Number.isInteger(policy.maxTokens) || policy.maxTokens <= 0) {
    return Either.left(
      new InvalidReminderPolicy({ field: "maxTokens", detail: `${policy.maxTokens} is not a positive integer` })
    )
  }
  const limit = policy.maxListed ?? 20
  if (!Number.isInteger(limit) || limit < 0) {
    return Either.left(
      new InvalidReminderPolicy({ field: "maxListed", detail: `${limit} is not a non-negative integer` })
    )
  }
  const lines = [...linesOf(snapshot, limit)]
  const head = policy.preamble === undefined || policy.preamble.length === 0 ? [] : [policy.preamble]
  const text = (kept: ReadonlyArray<Line>, dropped: number) =>
    [
      ...head,
      ...kept.map((line) => line.text),
      ...(dropped === 0 ? [] : [`(${dropped} environment lines left out to fit ${policy.maxTokens} tokens)`])
    ].join("\n")
  // Drop the highest-ranked line, the newest first within a rank for the status and oldest first for
  // the lists the agent made (its recent files matter most), until the text fits.
  let dropped = 0
  let current = text(lines, 0)
  while (count(current) > policy.maxTokens) {
    const rank = Math.max(...lines.map((line) => line.rank))
    if (rank === 0) {
      return Either.left(
        new InvalidReminderPolicy({
          field: "maxTokens",
          detail: `${policy.maxTokens} tokens cannot hold the preamble, workspace, branch and date (${count(text(lines, dropped))} tokens)`
        })
      )
    }
    const index =
      rank === 3 ? lines.findLastIndex((line) => line.rank === 3) : lines.findIndex((line) => line.rank === rank)
    lines.splice(index, 1)
    dropped += 1
    current = text(lines, dropped)
  }
  return Either.right(current)
}

/** Decode a snapshot from JSON-like data (typed error naming the field). @since 0.1.0 */
export const decode = Schema.decodeUnknownEither(EnvSnapshot)
