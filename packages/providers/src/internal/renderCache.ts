/**
 * The render cache of the Anthropic builder: messages are immutable, so a window whose history starts
 * with the messages of an earlier render of the same builder settings renders only what came after.
 * Per state (settings and first message) it keeps the history it rendered, the merged drafts, the
 * request messages, their JSON text and the SHA-256 state of the request body up to the stable prefix
 * (everything before the message that carries the conversation breakpoint), and the validation facts
 * of the messages it checked. A render then costs the new messages: their turns and drafts, their
 * validation, their JSON and the hash of the bytes after the kept prefix. The request is the same
 * object graph and the same bytes as a render from scratch (`anthropicRender.render`); anything the
 * incremental path cannot prove the same (a changed history prefix, a new task state, `thinking:
 * "current"`, server context, an invalid window) renders from scratch.
 */
import { Caches, Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import type { InvalidRequest } from "../InvalidRequest.js"
import { anthropicMessage, maxCacheBreakpoints } from "../RequestValidator.js"
import {
  alternate,
  assemble,
  type Draft,
  draftOf,
  nothingToSend,
  type Rendered,
  type Settings,
  stateDraft
} from "./anthropicRender.js"
import { add, counters } from "./renderCounters.js"
import * as requestBody from "./requestBody.js"
import { orderTurns, type Sections } from "./sections.js"
import type { AnthropicMessage } from "../ProviderRequest.js"

interface State {
  /** The history this state rendered (its messages, by identity). */
  readonly history: ReadonlyArray<Message.Message>
  /** The task state it rendered, text and tokens (a change renders from scratch). */
  readonly stateKey: string
  /** `alternate` of the state draft and the history drafts. */
  readonly merged: ReadonlyArray<Draft>
  /** Tool call ids made in the history (every one answered: the state was valid). */
  readonly calls: ReadonlySet<string>
  /** The request messages, validated. */
  readonly messages: ReadonlyArray<AnthropicMessage>
  /** tool_use ids of the validated messages. */
  readonly seenIds: Set<string>
}

// Request messages by draft: an unchanged draft maps to the same message (and so the same JSON text).
const messageOfDraft = Caches.weak<Draft, AnthropicMessage>("providers.renderCache.messageOfDraft")

const messageOf = (draft: Draft): AnthropicMessage => {
  const cached = messageOfDraft.get(draft)
  if (cached !== undefined) return cached
  const message: AnthropicMessage = { role: draft.role, content: draft.content }
  messageOfDraft.set(draft, message)
  return message
}

/** The SHA-256 of `JSON.stringify(request)` when a render cache rendered the request, else undefined. */
export const sha256Of = requestBody.sha256Of

const maxStates = 16
const states = Caches.lru<string, State>("providers.renderCache.states", maxStates)

const remember = (key: string, state: State): void => {
  states.set(key, state)
}

/** Forget every state (tests). */
export const clear = (): void => {
  states.clear()
  requestBody.clear()
}

/**
 * The state key: every render setting (so any option a builder adds, cache hints included, keys its
 * own state) but the reminder and the tools, which only the assembly reads, and the first message.
 */
const keyOf = (settings: Settings, history: ReadonlyArray<Message.Message>): string =>
  `${JSON.stringify({ ...settings, reminder: undefined, tools: undefined })}\u0000${history[0]?.id ?? ""}`

/**
 * The new messages `history[from..]` keep the window valid, given that `history[..from]` was (every
 * call there answered once, no orphan, no pending call): each result answers an earlier call of the
 * new messages, once; each new call is answered; only assistants call. Anything else: false, and the
 * caller validates the whole history for the exact error.
 */
export const validTail = (
  history: ReadonlyArray<Message.Message>,
  from: number,
  oldCalls: ReadonlySet<string>,
  calls: Set<string>
): boolean => {
  const open = new Set<string>()
  const answered = new Set<string>()
  for (let index = from; index < history.length; index++) {
    const message = history[index]
    if (message === undefined) return false
    for (const result of Message.toolResultsOf(message)) {
      const id = result.toolCallId
      if (oldCalls.has(id) || !open.has(id) || answered.has(id)) return false
      answered.add(id)
    }
    const made = Message.toolCallsOf(message)
    if (made.length > 0 && message.role !== "assistant") return false
    for (const call of made) {
      if (oldCalls.has(call.id) || open.has(call.id)) return false
      open.add(call.id)
      calls.add(call.id)
    }
  }
  for (const id of open) if (!answered.has(id)) return false
  return true
}

/**
 * Render `history` with `sections` (whose `turns` are ignored: this renders them), validated, reusing
 * what an earlier render of the same settings already did. `full` renders from scratch (it gives the
 * exact error of an invalid window); it runs when the incremental path cannot prove the same result.
 */
export const renderAnthropic = (
  sections: Omit<Sections, "turns">,
  history: ReadonlyArray<Message.Message>,
  settings: Settings,
  full: () => Either.Either<Rendered, InvalidRequest>
): Either.Either<Rendered, InvalidRequest> => {
  if ((settings.thinking ?? "all") !== "all") return full()
  const key = keyOf(settings, history)
  const previous = states.peek(key)
  const stateKey = sections.state === undefined ? "" : `${sections.state.tokens}:${sections.state.text}`
  let from = 0
  if (previous !== undefined && previous.stateKey === stateKey && previous.history.length <= history.length) {
    from = previous.history.length
    for (let index = 0; index < from; index++) {
      if (previous.history[index] !== history[index]) {
        from = -1
        break
      }
    }
  }
  const base = from > 0 && previous !== undefined ? previous : undefined
  if (base === undefined) from = 0
  // Validate the new messages (the whole history on a fresh start).
  const calls = new Set<string>(base?.calls ?? [])
  if (!validTail(history, from, base?.calls ?? new Set(), calls)) return full()
  if (base === undefined) add(counters.fullRenders)
  // Render the new turns and merge them onto the old drafts' last one.
  const fresh: Array<Draft> = []
  if (base === undefined) {
    const state = stateDraft({ ...sections, turns: [] })
    if (state !== undefined) fresh.push(state)
  }
  for (const turn of orderTurns(from === 0 ? history : history.slice(from))) {
    add(counters.turnsRendered)
    const draft = draftOf(turn, true)
    if (Either.isLeft(draft)) return full()
    fresh.push(draft.right)
  }
  const kept = base?.merged ?? []
  const last = kept[kept.length - 1]
  const merged = last === undefined ? alternate(fresh) : [...kept.slice(0, -1), ...alternate([last, ...fresh])]
  const { request, breakpoints, tail } = assemble({ ...sections, turns: [] }, merged, settings, messageOf)
  if (request.messages.length === 0) return Either.left(nothingToSend())
  // Validate the request: global rules, then only the messages whose neighbourhood changed.
  const messages = request.messages
  let same = 0
  const oldMessages = base?.messages ?? []
  while (same < oldMessages.length && same < messages.length && oldMessages[same] === messages[same]) same++
  if (request.thinking !== undefined) {
    const budget = request.thinking.budget_tokens
    if (!Number.isInteger(budget) || budget < 1024 || budget >= request.max_tokens) return full()
  }
  const recheck = Math.max(0, same - 1)
  const seenIds = new Set<string>()
  if (base !== undefined) {
    // Keep the ids of the messages that stay validated; forget those being checked again.
    for (const id of base.seenIds) seenIds.add(id)
    for (let index = recheck; index < oldMessages.length; index++) {
      for (const block of oldMessages[index]?.content ?? []) if (block.type === "tool_use") seenIds.delete(block.id)
    }
  }
  let markers = 0
  for (const block of request.system ?? []) if (block.cache_control !== undefined) markers++
  for (const tool of request.tools ?? []) if (tool.cache_control !== undefined) markers++
  if (tail >= 0 && messages[tail]?.content.some((block) => block.cache_control !== undefined)) markers++
  if (markers > maxCacheBreakpoints) return full()
  for (let index = recheck; index < messages.length; index++) {
    add(counters.messagesValidated)
    if (anthropicMessage(messages, index, seenIds) !== undefined) return full()
  }
  // Hash and body: the kept prefix state, then the messages up to the new stable prefix (everything
  // before the message that carries the conversation breakpoint), the rest on demand.
  requestBody.register(`anthropic\u0000${key}`, request, "messages", messages, Math.max(0, tail))
  remember(key, {
    history,
    stateKey,
    merged,
    calls,
    messages,
    seenIds
  })
  return Either.right({ request, breakpoints })
}
