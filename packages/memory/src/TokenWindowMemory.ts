/**
 * Token-window conversation memory: `load` returns the newest history that fits a token budget,
 * using the token counts stored with each message (counted once, when it entered the log). Whole tool
 * rounds move together, so a call and its result are never separated.
 *
 * @since 0.1.0
 */
import type { ContextService, ConversationMemory } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { type ConversationMemoryPolicy, InvalidMemoryPolicy, layer as layerPolicy } from "./ConversationMemoryPolicy.js"
import { selectNewest } from "./internal/conversationMemory.js"

/**
 * Keep the newest history whose tokens fit `tokens` (a non-negative integer). Tool rounds move as a
 * whole; pinned rounds always stay and count towards the budget; the newest round stays even when it
 * alone is over the budget (dropping it would leave the model without the turn it is answering).
 * @since 0.1.0
 */
export const budget = (tokens: number): Either.Either<ConversationMemoryPolicy, InvalidMemoryPolicy> =>
  Number.isInteger(tokens) && tokens >= 0
    ? Either.right({
        name: `budget(${tokens})`,
        select: (history) => selectNewest(history, tokens, (unit) => unit.tokens)
      })
    : Either.left(
        new InvalidMemoryPolicy({
          policy: "TokenWindowMemory.budget",
          parameter: "tokens",
          value: tokens,
          detail: "expected a non-negative integer token count"
        })
      )

/** Conversation memory returning the newest history within `tokens`. @since 0.1.0 */
export const layer = (
  tokens: number
): Layer.Layer<ConversationMemory.ConversationMemory, InvalidMemoryPolicy, ContextService.ContextService> =>
  Either.match(budget(tokens), { onLeft: (error) => Layer.fail(error), onRight: layerPolicy })
