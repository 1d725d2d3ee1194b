/**
 * Sliding-window conversation memory: `load` returns the last `n` messages of the history, moving
 * whole tool rounds (a call with all its results) so a call and its result are never separated.
 *
 * Note: a window that slides by one message per turn changes the prompt prefix every turn and so
 * defeats provider prompt caching; prefer compaction in chunks when caching matters.
 *
 * @since 0.1.0
 */
import type { ContextService, ConversationMemory } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { type ConversationMemoryPolicy, InvalidMemoryPolicy, layer as layerPolicy } from "./ConversationMemoryPolicy.js"
import { selectNewest } from "./internal/conversationMemory.js"

/**
 * Keep at most the last `n` messages (`n` a positive integer). Tool rounds move as a whole; pinned
 * rounds always stay and count towards `n`; the newest round stays even when it alone is longer than `n`.
 * @since 0.1.0
 */
export const lastMessages = (n: number): Either.Either<ConversationMemoryPolicy, InvalidMemoryPolicy> =>
  Number.isInteger(n) && n >= 1
    ? Either.right({
        name: `lastMessages(${n})`,
        select: (history) => selectNewest(history, n, (unit) => unit.messages.length)
      })
    : Either.left(
        new InvalidMemoryPolicy({
          policy: "SlidingWindowMemory.lastMessages",
          parameter: "n",
          value: n,
          detail: "expected an integer of at least 1"
        })
      )

/** Conversation memory returning the last `n` messages. @since 0.1.0 */
export const layer = (
  n: number
): Layer.Layer<ConversationMemory.ConversationMemory, InvalidMemoryPolicy, ContextService.ContextService> =>
  Either.match(lastMessages(n), { onLeft: (error) => Layer.fail(error), onRight: layerPolicy })
