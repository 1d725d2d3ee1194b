/**
 * Conversation memory: load, append and clear the messages of a conversation by its stream id. A
 * history policy ({@link HistoryPolicy}: sliding window, token window, a user's own) shapes what `load`
 * returns; the implementations are in `@ctxlog/memory` and `@ctxlog/compaction`.
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
  /** The stream the operation was on (`conversationId` is the stream id; the field keeps its stored name). */
  get stream(): string {
    return this.conversationId
  }
  override get message(): string {
    return `memory ${this.operation} for "${this.conversationId}" failed: ${this.detail}`
  }
}

/**
 * A history policy: which of a stream's history messages a conversation memory returns on `load` (the
 * sliding window, the token window, a user's own). The one declaration: `@ctxlog/memory`'s
 * `ConversationMemoryPolicy` and `@ctxlog/compaction`'s `CompactingMemory` take this type.
 * @since 0.2.0
 */
export interface HistoryPolicy {
  /** A readable name, e.g. `lastMessages(20)`. */
  readonly name: string
  /** Select the messages to send from the history (pure, newest last; must not split a tool call from its result). */
  readonly select: (history: ReadonlyArray<Message>) => ReadonlyArray<Message>
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
    readonly load: (stream: string) => Effect.Effect<ReadonlyArray<Message>, MemoryError>
    readonly append: (
      stream: string,
      messages: ReadonlyArray<MessageInput>
    ) => Effect.Effect<ReadonlyArray<Message>, MemoryError>
    readonly clear: (stream: string) => Effect.Effect<void, MemoryError>
  }
}
