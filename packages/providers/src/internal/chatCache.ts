/**
 * The render cache of the chat-format builders (OpenAI Chat Completions, OpenAI Responses, Ollama, the
 * default builder), on the same design as the Anthropic one (`renderCache.ts`): messages are immutable,
 * so a window whose history starts with the messages of an earlier render of the same builder and
 * render options renders only what came after. Per state (builder, every render option but the reminder
 * and the tools, first history message) it keeps the history it rendered (by identity), the rendered
 * history items, the tool calls made there and the lead items (system texts and task state). A render
 * then costs the new messages' turns; the request is assembled from the kept items by the same
 * function as a render from scratch, validated, and its body and hash come from `requestBody` (the kept
 * hash state of the unchanged prefix, copied). Anything the cache cannot prove the same (a changed
 * history prefix, a new result answering an old call, an invalid window) renders from scratch.
 */
import { Caches, type Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import type { InvalidRequest } from "../InvalidRequest.js"
import * as RequestValidator from "../RequestValidator.js"
import * as chatRender from "./chatRender.js"
import { validTail } from "./renderCache.js"
import { add, counters } from "./renderCounters.js"
import * as requestBody from "./requestBody.js"
import { orderTurns, type Sections, type Turn } from "./sections.js"
import type { ChatCompletionsRequest, ChatMessage, ResponsesInputItem, ResponsesRequest } from "../ProviderRequest.js"

interface State<Item> {
  /** The history this state rendered (its messages, by identity). */
  readonly history: ReadonlyArray<Message.Message>
  /** The rendered history items, in order (no reminder). */
  readonly items: ReadonlyArray<Item>
  /** Tool call ids made in the history (every one answered: the state was valid). */
  readonly calls: ReadonlySet<string>
  /** The lead items and their text (the same text keeps the same objects, so the hashed prefix holds). */
  readonly leadText: string
  readonly lead: ReadonlyArray<Item>
}

const maxStates = 16
// Each format's states: the one LRU (`Lru`, through the cache layer), read without refreshing (`peek`), the newest set last.
const chatStates = Caches.lru<string, State<ChatMessage>>("providers.chatCache.chatStates", maxStates)
const responsesStates = Caches.lru<string, State<ResponsesInputItem>>("providers.chatCache.responsesStates", maxStates)

/** Forget every state (tests). */
export const clear = (): void => {
  chatStates.clear()
  responsesStates.clear()
}

/** How one chat format renders and assembles. */
interface Format<Item extends object, Request extends object> {
  /** The request field that holds the items. */
  readonly field: string
  readonly lead: (sections: Omit<Sections, "turns">, settings: chatRender.Settings) => ReadonlyArray<Item>
  readonly turn: (
    provider: string,
    turn: Turn,
    settings: chatRender.Settings
  ) => Either.Either<ReadonlyArray<Item>, InvalidRequest>
  readonly assemble: (
    lead: ReadonlyArray<Item>,
    history: ReadonlyArray<Item>,
    settings: chatRender.Settings
  ) => { readonly request: Request; readonly stable: number }
  readonly validate: (provider: string, request: Request) => Either.Either<void, InvalidRequest>
  readonly itemsOf: (request: Request) => ReadonlyArray<Item>
}

/** A cached render for one format, with its own states. */
const cacheOf = <Item extends object, Request extends object>(
  format: Format<Item, Request>,
  states: Caches.Bounded<string, State<Item>>
) => {
  return (
    name: string,
    slots: Omit<Sections, "turns">,
    history: ReadonlyArray<Message.Message>,
    settings: chatRender.Settings,
    full: () => Either.Either<Request, InvalidRequest>
  ): Either.Either<Request, InvalidRequest> => renderCached(states, name, format, slots, history, settings, full)
}

const renderCached = <Item extends object, Request extends object>(
  states: Caches.Bounded<string, State<Item>>,
  name: string,
  format: Format<Item, Request>,
  slots: Omit<Sections, "turns">,
  history: ReadonlyArray<Message.Message>,
  settings: chatRender.Settings,
  full: () => Either.Either<Request, InvalidRequest>
): Either.Either<Request, InvalidRequest> => {
  const key = `${format.field}\u0000${name}\u0000${JSON.stringify({ ...settings, reminder: undefined, tools: undefined })}\u0000${history[0]?.id ?? ""}`
  const previous = states.peek(key)
  let from = 0
  if (previous !== undefined && previous.history.length <= history.length) {
    from = previous.history.length
    for (let index = 0; index < from; index++) {
      if (previous.history[index] !== history[index]) {
        from = -1
        break
      }
    }
  }
  const base = from > 0 ? previous : undefined
  if (base === undefined) from = 0
  const calls = new Set<string>(base?.calls ?? [])
  if (!validTail(history, from, base?.calls ?? new Set(), calls)) return full()
  if (base === undefined) add(counters.fullRenders)
  const items: Array<Item> = base === undefined ? [] : [...base.items]
  for (const turn of orderTurns(from === 0 ? history : history.slice(from))) {
    const rendered = format.turn(name, turn, settings)
    if (Either.isLeft(rendered)) return full()
    for (const item of rendered.right) items.push(item)
  }
  const fresh = format.lead(slots, settings)
  const leadText = JSON.stringify(fresh)
  const lead = base !== undefined && base.leadText === leadText ? base.lead : fresh
  const { request, stable } = format.assemble(lead, items, settings)
  if (Either.isLeft(format.validate(name, request))) return full()
  requestBody.register(key, request, format.field, format.itemsOf(request), stable)
  states.set(key, { history, items, calls, leadText, lead })
  return Either.right(request)
}

const chatCache = cacheOf<ChatMessage, ChatCompletionsRequest>(
  {
    field: "messages",
    lead: chatRender.chatLead,
    turn: (provider, turn, options) => chatRender.chatTurn(provider, turn, options),
    assemble: chatRender.assembleChat,
    validate: (provider, request) => RequestValidator.chatCompletions(request, provider),
    itemsOf: (request) => request.messages
  },
  chatStates
)

const responsesCache = cacheOf<ResponsesInputItem, ResponsesRequest>(
  {
    field: "input",
    lead: chatRender.responsesLead,
    turn: (_provider, turn, options) => chatRender.responsesTurn(turn, options),
    assemble: chatRender.assembleResponses,
    validate: (_provider, request) => RequestValidator.responses(request),
    itemsOf: (request) => request.input
  },
  responsesStates
)

/**
 * A Chat Completions request for `history` with `slots`, validated, rendering only the messages an
 * earlier render of the same builder and options did not. `full` renders from scratch.
 */
export const renderChat = (
  provider: string,
  slots: Omit<Sections, "turns">,
  history: ReadonlyArray<Message.Message>,
  settings: chatRender.Settings,
  full: () => Either.Either<ChatCompletionsRequest, InvalidRequest>
): Either.Either<ChatCompletionsRequest, InvalidRequest> => chatCache(provider, slots, history, settings, full)

/** The same for a Responses request. */
export const renderResponses = (
  slots: Omit<Sections, "turns">,
  history: ReadonlyArray<Message.Message>,
  settings: chatRender.Settings,
  full: () => Either.Either<ResponsesRequest, InvalidRequest>
): Either.Either<ResponsesRequest, InvalidRequest> => responsesCache("openai-responses", slots, history, settings, full)
