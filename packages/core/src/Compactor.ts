/**
 * Compactors turn a run of messages into a summary. Implementations (template, LLM) live in
 * `@ctxlog/compaction`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Message } from "./Message.js"

/** What to compact. @since 0.1.0 */
export interface CompactionInput {
  readonly messages: ReadonlyArray<Message>
  /** The previous summary, rolled forward into the new one. */
  readonly previousSummary: string | null
  readonly goal?: string | null | undefined
  readonly maxSummaryTokens?: number | undefined
  /** The agent's workspace root: the summary states file paths relative to it. */
  readonly workspace?: string | undefined
}

/**
 * `text` with absolute paths under `workspace` made relative to it (`/repo/src/a.ts` → `src/a.ts`,
 * `/repo` alone → `.`). A path that only shares a prefix (`/repo2/x`) or holds the
 * workspace inside it (`/x/repo/a`) is left alone.
 * @since 0.1.0
 */
export const relativeToWorkspace = (text: string, workspace: string | undefined): string => {
  if (workspace === undefined) return text
  const root = workspace.replace(/[\\/]+$/, "")
  if (root.length === 0) return text
  const escaped = root.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  // Only a whole path: not inside a longer one (`/x/repo/a`), not a prefix of another (`/repo2`).
  const before = "(?<![\\w./\\\\-])"
  return text
    .replace(new RegExp(`${before}${escaped}[\\\\/]`, "g"), "")
    .replace(new RegExp(`${before}${escaped}(?![\\w/\\\\-]|\\.\\w)`, "g"), ".")
}

/** A summary. @since 0.1.0 */
export interface CompactionOutput {
  readonly summary: string
}

/** A compactor failed (model error, timeout, empty output). @since 0.1.0 */
export class CompactionError extends Schema.TaggedError<CompactionError>()("CompactionError", {
  compactor: Schema.String,
  reason: Schema.Literal("model", "timeout", "empty", "input"),
  detail: Schema.String
}) {
  override get message(): string {
    return `compactor ${this.compactor} failed (${this.reason}): ${this.detail}`
  }
}

/** Summarizes messages. @since 0.1.0 */
export class Compactor extends Context.Tag("@ctxlog/core/Compactor")<Compactor, Compactor.Service>() {}

/** @since 0.1.0 */
export declare namespace Compactor {
  /** @since 0.1.0 */
  export interface Service {
    readonly name: string
    readonly compact: (input: CompactionInput) => Effect.Effect<CompactionOutput, CompactionError>
    /**
     * The same answer at once, for a compactor that is a pure function of its input (the template
     * compactor): the compaction tiers take it instead of `compact`, with no timeout to race and no
     * fiber (ADR 0168). A compactor that calls a model leaves it out. Since 0.8.0.
     */
    readonly compactNow?: ((input: CompactionInput) => Either.Either<CompactionOutput, CompactionError>) | undefined
  }
}
