/**
 * Errors of seam operations.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A seam operation got arguments that do not describe a usable range (out of bounds, reversed, nothing
 * left to fold once pinned messages and tool pairs are respected, a level below an existing seam's).
 * Nothing was written.
 * @since 0.1.0
 */
export class SeamRangeError extends Schema.TaggedError<SeamRangeError>()("SeamRangeError", {
  operation: Schema.String,
  start: Schema.Number,
  end: Schema.Number,
  length: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: range [${this.start}, ${this.end}) of ${this.length} messages: ${this.detail}`
  }
}

/**
 * Between summarizing and appending, the window stopped holding a message the seam replaces (another
 * writer removed it). Nothing was written; running the pipeline again re-plans on the new window.
 * @since 0.1.0
 */
export class SeamRangeChanged extends Schema.TaggedError<SeamRangeChanged>()("SeamRangeChanged", {
  stream: Schema.String,
  messageId: Schema.String
}) {
  override get message(): string {
    return `stream "${this.stream}": message ${this.messageId} left the window before its seam was appended`
  }
}
