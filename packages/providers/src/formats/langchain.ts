/**
 * The `langchain` framework format (see `FrameworkFormat`): the render as the LangChain messages a
 * LangGraph `preModelHook` returns (`llmInputMessages`), in plain JSON. `@ctxlog/langgraph`'s hook turns
 * each into the LangChain message of its `type` with exactly these fields, so the recorded render is
 * what the agent handed its model.
 *
 * The messages are the provider builder's Chat Completions render, message for message: the builder
 * decides selection, order, roles, the `<context>` wrappers of summaries and state, the fit and the
 * tool-output cuts; this format only changes the form. A message gets `render-<n>` as its id (its place
 * in the render): LangGraph gives a message without an id a random one, which the model would receive
 * and no rebuild could repeat. An assistant's tool call arguments are the JSON object the builder wrote
 * (a value that is not an object travels as `{ input: value }`, as the LangChain adapter sends it).
 *
 * Only Chat Completions renders (the `default`, `openai` chat and `ollama` builders) have this form;
 * any other builder's render is refused with `InvalidRequest` naming it.
 *
 * This module imports no LangChain package: the form is plain JSON.
 * @since 0.8.0
 */
import * as Either from "effect/Either"
import type { FrameworkRequest, Format } from "../FrameworkFormat.js"
import { InvalidRequest } from "../InvalidRequest.js"
import type { Message } from "@ctxlog/core"
import type { ChatCompletionsRequest, ChatContentPart, ChatMessage, JsonObject } from "../ProviderRequest.js"

type JsonValue = Message.JsonValue

/** A LangChain tool call (`AIMessage.tool_calls[i]`). @since 0.8.0 */
export interface LangChainToolCall {
  readonly type: "tool_call"
  readonly id: string
  readonly name: string
  readonly args: JsonObject
}

/**
 * One LangChain message as JSON: `type` names the class (`SystemMessage`, `HumanMessage`, `AIMessage`,
 * `ToolMessage`); the other keys are its constructor's fields.
 * @since 0.8.0
 */
export type LangChainMessageJson =
  | { readonly type: "system"; readonly id: string; readonly content: string }
  | { readonly type: "human"; readonly id: string; readonly content: string | ReadonlyArray<ChatContentPart> }
  | {
      readonly type: "ai"
      readonly id: string
      readonly content: string
      readonly tool_calls: ReadonlyArray<LangChainToolCall>
    }
  | { readonly type: "tool"; readonly id: string; readonly content: string; readonly tool_call_id: string }

/** The render in the `langchain` form. @since 0.8.0 */
export interface LangChainRequest extends FrameworkRequest {
  readonly format: "langchain"
  readonly messages: ReadonlyArray<LangChainMessageJson>
}

const isChat = (request: unknown): request is ChatCompletionsRequest =>
  typeof request === "object" &&
  request !== null &&
  "messages" in request &&
  Array.isArray(request.messages) &&
  !("system" in request) &&
  !("input" in request)

const isObject = (value: JsonValue): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const argsOf = (
  provider: string,
  index: number,
  callId: string,
  text: string
): Either.Either<JsonObject, InvalidRequest> => {
  try {
    const value: JsonValue = JSON.parse(text)
    return Either.right(isObject(value) ? value : { input: value })
  } catch {
    return Either.left(
      new InvalidRequest({
        provider,
        detail: "langchain format: tool call arguments are not JSON",
        messageIndex: index,
        toolCallId: callId
      })
    )
  }
}

const messageOf = (
  provider: string,
  message: ChatMessage,
  index: number
): Either.Either<LangChainMessageJson, InvalidRequest> => {
  const id = `render-${index}`
  switch (message.role) {
    case "system":
    case "developer":
      return Either.right({ type: "system", id, content: message.content })
    case "user":
      return Either.right({ type: "human", id, content: message.content })
    case "tool":
      return Either.right({ type: "tool", id, content: message.content, tool_call_id: message.tool_call_id })
    case "assistant": {
      const calls: Array<LangChainToolCall> = []
      for (const call of message.tool_calls ?? []) {
        const args = argsOf(provider, index, call.id, call.function.arguments)
        if (Either.isLeft(args)) return Either.left(args.left)
        calls.push({ type: "tool_call", id: call.id, name: call.function.name, args: args.right })
      }
      return Either.right({ type: "ai", id, content: message.content ?? "", tool_calls: calls })
    }
  }
}

/** The render as the framework's request. @since 0.8.0 */
export const render: Format = ({ built, provider }) => {
  const request: unknown = built.request
  if (!isChat(request)) {
    return Either.left(
      new InvalidRequest({
        provider,
        detail:
          "the langchain format takes a Chat Completions render (the default, openai chat or ollama builder); " +
          `the ${provider} builder renders another form`
      })
    )
  }
  const messages: Array<LangChainMessageJson> = []
  for (const [index, message] of request.messages.entries()) {
    const converted = messageOf(provider, message, index)
    if (Either.isLeft(converted)) return Either.left(converted.left)
    messages.push(converted.right)
  }
  const out: LangChainRequest = { format: "langchain", messages }
  return Either.right(out)
}
