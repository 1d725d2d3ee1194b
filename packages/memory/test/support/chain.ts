import { type ContextService, type EventCodec, EventLog, Message } from "@ctxlog/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"

// A chain of decisions: each appended message says which message was last when it was decided. If every
// decision ran on the stream's current window, the log reads as an unbroken chain.

/** Append message `id` whose text names the last history message of the window it was decided on. */
export const appendAfterLast = (ctx: ContextService.ContextService.Service, stream: string, id: string) =>
  ctx.run(stream, (window) => {
    const last = window.history[window.history.length - 1]
    return Either.right([
      {
        _tag: "MessageAppended" as const,
        message: {
          id,
          role: "user" as const,
          kind: "chat" as const,
          parts: [Message.text(`after:${last?.id ?? "none"}`)],
          tokens: 1
        }
      }
    ])
  })

/** The links of the chain that do not hold (empty when every decision saw the current window). */
export const brokenLinks = (
  stream: string
): Effect.Effect<
  { readonly broken: ReadonlyArray<string>; readonly count: number },
  EventLog.StoreError | EventCodec.EventDecodeError,
  EventLog.EventLog
> =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    const broken: Array<string> = []
    let previous = "none"
    for (const { event } of envelopes) {
      if (event._tag !== "MessageAppended") continue
      const text = Message.textOf(event.message)
      if (text.startsWith("after:") && text !== `after:${previous}`)
        broken.push(`${event.message.id} says "${text}", previous is ${previous}`)
      previous = event.message.id
    }
    return { broken, count: envelopes.length }
  })
