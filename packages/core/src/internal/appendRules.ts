import * as Effect from "effect/Effect"
import type { AppendCheckInput, AppendDecision } from "../EventLog.js"
import { ConcurrencyConflict, DuplicateEventIds, type ExpectedVersion } from "../EventLogError.js"

/** Whether a stream at version `current` (0: no events) satisfies `expected`. */
export const matches = (current: number, expected: ExpectedVersion): boolean => {
  switch (expected) {
    case "any":
      return true
    case "no_stream":
      return current === 0
    case "stream_exists":
      return current > 0
    default:
      return current === expected
  }
}

export const checkAppend = (
  input: AppendCheckInput
): Effect.Effect<AppendDecision, ConcurrencyConflict | DuplicateEventIds> =>
  Effect.suspend((): Effect.Effect<AppendDecision, ConcurrencyConflict | DuplicateEventIds> => {
    const { stream, current, expected, ids, existing } = input
    const repeated = ids.filter((id, index) => ids.indexOf(id) !== index)
    if (repeated.length > 0) {
      return Effect.fail(new DuplicateEventIds({ stream, ids: repeated, detail: "event ids repeat within the batch" }))
    }
    const present = ids.filter((id) => existing.has(id))
    if (present.length > 0) {
      if (present.length < ids.length) {
        return Effect.fail(
          new DuplicateEventIds({ stream, ids: present, detail: "some event ids of the batch are stored already" })
        )
      }
      // Every id is stored: an idempotent retry if they are this stream's events, in this order.
      const first = existing.get(ids[0] ?? "")
      const sameBatch =
        first !== undefined &&
        ids.every((id, index) => {
          const where = existing.get(id)
          return where !== undefined && where.stream === stream && where.version === first.version + index
        })
      if (!sameBatch) {
        return Effect.fail(
          new DuplicateEventIds({ stream, ids: present, detail: "event ids are stored already as other events" })
        )
      }
      return Effect.succeed({ _tag: "AlreadyWritten", lastVersion: first.version + ids.length - 1 } as const)
    }
    if (!matches(current, expected)) {
      return Effect.fail(new ConcurrencyConflict({ stream, expected, actual: current }))
    }
    if (ids.length === 0) return Effect.succeed({ _tag: "Nothing" } as const)
    return Effect.succeed({ _tag: "Write", firstVersion: current + 1 } as const)
  })
