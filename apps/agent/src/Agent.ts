/**
 * The turn loop: the sample agent around `@ctxlog/turn`. The turn module owns the context pipeline
 * (recall, the input, compaction tiers, seams, the fit, the rebuildable render, usage, the end of the
 * turn; each step one load and one append); the agent keeps what is its own: the model call, the
 * tools, the terminal.
 *
 * One user turn: `Turn.prepare` with the user's words; then per model call `Turn.render`, the
 * streamed call, the tool calls run in the workspace, and `Turn.complete` with the answer, the tool
 * results (cut to the provider's limit), signals for failed commands and the usage; the last call ends
 * the turn.
 *
 * @since 0.1.0
 */
import { ContextService, type EventLog, type LanguageModel, Message, TokenCounter, Window } from "@ctxlog/core"
import { FileStore, RecallIndex } from "@ctxlog/memory"
import { EnvSnapshot } from "@ctxlog/providers"
import { CompactionStatus, ModelCallTrace, type Policy, Turn } from "@ctxlog/turn"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Capture from "./EnvSnapshot.js"
import { callModel, type Partial } from "./ModelCall.js"
import * as Provider from "./Provider.js"
import * as Skills from "./Skills.js"
import type * as Stack from "./Stack.js"
import type * as Tools from "./Tools.js"
import type { Ui } from "./Ui.js"

/** Owner recorded on every agent session: `sessions` lists them and cross-session recall searches them. @since 0.1.0 */
export const owner = "ctxlog-agent"

/** The identity system prompt. @since 0.1.0 */
export const identity = `You are ctxlog-agent, a careful coding agent working in one workspace directory.
Use the tools to look before you change anything: list_dir, read_file (with line ranges for long files),
search (a regular expression over the files), write_file, run_command (allow-listed commands such as
\`node --test\`). Paths are relative to the workspace; anything outside it is refused.
Keep answers short. When you change code, run the tests and report the result.`

/**
 * The standing instructions of the turn reminder: the preamble of each turn's environment snapshot
 * (see {@link environmentReminder}), and the policy's reminder. Prepended to the newest user message
 * of each render (never stored as a message; `PromptRendered` records the exact text).
 * @since 0.1.0
 */
export const reminder = "Stay inside the workspace. Run the tests before you say a change is done."

/** How the environment snapshot becomes the turn reminder: the preamble, then the snapshot, within 256 tokens. @since 0.1.0 */
export const reminderPolicy: EnvSnapshot.ReminderPolicy = { preamble: reminder, maxTokens: 256, maxListed: 12 }

// The files each session's agent wrote, oldest first, as this process saw them (seeded from the
// window's history when a session is picked up).
const written = new Map<string, Array<string>>()

/** The path a `write_file` call writes. */
const writtenPath = (call: Message.ToolCallPart): string | undefined => {
  if (call.name !== "write_file" || typeof call.input !== "object" || call.input === null) return undefined
  const target = (call.input as { readonly path?: unknown }).path
  return typeof target === "string" ? target : undefined
}

/** The `write_file` paths of a run of messages, in order. */
const writesIn = (messages: ReadonlyArray<Message.Message>): Array<string> =>
  messages.flatMap((message) =>
    Message.toolCallsOf(message).flatMap((call) => {
      const target = writtenPath(call)
      return target === undefined ? [] : [target]
    })
  )

const changedFilesOf = (stream: string, window: Window.Window): Array<string> => {
  const known = written.get(stream) ?? writesIn(window.history)
  written.set(stream, known)
  return known
}

/**
 * The turn reminder of a user turn: the environment snapshot of the workspace (git branch and status
 * when it is a repository, the files the agent wrote in recent turns, the goal and subgoals, the date
 * from `Clock`) rendered under {@link reminderPolicy}. A workspace that cannot be read gives the
 * preamble alone.
 * @since 0.1.0
 */
export const environmentReminder = (
  config: Pick<Config, "stream" | "tools">,
  window: Window.Window
): Effect.Effect<string, never, TokenCounter.TokenCounter> =>
  Effect.gen(function* () {
    const counter = yield* TokenCounter.TokenCounter
    const { goal, subgoals } = window.taskState
    const snapshot = yield* Capture.capture(config.tools.workspace, {
      changedFiles: changedFilesOf(config.stream, window),
      task: {
        ...(goal === null ? {} : { goal }),
        ...(subgoals.length === 0 ? {} : { todos: subgoals })
      }
    }).pipe(Effect.option)
    if (snapshot._tag === "None") return reminder
    return Either.getOrElse(EnvSnapshot.reminder(snapshot.value, reminderPolicy, counter.count), () => reminder)
  })

/** The request could not be rendered (the turn module's error). @since 0.1.0 */
export const RenderFailed = Turn.RenderFailed

/** Settings of one agent session. @since 0.1.0 */
export interface Config {
  readonly stream: EventLog.StreamId
  readonly provider: Provider.Provider
  readonly tools: Tools.Tools
  readonly ui: Ui
  /** Model calls allowed in one user turn (default 12). */
  readonly maxIterations?: number
}

/** What one user turn did. @since 0.1.0 */
export interface TurnReport {
  readonly window: Window.Window
  readonly events: number
  readonly modelCalls: number
  /** Compaction tiers that ran this turn, in order (`soft`, `hard`, `soft-mid`, `trim`, `seam-…`, `fit-…`, `proactive`). */
  readonly tiers: ReadonlyArray<string>
  readonly seamLevel: number
  readonly answer: string
  readonly usage: LanguageModel.Usage | undefined
}

/**
 * The file store of a session whose tools read stored outputs (`read_output`): a tool output over
 * 16 KB is stored whole in the log's database, and the window holds its first 2,000 characters with
 * the handle.
 * @since 0.1.0
 */
export const fileStore = { thresholdBytes: 16_384, previewChars: 2000 } as const

/**
 * A `read_output` reader for tools made before the log is open, only for their specs (the budget):
 * the session's tools read the session's file store (`Tools.readOutputFrom`).
 * @since 0.1.0
 */
export const noReader: Tools.OutputReader = () => Effect.fail({ message: "no file store is open" })

/**
 * A `recall_archived` reader for tools made before the log is open, only for their specs (the budget):
 * the session's tools read the session's log (`Tools.recallArchivedFrom`).
 * @since 0.8.0
 */
export const noArchive: Tools.ArchiveReader = () => Effect.fail({ message: "no log is open" })

/** Seam thresholds as shares of the budget: above the soft tier (70%), below the hard one (85%). @since 0.1.0 */
export const seamRatios = { level1: 0.74, level2: 0.79, level3: 0.83 } as const

/**
 * The agent's turn policy: the provider's builder (and so the budget), the tools and reminder, the
 * compaction tiers, seams, recall, deferred summaries and subgoals. Recorded in the log when it changes.
 * @since 0.1.0
 */
export const policyFor = (config: Pick<Config, "provider" | "tools">): Policy.Policy => {
  const { provider, tools } = config
  const base: Policy.Policy = {
    builder: provider.config,
    target: { provider: provider.name, model: provider.model },
    render: { tools: tools.specs, turnReminder: reminder, maxOutputTokens: provider.outputReserve }
  }
  return {
    ...base,
    compaction: {
      softThreshold: 0.7,
      hardThreshold: 0.85,
      proactiveThreshold: 0.66,
      targetRatio: 0.45,
      cooldownTurns: 2,
      // The offline model's usage is a character estimate; calibrating against it would double-count.
      calibrate: false,
      proactiveFromUsage: provider.name !== "offline",
      // The newest outputs stay whole (more of them for reads, which the model pages through); older
      // outputs above 4,000 characters become one-line stubs.
      prune: { keepRecent: 3, minChars: 4000, perTool: { read_file: { keepRecent: 6 } } }
    },
    seams: { ...seamRatios, verbatimWindow: 6, workspace: tools.workspace },
    recall: { recallShare: 0.04, crossSessionShare: 0.04, owner },
    // Tool pairs above 30% of the budget (400 tokens at least) get a summary, applied later under pressure.
    deferred: { cutoffShare: 0.3, minTokens: 400 },
    subgoals: "heuristic",
    // The agent's skills (Skills.matchesFor): those scoring at least 0.5 for the turn are placed.
    skills: { minScore: 0.5 },
    compactor: { kind: "template", maxBytes: Math.max(512, Turn.budgetTokens(base)) },
    // With a tool to read them back, large outputs are stored whole and the window holds a preview.
    ...(tools.specs.some((spec) => spec.name === "read_output") ? { fileStore } : {})
  }
}

/** The budget of a session: the context window less the output reserve, the tool schemas and the reminder. @since 0.1.0 */
export const budgetFor = (config: Pick<Config, "provider" | "tools">): number => Turn.budgetTokens(policyFor(config))

/**
 * Reload the session's configuration mid-session (another provider, model, context window or output
 * reserve): the window must hold the new reserve and tool schemas; the new policy is recorded as
 * `TurnPolicySet` (`Turn.reload`), and the turns after it render with the new provider's builder and
 * budget. Returns the new budget.
 * @since 0.1.0
 */
export const reload = (
  config: Config
): Effect.Effect<
  number,
  Provider.WindowTooSmall | Policy.InvalidPolicy | ContextService.ContextError,
  ContextService.ContextService
> =>
  Effect.gen(function* () {
    const budget = yield* Provider.checkWindow(config.provider, budgetFor(config))
    yield* Turn.reload(config.stream, policyFor(config))
    return budget
  })

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
export const repair = Turn.repair

/** "compacting…" while a tier that may take a while runs (hard, proactive, fit), through the status reports. */
const withSpinner = <A, E, R>(ui: Ui, effect: Effect.Effect<A, E, R>) => {
  let stop: (() => void) | undefined
  const end = Effect.sync(() => {
    stop?.()
    stop = undefined
  })
  const report = (status: CompactionStatus.Status) =>
    Effect.sync(() => {
      if (status._tag === "TierStarted" && status.tier !== "soft" && stop === undefined) stop = ui.spin("compacting…")
      if (status._tag === "Finished" || status._tag === "Failed") {
        stop?.()
        stop = undefined
      }
    })
  return effect.pipe(Effect.provideService(CompactionStatus.CompactionStatus, { report }), Effect.ensuring(end))
}

/**
 * The answer a Ctrl-C cut short, as the log keeps it: the text streamed so far and a marker, so the
 * next turn (and a person reading the log) knows it was stopped.
 * @since 0.3.0
 */
export const interruptedAnswer = (text: string): string =>
  text.trim().length === 0
    ? "[interrupted by the user before any answer]"
    : `${text.trimEnd()}\n\n[interrupted by the user]`

/** The first line of a user message kept in the file store (the preview with its handle follows). @since 0.3.0 */
export const storedInputLead = "[the user's message is long: it is stored whole, and its start follows]"

/**
 * A user message over the file store's threshold (16 KB, as for tool outputs) is stored whole in the
 * log's file store, the same way a large tool output is (`FileStore.put`, `FileStore.preview`): the
 * message the log and the window hold is its first lines with the handle, which the model's
 * `read_output` tool reads whole or by lines. The person is told in one line. Smaller messages, and
 * sessions whose tools have no `read_output`, are unchanged (the turn cuts an oversized message).
 * @since 0.3.0
 */
export const storeLargeInput = (
  config: Pick<Config, "stream" | "ui">,
  policy: Policy.Policy,
  text: string
): Effect.Effect<string, unknown, TokenCounter.TokenCounter> =>
  Effect.gen(function* () {
    const settings = policy.fileStore
    const bytes = Buffer.byteLength(text, "utf8")
    if (settings === undefined || settings === null || bytes <= settings.thresholdBytes) return text
    const files = yield* Effect.serviceOption(FileStore.FileStore)
    if (files._tag === "None") return text
    const counter = yield* TokenCounter.TokenCounter
    const info = yield* files.value.put(config.stream, text)
    const stored: FileStore.StoredOutput = {
      sha256: info.sha256,
      bytes: info.bytes,
      lines: info.lines,
      tokens: counter.count(text)
    }
    const preview = FileStore.preview(text, stored, settings.previewChars ?? fileStore.previewChars)
    const shown = /\[showing (\d+) of/.exec(preview)?.[1] ?? "0"
    config.ui.line(
      config.ui.dim(
        `  ↳ ${kiloBytes(bytes)} (${info.lines} lines) kept whole in the log's file store as ${FileStore.shortId(info.sha256)}; the model sees the first ${shown} lines and reads the rest with read_output`
      )
    )
    return `${storedInputLead}\n${preview}`
  })

const kiloBytes = (bytes: number): string =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`

/** Run one user turn. @since 0.1.0 */
export const turn = (config: Config, text: string): Effect.Effect<TurnReport, unknown, Stack.Services> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const { stream, provider, tools, ui } = config
    const policy = policyFor(config)
    const before = yield* ctx.load(stream)
    const start = before.version
    // The environment at the start of the turn, as this turn's reminder (every render records it).
    const turnReminder = yield* environmentReminder(config, before)
    const input = yield* storeLargeInput(config, policy, text)
    // The turn: prepare, then per model call render, the streamed call, the tools, complete (`Session.run`).
    // The session is opened on the provider's pair (its config is the policy's builder), so the request
    // it renders is the one the pair's client sends.
    const done = yield* provider.pair.use((pair) =>
      Effect.flatMap(Turn.open(stream, { ...policy, builder: pair.config }), (session) =>
        session.run(
          // The agent's skills scored against the user's words: the turn places the ones it chooses (ADR 0126).
          { messages: [Message.user(input)], turnReminder, skills: Skills.matchesFor(text) },
          (rendered) =>
            Effect.gen(function* () {
              // Ctrl-C during the call: the answer streamed so far is kept, marked, and ends the turn.
              const partial: Partial = { seen: undefined }
              // The call's span (when tracing is on) carries the stream, the render's provenance and parameters.
              const response = yield* callModel(
                ui,
                provider,
                pair.send(rendered.built.request, { turnReminder }),
                partial
              ).pipe(
                ModelCallTrace.traced(stream, rendered),
                Effect.onInterrupt(() =>
                  session
                    .complete({
                      answer: [Message.text(interruptedAnswer(partial.seen?.text ?? ""))],
                      results: [],
                      estimatedInputTokens: rendered.built.stats.total,
                      endTurn: true
                    })
                    .pipe(Effect.ignore)
                )
              )
              const calls = Message.toolCallsOf({ parts: response.parts })
              // Tools, with real effects in the workspace.
              const results: Array<Message.ToolResultPart> = []
              const signals: Array<string> = []
              for (const call of calls) {
                ui.line(ui.dim(`  → ${call.name} ${JSON.stringify(call.input).slice(0, 120)}`))
                const output = yield* tools.run(call.name, call.input)
                // The whole output goes to the turn: it stores a large one (the window holds a preview) and
                // cuts the rest to this provider's limit.
                const whole = Message.toolResult(call.id, output.content, output.isError)
                const stored =
                  policy.fileStore !== undefined &&
                  policy.fileStore !== null &&
                  call.name !== (policy.fileStore.readTool ?? "read_output") &&
                  Buffer.byteLength(output.content, "utf8") > policy.fileStore.thresholdBytes
                const shown = stored ? undefined : Turn.truncateResult(policy, whole, call.name).content.length
                const note =
                  shown === undefined
                    ? " (stored whole; the window holds a preview)"
                    : shown < output.content.length
                      ? ` (truncated to ${shown} for ${provider.name})`
                      : ""
                ui.line(
                  ui.dim(`    ${output.isError ? ui.warn("error") : "ok"} · ${output.content.length} chars${note}`)
                )
                results.push(whole)
                const target = writtenPath(call)
                if (target !== undefined && !output.isError) changedFilesOf(stream, before).push(target)
                if (call.name === "run_command" && output.exitCode !== undefined && output.exitCode !== 0) {
                  signals.push(`the last command (${JSON.stringify(call.input)}) exited with code ${output.exitCode}`)
                }
              }
              return {
                answer: response.parts,
                results,
                signals,
                usage: response.usage,
                estimatedInputTokens: rendered.built.stats.total,
                contextEdits: response.contextEdits
              }
            }),
          {
            maxIterations: config.maxIterations ?? 12,
            around: (step) => withSpinner(ui, step),
            // The state a seam cycle's briefing restates: the mode and the files this session changed.
            briefing: () => ({ mode: "coding", workingSet: [...changedFilesOf(stream, before)] })
          }
        )
      )
    )
    const { window, tiers, modelCalls, usage } = done
    const answer = Message.textOf({ parts: done.answer })

    const seamLevel = Window.highestSeamLevel(window) ?? 0
    const report: TurnReport = {
      window,
      events: window.version - start,
      modelCalls,
      tiers,
      seamLevel,
      answer,
      usage
    }
    ui.status({
      tokens: window.tokens,
      budget: budgetFor(config),
      events: report.events,
      tier: tiers.length === 0 ? "none" : tiers.join(","),
      seamLevel
    })
    return report
  })
