/**
 * The typed errors of `CtxlogSaver`. LangGraph calls a checkpointer through promises, so a failure
 * rejects with a `CtxlogError` (from `@ctxlog/client`) whose `_tag` is one of these tags (or a tag of the
 * log: `StoreError`, `ConcurrencyConflict`, `InvalidInput`, ...) and whose `cause` is the typed error.
 *
 * @since 0.5.0
 */
import * as Schema from "effect/Schema"

/**
 * A `RunnableConfig` (or a checkpoint) the saver cannot use: `operation` is the saver method, `field`
 * the path of what was wrong (`configurable.thread_id`), `detail` why. Nothing was written.
 * @since 0.5.0
 */
export class InvalidCheckpointConfig extends Schema.TaggedError<InvalidCheckpointConfig>()("InvalidCheckpointConfig", {
  operation: Schema.String,
  field: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.field} ${this.detail}`
  }
}

/**
 * LangGraph's serializer (`serde`) failed on a value: `operation` says where (`put`, `getTuple`, ...),
 * `channel` which value when known. Nothing was written.
 * @since 0.5.0
 */
export class SerializationFailed extends Schema.TaggedError<SerializationFailed>()("SerializationFailed", {
  operation: Schema.String,
  channel: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: serializer failed${this.channel === undefined ? "" : ` on channel ${this.channel}`}: ${this.detail}`
  }
}

/** The saver was closed; it takes no more calls. @since 0.5.0 */
export class SaverClosed extends Schema.TaggedError<SaverClosed>()("SaverClosed", {
  operation: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: the saver is closed`
  }
}
