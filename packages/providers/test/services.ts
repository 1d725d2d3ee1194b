// The in-memory context service the token-accounting tests run on, with the token counter under test.
import { ContextService, EventLog, Ids, RecallSource, TokenCounter, WindowRepository } from "@ctxlog/core"
import * as Layer from "effect/Layer"

/** `ContextService` over the in-memory log and replaying repository, counting with `counter`. */
export const memoryContext = (counter: TokenCounter.TokenCounter.Service, idPrefix: string) =>
  ContextService.layer.pipe(
    Layer.provideMerge(WindowRepository.layerReplay),
    Layer.provideMerge(EventLog.layerMemory),
    Layer.provideMerge(
      Layer.mergeAll(
        Layer.succeed(TokenCounter.TokenCounter, counter),
        Ids.layerSequential(idPrefix),
        RecallSource.layerEmpty
      )
    )
  )

/** Every string in a request, depth first. */
export const stringsOf = (value: unknown): ReadonlyArray<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(stringsOf)
      : typeof value === "object" && value !== null
        ? Object.values(value).flatMap(stringsOf)
        : []
