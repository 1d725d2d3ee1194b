import { ContextService, type EventLog, TokenCounter, type Window, type WindowEvent } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** Metadata stored beside the events this package appends, so the log says which part decided them. */
export const by = (operation: string, causationId?: string): EventLog.EventMetadata => ({
  actor: `@ctxlog/compaction/${operation}`,
  // Left out when absent: metadata is validated as a JSON value, where an `undefined` value is refused.
  ...(causationId === undefined ? {} : { causationId })
})

/** How a decision counts a message's tokens (the `TokenCounter` in context). */
export type CountMessage = TokenCounter.TokenCounter.Service["countMessage"]

/**
 * Run a pure decision that counts tokens on a stream's current window, in one `ContextService.run`
 * (the decision is retried on a fresh window after a conflict), recorded as `operation`.
 */
export const runCounted = (
  stream: EventLog.StreamId,
  operation: string,
  decide: (window: Window.Window, countMessage: CountMessage) => ReadonlyArray<WindowEvent.Draft>
): Effect.Effect<
  ContextService.Outcome,
  ContextService.LogError,
  ContextService.ContextService | TokenCounter.TokenCounter
> =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const counter = yield* TokenCounter.TokenCounter
    return yield* ctx.run(stream, (window) => Either.right(decide(window, counter.countMessage)), by(operation))
  })
