/**
 * The typed error every builder returns instead of a request the provider would reject.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A window (or neutral request) cannot be rendered into a valid provider request: an orphaned or
 * duplicated tool result, a tool call without its result, broken role alternation, too many cache
 * breakpoints. Names the message and tool call where it can.
 * @since 0.1.0
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  provider: Schema.String,
  detail: Schema.String,
  messageId: Schema.optional(Schema.String),
  toolCallId: Schema.optional(Schema.String),
  /** Index of the offending message in the rendered request's `messages` (0-based). */
  messageIndex: Schema.optional(Schema.Number),
  /** Index of the offending block in that message's `content` (0-based). */
  blockIndex: Schema.optional(Schema.Number),
  /** Index of the offending part in the ctxlog message's `parts` (0-based; since 0.4.0). */
  partIndex: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    const where = [
      this.messageId === undefined
        ? undefined
        : `message ${this.messageId}${this.partIndex === undefined ? "" : ` part ${this.partIndex}`}`,
      this.toolCallId === undefined ? undefined : `tool call ${this.toolCallId}`,
      this.messageIndex === undefined
        ? undefined
        : `messages[${this.messageIndex}]${this.blockIndex === undefined ? "" : `.content[${this.blockIndex}]`}`
    ].filter((part) => part !== undefined)
    return `${this.provider} request: ${this.detail}${where.length === 0 ? "" : ` (${where.join(", ")})`}`
  }
}

/** Build an {@link InvalidRequest} without spelling out absent optional fields. @since 0.1.0 */
export const make = (
  provider: string,
  detail: string,
  where: {
    readonly messageId?: string | undefined
    readonly toolCallId?: string | undefined
    readonly messageIndex?: number | undefined
    readonly blockIndex?: number | undefined
    readonly partIndex?: number | undefined
  } = {}
): InvalidRequest =>
  new InvalidRequest({
    provider,
    detail,
    // A Schema class: an undefined field would be a key of the instance and of its encoding.
    ...(where.messageId === undefined ? {} : { messageId: where.messageId }),
    ...(where.toolCallId === undefined ? {} : { toolCallId: where.toolCallId }),
    ...(where.messageIndex === undefined ? {} : { messageIndex: where.messageIndex }),
    ...(where.blockIndex === undefined ? {} : { blockIndex: where.blockIndex }),
    ...(where.partIndex === undefined ? {} : { partIndex: where.partIndex })
  })
