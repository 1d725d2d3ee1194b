import { SummaryGuard } from "@ctxlog/compaction"
import { Compactor, ContextService, Message, Window, type WindowEvent } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ArchivedContext from "../ArchivedContext.js"
import * as Briefing from "../Briefing.js"
import * as SeamConfig from "../SeamConfig.js"
import { SeamRangeChanged, SeamRangeError } from "../SeamError.js"
import type { PipelineOptions, PipelineOutcome, Seam, SeamHost } from "../SeamHost.js"
import { adjust, splitPinned } from "./range.js"

export const resolveConfig = SeamConfig.make

/** Window seam levels are plain integers in events; read anything out of range as the nearest level. */
const toSeamLevel = (level: number): SeamConfig.SeamLevel => (level <= 1 ? 1 : level === 2 ? 2 : 3)

const highestOf = (window: Window.Window): Option.Option<SeamConfig.SeamLevel> =>
  window.seams.length === 0
    ? Option.none()
    : Option.some(toSeamLevel(Math.max(...window.seams.map((seam) => seam.level))))

const checkRange = (
  operation: string,
  messages: ReadonlyArray<Message.Message>,
  level: number,
  start: number,
  end: number
): Effect.Effect<void, SeamRangeError> => {
  const fail = (detail: string) =>
    Effect.fail(new SeamRangeError({ operation, start, end, length: messages.length, detail }))
  if (!SeamConfig.isSeamLevel(level)) return fail(`level ${level} is not 1, 2 or 3`)
  if (!Number.isInteger(start) || !Number.isInteger(end)) return fail("start and end must be integers")
  if (start < 0 || end > messages.length) return fail("range is out of bounds")
  if (start > end) return fail("start is after end")
  return Effect.void
}

const lastIndexWhere = <A>(items: ReadonlyArray<A>, predicate: (item: A) => boolean): number => {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]
    if (item !== undefined && predicate(item)) return index
  }
  return -1
}

/**
 * The index of the first history message a seam may not fold: the earliest tool result the model has not
 * seen yet, or the call it answers (`Window.unseenToolPairs`); the history's length when there is none.
 * A seam folds a range that ends before it, so an unseen result always reaches the next render whole.
 */
const unseenStart = (window: Window.Window, history: ReadonlyArray<Message.Message>): number => {
  const keep = Window.unseenToolPairs(window)
  if (keep.size === 0) return history.length
  const index = history.findIndex((message) => keep.has(message.id))
  return index === -1 ? history.length : index
}

export const make = (config: SeamConfig.SeamConfig) =>
  Effect.gen(function* () {
    const compactor = yield* Compactor.Compactor
    const ctx = yield* ContextService.ContextService

    // Seam events name their writer in the log metadata, for blame.
    const append: ContextService.ContextService.Service["run"] = (stream, decide) =>
      ctx.run(stream, decide, { actor: "seam" })

    const prepareOne = (input: Message.MessageInput, kind: Message.InjectedKind) =>
      Effect.flatMap(ctx.prepare([input], kind), ([message]) =>
        message === undefined
          ? Effect.dieMessage("ContextService.prepare returned no message")
          : Effect.succeed(message)
      )

    const seamMessage = (level: SeamConfig.SeamLevel, summary: string, workspace: string | undefined) =>
      prepareOne(
        {
          role: "assistant",
          parts: [Message.text(ArchivedContext.render(level, summary, workspace === undefined ? {} : { workspace }))]
        },
        "seam"
      )

    // The summarizer gets the workspace and states paths relative to it. Its summary passes the same
    // guards as every summarizing path (`SummaryGuard.guard`, issue 39) before a seam is made of it: an
    // empty or fallback summary, a folded pending call or pinned message, a lost pinned identifier.
    const summarize = (
      messages: ReadonlyArray<Message.Message>,
      kept: ReadonlyArray<Message.Message>,
      level: SeamConfig.SeamLevel,
      workspace: string | undefined
    ) =>
      Effect.flatMap(
        compactor.compact({
          messages,
          previousSummary: null,
          maxSummaryTokens: SeamConfig.valueAt(config.summaryTokens, level),
          workspace
        }),
        // The user-ask guard is on, as on every path: no seam range folds the ask (`splitPinned`, ADR 0124).
        (output) => Effect.as(SummaryGuard.guard(output.summary, { folded: messages, kept }), output.summary)
      )

    // The explicit-range paths keep the user's latest ask of the messages they are given (one definition,
    // `Message.latestUserAsk`); the pipeline passes the window's (`Window.latestUserAsk`, O(1)).
    const softSeam = (
      messages: ReadonlyArray<Message.Message>,
      level: SeamConfig.SeamLevel,
      start: number,
      end: number,
      workspace: string | undefined,
      pinnedIndices: ReadonlyArray<number>,
      ask: string | undefined
    ) =>
      Effect.gen(function* () {
        yield* checkRange("produceSoftSeam", messages, level, start, end)
        const range = adjust(messages, start, end)
        const { fold, kept } = splitPinned(messages, range.start, range.end, pinnedIndices, ask)
        if (fold.length === 0) {
          return yield* new SeamRangeError({
            operation: "produceSoftSeam",
            start,
            end,
            length: messages.length,
            detail: "nothing to fold once pinned messages and tool pairs are kept whole"
          })
        }
        const folded = new Set(fold.map((item) => item.id))
        const summary = yield* summarize(
          fold,
          messages.filter((item) => !folded.has(item.id)),
          level,
          workspace
        )
        const message = yield* seamMessage(level, summary, workspace)
        const seam: Seam = {
          level,
          message,
          replacedIds: fold.map((item) => item.id),
          keptIds: kept.map((item) => item.id),
          start: range.start,
          end: range.end,
          recompacted: false
        }
        return seam
      })

    const produceSoftSeam: SeamHost.Service["produceSoftSeam"] = (
      messages,
      level,
      start,
      end,
      workspace,
      pinnedIndices = []
    ) => softSeam(messages, level, start, end, workspace, pinnedIndices, Message.latestUserAsk(messages)?.id)

    const recompactWith = (
      existingSeams: ReadonlyArray<Message.Message>,
      recent: ReadonlyArray<Message.Message>,
      level: SeamConfig.SeamLevel,
      start: number,
      end: number,
      workspace: string | undefined,
      ask: string | undefined
    ) =>
      Effect.gen(function* () {
        yield* checkRange("recompact", recent, level, start, end)
        const fail = (detail: string) =>
          new SeamRangeError({ operation: "recompact", start, end, length: recent.length, detail })
        const existingLevels = ArchivedContext.collect(existingSeams).map((block) => block.level)
        const highest = existingLevels.length === 0 ? 0 : Math.max(...existingLevels)
        if (level < highest) return yield* fail(`level ${level} is below an existing seam's level ${highest}`)
        const seamIds = new Set(existingSeams.map((seam) => seam.id))
        const range = adjust(recent, start, end)
        const split = splitPinned(recent, range.start, range.end, [], ask)
        const fold = split.fold.filter((message) => !seamIds.has(message.id))
        if (existingSeams.length + fold.length === 0) return yield* fail("no seams and nothing to fold")
        const folded = new Set(fold.map((item) => item.id))
        const summary = yield* summarize(
          [...existingSeams, ...fold],
          recent.filter((item) => !folded.has(item.id) && !seamIds.has(item.id)),
          level,
          workspace
        )
        const message = yield* seamMessage(level, summary, workspace)
        const seam: Seam = {
          level,
          message,
          replacedIds: [...existingSeams.map((seam) => seam.id), ...fold.map((item) => item.id)],
          keptIds: split.kept.map((item) => item.id),
          start: range.start,
          end: range.end,
          recompacted: true
        }
        return seam
      })

    const recompact: SeamHost.Service["recompact"] = (existingSeams, recent, level, start, end, workspace) =>
      recompactWith(existingSeams, recent, level, start, end, workspace, Message.latestUserAsk(recent)?.id)

    const deterministicBriefing = (existingSeams: ReadonlyArray<Message.Message>, stateText: string | undefined) =>
      prepareOne(
        { role: "user", parts: [Message.text(Briefing.render(ArchivedContext.collect(existingSeams), stateText))] },
        "briefing"
      )

    /**
     * A briefing by the briefing compactor: a summary of the seams and the state, capped at `maxTokens`
     * for the whole message (the summary is cut, from its end, until the counted message fits).
     */
    const compactedBriefing = (
      briefer: Briefing.BriefingCompactor["Type"],
      existingSeams: ReadonlyArray<Message.Message>,
      stateText: string | undefined
    ) =>
      Effect.gen(function* () {
        const state =
          stateText === undefined || stateText.trim().length === 0
            ? []
            : [
                yield* prepareOne(
                  { role: "user", parts: [Message.text(`Current state:\n${stateText.trim()}`)] },
                  "briefing"
                )
              ]
        const envelope = yield* prepareOne(
          { role: "user", parts: [Message.text(Briefing.renderSummary(""))] },
          "briefing"
        )
        const room = Math.max(1, briefer.maxTokens - envelope.tokens)
        const output = yield* briefer.compactor.compact({
          messages: [...existingSeams, ...state],
          previousSummary: null,
          maxSummaryTokens: room
        })
        // The same guards as every summary (empty, fallback, a pinned identifier the seams held): a
        // refused briefing summary falls back to the deterministic briefing (issue 39).
        yield* SummaryGuard.guard(output.summary, { folded: existingSeams, kept: [] })
        let summary = output.summary.trim()
        let message = yield* prepareOne(
          { role: "user", parts: [Message.text(Briefing.renderSummary(summary))] },
          "briefing"
        )
        // A compactor may overshoot its cap: cut by the ratio, a few times, then to nothing.
        for (let attempt = 0; message.tokens > briefer.maxTokens && summary.length > 0; attempt++) {
          const summaryTokens = Math.max(1, message.tokens - envelope.tokens)
          const keep = attempt < 6 ? Math.floor((summary.length * room * 0.97) / summaryTokens) - 1 : 0
          summary = `${summary.slice(0, Math.max(0, keep)).trimEnd()}${keep > 0 ? "…" : ""}`
          message = yield* prepareOne(
            { role: "user", parts: [Message.text(Briefing.renderSummary(summary))] },
            "briefing"
          )
        }
        return message
      })

    const briefer = yield* Effect.serviceOption(Briefing.BriefingCompactor)
    // A cap must hold the briefing's wrapper and some summary: a smaller one would cut every summary to
    // nothing (an empty briefing, the state text lost). Refused here, before any cycle runs (issue 39).
    if (Option.isSome(briefer)) {
      const wrapper = yield* prepareOne({ role: "user", parts: [Message.text(Briefing.renderSummary(""))] }, "briefing")
      if (briefer.value.maxTokens <= wrapper.tokens) {
        return yield* new Briefing.InvalidBriefingCap({
          maxTokens: briefer.value.maxTokens,
          minimum: wrapper.tokens + 1
        })
      }
    }

    // Through the briefing compactor when one is given (falling back to the deterministic briefing when
    // it fails, so a cycle still advances); the deterministic briefing otherwise.
    const produceFlashBriefing: SeamHost.Service["produceFlashBriefing"] = (existingSeams, stateText) =>
      Option.match(briefer, {
        onNone: () => deterministicBriefing(existingSeams, stateText),
        onSome: (service) =>
          compactedBriefing(service, existingSeams, stateText).pipe(
            Effect.catchTags({
              CompactionError: () => deterministicBriefing(existingSeams, stateText),
              SummaryRefused: () => deterministicBriefing(existingSeams, stateText)
            })
          )
      })

    const reset: SeamHost.Service["reset"] = (stream) =>
      append(stream, (window) =>
        Either.right(window.seams.length === 0 ? [] : [{ _tag: "SeamsReset" } satisfies WindowEvent.Draft])
      )

    const seamMessagesOf = (window: Window.Window): ReadonlyArray<Message.Message> => {
      const ids = new Set(window.seams.map((seam) => seam.messageId))
      return window.history.filter((message) => ids.has(message.id))
    }

    const requirePresent = (stream: string, window: Window.Window, ids: ReadonlyArray<string>) => {
      const present = new Set(window.history.map((message) => message.id))
      const missing = ids.find((id) => !present.has(id))
      return missing === undefined ? Either.void : Either.left(new SeamRangeChanged({ stream, messageId: missing }))
    }

    /** A cycle boundary: a briefing leads, history before the verbatim window leaves, seams reset. */
    const advanceCycle = (stream: string, window: Window.Window, stateText: string | undefined) =>
      Effect.gen(function* () {
        const seams = seamMessagesOf(window)
        const briefing = yield* produceFlashBriefing(seams, stateText)
        return yield* append(stream, (current) =>
          Either.map(
            requirePresent(
              stream,
              current,
              seams.map((seam) => seam.id)
            ),
            (): ReadonlyArray<WindowEvent.Draft> => {
              const cut = adjust(
                current.history,
                0,
                Math.min(
                  SeamConfig.verbatimWindowStart(config, current.history.length),
                  unseenStart(current, current.history)
                )
              ).end
              // The user's latest ask stays through a cycle (issue 39, ADR 0114).
              const { fold } = splitPinned(current.history, 0, cut, [], Window.latestUserAsk(current))
              const removed = new Set([
                ...fold.filter((message) => message.kind !== "briefing").map((message) => message.id),
                ...seamMessagesOf(current).map((seam) => seam.id)
              ])
              return [
                { _tag: "BriefingProduced", message: briefing },
                { _tag: "CycleAdvanced", cycle: current.cycle + 1, removedIds: [...removed] },
                { _tag: "SeamsReset" }
              ]
            }
          )
        )
      })

    const run: SeamHost.Service["run"] = (stream, options: PipelineOptions = {}) =>
      Effect.gen(function* () {
        const window = yield* ctx.load(stream)
        const used = options.activeInputTokens ?? window.tokens.total
        // Evaluated and not acted on (ADR 0148): why, what was measured and the line it was compared with
        // (level 1's threshold when no level was due, the due level's when nothing could be folded).
        const nothing = (
          level: Option.Option<SeamConfig.SeamLevel>,
          reason?: WindowEvent.DecisionReason
        ): PipelineOutcome => ({
          window,
          events: [],
          level,
          action: "none",
          cycleAdvanced: false,
          ...(reason === undefined
            ? {}
            : {
                decision: {
                  tier: "seam",
                  reason,
                  usedTokens: Math.round(used),
                  thresholdTokens: Math.round(
                    SeamConfig.valueAt(
                      config.thresholds,
                      Option.getOrElse(level, () => 1 as SeamConfig.SeamLevel)
                    )
                  )
                }
              })
        })
        if (!config.enabled) return nothing(Option.none())
        const highest = highestOf(window)
        const due = SeamConfig.levelFor(config, used, highest)
        if (Option.isNone(due)) return nothing(due, "below-threshold")
        const level = due.value
        const history = window.history
        const seams = seamMessagesOf(window)
        // Fold only what follows the newest seam or briefing: those are summaries already.
        const start = lastIndexWhere(history, (message) => message.kind === "seam" || message.kind === "briefing") + 1
        // The verbatim window stays, and so does every tool result the model has not seen yet with its call.
        const end = Math.max(
          start,
          Math.min(SeamConfig.verbatimWindowStart(config, history.length), unseenStart(window, history))
        )
        const cycleEnds = config.advanceCycle && level === 3
        // A cycle's briefing replaces the previous one, so the seam that ends a cycle folds the previous
        // briefing in: what it carried reaches the next briefing instead of being dropped.
        const earlier = cycleEnds ? [...history.filter((message) => message.kind === "briefing"), ...seams] : seams
        const escalate =
          earlier.length > 0 &&
          ((Option.isSome(highest) && level > highest.value) ||
            seams.length >= config.maxSeamsPerLevel ||
            earlier.length > seams.length)
        const range = adjust(history, start, end)
        // The user's latest ask, kept by every seam: O(1), the fold keeps it (`State.latestAsk`).
        const ask = Window.latestUserAsk(window)
        if (!escalate && splitPinned(history, range.start, range.end, [], ask).fold.length === 0) {
          return nothing(due, "nothing-to-do")
        }
        const produced = yield* Effect.either(
          escalate
            ? recompactWith(earlier, history, level, start, end, options.workspace, ask)
            : softSeam(history, level, start, end, options.workspace, [], ask)
        )
        if (Either.isLeft(produced)) {
          const failure = produced.left
          if (failure._tag !== "SummaryRefused") return yield* Effect.fail(failure)
          // A refused summary makes no seam: the refusal is recorded, and the turn goes on to its next
          // tier (compaction, the fit) with the window as it was.
          const refused = yield* append(stream, () =>
            Either.right<ReadonlyArray<WindowEvent.Draft>>([
              { _tag: "CompactionFailed", tier: "seam", reason: `guard:${failure.reason}: ${failure.detail}` }
            ])
          )
          return { ...refused, level: due, action: "refused", cycleAdvanced: false } satisfies PipelineOutcome
        }
        const seam = produced.right
        const draft: WindowEvent.Draft = seam.recompacted
          ? { _tag: "SeamsRecompacted", level, message: seam.message, replacedIds: seam.replacedIds }
          : { _tag: "SeamProduced", level, message: seam.message, replacedIds: seam.replacedIds }
        const appended = yield* append(stream, (current) =>
          Either.map(requirePresent(stream, current, seam.replacedIds), () => [draft])
        )
        const action = seam.recompacted ? "recompacted" : "produced"
        if (!cycleEnds) {
          return { ...appended, level: due, action, cycleAdvanced: false } satisfies PipelineOutcome
        }
        const cycled = yield* advanceCycle(stream, appended.window, options.stateText)
        return {
          window: cycled.window,
          events: [...appended.events, ...cycled.events],
          level: due,
          action,
          cycleAdvanced: true
        } satisfies PipelineOutcome
      })

    const service: SeamHost.Service = {
      config,
      configEnabled: config.enabled,
      highestLevel: (stream) => Effect.map(ctx.load(stream), highestOf),
      seamCount: (stream) => Effect.map(ctx.load(stream), (window) => window.seams.length),
      seamLevelFor: (activeInputTokens, highestExisting) =>
        SeamConfig.levelFor(config, activeInputTokens, highestExisting),
      verbatimWindowStart: (messageCount) => SeamConfig.verbatimWindowStart(config, messageCount),
      collectSeamTexts: ArchivedContext.collect,
      produceSoftSeam,
      recompact,
      produceFlashBriefing,
      reset,
      run
    }
    return service
  })
