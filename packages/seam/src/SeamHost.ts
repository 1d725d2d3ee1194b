/**
 * The seam host: layered context for long agent runs. Older history folds into leveled
 * `<archived_context>` seams while a verbatim window of recent messages stays intact; denser levels
 * fuse earlier seams; at a cycle boundary a briefing seeds a fresh window. Every step is an event
 * (`SeamProduced`, `SeamsRecompacted`, `BriefingProduced`, `CycleAdvanced`, `SeamsReset`) appended
 * through `ContextService.run`, so replay rebuilds the same window with no summarizer.
 *
 * @since 0.1.0
 */
import { LlmCompactor, type SummaryGuard, TemplateCompactor } from "@ctxlog/compaction"
import type { Compactor, ContextService, EventCodec, EventLog, LanguageModel, Message, WindowEvent } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as ArchivedContext from "./ArchivedContext.js"
import type { InvalidBriefingCap } from "./Briefing.js"
import * as internal from "./internal/seamHost.js"
import type { InvalidSeamConfig, SeamConfig, SeamConfigInput, SeamLevel } from "./SeamConfig.js"
import type { SeamRangeChanged, SeamRangeError } from "./SeamError.js"

/** A seam ready to append: its message, level, and the ids it replaces. @since 0.1.0 */
export interface Seam {
  readonly level: SeamLevel
  /** The seam message (role `assistant`, kind `seam`, text an `<archived_context>` block). */
  readonly message: Message.Message
  /** Ids the seam replaces: folded messages, and for a recompaction the seams it consumes. */
  readonly replacedIds: ReadonlyArray<string>
  /** Pinned messages inside the range, kept verbatim in the window. */
  readonly keptIds: ReadonlyArray<string>
  /** The range actually folded, after moving its ends off tool-pair boundaries. */
  readonly start: number
  readonly end: number
  /** Whether the seam fuses earlier seams (appended as `SeamsRecompacted`). */
  readonly recompacted: boolean
}

/** Per-run inputs of the pipeline. @since 0.1.0 */
export interface PipelineOptions {
  /** Tokens of the prompt about to be sent; defaults to the window's total. */
  readonly activeInputTokens?: number
  /** Given to the summarizer (paths in seams are stated relative to it) and recorded as the `workspace` attribute. */
  readonly workspace?: string
  /** State text for the briefing when a cycle advances (see `Briefing.stateText`). */
  readonly stateText?: string
}

/** What the pipeline did. @since 0.1.0 */
export interface PipelineOutcome extends ContextService.Outcome {
  /** The level that was due, if any. */
  readonly level: Option.Option<SeamLevel>
  /** `none` when nothing was due or nothing could be folded. */
  /** `refused`: the summary failed a guard (`SummaryGuard`); the refusal is recorded, nothing else. */
  readonly action: "none" | "produced" | "recompacted" | "refused"
  readonly cycleAdvanced: boolean
  /**
   * With `none`, when the pipeline evaluated the window (it is enabled): why it did not act, for the
   * turn's folded `CompactionDecided` (tier `seam`; ADR 0148). The pipeline writes nothing for it.
   */
  readonly decision?: WindowEvent.TierDecision | undefined
}

/** Failures of reading a window. @since 0.1.0 */
export type LoadError = EventLog.StoreError | EventCodec.EventDecodeError | EventLog.TamperDetected

/** Failures of the pipeline. @since 0.1.0 */
export type PipelineError = SeamRangeError | SeamRangeChanged | Compactor.CompactionError | ContextService.LogError

/** Produces seams and briefings and runs the seam pipeline on a stream. @since 0.1.0 */
export class SeamHost extends Context.Tag("@ctxlog/seam/SeamHost")<SeamHost, SeamHost.Service>() {}

/** @since 0.1.0 */
export declare namespace SeamHost {
  /** What a seam host does. @since 0.1.0 */
  export interface Service {
    readonly config: SeamConfig
    /** Whether the pipeline is switched on. */
    readonly configEnabled: boolean
    /** The highest seam level in the stream's window (`None` before any seam). */
    readonly highestLevel: (stream: EventLog.StreamId) => Effect.Effect<Option.Option<SeamLevel>, LoadError>
    /** Number of seams in the stream's window. */
    readonly seamCount: (stream: EventLog.StreamId) => Effect.Effect<number, LoadError>
    /** The level due at a token count, never below `highestExisting`; none below level 1's threshold. */
    readonly seamLevelFor: (
      activeInputTokens: number,
      highestExisting: Option.Option<SeamLevel>
    ) => Option.Option<SeamLevel>
    /** Index of the first message of the verbatim tail (0 when there are fewer messages than it holds). */
    readonly verbatimWindowStart: (messageCount: number) => number
    /** The `<archived_context>` blocks already embedded in assistant messages. */
    readonly collectSeamTexts: (messages: ReadonlyArray<Message.Message>) => ReadonlyArray<ArchivedContext.SeamText>
    /**
     * Summarize `[start, end)` of `messages` into a seam at `level`; the summarizer gets `workspace` and
     * states paths relative to it. Pinned messages (flag or
     * `pinnedIndices`) stay verbatim, with their whole tool group; the range ends move inward so no
     * tool call is separated from its result.
     */
    readonly produceSoftSeam: (
      messages: ReadonlyArray<Message.Message>,
      level: SeamLevel,
      start: number,
      end: number,
      workspace?: string,
      pinnedIndices?: ReadonlyArray<number>
    ) => Effect.Effect<Seam, SeamRangeError | Compactor.CompactionError | SummaryGuard.SummaryRefused>
    /**
     * Fuse `existingSeams` with `[start, end)` of `recent` into one seam at `level` (not below any
     * existing seam's level). Pinned messages in the range stay verbatim.
     */
    readonly recompact: (
      existingSeams: ReadonlyArray<Message.Message>,
      recent: ReadonlyArray<Message.Message>,
      level: SeamLevel,
      start: number,
      end: number,
      workspace?: string
    ) => Effect.Effect<Seam, SeamRangeError | Compactor.CompactionError | SummaryGuard.SummaryRefused>
    /**
     * A briefing message (role `user`, kind `briefing`) of the seams and optional state text: a summary by
     * the `BriefingCompactor` in context, within its token cap, when one is given (the deterministic
     * briefing if it fails); otherwise the seams' blocks and the state text, concatenated.
     */
    readonly produceFlashBriefing: (
      existingSeams: ReadonlyArray<Message.Message>,
      stateText?: string
    ) => Effect.Effect<Message.Message>
    /** Clear seam bookkeeping at a cycle boundary (`SeamsReset`; a no-op when there are no seams). */
    readonly reset: (stream: EventLog.StreamId) => Effect.Effect<ContextService.Outcome, ContextService.LogError>
    /**
     * The pipeline: decide the level, produce or recompact a seam over the history before the verbatim
     * window, replace the range with it, and advance a cycle when configured. Summarizing happens
     * before appending; the append re-checks the window still holds the range.
     */
    readonly run: (
      stream: EventLog.StreamId,
      options?: PipelineOptions
    ) => Effect.Effect<PipelineOutcome, PipelineError>
  }
}

/**
 * Build a host from a configuration, over a `Compactor` (the summarizer) and the `ContextService`. With a
 * `BriefingCompactor` in context, a cap too small for the briefing's wrapper fails with
 * `InvalidBriefingCap` (issue 39).
 * @since 0.1.0
 */
export const make: (
  config: SeamConfig
) => Effect.Effect<SeamHost.Service, InvalidBriefingCap, Compactor.Compactor | ContextService.ContextService> =
  internal.make

/**
 * A host over whatever `Compactor` the application provides (the compaction package's template or
 * LLM compactor, or a test layer).
 * @since 0.1.0
 */
export const layerCompactor = (
  config: SeamConfigInput
): Layer.Layer<SeamHost, InvalidSeamConfig | InvalidBriefingCap, Compactor.Compactor | ContextService.ContextService> =>
  Layer.effect(SeamHost, Effect.flatMap(internal.resolveConfig(config), internal.make))

/**
 * The default host: seams are summarized by the compaction package's deterministic
 * `TemplateCompactor` (no model call). `maxBytes` caps every summary (default 4096).
 * @since 0.1.0
 */
export const layer = (
  config: SeamConfigInput,
  options: TemplateCompactor.Options = {}
): Layer.Layer<SeamHost, InvalidSeamConfig | InvalidBriefingCap, ContextService.ContextService> =>
  layerCompactor(config).pipe(Layer.provide(TemplateCompactor.layer(options)))

/**
 * A host whose seams are summarized by the `LanguageModel` in context, through the compaction
 * package's `LlmCompactor` (each level's `summaryTokens` bounds the answer).
 * @since 0.1.0
 */
export const layerLlm = (
  config: SeamConfigInput,
  options: LlmCompactor.Options = {}
): Layer.Layer<
  SeamHost,
  InvalidSeamConfig | InvalidBriefingCap,
  ContextService.ContextService | LanguageModel.LanguageModel
> => layerCompactor(config).pipe(Layer.provide(LlmCompactor.layer(options)))

/** Run the seam pipeline on a stream with the host in context. @since 0.1.0 */
export const runSeamPipeline = (
  stream: EventLog.StreamId,
  options?: PipelineOptions
): Effect.Effect<PipelineOutcome, PipelineError, SeamHost> =>
  Effect.flatMap(SeamHost, (host) => host.run(stream, options))
