// The in-memory context service the token-accounting tests run on, with the token counter under test.
import { ContextService, Ids, TokenCounter } from "@ctxlog/core"
import * as Layer from "effect/Layer"

/** `ContextService` over the in-memory log and replaying repository, counting with `counter`. */
export const memoryContext = (counter: TokenCounter.TokenCounter.Service, idPrefix: string) =>
  ContextService.layerMemory({
    tokenCounter: Layer.succeed(TokenCounter.TokenCounter, counter),
    ids: Ids.layerSequential(idPrefix)
  })

/** Every string in a request, depth first. */
export const stringsOf = (value: unknown): ReadonlyArray<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(stringsOf)
      : typeof value === "object" && value !== null
        ? Object.values(value).flatMap(stringsOf)
        : []
