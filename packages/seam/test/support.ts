import { Compactor, ContextService, Ids, Message } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { SeamHost } from "../src/index.js"
import type { SeamConfigInput } from "../src/SeamConfig.js"

/** Every input a test compactor was given, in call order. */
export type CompactorCalls = Array<Compactor.CompactionInput>

/**
 * A deterministic summarizer Layer (a test double of the Compactor port): the summary names how many
 * messages it covers and the first words of each, capped near `maxSummaryTokens * 4` characters.
 */
export const recordingCompactor = (calls: CompactorCalls = []): Layer.Layer<Compactor.Compactor> =>
  Layer.succeed(Compactor.Compactor, {
    name: "recording",
    compact: (input) =>
      Effect.sync(() => {
        calls.push(input)
        const lines = input.messages.map(
          (message) => `${message.role}: ${Message.tokenTextOf(message).replace(/\s+/g, " ").slice(0, 60)}`
        )
        const summary = `Summary of ${input.messages.length} messages.\n${lines.join("\n")}`
        return { summary: summary.slice(0, (input.maxSummaryTokens ?? 500) * 4) }
      })
  })

/** Core services over an in-memory log, with sequential ids and the GPT tokenizer. */
export const coreLayer = ContextService.layerMemory({ ids: Ids.layerSequential("t") })

/** A seam host over the recording compactor and the core services. */
export const hostLayer = (config: SeamConfigInput, calls: CompactorCalls = []) =>
  SeamHost.layerCompactor(config).pipe(Layer.provide(recordingCompactor(calls)), Layer.provideMerge(coreLayer))

/** Messages with ids and token counts, as they would enter the log. */
export const prepared = (inputs: ReadonlyArray<Message.MessageInput>) =>
  Effect.flatMap(ContextService.ContextService, (ctx) => ctx.prepare(inputs))
