/**
 * Flash briefings: the message that opens a new cycle. It carries what the seams of the ending cycle
 * knew plus the agent's current state (mode, workspace, working set, todos, plan). With a
 * `BriefingCompactor` in context the briefing is a summary of the seams and the state by that
 * compactor (a model: the seed's "Flash" briefing), capped in tokens; without one it is the
 * deterministic concatenation `render` builds, with no model call.
 *
 * @since 0.1.0
 */
import { Compactor } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as ArchivedContext from "./ArchivedContext.js"

/**
 * The briefing's token cap is not a positive integer, or (`minimum`, since issue 39) it cannot hold the
 * briefing's wrapper and a summary: the least cap the seam host accepts.
 * @since 0.1.0
 */
export class InvalidBriefingCap extends Schema.TaggedError<InvalidBriefingCap>()("InvalidBriefingCap", {
  maxTokens: Schema.Number,
  minimum: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    return this.minimum === undefined
      ? `briefing maxTokens = ${this.maxTokens}: must be a positive integer`
      : `briefing maxTokens = ${this.maxTokens}: the briefing's wrapper alone takes ${this.minimum - 1} tokens; give at least ${this.minimum}`
  }
}

/**
 * Who writes briefings, and their cap in tokens (the whole briefing message, as counted when it enters
 * the log). Optional: a seam host without it writes the deterministic briefing.
 * @since 0.1.0
 */
export class BriefingCompactor extends Context.Tag("@ctxlog/seam/BriefingCompactor")<
  BriefingCompactor,
  { readonly compactor: Compactor.Compactor.Service; readonly maxTokens: number }
>() {}

/** Briefings by `compactor`, at most `maxTokens` tokens each. @since 0.1.0 */
export const layer = (
  compactor: Compactor.Compactor.Service,
  maxTokens: number
): Layer.Layer<BriefingCompactor, InvalidBriefingCap> =>
  Number.isInteger(maxTokens) && maxTokens > 0
    ? Layer.succeed(BriefingCompactor, { compactor, maxTokens })
    : Layer.fail(new InvalidBriefingCap({ maxTokens }))

/** Briefings by the `Compactor` in context, at most `maxTokens` tokens each. @since 0.1.0 */
export const layerCompactor = (
  maxTokens: number
): Layer.Layer<BriefingCompactor, InvalidBriefingCap, Compactor.Compactor> =>
  Layer.unwrapEffect(Effect.map(Compactor.Compactor, (compactor) => layer(compactor, maxTokens)))

/** The briefing text around a compactor's summary of the seams and the state. @since 0.1.0 */
export const renderSummary = (summary: string): string =>
  ["<briefing>", "Context carried over from the previous cycle.", summary.trim(), "</briefing>"].join("\n")

/** The agent state a briefing restates. Every field is optional. @since 0.1.0 */
export interface BriefingState {
  readonly mode?: string
  readonly workspace?: string
  readonly workingSet?: ReadonlyArray<string>
  readonly todos?: ReadonlyArray<string>
  readonly plan?: string | ReadonlyArray<string>
  /** The sub-agents at work and what each is doing (since issue 39). */
  readonly subAgents?: ReadonlyArray<string>
}

const list = (items: ReadonlyArray<string>): string => items.map((item) => `- ${item}`).join("\n")

/** Render agent state as the briefing's state text (empty fields are left out), in the order of {@link BriefingState}. @since 0.1.0 */
export const stateText = (state: BriefingState): string => {
  const sections: Array<string> = []
  if (state.mode !== undefined && state.mode.length > 0) sections.push(`Mode: ${state.mode}`)
  if (state.workspace !== undefined && state.workspace.length > 0) sections.push(`Workspace: ${state.workspace}`)
  if (state.workingSet !== undefined && state.workingSet.length > 0) {
    sections.push(`Working set:\n${list(state.workingSet)}`)
  }
  if (state.todos !== undefined && state.todos.length > 0) sections.push(`Todos:\n${list(state.todos)}`)
  if (state.plan !== undefined) {
    const plan = typeof state.plan === "string" ? state.plan : list(state.plan)
    if (plan.length > 0) sections.push(`Plan:\n${plan}`)
  }
  if (state.subAgents !== undefined && state.subAgents.length > 0)
    sections.push(`Sub-agents:\n${list(state.subAgents)}`)
  return sections.join("\n")
}

/**
 * The briefing text: the seams' blocks, highest level first (older first within a level), then the
 * state text, inside one `<briefing>` element.
 * @since 0.1.0
 */
export const render = (seams: ReadonlyArray<ArchivedContext.Block>, state?: string): string => {
  const ordered = seams
    .map((seam, index) => ({ seam, index }))
    .sort((a, b) => b.seam.level - a.seam.level || a.index - b.index)
    .map(({ seam }) => ArchivedContext.render(seam.level, seam.body, seam.attributes))
  const parts = ["<briefing>", "Context carried over from the previous cycle.", ...ordered]
  if (state !== undefined && state.trim().length > 0) parts.push(`<state>\n${state.trim()}\n</state>`)
  parts.push("</briefing>")
  return parts.join("\n")
}
