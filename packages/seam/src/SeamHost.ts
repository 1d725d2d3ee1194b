/**
 * The seam host: layered context for long agent runs. Older history folds into leveled
 * `<archived_context>` seams while a verbatim window of recent messages stays intact; denser levels
 * fuse earlier seams; at a cycle boundary a briefing seeds a fresh window. Every step is an event
 * (`SeamProduced`, `SeamsRecompacted`, `BriefingProduced`, `CycleAdvanced`, `SeamsReset`) appended
 * through `ContextService.run`, so replay rebuilds the same window with no summarizer.
 *
 * @since 0.1.0
 */
import { LlmCompactor, TemplateCompactor } from "@ctxlog/compaction"
import type { Compactor, ContextService, EventLog, LanguageModel } from "@ctxlog/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/seamHost.js"
import type { PipelineError, PipelineOptions, PipelineOutcome, SeamHostService } from "./internal/seamHostTypes.js"
import type { InvalidSeamConfig, SeamConfig, SeamConfigInput } from "./SeamConfig.js"

export type {
  LoadError,
  PipelineError,
  PipelineOptions,
  PipelineOutcome,
  Seam
} from "./internal/seamHostTypes.js"

/** Produces seams and briefings and runs the seam pipeline on a stream. @since 0.1.0 */
export class SeamHost extends Context.Tag("@ctxlog/seam/SeamHost")<SeamHost, SeamHost.Service>() {}

/** @since 0.1.0 */
export declare namespace SeamHost {
  /** What a seam host does: the methods are documented on `SeamHostService`. @since 0.1.0 */
  export type Service = SeamHostService
}

/** Build a host from a configuration, over a `Compactor` (the summarizer) and the `ContextService`. @since 0.1.0 */
export const make: (
  config: SeamConfig
) => Effect.Effect<SeamHost.Service, never, Compactor.Compactor | ContextService.ContextService> = internal.make

/**
 * A host over whatever `Compactor` the application provides (the compaction package's template or
 * LLM compactor, or a test layer).
 * @since 0.1.0
 */
export const layerCompactor = (
  config: SeamConfigInput
): Layer.Layer<SeamHost, InvalidSeamConfig, Compactor.Compactor | ContextService.ContextService> =>
  Layer.effect(SeamHost, Effect.flatMap(internal.resolveConfig(config), internal.make))

/**
 * The default host: seams are summarized by the compaction package's deterministic
 * `TemplateCompactor` (no model call). `maxBytes` caps every summary (default 4096).
 * @since 0.1.0
 */
export const layer = (
  config: SeamConfigInput,
  options: TemplateCompactor.Options = {}
): Layer.Layer<SeamHost, InvalidSeamConfig, ContextService.ContextService> =>
  layerCompactor(config).pipe(Layer.provide(TemplateCompactor.layer(options)))

/**
 * A host whose seams are summarized by the `LanguageModel` in context, through the compaction
 * package's `LlmCompactor` (each level's `summaryTokens` bounds the answer).
 * @since 0.1.0
 */
export const layerLlm = (
  config: SeamConfigInput,
  options: LlmCompactor.Options = {}
): Layer.Layer<SeamHost, InvalidSeamConfig, ContextService.ContextService | LanguageModel.LanguageModel> =>
  layerCompactor(config).pipe(Layer.provide(LlmCompactor.layer(options)))

/** Run the seam pipeline on a stream with the host in context. @since 0.1.0 */
export const runSeamPipeline = (
  stream: EventLog.StreamId,
  options?: PipelineOptions
): Effect.Effect<PipelineOutcome, PipelineError, SeamHost> =>
  Effect.flatMap(SeamHost, (host) => host.run(stream, options))
