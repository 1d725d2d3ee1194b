/**
 * Work counters of the projection's data structures: how many item references were copied, how many
 * spine references, how many materialized into arrays. Tests read them (`WorkCounter.since(work)`) to
 * check the cost per event (at 1k vs 10k messages) without timing anything. Each is an effect `Metric`
 * counter incremented through its synchronous hook (`WorkCounter.add`, ADR 0160).
 */
import * as WorkCounter from "../WorkCounter.js"

export const work = {
  /** Item references copied into new leaves (appends count 1). */
  copied: WorkCounter.make("ctxlog.core.copied", "Item references copied into new leaves (appends count 1)."),
  /** Leaf references copied into new spines. */
  spine: WorkCounter.make("ctxlog.core.spine", "Leaf references copied into new spines."),
  /** Items copied into arrays handed to readers (`toArray`). */
  materialized: WorkCounter.make("ctxlog.core.materialized", "Items copied into arrays handed to readers."),
  /** Messages whose tokens were summed to compute a partition total. */
  summed: WorkCounter.make("ctxlog.core.summed", "Messages whose tokens were summed to compute a partition total."),
  /** Pre-tokens the gpt counter handed to the tokenizer (not found in its memo). */
  chunksTokenized: WorkCounter.make(
    "ctxlog.core.chunks_tokenized",
    "Pre-tokens the gpt counter handed to the tokenizer (not found in its memo)."
  ),
  /** Values walked by the full check (`Validation.valueProblem`), not passed by a fast path. */
  valueWalks: WorkCounter.make(
    "ctxlog.core.value_walks",
    "Values walked by the full check (Validation.valueProblem), not passed by a fast path."
  ),
  /** Events folded into a window (`Window.replay`, one event at a time or as a run of messages). */
  eventsFolded: WorkCounter.make("ctxlog.core.events_folded", "Events folded into a window (Window.replay)."),
  /** Windows made from a state (`view`): one per fold, whatever its length. */
  views: WorkCounter.make("ctxlog.core.views", "Windows made from a state (one per fold)."),
  /** Events encoded by the Schema pass (`EventCodec.encodeAllEither`), not by its fast path. */
  schemaEncodes: WorkCounter.make(
    "ctxlog.core.schema_encodes",
    "Events encoded by the Schema pass (EventCodec.encodeAllEither), not by its fast path."
  )
}

export const { add } = WorkCounter
