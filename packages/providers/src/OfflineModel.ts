/**
 * A deterministic, scripted `LanguageModel` for demos and tests: no network, no randomness. A
 * {@link Script} maps each request (and the call's number) to a {@link Reply}; {@link fromReplies}
 * plays a fixed list; {@link echoScript}, the default, answers from the last user message and issues a
 * tool call when a line reads `/call <tool> <json input>`.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { LanguageModel, Message, TokenCounter, Tracing } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { RenderedRequest } from "./CtxBuilder.js"
import type { ChatMessage, ResponsesInputItem } from "./ProviderRequest.js"

/** What the scripted model answers. @since 0.1.0 */
export interface Reply {
  readonly text?: string
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly input: Message.JsonValue; readonly id?: string }>
  /** Default: `tool_use` when there are tool calls, else `end_turn`. */
  readonly stopReason?: LanguageModel.StopReason
}

/** A script: the reply to the `call`-th request (0-based), or a failure to return instead. @since 0.1.0 */
export type Script = (request: LanguageModel.ModelRequest, call: number) => Reply | LanguageModel.ProviderError

/** Name the offline model reports as its provider. @since 0.1.0 */
export const provider = "offline"

/** Play `replies` in order; a request past the end fails with `bad_request`. @since 0.1.0 */
export const fromReplies =
  (replies: ReadonlyArray<Reply>): Script =>
  (_request, call) =>
    replies[call] ??
    new LanguageModel.ProviderError({
      provider,
      reason: "bad_request",
      detail: `the script has ${replies.length} replies; request #${call + 1} has none`
    })

const lastUserText = (request: LanguageModel.ModelRequest): string | undefined => {
  for (let index = request.messages.length - 1; index >= 0; index--) {
    const message = request.messages[index]
    if (message?.role === "user" && Message.textOf(message).length > 0) return Message.textOf(message)
  }
  return undefined
}

const decodeJson = Schema.decodeUnknownOption(Schema.parseJson(Message.JsonValue))

/**
 * The default script. After tool results it reports them; a user line `/call <tool> <json>` becomes
 * a tool call (input `{}` without JSON, `{ "text": … }` when the rest is not JSON); anything else is
 * echoed back as `You said: …`.
 * @since 0.1.0
 */
export const echoScript: Script = (request) => {
  const last = request.messages[request.messages.length - 1]
  const results = last === undefined ? [] : Message.toolResultsOf(last)
  if (results.length > 0) {
    const lines = results.map(
      (result) => `- ${result.toolCallId}${result.isError ? " (error)" : ""}: ${result.content.slice(0, 200)}`
    )
    return { text: `Tool results:\n${lines.join("\n")}` }
  }
  const text = lastUserText(request) ?? ""
  const calls = text.split("\n").flatMap((line) => {
    const match = /^\/call\s+(\S+)(?:\s+([\s\S]*))?$/.exec(line.trim())
    if (match === null) return []
    const [, name = "", rest = ""] = match
    const parsed = rest.trim().length === 0 ? { _tag: "Some" as const, value: {} } : decodeJson(rest.trim())
    return [{ name, input: parsed._tag === "Some" ? parsed.value : { text: rest.trim() } }]
  })
  if (calls.length > 0) return { toolCalls: calls }
  return { text: text.length === 0 ? "Nothing to answer yet." : `You said: ${text}` }
}

const estimate = (text: string): number => TokenCounter.estimate(text)

const respond = (
  model: string,
  request: LanguageModel.ModelRequest,
  reply: Reply,
  call: number,
  idPrefix: string
): LanguageModel.ModelResponse => {
  const calls = (reply.toolCalls ?? []).map((toolCall, index) =>
    Message.toolCall(toolCall.id ?? `${idPrefix}_${call + 1}_${index + 1}`, toolCall.name, toolCall.input)
  )
  const text = reply.text ?? ""
  return {
    provider,
    model,
    parts: [...(text.length === 0 ? [] : [Message.text(text)]), ...calls],
    stopReason: reply.stopReason ?? (calls.length > 0 ? "tool_use" : "end_turn"),
    usage: {
      inputTokens: estimate(JSON.stringify(request)),
      outputTokens: estimate(text) + estimate(JSON.stringify(calls)),
      cacheReadTokens: 0,
      cacheWriteTokens: 0
    }
  }
}

/** The response as chunks: text a word at a time, one delta per tool call, then `Done`. */
const chunksOf = (response: LanguageModel.ModelResponse): ReadonlyArray<LanguageModel.ModelChunk> => [
  ...response.parts.flatMap((part): ReadonlyArray<LanguageModel.ModelChunk> => {
    if (part.type === "text") return (part.text.match(/\S+\s*|\s+/g) ?? []).map((text) => ({ _tag: "TextDelta", text }))
    if (part.type === "tool_call") {
      return [{ _tag: "ToolCallDelta", id: part.id, name: part.name, inputJson: JSON.stringify(part.input) }]
    }
    return []
  }),
  { _tag: "Done", response }
]

/** Settings of the scripted model. @since 0.1.0 */
export interface Options {
  /**
   * Prefix of the tool-call ids it makes (`<prefix>_<call>_<index>`). Default `offline_<random UUID>`,
   * new per instance, so two runs (or processes) appending into one log never mint the same id; pass a
   * fixed prefix for reproducible ids.
   */
  readonly idPrefix?: string
}

/** The port plus answering pre-built requests, like the HTTP clients. @since 0.1.0 */
export interface Client extends LanguageModel.LanguageModel.Service {
  /** Answer a request a `CtxBuilder` rendered (Anthropic, Chat Completions or Responses), by the script. */
  readonly generateRequest: (
    request: RenderedRequest
  ) => Effect.Effect<LanguageModel.ModelResponse, LanguageModel.ProviderError>
}

const parseInput = (text: string): Message.JsonValue => {
  const parsed = decodeJson(text)
  return parsed._tag === "Some" ? parsed.value : { text }
}

const fromChat = (messages: ReadonlyArray<ChatMessage>): LanguageModel.ModelRequest => {
  const system = messages.flatMap((message) =>
    message.role === "system" || message.role === "developer" ? [message.content] : []
  )
  return {
    ...(system.length === 0 ? {} : { system: system.join("\n\n") }),
    // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch covers every role and each case returns
    messages: messages.flatMap((message): ReadonlyArray<LanguageModel.ChatMessage> => {
      switch (message.role) {
        case "system":
        case "developer":
          return []
        case "user":
          return [
            Message.user(
              typeof message.content === "string"
                ? message.content
                : message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
            )
          ]
        case "assistant":
          return [
            Message.assistant(
              message.content ?? "",
              (message.tool_calls ?? []).map((call) =>
                Message.toolCall(call.id, call.function.name, parseInput(call.function.arguments))
              )
            )
          ]
        case "tool":
          return [Message.tool(message.tool_call_id, message.content)]
      }
    })
  }
}

const fromResponses = (items: ReadonlyArray<ResponsesInputItem>): LanguageModel.ModelRequest => {
  const system = items.flatMap((item) =>
    item.type === "message" && (item.role === "system" || item.role === "developer") ? [item.content] : []
  )
  const messages: Array<LanguageModel.ChatMessage> = []
  for (const item of items) {
    const previous = messages[messages.length - 1]
    if (item.type === "message") {
      const content =
        typeof item.content === "string"
          ? item.content
          : item.content.flatMap((part) => (part.type === "input_text" ? [part.text] : [])).join("\n")
      if (item.role === "user") messages.push(Message.user(content))
      if (item.role === "assistant") messages.push(Message.assistant(content))
    } else if (item.type === "reasoning") {
      // The script reads text and tool calls; reasoning sent back is not part of what it answers.
    } else if (item.type === "function_call") {
      const call = Message.toolCall(item.call_id, item.name, parseInput(item.arguments))
      // Calls following an assistant message belong to it, as they did in the window.
      if (previous?.role === "assistant")
        messages[messages.length - 1] = { ...previous, parts: [...previous.parts, call] }
      else messages.push({ role: "assistant", parts: [call] })
    } else {
      messages.push(Message.tool(item.call_id, outputText(item.output)))
    }
  }
  return { ...(system.length === 0 ? {} : { system: system.join("\n\n") }), messages }
}

/** A tool output's text (a result made of parts: its text parts; the script reads text). */
const outputText = (
  output: string | ReadonlyArray<{ readonly type: string; readonly text?: string | undefined }>
): string =>
  typeof output === "string"
    ? output
    : output.flatMap((part) => (part.text === undefined ? [] : [part.text])).join("\n")

/** The neutral request a rendered request carries (what the script reads). @since 0.1.0 */
export const fromRendered = (request: RenderedRequest): LanguageModel.ModelRequest => {
  if ("input" in request) return fromResponses(request.input)
  if ("stream_options" in request) return fromChat(request.messages)
  return {
    // core's `ModelRequest.system` is exact: the neutral request a script reads has no undefined key.
    ...(request.system === undefined ? {} : { system: request.system.map((block) => block.text).join("\n\n") }),
    messages: request.messages.flatMap((message): ReadonlyArray<LanguageModel.ChatMessage> => {
      const results = message.content.flatMap((block) =>
        block.type === "tool_result"
          ? [Message.tool(block.tool_use_id, outputText(block.content), block.is_error === true)]
          : []
      )
      const parts = message.content.flatMap(
        (block): ReadonlyArray<Message.Part> =>
          block.type === "text"
            ? [Message.text(block.text)]
            : block.type === "tool_use"
              ? [Message.toolCall(block.id, block.name, block.input)]
              : []
      )
      return parts.length === 0 ? results : [...results, { role: message.role, parts }]
    })
  }
}

/** Build the scripted model; calls are numbered from 0 per instance. @since 0.1.0 */
export const make = (
  script: Script = echoScript,
  model = "offline-echo",
  options: Options = {}
): Effect.Effect<Client> =>
  Effect.map(Ref.make(0), (calls) => {
    const idPrefix = options.idPrefix ?? `offline_${randomUUID()}`
    const generate = (request: LanguageModel.ModelRequest) =>
      Tracing.modelCall(
        Effect.flatMap(
          Ref.getAndUpdate(calls, (n) => n + 1),
          (call) => {
            const reply = script(request, call)
            return reply instanceof LanguageModel.ProviderError
              ? Effect.fail(reply)
              : Effect.succeed(respond(model, request, reply, call, idPrefix))
          }
        ),
        provider,
        model
      )
    return {
      provider,
      model,
      generate,
      stream: (request) =>
        Stream.flatMap(Stream.fromEffect(generate(request)), (r) => Stream.fromIterable(chunksOf(r))),
      generateRequest: (request) => generate(fromRendered(request))
    }
  })

/** The scripted model as the `LanguageModel` service (the echo script by default). @since 0.1.0 */
export const layer = (
  script: Script = echoScript,
  model = "offline-echo",
  options: Options = {}
): Layer.Layer<LanguageModel.LanguageModel> => Layer.effect(LanguageModel.LanguageModel, make(script, model, options))
