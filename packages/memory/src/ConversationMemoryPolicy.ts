/**
 * Conversation memory over the event log, shaped by a policy. A conversation id is a stream id:
 * `append` appends messages to the stream, `clear` records `HistoryCleared`, and `load` returns the
 * window's history as the policy selects it. The log keeps everything; a policy only shapes what
 * `load` returns and never writes.
 *
 * @since 0.1.0
 */
import { ContextService, ConversationMemory, type Message, ToolPairs, Window } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/** What history a conversation memory returns on `load`. @since 0.1.0 */
export interface ConversationMemoryPolicy {
  /** A readable name, e.g. `lastMessages(20)`. */
  readonly name: string
  /** Select the messages to send from the full window history (pure; must not split tool pairs). */
  readonly select: (history: ReadonlyArray<Message.Message>) => ReadonlyArray<Message.Message>
}

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

const failure = (conversationId: string, operation: string) => (error: { readonly message: string }) =>
  new ConversationMemory.MemoryError({ conversationId, operation, detail: error.message })

const checkId = (conversationId: string, operation: string): Effect.Effect<void, ConversationMemory.MemoryError> =>
  conversationId.trim().length === 0
    ? Effect.fail(
        new ConversationMemory.MemoryError({
          conversationId,
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
    load: (conversationId) =>
      checkId(conversationId, "load").pipe(
        Effect.zipRight(context.load(conversationId)),
        // Whatever the policy picks, a tool result the model has not seen yet stays, with its call.
        Effect.map((window) =>
          ToolPairs.withKept(window.history, policy.select(window.history), Window.unseenToolPairs(window))
        ),
        Effect.mapError(failure(conversationId, "load"))
      ),
    append: (conversationId, messages) =>
      checkId(conversationId, "append").pipe(
        Effect.zipRight(context.appendMessages(conversationId, messages)),
        Effect.map(({ events, window }) => {
          // Return the messages as the window holds them: with ids, token counts and origin.
          const appended = new Set(
            events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message.id] : []))
          )
          return window.history.filter((message) => appended.has(message.id))
        }),
        Effect.mapError(failure(conversationId, "append"))
      ),
    clear: (conversationId) =>
      checkId(conversationId, "clear").pipe(
        Effect.zipRight(context.clearHistory(conversationId)),
        Effect.asVoid,
        Effect.mapError(failure(conversationId, "clear"))
      )
  }))

/** A conversation memory applying `policy`, over the window service. @since 0.1.0 */
export const layer = (
  policy: ConversationMemoryPolicy
): Layer.Layer<ConversationMemory.ConversationMemory, never, ContextService.ContextService> =>
  Layer.effect(ConversationMemory.ConversationMemory, make(policy))
