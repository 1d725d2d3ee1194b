/**
 * Conversation memory: load, append and clear the messages of a conversation by id. Policies
 * (sliding window, token window, compacting) are implementations in `@ctxlog/memory` and
 * `@ctxlog/compaction`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Message, MessageInput } from "./Message.js"

/** A memory operation failed. @since 0.1.0 */
export class MemoryError extends Schema.TaggedError<MemoryError>()("MemoryError", {
  conversationId: Schema.String,
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `memory ${this.operation} for "${this.conversationId}" failed: ${this.detail}`
  }
}

/** Conversation memory. @since 0.1.0 */
export class ConversationMemory extends Context.Tag("@ctxlog/core/ConversationMemory")<
  ConversationMemory,
  ConversationMemory.Service
>() {}

/** @since 0.1.0 */
export declare namespace ConversationMemory {
  /** @since 0.1.0 */
  export interface Service {
    /** The messages to send for this conversation, after the memory's policy. */
    readonly load: (conversationId: string) => Effect.Effect<ReadonlyArray<Message>, MemoryError>
    readonly append: (
      conversationId: string,
      messages: ReadonlyArray<MessageInput>
    ) => Effect.Effect<ReadonlyArray<Message>, MemoryError>
    readonly clear: (conversationId: string) => Effect.Effect<void, MemoryError>
  }
}
