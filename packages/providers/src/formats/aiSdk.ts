/**
 * The `ai-sdk` framework format (see `FrameworkFormat`): a render as the prompt an AI SDK language model
 * receives (`LanguageModelV3Prompt` of `ai` 6, `LanguageModelV4Prompt` of `ai` 7, the same shape), as
 * plain JSON: `{ format: "ai-sdk", prompt }`. The AI SDK middleware hands `prompt` to the model as it is
 * (a file part's `data` that is an `http(s)` URL becomes a `URL`), `prepareStep` hands it to the step.
 *
 * The provider builder decides the window and how each slot is shown; the prompt follows it:
 *
 * - identity, stable and injected knowledge: one system message each, in that order (injected
 *   knowledge wrapped as `<context kind="…">`, `Window.renderContext`), each with its message's
 *   options;
 * - task state and signals: a user message after them, as every builder sends it;
 * - history in tool-round order (`orderTurns`): user and assistant messages as the AI SDK adapter gives
 *   them back (every part, with the provider options they came with: `openai.itemId`, reasoning
 *   signatures and encrypted content, `google.thoughtSignature`, …; reasoning is kept whole: the AI
 *   SDK's provider decides what of it it sends); a compaction summary or other context message in
 *   history with the role and wrapper the provider builder gives it (`anthropic` and `ollama`: a
 *   wrapped user message; `openai`, `openai-responses`, `default`: a system message, wrapped unless it
 *   is a plain system message); the results of one assistant message's calls in one tool message, as
 *   the AI SDK itself combines them;
 * - tool approval requests and responses are not in a provider prompt (the AI SDK takes them out before
 *   the model call): they are left out here too;
 * - the turn reminder, when the policy has one: a text part first in the last user message (a user
 *   message of its own when there is none), as the Chat Completions builder places it;
 * - the caller's cache hints (`BuildOptions.cacheHints`): `providerOptions.anthropic.cacheControl` on the
 *   message each hint names.
 *
 * This module imports no framework package.
 * @since 0.8.0
 */
import { type Message, Window } from "@ctxlog/core"
import * as Either from "effect/Either"
import { eachToLanguageModelMessage } from "../adapters/aiSdk.js"
import type { Format, FrameworkRequest } from "../FrameworkFormat.js"
import { InvalidRequest } from "../InvalidRequest.js"
import { fromWindow, type Piece, wrapContext } from "../internal/sections.js"

type Json = Message.JsonValue
type JsonObject = { readonly [key: string]: Json }
/** One prompt message, as plain JSON. */
type PromptMessage = { readonly role: string; readonly content: Json; readonly providerOptions?: JsonObject }

/** The builders that show a context message in history as a (wrapped) user message. */
const contextAsUser = new Set(["anthropic", "ollama"])

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const approval = (part: Json): boolean =>
  isObject(part) && (part.type === "tool-approval-request" || part.type === "tool-approval-response")

/** The request of an `ai-sdk` render. @since 0.8.0 */
export interface AiSdkRequest extends FrameworkRequest {
  readonly format: "ai-sdk"
  /** The language-model prompt, as JSON. */
  readonly prompt: ReadonlyArray<PromptMessage>
}

/** The render as the AI SDK prompt. @since 0.8.0 */
export const render: Format = ({ window, options, provider }) => {
  const all = Window.messages(window)
  const failed = (detail: string) => Either.left(new InvalidRequest({ provider, detail: `ai-sdk format: ${detail}` }))
  // Every window message in its AI SDK form, by id (one prompt message per message; names of tools
  // come from the whole window). JSON: a URL is its text.
  const converted = eachToLanguageModelMessage(all)
  if (Either.isLeft(converted)) return failed(converted.left.message)
  const json = JSON.parse(JSON.stringify(converted.right)) as ReadonlyArray<PromptMessage>
  const byId = new Map(all.map((message, index) => [message.id, json[index]]))
  const hints = new Map((options.cacheHints ?? []).map((hint) => [hint.messageId, hint]))
  const prompt: Array<PromptMessage> = []

  const push = (message: PromptMessage, ids: ReadonlyArray<string | undefined>) => {
    const hint = ids.flatMap((id) => (id === undefined ? [] : [hints.get(id)])).find((found) => found !== undefined)
    if (hint === undefined) {
      prompt.push(message)
      return
    }
    const cacheControl = hint.ttl === undefined ? { type: "ephemeral" } : { type: "ephemeral", ttl: hint.ttl }
    const anthropic = isObject(message.providerOptions?.anthropic) ? message.providerOptions.anthropic : {}
    prompt.push({
      ...message,
      providerOptions: { ...message.providerOptions, anthropic: { ...anthropic, cacheControl } }
    })
  }
  const optionsOf = (id: string | undefined): { providerOptions?: JsonObject } => {
    const options = id === undefined ? undefined : byId.get(id)?.providerOptions
    return options === undefined ? {} : { providerOptions: options }
  }
  const system = (piece: Piece, text: string) =>
    push({ role: "system", content: text, ...optionsOf(piece.messageId) }, [piece.messageId])

  const sections = fromWindow(window, options.systemPrompt)
  for (const piece of sections.identity) system(piece, piece.text)
  for (const piece of sections.stable) system(piece, piece.text)
  for (const piece of sections.injected) system(piece, wrapContext(piece.kind, piece.text))
  if (sections.state !== undefined) {
    prompt.push({ role: "user", content: [{ type: "text", text: sections.state.text }] })
  }
  for (const turn of sections.turns) {
    switch (turn._tag) {
      case "User":
      case "Assistant": {
        const message = byId.get(turn.messageId)
        if (message === undefined || !Array.isArray(message.content)) break
        const content = message.content.filter((part) => !approval(part))
        if (content.length > 0) push({ ...message, content }, [turn.messageId])
        break
      }
      case "Context": {
        const asUser = contextAsUser.has(provider)
        const text =
          turn.kind === "chat" && !asUser
            ? turn.text
            : wrapContext(turn.kind === "chat" ? turn.role : turn.kind, turn.text)
        push(
          asUser
            ? { role: "user", content: [{ type: "text", text }], ...optionsOf(turn.messageId) }
            : { role: "system", content: text, ...optionsOf(turn.messageId) },
          [turn.messageId]
        )
        break
      }
      case "Results": {
        const content = turn.results.flatMap(({ messageId, part }) => {
          const message = byId.get(messageId)
          const parts = Array.isArray(message?.content) ? message.content : []
          return parts.filter(
            (candidate) =>
              isObject(candidate) && candidate.type === "tool-result" && candidate.toolCallId === part.toolCallId
          )
        })
        const ids = turn.results.map((result) => result.messageId)
        push(
          { role: "tool", content, ...optionsOf(ids.find((id) => byId.get(id)?.providerOptions !== undefined)) },
          ids
        )
        break
      }
    }
  }
  const reminder = options.turnReminder
  if (reminder !== undefined && reminder.length > 0) {
    const at = prompt.map((message) => message.role).lastIndexOf("user")
    const target = prompt[at]
    const text = { type: "text", text: reminder }
    if (target === undefined || !Array.isArray(target.content)) {
      prompt.push({ role: "user", content: [text] })
    } else {
      prompt[at] = { ...target, content: [text, ...target.content] }
    }
  }
  if (prompt.length === 0) return failed("nothing to send")
  const request: AiSdkRequest = { format: "ai-sdk", prompt }
  return Either.right(request)
}

/** Whether a render is an `ai-sdk` request. @since 0.8.0 */
export const isAiSdkRequest = (request: unknown): request is AiSdkRequest =>
  typeof request === "object" &&
  request !== null &&
  "format" in request &&
  request.format === "ai-sdk" &&
  "prompt" in request &&
  Array.isArray(request.prompt)
