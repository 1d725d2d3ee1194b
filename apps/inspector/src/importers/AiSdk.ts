/**
 * Vercel AI SDK messages as one JSON document: `ModelMessage[]` (what `generateText` / `streamText`
 * take and `response.messages` give) or `UIMessage[]` (what `useChat` keeps), a bare list or
 * `{ messages }`. Each assistant `ModelMessage` is one model call; a `UIMessage` assistant message is
 * one call per step (`step-start` parts), its tool parts' outputs the results that follow the step.
 * The messages carry no time and no usage: the calls are recorded at the time of the import, with no
 * `UsageReported`, rendered with `--provider` / `--model`. A malformed message fails the session
 * naming its index (`message N`).
 *
 * @since 0.8.0
 */
import { createHash } from "node:crypto"
import { Message } from "@ctxlog/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { ImportError } from "../Transfer.js"
import { type FileRead, isRecord, type Step, type Wire } from "./Session.js"

/** Whether a JSON document's items look like AI SDK messages. @since 0.8.0 */
export const looksLike = (items: ReadonlyArray<unknown>): boolean =>
  items.some(
    (item) =>
      isRecord(item) &&
      typeof item.role === "string" &&
      ((Array.isArray(item.parts) && !("content" in item)) ||
        (Array.isArray(item.content) &&
          item.content.some(
            (part) => isRecord(part) && /^(tool-call|tool-result|reasoning|file)$/.test(String(part.type))
          )))
  )

const baseName = (file: string) => file.replace(/^.*[\\/]/, "").replace(/\.json$/i, "")

const json = (value: unknown): Message.JsonValue => (value === undefined ? null : (value as Message.JsonValue))

const mediaRef = (data: unknown, mediaType: unknown): Message.ImagePart => {
  if (typeof data === "string" && /^https?:/.test(data)) return Message.imageUrl(data)
  const bytes = typeof data === "string" ? data : JSON.stringify(data ?? null)
  return Message.imageUrl(
    `ai-sdk-${typeof mediaType === "string" ? mediaType.replace(/[^a-z0-9.+-]/gi, "_") : "file"}:sha256:${createHash("sha256").update(bytes).digest("hex")}`
  )
}

/** A tool output (`{ type: "text" | "json" | "error-text" | "content", value }`, or anything) as text. */
const outputText = (output: unknown): { readonly text: string; readonly isError: boolean } => {
  if (isRecord(output) && typeof output.type === "string" && "value" in output) {
    const isError = output.type.startsWith("error")
    return { text: typeof output.value === "string" ? output.value : JSON.stringify(output.value), isError }
  }
  return { text: typeof output === "string" ? output : JSON.stringify(output ?? null), isError: false }
}

type Fail = (detail: string) => ImportError

const modelParts = (content: unknown, fail: Fail): Effect.Effect<ReadonlyArray<Message.Part>, ImportError> =>
  Effect.gen(function* () {
    if (typeof content === "string") return [Message.text(content)]
    if (!Array.isArray(content)) return yield* fail("content is neither text nor a list of parts")
    const parts: Array<Message.Part> = []
    for (const [index, part] of content.entries()) {
      if (!isRecord(part) || typeof part.type !== "string") return yield* fail(`content[${index}] is not a typed part`)
      switch (part.type) {
        case "text":
          if (typeof part.text !== "string") return yield* fail(`content[${index}]: a text part without text`)
          parts.push(Message.text(part.text))
          break
        case "reasoning":
          parts.push(Message.reasoning(typeof part.text === "string" ? part.text : ""))
          break
        case "image":
          parts.push(mediaRef(part.image, part.mediaType))
          break
        case "file":
          parts.push(mediaRef(part.data, part.mediaType))
          break
        case "tool-call":
          if (typeof part.toolCallId !== "string" || part.toolCallId === "" || typeof part.toolName !== "string") {
            return yield* fail(`content[${index}]: a tool-call without toolCallId or toolName`)
          }
          parts.push(Message.toolCall(part.toolCallId, part.toolName, json(part.input ?? part.args)))
          break
        case "tool-result": {
          if (typeof part.toolCallId !== "string" || part.toolCallId === "") {
            return yield* fail(`content[${index}]: a tool-result without toolCallId`)
          }
          const out = outputText(part.output ?? part.result)
          parts.push(Message.toolResult(part.toolCallId, out.text, out.isError))
          break
        }
        default:
          break
      }
    }
    return parts
  })

/** Read an AI SDK message list: one session. @since 0.8.0 */
export const read = (
  file: string,
  text: string,
  options: { readonly provider: string; readonly model: string }
): Effect.Effect<FileRead, ImportError> =>
  Effect.gen(function* () {
    let document: unknown
    try {
      document = JSON.parse(text.replace(/^\uFEFF/, ""))
    } catch (cause) {
      return yield* new ImportError({
        file,
        line: 0,
        detail: `not JSON (${cause instanceof Error ? cause.message : String(cause)})`
      })
    }
    const messages = Array.isArray(document)
      ? document
      : isRecord(document) && Array.isArray(document.messages)
        ? document.messages
        : undefined
    if (messages === undefined) return yield* new ImportError({ file, line: 0, detail: "expected a list of messages" })
    const at = yield* Clock.currentTimeMillis
    const unknown: Record<string, number> = {}
    const steps: Array<Step> = []
    const call = (answer: ReadonlyArray<Message.Part>) => {
      steps.push({ _tag: "Call", at, line: 0, model: options.model, answer })
    }
    for (const [index, raw] of messages.entries()) {
      const fail: Fail = (detail) => new ImportError({ file, line: 0, detail: `message ${index}: ${detail}` })
      if (!isRecord(raw) || typeof raw.role !== "string")
        return yield* fail("expected { role, content } or { role, parts }")
      const role = raw.role
      if (role !== "system" && role !== "user" && role !== "assistant" && role !== "tool") {
        return yield* fail(`unknown role ${JSON.stringify(role)}`)
      }
      if (Array.isArray(raw.parts) && !("content" in raw)) {
        // A UIMessage: an assistant message is a call per step; its tool parts' outputs follow each step.
        let answer: Array<Message.Part> = []
        let results: Array<Message.MessageInput> = []
        const endStep = () => {
          if (answer.length > 0) call(answer)
          if (results.length > 0) steps.push({ _tag: "Messages", at, line: 0, messages: results })
          answer = []
          results = []
        }
        const words: Array<Message.Part> = []
        for (const [n, part] of raw.parts.entries()) {
          if (!isRecord(part) || typeof part.type !== "string") return yield* fail(`parts[${n}] is not a typed part`)
          const type = part.type
          if (type === "step-start") {
            if (role === "assistant") endStep()
            continue
          }
          const target = role === "assistant" ? answer : words
          if (type === "text" && typeof part.text === "string") target.push(Message.text(part.text))
          else if (type === "reasoning" && typeof part.text === "string") target.push(Message.reasoning(part.text))
          else if (type === "file") target.push(mediaRef(part.url, part.mediaType))
          else if (type.startsWith("tool-") || type === "dynamic-tool") {
            const name = type === "dynamic-tool" ? part.toolName : type.slice(5)
            if (
              typeof part.toolCallId !== "string" ||
              part.toolCallId === "" ||
              typeof name !== "string" ||
              name === ""
            ) {
              return yield* fail(`parts[${n}]: a tool part without toolCallId`)
            }
            answer.push(Message.toolCall(part.toolCallId, name, json(part.input)))
            if (part.state === "output-available" || part.state === "output-error") {
              const out =
                part.state === "output-error"
                  ? { text: typeof part.errorText === "string" ? part.errorText : "error", isError: true }
                  : outputText(part.output)
              results.push({ role: "tool", parts: [Message.toolResult(part.toolCallId, out.text, out.isError)] })
            }
          } else if (!type.startsWith("data-") && type !== "source-url" && type !== "source-document") {
            unknown[`part:${type}`] = (unknown[`part:${type}`] ?? 0) + 1
          }
        }
        if (role === "assistant") endStep()
        else if (words.length > 0) steps.push({ _tag: "Messages", at, line: 0, messages: [{ role, parts: words }] })
        continue
      }
      const parts = yield* modelParts(raw.content, fail)
      if (role === "assistant") call(parts)
      else steps.push({ _tag: "Messages", at, line: 0, messages: [{ role, parts }] })
    }
    const wire: Wire = options.provider === "anthropic" ? "anthropic" : "openai-chat"
    return {
      file,
      format: "ai-sdk" as const,
      sessions: [
        {
          file,
          format: "ai-sdk" as const,
          stream: baseName(file),
          wire,
          contextWindow: 1_000_000,
          steps
        }
      ],
      unknown
    }
  })
