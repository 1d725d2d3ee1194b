/**
 * Conversation memory over the event log, shaped by a policy. A conversation id is a stream id:
 * `append` appends messages to the stream, `clear` records `HistoryCleared`, and `load` returns the
 * window's history as the policy selects it. The log keeps everything; a policy only shapes what
 * `load` returns and never writes.
 *
 * @since 0.1.0
 */
import { ContextService, ConversationMemory, ToolPairs, Window } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/**
 * What history a conversation memory returns on `load`: core's `ConversationMemory.HistoryPolicy`, the
 * one declaration (a name kept here for this module's callers).
 * @since 0.1.0
 */
export type ConversationMemoryPolicy = ConversationMemory.HistoryPolicy

/** A policy parameter is out of range; no memory was built. @since 0.1.0 */
export class InvalidMemoryPolicy extends Schema.TaggedError<InvalidMemoryPolicy>()("InvalidMemoryPolicy", {
  policy: Schema.String,
  parameter: Schema.String,
  value: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.policy}: ${this.parameter} = ${this.value} is invalid: ${this.detail}`
  }
}

/** The policy that returns the whole window history. @since 0.1.0 */
export const keepAll: ConversationMemoryPolicy = { name: "keepAll", select: (history) => history }

const failure = (stream: string, operation: string) => (error: { readonly message: string }) =>
  new ConversationMemory.MemoryError({ conversationId: stream, operation, detail: error.message })

const checkId = (stream: string, operation: string): Effect.Effect<void, ConversationMemory.MemoryError> =>
  stream.trim().length === 0
    ? Effect.fail(
        new ConversationMemory.MemoryError({
          conversationId: stream,
          operation,
          detail: "the conversation id must be a non-empty string"
        })
      )
    : Effect.void

/** Build a conversation memory applying `policy` on load. @since 0.1.0 */
export const make = (
  policy: ConversationMemoryPolicy
): Effect.Effect<ConversationMemory.ConversationMemory.Service, never, ContextService.ContextService> =>
  Effect.map(ContextService.ContextService, (context) => ({
    load: (stream) =>
      checkId(stream, "load").pipe(
        Effect.zipRight(context.load(stream)),
        // Whatever the policy picks, a tool result the model has not seen yet stays, with its call.
        Effect.map((window) =>
          ToolPairs.withKept(window.history, policy.select(window.history), Window.unseenToolPairs(window))
        ),
        Effect.mapError(failure(stream, "load"))
      ),
    append: (stream, messages) =>
      checkId(stream, "append").pipe(
        Effect.zipRight(context.appendMessages(stream, messages)),
        Effect.map(({ events, window }) => {
          // Return the messages as the window holds them: with ids, token counts and origin.
          const appended = new Set(
            events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message.id] : []))
          )
          return window.history.filter((message) => appended.has(message.id))
        }),
        Effect.mapError(failure(stream, "append"))
      ),
    clear: (stream) =>
      checkId(stream, "clear").pipe(
        Effect.zipRight(context.clearHistory(stream)),
        Effect.asVoid,
        Effect.mapError(failure(stream, "clear"))
      )
  }))

/** A conversation memory applying `policy`, over the window service. @since 0.1.0 */
export const layer = (
  policy: ConversationMemoryPolicy
): Layer.Layer<ConversationMemory.ConversationMemory, never, ContextService.ContextService> =>
  Layer.effect(ConversationMemory.ConversationMemory, make(policy))
