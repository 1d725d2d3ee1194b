/**
 * The turn loop: the whole ctxlog context pipeline around a tool-using model, every change to the
 * window written to the log through `ContextService`.
 *
 * One user turn:
 *
 * 1. recall for the user's words: this conversation (`prepareContext`) and the owner's other sessions
 *    (`injectCrossSessionContext`), replacing what the last turn injected;
 * 2. the user message is appended; tiered compaction runs once (`maybeCompact`: soft or hard);
 * 3. each model iteration: soft compaction between tool calls (`maybeSoftCompactMidIteration`), the
 *    seam pipeline, a fit check that trims history if a render plus its output reserve would not fit
 *    the model's window, the render (`PromptRendered`), the streamed model call, usage
 *    (`UsageReported`), the assistant message, the tool calls run in the workspace, their outputs
 *    truncated for the provider, signals for failed commands, deferred tool-pair summaries;
 * 4. proactive compression against the usage the provider reported, then `TurnCompleted`.
 *
 * @since 0.1.0
 */
import { TieredCompaction, DeferredSummaries, TaskGoalRefresh } from "@ctxlog/compaction"
import { ContextService, type EventLog, type LanguageModel, Message, ToolPairs, Window } from "@ctxlog/core"
import { ContextAssembly, RecallIndex } from "@ctxlog/memory"
import { RenderRecord, Truncation } from "@ctxlog/providers"
import { SeamHost } from "@ctxlog/seam"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { callModel } from "./ModelCall.js"
import * as Provider from "./Provider.js"
import type * as Stack from "./Stack.js"
import type { Tools } from "./Tools.js"
import type { Ui } from "./Ui.js"

/** Owner recorded on every agent session: `sessions` lists them and cross-session recall searches them. @since 0.1.0 */
export const owner = "ctxlog-agent"

/** The identity system prompt. @since 0.1.0 */
export const identity = `You are ctxlog-agent, a careful coding agent working in one workspace directory.
Use the tools to look before you change anything: list_dir, read_file (with line ranges for long files),
search (a regular expression over the files), write_file, run_command (allow-listed commands such as
\`node --test\`). Paths are relative to the workspace; anything outside it is refused.
Keep answers short. When you change code, run the tests and report the result.`

/** Prepended to the newest user message of each render (never stored in the log). @since 0.1.0 */
export const reminder = "Stay inside the workspace. Run the tests before you say a change is done."

/** The render could not be built (tool pairing or the provider's rules). @since 0.1.0 */
export class RenderFailed extends Schema.TaggedError<RenderFailed>()("RenderFailed", {
  stream: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}": the request could not be rendered: ${this.detail}`
  }
}

/** Settings of one agent session. @since 0.1.0 */
export interface Config {
  readonly stream: EventLog.StreamId
  readonly provider: Provider.Provider
  readonly tools: Tools
  readonly ui: Ui
  /** Model calls allowed in one user turn (default 12). */
  readonly maxIterations?: number
}

/** What one user turn did. @since 0.1.0 */
export interface TurnReport {
  readonly window: Window.Window
  readonly events: number
  readonly modelCalls: number
  /** Compaction tiers that ran this turn, in order (`soft-mid`, `soft`, `hard`, `proactive`, `trim`). */
  readonly tiers: ReadonlyArray<string>
  readonly seamLevel: number
  readonly answer: string
  readonly usage: LanguageModel.Usage | undefined
}

/** The compaction budget of a session. @since 0.1.0 */
export const budgetFor = (config: Pick<Config, "provider" | "tools">): number =>
  Provider.budgetOf(config.provider, config.tools.specs, reminder)

/** The tiered-compaction settings for a budget. @since 0.1.0 */
export const tieredFor = (budget: number): TieredCompaction.Config => ({
  budget,
  softThreshold: 0.7,
  hardThreshold: 0.85,
  proactiveThreshold: 0.66,
  targetRatio: 0.45,
  cooldownTurns: 2,
  // The offline model's usage is a character estimate; calibrating against it would double-count.
  calibrate: false,
  // The newest outputs stay whole (more of them for reads, which the model pages through); older
  // outputs above 4,000 characters become one-line stubs.
  prune: { keepRecent: 3, minChars: 4000, perTool: { read_file: { keepRecent: 6 } } }
})

/** Tool pairs above this many tokens get a deferred summary. @since 0.1.0 */
export const deferredCutoff = (budget: number): number => Math.max(400, Math.floor(budget * 0.3))

/** Workspace notes that become the knowledge partition: the first of these files that exist. @since 0.1.0 */
export const noteFiles = ["NOTES.md", "AGENTS.md", "CLAUDE.md", "README.md"]

/** Start a session, or pick an existing one up from the log (answering calls a crash left open). @since 0.1.0 */
export const open = (
  config: Config,
  setup: { readonly knowledge: ReadonlyArray<string>; readonly goal?: string | undefined }
): Effect.Effect<Window.Window, unknown, Stack.Services> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const recall = yield* RecallIndex.RecallIndex
    const window = yield* ctx.load(config.stream)
    if (window.version === 0) {
      yield* ctx.setSystemPrompt(config.stream, identity)
      if (setup.knowledge.length > 0) yield* ctx.setKnowledge(config.stream, setup.knowledge)
      if (setup.goal !== undefined) yield* ctx.setTaskGoal(config.stream, setup.goal)
      yield* recall.setOwner(config.stream, owner)
      return yield* ctx.load(config.stream)
    }
    return yield* repair(config.stream)
  })

/**
 * A process killed between a tool call and its result leaves the call open; a render would be
 * refused. Answer each open call with an error result saying it never ran.
 * @since 0.1.0
 */
export const repair = (
  stream: EventLog.StreamId
): Effect.Effect<Window.Window, unknown, ContextService.ContextService> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const window = yield* ctx.load(stream)
    const open = ToolPairs.pendingCalls(window.history)
    if (open.length === 0) return window
    const outcome = yield* ctx.appendMessages(
      stream,
      open.map((id) =>
        Message.tool(id, "error: the session stopped before this tool ran; run it again if needed", true)
      )
    )
    return outcome.window
  })

const tierOf = (result: TieredCompaction.Result): string | undefined => {
  if (result._tag === "NoChange") return undefined
  if (result._tag === "SoftCompacted") return "soft"
  return result.tier
}

/** Run one user turn. @since 0.1.0 */
export const turn = (config: Config, text: string): Effect.Effect<TurnReport, unknown, Stack.Services> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const { stream, provider, tools, ui } = config
    const budget = budgetFor(config)
    const tiered = tieredFor(budget)
    const target = { provider: provider.name, model: provider.model }
    const start = (yield* ctx.load(stream)).version
    const tiers: Array<string> = []
    // "compacting…" shows only when there is pressure, i.e. when compaction may do something.
    const compacting = <A, E, R>(window: Window.Window, effect: Effect.Effect<A, E, R>) =>
      TieredCompaction.pressure(window, tiered) === "None" && TieredCompaction.usedTokens(window, false) < budget * 0.6
        ? effect
        : Effect.acquireUseRelease(
            Effect.sync(() => ui.spin("compacting…")),
            () => effect,
            (stop) => Effect.sync(stop)
          )

    // 1. Recall for this query: the conversation's own older messages and the owner's other sessions.
    yield* ContextAssembly.prepareContext(stream, text, {
      budgets: { recall: Math.floor(budget * 0.04), graphFacts: 0 },
      owner,
      dedupe: true
    })
    yield* ctx.injectCrossSessionContext(stream, text, Math.floor(budget * 0.04), owner)

    // 2. The user message, then the turn's compaction.
    // A pasted wall of text is cut like a tool output: no single message may crowd out the rest.
    const userText = Truncation.headTail(text, Provider.toolOutputChars(budget, Number.POSITIVE_INFINITY))
    const appended = yield* ctx.appendMessages(stream, [Message.user(userText)])
    const first = yield* compacting(appended.window, TieredCompaction.maybeCompact(stream, tiered))
    const firstTier = tierOf(first)
    if (firstTier !== undefined) tiers.push(firstTier)

    let answer = ""
    let usage: LanguageModel.Usage | undefined
    let modelCalls = 0
    const maxIterations = config.maxIterations ?? 12
    for (let iteration = 0; iteration < maxIterations; iteration++) {
      // 3a. Between tool calls: the soft tier only (no model call mid-iteration).
      if (iteration > 0) {
        const soft = yield* TieredCompaction.maybeSoftCompactMidIteration(stream, tiered)
        if (soft._tag !== "NoChange") tiers.push("soft-mid")
        // No summarizer runs inside an iteration (it would stall the tool loop). When the soft tier
        // was not enough, the oldest history is trimmed down to the soft threshold instead: it stays
        // in the log, and recall can bring it back.
        if (TieredCompaction.pressure(soft.window, tiered) === "Hard") {
          const trimmed = yield* ctx.trimToBudget(stream, Math.floor(budget * (tiered.softThreshold ?? 0.7)))
          if (trimmed.events.length > 0) tiers.push("trim")
        }
      }
      // 3b. Seams fold old history into leveled archived context.
      const seams = yield* SeamHost.runSeamPipeline(stream, { workspace: tools.workspace })
      if (seams.action !== "none") tiers.push(`seam-${seams.action}`)
      // 3c. The output reserve: whatever compaction left, the render plus the answer must fit.
      let window = seams.window
      if (window.tokens.total > budget) {
        window = (yield* ctx.trimToBudget(stream, budget)).window
        tiers.push("trim")
      }
      // 3d. Render, record, call.
      const rendered = provider.render(window, {
        tools: tools.specs,
        maxOutputTokens: provider.outputReserve,
        turnReminder: reminder
      })
      if (Either.isLeft(rendered)) return yield* new RenderFailed({ stream, detail: rendered.left.message })
      yield* RenderRecord.recordRender(stream, rendered.right.built, target)
      const response = yield* callModel(ui, provider, rendered.right.send)
      modelCalls++
      usage = response.usage
      yield* RenderRecord.recordUsage(stream, response.usage, rendered.right.built.stats.total, target)
      const parts = response.parts.length === 0 ? [Message.text("(no answer)")] : response.parts
      yield* ctx.appendMessages(stream, [{ role: "assistant", parts }])
      answer = Message.textOf({ parts })
      yield* refreshSubgoals(stream)
      const calls = Message.toolCallsOf({ parts })
      if (calls.length === 0) break
      // 3e. Tools, with real effects in the workspace; outputs truncated for this provider.
      const results: Array<Message.MessageInput> = []
      const signals: Array<string> = []
      for (const call of calls) {
        ui.line(ui.dim(`  → ${call.name} ${JSON.stringify(call.input).slice(0, 120)}`))
        const output = yield* tools.run(call.name, call.input)
        const result = provider.truncate(Message.toolResult(call.id, output.content, output.isError), call.name)
        const cut = result.content.length < output.content.length
        ui.line(
          ui.dim(
            `    ${output.isError ? ui.warn("error") : "ok"} · ${output.content.length} chars${cut ? ` (truncated to ${result.content.length} for ${provider.name})` : ""}`
          )
        )
        results.push({ role: "tool", parts: [result] })
        if (call.name === "run_command" && output.exitCode !== undefined && output.exitCode !== 0) {
          signals.push(`the last command (${JSON.stringify(call.input)}) exited with code ${output.exitCode}`)
        }
      }
      yield* ctx.appendMessages(stream, results)
      for (const signal of signals) yield* ctx.raiseSignal(stream, signal)
      // 3f. Large tool pairs get a summary now, applied later under pressure.
      yield* DeferredSummaries.maybeSummarizeToolPair(stream, { cutoffTokens: deferredCutoff(budget) })
    }

    // 4. Ahead of need, against what the provider reported; then the turn is complete.
    const proactive = yield* compacting(
      yield* ctx.load(stream),
      TieredCompaction.maybeProactiveCompress(
        stream,
        tiered,
        // The offline model's usage is a character estimate, not a count: the window's own count is better.
        usage === undefined || provider.name === "offline" ? undefined : { inputTokens: usage.inputTokens }
      )
    )
    const proactiveTier = tierOf(proactive)
    if (proactiveTier !== undefined) tiers.push(proactiveTier)
    const done = yield* ctx.completeTurn(stream)
    const seamLevel = Window.highestSeamLevel(done.window) ?? 0
    const report: TurnReport = {
      window: done.window,
      events: done.window.version - start,
      modelCalls,
      tiers,
      seamLevel,
      answer,
      usage
    }
    ui.status({
      tokens: done.window.tokens,
      budget,
      events: report.events,
      tier: tiers.length === 0 ? "none" : tiers.join(","),
      seamLevel
    })
    return report
  })

/** Subgoals follow the newest plan the model wrote (a list in its answer); the goal stays the task. */
const refreshSubgoals = (stream: EventLog.StreamId) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const window = yield* ctx.load(stream)
    const next = yield* TaskGoalRefresh.heuristicExtractor.subgoals(window.history.slice(-6), window.taskState.subgoals)
    if (next.join("\n") !== window.taskState.subgoals.join("\n")) yield* ctx.setSubgoals(stream, next)
  })
