/**
 * The agent's sessions as the log holds them: tokens, turns, compactions and last activity.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { ContextService, EventLog, type Window } from "@ctxlog/core"
import { RecallIndex } from "@ctxlog/memory"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { noteFiles, owner } from "./Agent.js"
import { commandLine } from "./Invocation.js"
import type * as Stack from "./Stack.js"
import * as Ui from "./Ui.js"
import { kilo } from "./Ui.js"

/** One session row. @since 0.1.0 */
export interface SessionInfo {
  readonly stream: string
  readonly events: number
  readonly tokens: number
  readonly turns: number
  /** Events that shrank the window ({@link compactionTypes}), as the inspector counts them. */
  readonly compactions: number
  readonly seams: number
  readonly lastActivity: number
  readonly window: Window.Window
}

/**
 * What "a compaction" is, in every count the agent prints (`sessions`, the demo's table) and the
 * inspector's (`ctxlog streams`, the viewer: its `Queries.compactionTypes`, which a test compares):
 * an event that shrank the window — a summary of any tier (`Compacted`: soft, hard, proactive), old
 * tool outputs or media pruned, a user ask cut to fit, deferred tool-pair summaries applied, history trimmed.
 * @since 0.3.0
 */
export const compactionTypes: ReadonlySet<string> = new Set([
  "Compacted",
  "ToolOutputPruned",
  "MediaPruned",
  "UserAskCut",
  "UnseenCut",
  "DeferredSummariesApplied",
  "HistoryTrimmed"
])

/** The line under the sessions table that says what its compactions are. @since 0.3.0 */
export const compactionNote =
  "compactions: events that shrank the window (summaries of any tier, pruned outputs, applied tool-pair summaries, trims), as ctxlog streams counts them"

/** Every session of the agent, most recently active first. @since 0.1.0 */
export const list: Effect.Effect<ReadonlyArray<SessionInfo>, unknown, Stack.Services> = Effect.gen(function* () {
  const recall = yield* RecallIndex.RecallIndex
  const ctx = yield* ContextService.ContextService
  const log = yield* EventLog.EventLog
  const streams = yield* recall.streamsOf(owner)
  return yield* Effect.forEach(streams, (info) =>
    Effect.gen(function* () {
      const window = yield* ctx.load(info.stream)
      const counts = yield* Stream.runFold(log.read(info.stream), { compactions: 0, seams: 0 }, (acc, envelope) => ({
        compactions: acc.compactions + (compactionTypes.has(envelope.type) ? 1 : 0),
        seams: acc.seams + (envelope.type === "SeamProduced" || envelope.type === "SeamsRecompacted" ? 1 : 0)
      }))
      return {
        stream: info.stream,
        events: info.version,
        tokens: window.tokens.total,
        turns: window.compaction.turn,
        compactions: counts.compactions,
        seams: counts.seams,
        lastActivity: info.updatedAt,
        window
      }
    })
  )
})

/** A plain-text table: columns padded, the first row a header (see `Ui.table`). @since 0.1.0 */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => Ui.table(rows)

/** The width listings fit: the terminal's, or 80 columns when the output is not a terminal. @since 0.3.0 */
export const listingWidth = (out: NodeJS.WriteStream = process.stdout): number =>
  out.isTTY === true && typeof out.columns === "number" && out.columns > 0 ? out.columns : 80

/**
 * The sessions as a table within `width` columns: stacked (each id whole on its own line) when one
 * line per session would be wider.
 * @since 0.1.0
 */
export const format = (sessions: ReadonlyArray<SessionInfo>, width = 80): string =>
  sessions.length === 0
    ? `no sessions yet: start one with: ${commandLine(["run", "--workspace", "DIR"])}`
    : `${Ui.table(
        [
          ["session", "tokens", "turns", "compactions", "seams", "events", "last activity"],
          ...sessions.map((session) => [
            session.stream,
            kilo(session.tokens),
            String(session.turns),
            String(session.compactions),
            String(session.seams),
            String(session.events),
            new Date(session.lastActivity).toISOString().replace("T", " ").slice(0, 19)
          ])
        ],
        width,
        0
      )}\n${Ui.wrapWords(compactionNote, width, "")}`

/** A new session id: sortable by time, unique across processes. @since 0.1.0 */
export const newSessionId = (prefix = "agent"): string =>
  `${prefix}-${new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)}-${randomBytes(3).toString("hex")}`

/** The workspace notes that become knowledge. @since 0.1.0 */
export const readNotes = (dir: string): ReadonlyArray<string> => {
  for (const name of noteFiles) {
    const file = path.join(dir, name)
    if (existsSync(file)) return [`Workspace notes (${name}):\n${readFileSync(file, "utf8").trim()}`]
  }
  return []
}

/** `--session` names no session in the log. @since 0.2.0 */
export class UnknownSession extends Schema.TaggedError<UnknownSession>()("UnknownSession", {
  stream: Schema.String,
  where: Schema.String,
  nearest: Schema.Array(Schema.String),
  /** The command that lists every session. */
  list: Schema.String
}) {
  override get message(): string {
    const near =
      this.nearest.length === 0
        ? "it holds no sessions of the agent; leave out --session to start one"
        : `the nearest: ${this.nearest.join(", ")}`
    return `no session "${this.stream}" in ${this.where}; ${near} (list them all with: ${this.list})`
  }
}

/** Edit distance (insertions, deletions, substitutions), in O(a·b) time and O(b) memory. @since 0.2.0 */
export const editDistance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      )
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/**
 * The `count` ids nearest to `id`: those it is a prefix of (or that are a prefix of it) first, then by
 * edit distance; ties keep the given order (most recent first).
 * @since 0.2.0
 */
export const nearest = (id: string, ids: ReadonlyArray<string>, count = 3): ReadonlyArray<string> =>
  ids
    .map((candidate, order) => ({
      candidate,
      order,
      prefix: candidate.startsWith(id) || id.startsWith(candidate) ? 0 : 1,
      distance: editDistance(id, candidate)
    }))
    .sort((a, b) => a.prefix - b.prefix || a.distance - b.distance || a.order - b.order)
    .slice(0, count)
    .map((entry) => entry.candidate)
