/**
 * Types shared by `TieredCompaction` and `internal/summarize`, one level below both so neither imports
 * the other. `TieredCompaction` re-exports them.
 */
import type { Compactor, ContextService, Message, Window, WindowEvent } from "@ctxlog/core"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as CompressionPlan from "../CompressionPlan.js"

/** What a compaction step did. */
export type Result =
  | { readonly _tag: "NoChange"; readonly reason: string; readonly window: Window.Window }
  | {
      readonly _tag: "SoftCompacted"
      readonly window: Window.Window
      readonly events: ReadonlyArray<WindowEvent.WindowEvent>
    }
  | {
      readonly _tag: "Compacted"
      readonly tier: WindowEvent.CompactionTier
      readonly window: Window.Window
      readonly events: ReadonlyArray<WindowEvent.WindowEvent>
      readonly summary: Message.Message
    }

/** What a summarization ends in. */
export type Summarized = Extract<Result, { readonly _tag: "NoChange" | "Compacted" }>

/** A compaction setting is out of range; nothing was written. */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  field: Schema.String,
  value: Schema.Unknown,
  detail: Schema.String
}) {
  override get message(): string {
    return `compaction config: ${this.field} = ${JSON.stringify(this.value)}: ${this.detail}`
  }
}

/** Everything a compaction can fail with. */
export type Failure = ContextService.LogError | Compactor.CompactionError | InvalidConfig

/** Optional hooks of `compactContext`, called in this order: archive → summarize → probe → finalize → persist. */
export interface Hooks {
  /** Before anything else: keep the messages that will leave somewhere else (they stay in the log anyway). */
  readonly archive?: (plan: CompressionPlan.Plan) => Effect.Effect<void, Compactor.CompactionError>
  /** Replaces the `Compactor` for this call. */
  readonly summarize?: (
    input: Compactor.CompactionInput
  ) => Effect.Effect<Compactor.CompactionOutput, Compactor.CompactionError>
  /** Checks the summary; failing rejects it (recorded as `CompactionFailed`). */
  readonly probe?: (summary: string, plan: CompressionPlan.Plan) => Effect.Effect<void, Compactor.CompactionError>
  /** Last edit of the summary text before it is appended. */
  readonly finalize?: (summary: string) => Effect.Effect<string, Compactor.CompactionError>
  /** After the `Compacted` event is in the log. */
  readonly persist?: (
    result: Extract<Result, { readonly _tag: "Compacted" }>
  ) => Effect.Effect<void, Compactor.CompactionError>
}
