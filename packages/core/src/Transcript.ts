/**
 * Import chat transcripts in the OpenAI chat-completions format (`role`, `content`, `tool_calls`,
 * `tool_call_id`) as message inputs, so real agent runs can be replayed into a window. An assistant's
 * `reasoning_content` (DeepSeek, Qwen and other OpenAI-compatible servers) becomes a `reasoning`
 * part; `image_url` content parts become `image` parts.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { maxEventDepth, structureProblem } from "./internal/jsonDepth.js"
import {
  type ImagePart,
  JsonValue,
  type MessageInput,
  type Part,
  reasoning,
  text,
  toolCall,
  toolResult
} from "./Message.js"

/** A transcript could not be read. `index` is the message's position in the list. @since 0.1.0 */
export class TranscriptError extends Schema.TaggedError<TranscriptError>()("TranscriptError", {
  index: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    return `transcript message #${this.index}: ${this.detail}`
  }
}

/** A function's name and arguments: JSON text as the API sends it, or a value some loggers store parsed. */
const OpenAIFunction = Schema.Struct({ name: Schema.String, arguments: Schema.optional(Schema.Unknown) })

const OpenAIToolCall = Schema.Struct({
  /** Absent in some logs: the call is then given an id from its position. */
  id: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  function: OpenAIFunction
})

const ImageUrl = Schema.Struct({ url: Schema.String, detail: Schema.optional(Schema.String) })

const ContentPart = Schema.Struct({
  type: Schema.String,
  text: Schema.optional(Schema.String),
  image_url: Schema.optional(Schema.Union(Schema.String, ImageUrl))
})

/** One message in OpenAI chat format. @since 0.1.0 */
export const OpenAIChatMessage = Schema.Struct({
  role: Schema.Literal("system", "developer", "user", "assistant", "tool", "function"),
  content: Schema.optional(Schema.NullOr(Schema.Union(Schema.String, Schema.Array(ContentPart)))),
  tool_calls: Schema.optional(Schema.NullOr(Schema.Array(OpenAIToolCall))),
  tool_call_id: Schema.optional(Schema.String),
  reasoning_content: Schema.optional(Schema.NullOr(Schema.String)),
  /** The legacy single function call of an assistant message (before `tool_calls`). */
  function_call: Schema.optional(Schema.NullOr(OpenAIFunction)),
  /** The function a legacy `function` message answers. */
  name: Schema.optional(Schema.String)
})
/** @since 0.1.0 */
export type OpenAIChatMessage = typeof OpenAIChatMessage.Type

const decodeMessage = Schema.decodeUnknownEither(OpenAIChatMessage)

const contentText = (content: OpenAIChatMessage["content"]): string =>
  content === undefined || content === null
    ? ""
    : typeof content === "string"
      ? content
      : content.map((part) => part.text ?? "").join("")

const dataUrl = /^data:([^;,]+);base64,(.*)$/s

const imageOf = (url: string, detail: ImagePart["detail"]): ImagePart => {
  const match = dataUrl.exec(url)
  const size = detail === undefined ? {} : { detail }
  return match?.[1] !== undefined && match[2] !== undefined
    ? { type: "image", source: { type: "base64", mediaType: match[1], data: match[2] }, ...size }
    : { type: "image", source: { type: "url", url }, ...size }
}

/** The images of a content array (`image_url` parts). */
const imagesOf = (content: OpenAIChatMessage["content"]): ReadonlyArray<ImagePart> =>
  content === undefined || content === null || typeof content === "string"
    ? []
    : content.flatMap((part) =>
        part.type !== "image_url" || part.image_url === undefined
          ? []
          : typeof part.image_url === "string"
            ? [imageOf(part.image_url, undefined)]
            : [imageOf(part.image_url.url, detailOf(part.image_url.detail))]
      )

/** OpenAI's image detail levels; any other value is left to the provider's default. */
const detailOf = (detail: string | undefined): ImagePart["detail"] =>
  detail === "auto" || detail === "low" || detail === "high" ? detail : undefined

const isJson = Schema.is(JsonValue)

const parseArguments = (raw: unknown): JsonValue => {
  // Absent arguments are an empty object; a value a logger stored already parsed is kept as it is.
  if (raw === undefined || raw === null) return {}
  if (typeof raw !== "string") return isJson(raw) ? raw : (JSON.stringify(raw) ?? "")
  try {
    const parsed: unknown = JSON.parse(raw)
    return isJson(parsed) ? parsed : raw
  } catch {
    // Models sometimes emit arguments that are not JSON; keep them verbatim.
    return raw
  }
}

/**
 * Convert OpenAI chat messages to message inputs. Tool calls keep their ids; `tool` messages become
 * tool results; `reasoning_content` leads the assistant message as a `reasoning` part; `image_url`
 * content parts of user messages follow their text as `image` parts (`image_url` as an object or a bare
 * URL). Logs of the legacy function-calling format import too: an assistant's `function_call` becomes a
 * tool call (id `fn_<index>`) and the `function` message after it that call's result. A tool call without
 * an id gets `call_<index>_<n>`; arguments stored already parsed are kept. Other extra fields are ignored.
 * @since 0.1.0
 */
export const fromOpenAIChat = (
  messages: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<MessageInput>, TranscriptError> => {
  // The legacy function calls not answered yet, oldest first (a `function` message answers one by name).
  const pendingFunctions: Array<{ readonly id: string; readonly name: string }> = []
  return Effect.forEach(messages, (raw, index) => {
    const decoded = decodeMessage(raw, { onExcessProperty: "ignore" })
    if (decoded._tag === "Left") {
      return Effect.fail(new TranscriptError({ index, detail: decoded.left.message }))
    }
    const message = decoded.right
    const body = contentText(message.content)
    switch (message.role) {
      case "system":
      case "developer":
        return Effect.succeed<MessageInput>({ role: "system", parts: [text(body)] })
      case "user": {
        const images = imagesOf(message.content)
        return Effect.succeed<MessageInput>({
          role: "user",
          parts: images.length > 0 && body.length === 0 ? images : [text(body), ...images]
        })
      }
      case "assistant": {
        const thought = message.reasoning_content ?? ""
        const parts: Array<Part> = thought.length > 0 ? [reasoning(thought)] : []
        if (body.length > 0) parts.push(text(body))
        // Arguments stored already parsed are checked before anything walks them (a schema check recurses).
        const calls = [
          ...(message.tool_calls ?? []).map((call) => call.function),
          ...(message.function_call ? [message.function_call] : [])
        ]
        for (const call of calls) {
          const problem =
            typeof call.arguments === "object" && call.arguments !== null
              ? structureProblem(call.arguments, maxEventDepth)
              : undefined
          if (problem !== undefined) {
            return Effect.fail(
              new TranscriptError({
                index,
                detail: `arguments of "${call.name}" at ${problem.path}: ${problem.detail}`
              })
            )
          }
        }
        for (const [n, call] of (message.tool_calls ?? []).entries()) {
          const id = call.id ?? `call_${index}_${n}`
          parts.push(toolCall(id, call.function.name, parseArguments(call.function.arguments)))
        }
        if (message.function_call !== undefined && message.function_call !== null) {
          const id = `fn_${index}`
          pendingFunctions.push({ id, name: message.function_call.name })
          parts.push(toolCall(id, message.function_call.name, parseArguments(message.function_call.arguments)))
        }
        return Effect.succeed<MessageInput>({ role: "assistant", parts: parts.length > 0 ? parts : [text("")] })
      }
      case "tool":
        if (message.tool_call_id === undefined) {
          return Effect.fail(new TranscriptError({ index, detail: "tool message without tool_call_id" }))
        }
        return Effect.succeed<MessageInput>({ role: "tool", parts: [toolResult(message.tool_call_id, body)] })
      case "function": {
        const at = pendingFunctions.findIndex((call) => message.name === undefined || call.name === message.name)
        const call = pendingFunctions[at]
        if (call === undefined) {
          return Effect.fail(
            new TranscriptError({
              index,
              detail: `function message${message.name === undefined ? "" : ` "${message.name}"`} answers no earlier function_call`
            })
          )
        }
        pendingFunctions.splice(at, 1)
        return Effect.succeed<MessageInput>({ role: "tool", parts: [toolResult(call.id, body)] })
      }
    }
  })
}

/** Read a transcript file's JSON value: `{ messages: [...] }` or a bare array of messages. @since 0.1.0 */
export const fromTranscriptJson = (json: unknown): Effect.Effect<ReadonlyArray<MessageInput>, TranscriptError> =>
  Array.isArray(json)
    ? fromOpenAIChat(json)
    : typeof json === "object" && json !== null && "messages" in json && Array.isArray(json.messages)
      ? fromOpenAIChat(json.messages)
      : Effect.fail(new TranscriptError({ index: -1, detail: "expected an object with a messages array, or an array" }))
