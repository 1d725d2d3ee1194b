/**
 * Work counters of the projection's data structures: how many item references were copied, how many
 * spine references, how many materialized into arrays. Tests read them to check the cost per event
 * (at 1k vs 10k messages) without timing anything. Incrementing a number costs nothing measurable.
 */
export const work = {
  /** Item references copied into new leaves (appends count 1). */
  copied: 0,
  /** Leaf references copied into new spines. */
  spine: 0,
  /** Items copied into arrays handed to readers (`toArray`). */
  materialized: 0,
  /** Messages whose tokens were summed to compute a partition total. */
  summed: 0,
  /** Pre-tokens the gpt counter handed to the tokenizer (not found in its memo). */
  chunksTokenized: 0,
  /** Events encoded by the Schema pass (`EventCodec.encodeAllEither`), not by its fast path. */
  schemaEncodes: 0
}

/** Zero every counter. */
export const resetWork = (): void => {
  work.copied = 0
  work.spine = 0
  work.materialized = 0
  work.summed = 0
  work.chunksTokenized = 0
  work.schemaEncodes = 0
}
