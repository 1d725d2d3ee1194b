/**
 * Keeping the task goal and subgoals current without blocking a turn. Each call is two-phase: first
 * apply the extraction that finished since the last call (`TaskGoalSet` / `SubgoalsSet`), then
 * schedule a new one — in a background fiber — only when the last user message changed (by hash).
 * The turn never waits for an extraction.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import {
  ContextService,
  type EventLog,
  LanguageModel,
  Message,
  TokenCounter,
  Window,
  type WindowEvent
} from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { by } from "./internal/metadata.js"
import * as ToolOutputPruning from "./ToolOutputPruning.js"

/** An extraction failed (it is dropped; the next call schedules it again). @since 0.1.0 */
export class ExtractionError extends Schema.TaggedError<ExtractionError>()("ExtractionError", {
  what: Schema.Literal("goal", "subgoals"),
  detail: Schema.String
}) {
  override get message(): string {
    return `extracting the ${this.what} failed: ${this.detail}`
  }
}

/** Reads the goal and subgoals from recent history. @since 0.1.0 */
export interface Extractor {
  readonly goal: (
    history: ReadonlyArray<Message.Message>,
    current: string | null
  ) => Effect.Effect<string | null, ExtractionError>
  readonly subgoals: (
    history: ReadonlyArray<Message.Message>,
    current: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<string>, ExtractionError>
}

/** What a refresh did. @since 0.1.0 */
export interface Refresh {
  /** A finished extraction changed the window. */
  readonly applied: boolean
  /** A new extraction was started in the background. */
  readonly scheduled: boolean
}

/** What a strategy-gated refresh did: `null` for what the strategy does not use (nothing ran). @since 0.1.0 */
export interface StrategyRefresh {
  readonly goal: Refresh | null
  readonly subgoals: Refresh | null
}

/** Refreshes task goal and subgoals. @since 0.1.0 */
export class TaskGoalRefresh extends Context.Tag("@ctxlog/compaction/TaskGoalRefresh")<
  TaskGoalRefresh,
  TaskGoalRefresh.Service
>() {}

/** @since 0.1.0 */
export declare namespace TaskGoalRefresh {
  /** @since 0.1.0 */
  export interface Service {
    /**
     * Refresh the goal. Gated by the strategy (the call's, else the one the refresher was made with):
     * it runs only under a strategy that reads the goal (`TaskAware`, `Mig`, `SubgoalMig`) and otherwise
     * returns `{ applied: false, scheduled: false }` with no extraction and no model call. With no
     * strategy at all it always runs.
     */
    readonly maybeRefreshTaskGoal: (
      stream: EventLog.StreamId,
      strategy?: ToolOutputPruning.Strategy
    ) => Effect.Effect<Refresh, ContextService.LogError>
    /** Refresh the subgoals, gated the same way: only under `Subgoal` and `SubgoalMig`. */
    readonly maybeRefreshSubgoal: (
      stream: EventLog.StreamId,
      strategy?: ToolOutputPruning.Strategy
    ) => Effect.Effect<Refresh, ContextService.LogError>
    /**
     * Refresh only what the pruning strategy reads: the goal under `TaskAware`, `Mig` and `SubgoalMig`,
     * the subgoals under `Subgoal` and `SubgoalMig`, nothing under `Default` (no extraction, no model).
     */
    readonly maybeRefreshFor: (
      stream: EventLog.StreamId,
      strategy: ToolOutputPruning.Strategy
    ) => Effect.Effect<StrategyRefresh, ContextService.LogError>
    /** Wait for the extractions running for a stream (for shutdown and tests). */
    readonly settle: (stream: EventLog.StreamId) => Effect.Effect<void>
  }
}

type Extracted =
  | { readonly _tag: "goal"; readonly goal: string | null }
  | { readonly _tag: "subgoals"; readonly subgoals: ReadonlyArray<string> }

interface Slot {
  readonly hash: string | null
  readonly fiber: Fiber.Fiber<Extracted, ExtractionError> | null
}

const emptySlot: Slot = { hash: null, fiber: null }

const lastUserMessage = (history: ReadonlyArray<Message.Message>): Message.Message | undefined =>
  [...history].reverse().find((message) => message.role === "user" && message.kind === "chat")

const hashOf = (message: Message.Message): string =>
  createHash("sha256").update(JSON.stringify(message.parts)).digest("hex")

/** Settings of a refresher. @since 0.1.0 */
export interface Options {
  /** How many of the newest messages an extractor sees (default 20). */
  readonly recentMessages?: number
  /**
   * The pruning strategy the refreshes serve: when set, `maybeRefreshTaskGoal` and
   * `maybeRefreshSubgoal` run only for what it reads (a call's own strategy wins).
   */
  readonly strategy?: ToolOutputPruning.Strategy
}

const unchanged: Refresh = { applied: false, scheduled: false }

/** Messages an extractor sees: the newest ones (default 20). */
const recent = (history: ReadonlyArray<Message.Message>, count: number) => history.slice(-count)

/**
 * Build the refresher; background extractions run in the given scope and stop when it closes.
 * @since 0.1.0
 */
export const make = (
  extractor: Extractor,
  options: Options = {}
): Effect.Effect<
  TaskGoalRefresh.Service,
  never,
  ContextService.ContextService | TokenCounter.TokenCounter | Scope.Scope
> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const counter = yield* TokenCounter.TokenCounter
    const scope = yield* Effect.scope
    const slots = yield* Ref.make<ReadonlyMap<string, Slot>>(new Map())
    const lock = yield* Effect.makeSemaphore(1)
    const count = options.recentMessages ?? 20

    const setSlot = (key: string, slot: Slot) => Ref.update(slots, (current) => new Map([...current, [key, slot]]))

    const apply = (stream: EventLog.StreamId, extracted: Extracted) =>
      ctx.run(
        stream,
        (window) => {
          // Counted as the builders render the task state (Window.taskStateShares).
          if (extracted._tag === "goal") {
            if (window.taskState.goal === extracted.goal) return Either.right<ReadonlyArray<WindowEvent.Draft>>([])
            const shares = Window.taskStateShares(counter.count, extracted.goal, window.taskState.subgoals)
            return Either.right<ReadonlyArray<WindowEvent.Draft>>([
              { _tag: "TaskGoalSet", goal: extracted.goal, tokens: shares.goalTokens },
              ...(shares.subgoalTokens === window.taskState.subgoalTokens
                ? []
                : [
                    {
                      _tag: "SubgoalsSet" as const,
                      subgoals: window.taskState.subgoals,
                      tokens: shares.subgoalTokens
                    }
                  ])
            ])
          }
          const same =
            window.taskState.subgoals.length === extracted.subgoals.length &&
            window.taskState.subgoals.every((subgoal, index) => subgoal === extracted.subgoals[index])
          return Either.right<ReadonlyArray<WindowEvent.Draft>>(
            same
              ? []
              : [
                  {
                    _tag: "SubgoalsSet",
                    subgoals: extracted.subgoals,
                    tokens: Window.taskStateShares(counter.count, window.taskState.goal, extracted.subgoals)
                      .subgoalTokens
                  }
                ]
          )
        },
        by("TaskGoalRefresh")
      )

    const refresh = (what: Extracted["_tag"]) => (stream: EventLog.StreamId) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const key = `${what}\u0000${stream}`
          let slot = (yield* Ref.get(slots)).get(key) ?? emptySlot
          let applied = false
          // Phase 1: apply what finished since the last call.
          if (slot.fiber !== null) {
            const polled = yield* Fiber.poll(slot.fiber)
            if (Option.isSome(polled)) {
              const exit = polled.value
              // A failed extraction forgets its hash, so the same message is tried again.
              slot = Exit.isSuccess(exit) ? { hash: slot.hash, fiber: null } : emptySlot
              yield* setSlot(key, slot)
              if (Exit.isSuccess(exit)) applied = (yield* apply(stream, exit.value)).events.length > 0
            }
          }
          // Phase 2: schedule a new extraction when the last user message changed.
          const window = yield* ctx.load(stream)
          const last = lastUserMessage(window.history)
          if (last === undefined || slot.fiber !== null) return { applied, scheduled: false }
          const hash = hashOf(last)
          if (hash === slot.hash) return { applied, scheduled: false }
          const history = recent(window.history, count)
          const job: Effect.Effect<Extracted, ExtractionError> =
            what === "goal"
              ? Effect.map(extractor.goal(history, window.taskState.goal), (goal) => ({ _tag: "goal", goal }) as const)
              : Effect.map(
                  extractor.subgoals(history, window.taskState.subgoals),
                  (subgoals) => ({ _tag: "subgoals", subgoals }) as const
                )
          const fiber = yield* Effect.forkIn(job, scope)
          yield* setSlot(key, { hash, fiber })
          return { applied, scheduled: true }
        })
      )

    const settle = (stream: EventLog.StreamId) =>
      Effect.gen(function* () {
        const current = yield* Ref.get(slots)
        for (const what of ["goal", "subgoals"] as const) {
          const fiber = current.get(`${what}\u0000${stream}`)?.fiber
          if (fiber !== undefined && fiber !== null) yield* Fiber.await(fiber)
        }
      })

    const maybeRefreshFor = (stream: EventLog.StreamId, strategy: ToolOutputPruning.Strategy) =>
      Effect.gen(function* () {
        const goal = ToolOutputPruning.usesGoal(strategy) ? yield* refresh("goal")(stream) : null
        const subgoals = ToolOutputPruning.usesSubgoals(strategy) ? yield* refresh("subgoals")(stream) : null
        return { goal, subgoals }
      })

    // The gate lives in the functions, so no caller can refresh what its strategy never reads.
    const gated =
      (what: Extracted["_tag"], reads: (strategy: ToolOutputPruning.Strategy) => boolean) =>
      (stream: EventLog.StreamId, strategy?: ToolOutputPruning.Strategy) => {
        const effective = strategy ?? options.strategy
        return effective === undefined || reads(effective) ? refresh(what)(stream) : Effect.succeed(unchanged)
      }

    return {
      maybeRefreshTaskGoal: gated("goal", ToolOutputPruning.usesGoal),
      maybeRefreshSubgoal: gated("subgoals", ToolOutputPruning.usesSubgoals),
      maybeRefreshFor,
      settle
    }
  })

/** The refresher as a layer; its background extractions end with the layer. @since 0.1.0 */
export const layer = (
  extractor: Extractor,
  options: Options = {}
): Layer.Layer<TaskGoalRefresh, never, ContextService.ContextService | TokenCounter.TokenCounter> =>
  Layer.scoped(TaskGoalRefresh, make(extractor, options))

const firstLine = (value: string, max: number): string => {
  const line =
    value
      .split("\n")
      .find((candidate) => candidate.trim().length > 0)
      ?.trim() ?? ""
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

/**
 * A deterministic extractor: the goal is the first line of the last user message; subgoals are the
 * list items (`-`, `*`, `1.`) of the newest assistant message that contains list items.
 * @since 0.1.0
 */
export const heuristicExtractor: Extractor = {
  goal: (history, current) => {
    const last = lastUserMessage(history)
    return Effect.succeed(last === undefined ? current : firstLine(Message.textOf(last), 200) || current)
  },
  subgoals: (history, current) => {
    for (const message of [...history].reverse()) {
      if (message.role !== "assistant") continue
      const items = Message.textOf(message)
        .split("\n")
        .map((line) => /^\s*(?:[-*]|\d+[.)])\s+(.+)$/.exec(line)?.[1]?.trim())
        .filter((item): item is string => item !== undefined && item.length > 0)
      if (items.length > 0) return Effect.succeed(items.slice(0, 12))
    }
    return Effect.succeed(current)
  }
}

/**
 * An extractor that asks a language model: one line for the goal, a list for the subgoals.
 * @since 0.1.0
 */
export const languageModelExtractor = (model: LanguageModel.LanguageModel.Service): Extractor => {
  const ask = (what: "goal" | "subgoals", instruction: string, history: ReadonlyArray<Message.Message>) =>
    model
      .generate({
        system: instruction,
        messages: [
          {
            role: "user",
            parts: [
              Message.text(
                history.map((message) => `${message.role}: ${firstLine(Message.tokenTextOf(message), 500)}`).join("\n")
              )
            ]
          }
        ],
        maxOutputTokens: 200,
        temperature: 0
      })
      .pipe(
        Effect.map((response) => Message.textOf({ parts: response.parts }).trim()),
        Effect.mapError((error) => new ExtractionError({ what, detail: error.message }))
      )
  return {
    goal: (history, current) =>
      Effect.map(
        ask("goal", "State the user's current goal in one line. Answer with the line only.", history),
        (text) => (text.length === 0 ? current : firstLine(text, 200))
      ),
    subgoals: (history, current) =>
      Effect.map(
        ask("subgoals", "List the open subgoals of the current task, one per line, starting with '- '.", history),
        (text) => {
          const items = text
            .split("\n")
            .map((line) => line.replace(/^\s*(?:[-*]|\d+[.)])\s*/, "").trim())
            .filter((line) => line.length > 0)
          return items.length === 0 ? current : items.slice(0, 12)
        }
      )
  }
}

/** The language-model extractor over the `LanguageModel` in context. @since 0.1.0 */
export const layerLanguageModel = (
  options: Options = {}
): Layer.Layer<
  TaskGoalRefresh,
  never,
  ContextService.ContextService | TokenCounter.TokenCounter | LanguageModel.LanguageModel
> =>
  Layer.scoped(
    TaskGoalRefresh,
    Effect.flatMap(LanguageModel.LanguageModel, (model) => make(languageModelExtractor(model), options))
  )
