/**
 * The typed error of the message adapters (`@ctxlog/providers/ai-sdk`, `/langchain`, `/openai`,
 * `/anthropic`): a foreign message holds something a ctxlog message cannot (an image, a tool input that
 * is not JSON), named with the format and the message's index.
 *
 * @since 0.1.0
 */
import { Message, Validation } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/**
 * A message could not be converted, to or from `format`. `index` is the message's index in the
 * input; `path` (since 0.4.0) names the part that was refused, e.g. `parts[2]` of a ctxlog message or
 * `content[1]` of a foreign one.
 * @since 0.1.0
 */
export class AdapterError extends Schema.TaggedError<AdapterError>()("AdapterError", {
  format: Schema.String,
  index: Schema.Number,
  detail: Schema.String,
  path: Schema.optional(Schema.String)
}) {
  override get message(): string {
    return `${this.format} message ${this.index}${this.path === undefined ? "" : ` ${this.path}`}: ${this.detail}`
  }
}

/** An AdapterError naming the part at `path`. @since 0.4.0 */
export const refuse = (format: string, index: number, path: string, detail: string): AdapterError =>
  new AdapterError({ format, index, path, detail })

/** What the adapters take: stored messages (a window's) or message inputs. @since 0.1.0 */
export type AnyMessage = Message.Message | Message.MessageInput

/**
 * Whether a value is JSON as ctxlog stores it (finite numbers only), checked by core's iterative
 * `Validation.valueProblem`: a BigInt, a cycle or a 10,000-deep array is `false`, never a stack overflow.
 * @since 0.4.0
 */
export const isJson = (value: unknown): value is Message.JsonValue =>
  Validation.valueProblem(value, "value") === undefined && Schema.is(Message.JsonValue)(value)

/**
 * A tool input as JSON, or an AdapterError naming where: checked first by core's iterative
 * `Validation.valueProblem` (a BigInt, a cycle or a 10,000-deep array is named with its path, never a
 * stack overflow), so the schema decode below only sees bounded JSON.
 * @since 0.1.0
 */
export const jsonInput = (
  format: string,
  index: number,
  value: unknown
): Either.Either<Message.JsonValue, AdapterError> => {
  const problem = Validation.valueProblem(value, "input")
  if (problem !== undefined) {
    return Either.left(
      new AdapterError({ format, index, detail: `a tool call input is not JSON at ${problem.path}: ${problem.detail}` })
    )
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(Message.JsonValue)(value),
    () => new AdapterError({ format, index, detail: "a tool call input is not JSON" })
  )
}

/** A tool call's arguments string parsed as JSON. @since 0.1.0 */
export const parseArguments = (
  format: string,
  index: number,
  text: string
): Either.Either<Message.JsonValue, AdapterError> =>
  Either.try({
    try: (): unknown => (text.trim() === "" ? {} : JSON.parse(text)),
    catch: () => new AdapterError({ format, index, detail: `tool call arguments are not JSON: ${text.slice(0, 80)}` })
  }).pipe(Either.flatMap((value) => jsonInput(format, index, value)))

/** Tool names by call id, so a result can name its tool where the target format wants it. @since 0.1.0 */
export const toolNames = (messages: ReadonlyArray<AnyMessage>): ReadonlyMap<string, string> =>
  new Map(
    messages.flatMap((message) =>
      message.parts.flatMap((part) =>
        part.type === "tool_call" || part.type === "server_tool_call" ? [[part.id, part.name] as const] : []
      )
    )
  )

/** Convert every element, stopping at the first error. @since 0.1.0 */
export const convertAll = <A, B>(
  items: ReadonlyArray<A>,
  convert: (item: A, index: number) => Either.Either<ReadonlyArray<B>, AdapterError>
): Either.Either<ReadonlyArray<B>, AdapterError> => {
  const out: Array<B> = []
  for (const [index, item] of items.entries()) {
    const converted = convert(item, index)
    if (Either.isLeft(converted)) return Either.left(converted.left)
    out.push(...converted.right)
  }
  return Either.right(out)
}
