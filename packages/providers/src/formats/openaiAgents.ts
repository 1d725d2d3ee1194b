/**
 * The `openai-agents` framework format (see `FrameworkFormat`): a render as what an OpenAI Agents SDK
 * model call gets from a `callModelInputFilter` — `{ format: "openai-agents", instructions?, input }`,
 * `instructions` the agent's system prompt (the window's identity partition) and `input` the
 * `AgentInputItem`s, as plain JSON.
 *
 * The provider builder has rendered (and validated) the same window; this format walks the window in
 * the same slots: identity → `instructions`; stable and injected knowledge → `system` message items
 * (injected context in its `<context kind="…">` wrapper, as every builder sends it); task state and
 * signals → a user item; history in window order, each message as the item it was made from
 * (`toAgentItems`: exactly as the session was given it, or with the fields ctxlog changed — a cut
 * or pruned tool output), summaries and seams as `system` items in their wrapper; the turn reminder
 * before the last user item's text. The SDK's model converts the items further into its provider's
 * HTTP body (the Responses `input`); that step is the SDK's.
 * @since 0.8.0
 */
import { Message, Window } from "@ctxlog/core"
import * as Either from "effect/Either"
import { type AgentItem, toAgentItems } from "../adapters/openai.js"
import type { Format, FrameworkRequest } from "../FrameworkFormat.js"
import { InvalidRequest } from "../InvalidRequest.js"
import { slotsOf } from "../internal/sections.js"

/** The request of the `openai-agents` format: what the SDK's model call gets. @since 0.8.0 */
export interface OpenAIAgentsRequest extends FrameworkRequest {
  readonly format: "openai-agents"
  /** The system prompt (`ModelRequest.systemInstructions`); absent when the window has none. */
  readonly instructions?: string
  /** The input items (`ModelRequest.input`). */
  readonly input: ReadonlyArray<AgentItem>
}

const system = (content: string): AgentItem => ({ role: "system", content })

/** The render as the framework's request. @since 0.8.0 */
export const render: Format = ({ window, options, provider }) => {
  const slots = slotsOf(window, options.systemPrompt)
  const identity = slots.identity.map((piece) => piece.text).join("\n\n")
  const input: Array<AgentItem> = []
  const stable = slots.stable.map((piece) => piece.text).join("\n\n")
  if (stable.length > 0) input.push(system(stable))
  const injected = slots.injected.map((piece) => Window.renderContext(piece.kind, piece.text)).join("\n\n")
  if (injected.length > 0) input.push(system(injected))
  if (slots.state !== undefined) input.push({ role: "user", content: slots.state.text })
  for (const [index, message] of window.history.entries()) {
    if (message.kind !== "chat") {
      const text = Message.textOf(message)
      if (text.length > 0) input.push(system(Window.renderContext(message.kind, text)))
      continue
    }
    if (message.role === "system") {
      const text = Message.textOf(message)
      if (text.length > 0) input.push(system(text))
      continue
    }
    const items = toAgentItems([message])
    if (Either.isLeft(items)) {
      return Either.left(new InvalidRequest({ provider, detail: `history[${index}]: ${items.left.message}` }))
    }
    input.push(...items.right)
  }
  const reminder = options.turnReminder
  if (reminder !== undefined && reminder.length > 0) {
    const at = input.findLastIndex((item) => (item.type ?? "message") === "message" && item.role === "user")
    const target = input[at]
    if (target === undefined) input.push({ role: "user", content: reminder })
    else
      input[at] = {
        ...target,
        content:
          typeof target.content === "string"
            ? `${reminder}\n\n${target.content}`
            : [{ type: "input_text", text: reminder }, ...(Array.isArray(target.content) ? target.content : [])]
      }
  }
  const request: OpenAIAgentsRequest = {
    format: "openai-agents",
    ...(identity.length === 0 ? {} : { instructions: identity }),
    input
  }
  return Either.right(request)
}
