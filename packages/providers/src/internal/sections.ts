/**
 * The provider-neutral shape every builder renders from: the window cut into its API slots, with
 * history put in "tool round" order (each call's results right after the message that made it).
 */
import { type LanguageModel, Message, TokenCounter, Window } from "@ctxlog/core"

/** A piece of text with the tokens the log counted for it. */
export interface Piece {
  readonly text: string
  readonly tokens: number
  /** The window message it came from (system and knowledge pieces), to place a caller's cache hint. */
  readonly messageId?: string
}

/** One history step, in render order. */
export type Turn =
  | {
      readonly _tag: "User"
      readonly messageId: string
      readonly text: string
      /** Text, images and documents in message order (only text: `[text]`). */
      readonly content: ReadonlyArray<UserContent>
      /** The message's own parts (to name a part a render refuses). */
      readonly parts: ReadonlyArray<Message.Part>
      readonly tokens: number
    }
  | {
      readonly _tag: "Context"
      readonly messageId: string
      readonly kind: Message.MessageKind
      readonly role: Message.Role
      readonly text: string
      readonly tokens: number
    }
  | {
      readonly _tag: "Assistant"
      readonly messageId: string
      readonly text: string
      readonly calls: ReadonlyArray<Message.ToolCallPart>
      /** The message's reasoning parts; each render keeps what its API accepts. */
      readonly reasoning: ReadonlyArray<Message.ReasoningPart>
      /**
       * The message's parts in order: renders that keep the order of text, citations and
       * provider-executed tool blocks (Anthropic) read them; others refuse server parts they cannot send.
       */
      readonly parts: ReadonlyArray<Message.Part>
      readonly tokens: number
    }
  | {
      readonly _tag: "Results"
      readonly results: ReadonlyArray<{ readonly messageId: string; readonly part: Message.ToolResultPart }>
      readonly tokens: number
    }

/** What a user turn holds, in order. */
export type UserContent = Message.TextPart | Message.ImagePart | Message.DocumentPart

const userContentOf = (message: Message.Message, text: string): ReadonlyArray<UserContent> => {
  const media = Message.mediaOf(message)
  if (media.length === 0) return [Message.text(text)]
  return message.parts.filter(
    (part): part is UserContent =>
      (part.type === "text" && part.text.length > 0) || part.type === "image" || part.type === "document"
  )
}

/** A data URL for base64 media. */
export const dataUrlOf = (source: Message.MediaSource): string =>
  source.type === "url" ? source.url : `data:${source.mediaType};base64,${source.data}`

/** A short text standing for media a provider cannot take. */
export const mediaStub = (part: Message.ImagePart | Message.DocumentPart): string => {
  const where = part.source.type === "url" ? part.source.url : part.source.mediaType
  return part.type === "image"
    ? `[image: ${where}]`
    : `[document${part.title === undefined ? "" : ` "${part.title}"`}: ${where}]`
}

/** A knowledge message: stable (`chat`) or injected (any other kind). */
export interface KnowledgePiece extends Piece {
  readonly kind: Message.MessageKind
}

/** The slots of a request. */
export interface Sections {
  readonly identity: ReadonlyArray<Piece>
  readonly stable: ReadonlyArray<KnowledgePiece>
  readonly injected: ReadonlyArray<KnowledgePiece>
  /** Task state and signals, rendered as the first user turn. */
  readonly state: Piece | undefined
  readonly turns: ReadonlyArray<Turn>
}

/** A rough token estimate for text the log did not count (tool schemas, an override prompt): core's one estimate. */
export const roughTokens = (text: string): number => TokenCounter.estimate(text)

/** Characters per token of the rough count: a token limit times this is a character limit. */
export const charsPerToken = TokenCounter.estimateCharsPerToken

/**
 * Wrap injected context so the model can tell what it is: core's `Window.renderContext`, the form the
 * window counts (`ContextService.prepare`), so every builder sends what was counted.
 */
export const wrapContext: (kind: string, text: string) => string = Window.renderContext

/** Task state and signals as core renders and counts them (`Window.renderState`). */
const renderState = (window: Window.Window): Piece | undefined => {
  const text = Window.renderState(window)
  return text === undefined ? undefined : { text, tokens: window.tokens.taskState + window.tokens.signals }
}

/**
 * Put history in tool-round order: an assistant message is followed by the results of its calls
 * (in call order), wherever they sat; other messages keep their place. Results that appear before
 * any call with their id stay where they are (the validator reports them).
 */
export const orderTurns = (history: ReadonlyArray<Message.Message>): ReadonlyArray<Turn> => {
  const answers = new Map<string, { readonly messageId: string; readonly part: Message.ToolResultPart }>()
  const called = new Set<string>()
  for (const message of history) {
    for (const result of Message.toolResultsOf(message)) {
      if (called.has(result.toolCallId) && !answers.has(result.toolCallId)) {
        answers.set(result.toolCallId, { messageId: message.id, part: result })
      }
    }
    for (const call of Message.toolCallsOf(message)) called.add(call.id)
  }
  const tokensOf = new Map(history.map((message) => [message.id, message.tokens]))
  const placed = new Set<string>()
  const turns: Array<Turn> = []
  for (const message of history) {
    const text = Message.textOf(message)
    const calls = Message.toolCallsOf(message)
    if (message.role === "assistant" && message.kind === "chat") {
      turns.push({
        _tag: "Assistant",
        messageId: message.id,
        text,
        calls,
        reasoning: Message.reasoningOf(message),
        parts: message.parts,
        tokens: message.tokens
      })
      const results = calls.flatMap((call) => {
        const answer = answers.get(call.id)
        return answer === undefined ? [] : [answer]
      })
      if (results.length > 0) {
        for (const result of results) placed.add(result.part.toolCallId)
        const ids = new Set(results.map((result) => result.messageId))
        const tokens = [...ids].reduce((total, id) => total + (tokensOf.get(id) ?? 0), 0)
        turns.push({ _tag: "Results", results, tokens })
      }
      continue
    }
    const leftover = Message.toolResultsOf(message)
      .filter((result) => !placed.has(result.toolCallId))
      .map((part) => ({ messageId: message.id, part }))
    if (leftover.length > 0) turns.push({ _tag: "Results", results: leftover, tokens: message.tokens })
    const isContext = message.kind !== "chat" || message.role === "system"
    const media = isContext ? [] : Message.mediaOf(message)
    if (text.length === 0 && media.length === 0) continue
    const tokens = leftover.length > 0 ? 0 : message.tokens
    if (isContext) {
      turns.push({ _tag: "Context", messageId: message.id, kind: message.kind, role: message.role, text, tokens })
    } else {
      turns.push({
        _tag: "User",
        messageId: message.id,
        text,
        content: userContentOf(message, text),
        parts: message.parts,
        tokens
      })
    }
  }
  return turns
}

/** The slots of a window other than its history turns. `systemPrompt` replaces the identity partition. */
export const slotsOf = (window: Window.Window, systemPrompt: string | undefined): Omit<Sections, "turns"> => ({
  identity:
    systemPrompt !== undefined
      ? [{ text: systemPrompt, tokens: roughTokens(systemPrompt) }]
      : window.system
          .map((message) => ({ text: Message.textOf(message), tokens: message.tokens, messageId: message.id }))
          .filter((piece) => piece.text.length > 0),
  stable: window.knowledge
    .filter((message) => message.kind === "chat")
    .map((message) => ({
      text: Message.textOf(message),
      tokens: message.tokens,
      kind: message.kind,
      messageId: message.id
    }))
    .filter((piece) => piece.text.length > 0),
  injected: window.knowledge
    .filter((message) => message.kind !== "chat")
    .map((message) => ({
      text: Message.textOf(message),
      tokens: message.tokens,
      kind: message.kind,
      messageId: message.id
    }))
    .filter((piece) => piece.text.length > 0),
  state: renderState(window)
})

/** Cut a window into sections. `systemPrompt` replaces the identity partition for this render. */
export const fromWindow = (window: Window.Window, systemPrompt: string | undefined): Sections => ({
  ...slotsOf(window, systemPrompt),
  turns: orderTurns(window.history)
})

/** The messages of a neutral request, as window messages with synthetic ids and rough token counts. */
export const messagesOfRequest = (request: LanguageModel.ModelRequest): ReadonlyArray<Message.Message> =>
  request.messages.map((message, index) => ({
    id: `request-message-${index + 1}`,
    role: message.role,
    kind: "chat",
    parts: message.parts,
    tokens: roughTokens(Message.tokenTextOf(message))
  }))

/** Cut a provider-neutral request into sections (no knowledge, no task state). */
export const fromModelRequest = (request: LanguageModel.ModelRequest): Sections => ({
  identity:
    request.system === undefined || request.system.length === 0
      ? []
      : [{ text: request.system, tokens: roughTokens(request.system) }],
  stable: [],
  injected: [],
  state: undefined,
  turns: orderTurns(messagesOfRequest(request))
})
