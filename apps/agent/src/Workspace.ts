/**
 * Where a session works: the workspace is recorded in the session (a knowledge line the model also
 * reads) when it starts, and a resumed session works there again. The agent never works inside the
 * ctxlog repository itself: its tools could edit the sources they run from.
 *
 * @since 0.2.0
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs"
import * as path from "node:path"
import { Message, type Window } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The workspace is inside the ctxlog repository. @since 0.2.0 */
export class InsideRepository extends Schema.TaggedError<InsideRepository>()("InsideRepository", {
  workspace: Schema.String,
  repository: Schema.String
}) {
  override get message(): string {
    return `the workspace ${this.workspace} is inside the ctxlog repository (${this.repository}), whose sources the agent's tools could edit; give --workspace with a directory outside it, such as a copy of your project`
  }
}

/** The session's recorded workspace is gone. @since 0.2.0 */
export class WorkspaceGone extends Schema.TaggedError<WorkspaceGone>()("WorkspaceGone", {
  stream: Schema.String,
  workspace: Schema.String
}) {
  override get message(): string {
    return `session "${this.stream}" works in ${this.workspace}, which no longer exists; give --workspace DIR to carry on in another directory`
  }
}

const prefix = "Workspace directory: "

/** The knowledge line that records a workspace (and tells the model where it works). @since 0.2.0 */
export const note = (dir: string): string =>
  `${prefix}${dir}\nTool paths are relative to it; nothing outside it can be read or changed.`

/** The workspace a session recorded when it started, if it did. @since 0.2.0 */
export const recorded = (window: Window.Window): string | undefined => {
  for (const message of window.knowledge) {
    const text = Message.textOf(message)
    if (text.startsWith(prefix)) return text.slice(prefix.length).split("\n")[0]
  }
  return undefined
}

const readJson = (file: string): unknown => {
  try {
    return JSON.parse(readFileSync(file, "utf8"))
  } catch {
    return undefined
  }
}

const named = (file: string, name: string): boolean => {
  const value = readJson(file)
  return typeof value === "object" && value !== null && "name" in value && value.name === name
}

/**
 * The root of the ctxlog repository that holds `dir`, if any: a directory whose `package.json` is
 * named `ctxlog` and which holds the agent (`apps/agent`, named `@ctxlog/agent`).
 * @since 0.2.0
 */
export const repositoryOf = (dir: string): string | undefined => {
  // Through symbolic links too: a link to the sources is the sources.
  for (let at = existsSync(dir) ? realpathSync(dir) : path.resolve(dir); ; at = path.dirname(at)) {
    if (
      named(path.join(at, "package.json"), "ctxlog") &&
      named(path.join(at, "apps", "agent", "package.json"), "@ctxlog/agent")
    ) {
      return at
    }
    if (path.dirname(at) === at) return undefined
  }
}

/** Fail when `dir` is inside the ctxlog repository. @since 0.2.0 */
export const refuseRepository = (dir: string): Effect.Effect<string, InsideRepository> => {
  const repository = repositoryOf(dir)
  return repository === undefined
    ? Effect.succeed(dir)
    : Effect.fail(new InsideRepository({ workspace: dir, repository }))
}

/** Fail when a recorded workspace is no longer a directory. @since 0.2.0 */
export const mustExist = (stream: string, dir: string): Effect.Effect<string, WorkspaceGone> =>
  existsSync(dir) && statSync(dir).isDirectory()
    ? Effect.succeed(dir)
    : Effect.fail(new WorkspaceGone({ stream, workspace: dir }))
