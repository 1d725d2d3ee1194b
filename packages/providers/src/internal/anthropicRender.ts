/**
 * Sections → Anthropic Messages request. Identity and knowledge become system blocks, task state and
 * signals the first user turn, history `tool_use` / `tool_result` blocks with strict role
 * alternation; up to four `cache_control` breakpoints go where the prefix is stable.
 */
import { type LanguageModel, Message, type WindowEvent } from "@ctxlog/core"
import * as Either from "effect/Either"
import { type InvalidRequest, make as invalid } from "../InvalidRequest.js"
import { cacheControlCount, anthropic as validateAnthropic, maxCacheBreakpoints } from "../RequestValidator.js"
import { add, counters } from "./renderCounters.js"
import { roughTokens, type Sections, type Turn, type UserContent, wrapContext } from "./sections.js"
import type {
  AnthropicContentBlock,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicRequest,
  AnthropicSource,
  AnthropicTextBlock,
  AnthropicThinkingBlock,
  AnthropicRedactedThinkingBlock,
  AnthropicTool,
  AnthropicToolResultBlock,
  CacheControl,
  JsonObject
} from "../ProviderRequest.js"

export interface Settings {
  readonly model: string
  readonly maxTokens: number
  readonly temperature?: number | undefined
  readonly tools?: ReadonlyArray<LanguageModel.ToolSpec> | undefined
  readonly reminder?: string | undefined
  /** A breakpoint whose cached prefix is shorter than this is not placed (the API would ignore it). */
  readonly minCacheableTokens: number
  readonly cacheTtl?: "5m" | "1h" | undefined
  /** Place breakpoints at all. */
  readonly cache: boolean
  /**
   * Which assistant turns keep their signed thinking blocks: `all` (default; every turn renders the
   * same bytes as it ages, so cached prefixes hold) or `current` (only the turn whose tool calls the
   * request answers, which the API requires; it ignores older ones).
   */
  readonly thinking?: "all" | "current" | undefined
  /** Enable extended thinking with this many budget tokens (then no `temperature` is sent). */
  readonly thinkingBudget?: number | undefined
  /**
   * The caller's breakpoints (`BuildOptions.cacheHints`): when given, the last block of each hinted
   * message is marked and the builder places none of its own. Not placed when `cache` is false.
   */
  readonly cacheHints?: ReadonlyArray<WindowEvent.CacheHint> | undefined
}

/** The caller's hints by message id (the last hint of a message wins), or undefined when none are placed. */
export type HintMap = ReadonlyMap<string, CacheControl>

/** The hints a render places: none without `cache` or without hints. */
export const hintsOf = (settings: Settings): HintMap | undefined => {
  if (!settings.cache || settings.cacheHints === undefined || settings.cacheHints.length === 0) return undefined
  return new Map(
    settings.cacheHints.map((hint) => [
      hint.messageId,
      hint.ttl === undefined ? { type: "ephemeral" } : { type: "ephemeral", ttl: hint.ttl }
    ])
  )
}

export interface Rendered {
  readonly request: AnthropicRequest
  readonly breakpoints: number
}

/** Placeholder first user turn when history starts with the assistant (the API wants a user first). */
export const continuationText = "(conversation continues)"

const isJsonObject = (value: Message.JsonValue): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export interface Draft {
  readonly role: "user" | "assistant"
  readonly content: ReadonlyArray<AnthropicContentBlock>
  /** Tokens of this message as the log counted them. */
  readonly tokens: number
  /** Whether any of it came from history (task state alone does not). */
  readonly fromHistory: boolean
}

// The API rejects text blocks that are empty or only whitespace.
const text = (value: string): ReadonlyArray<AnthropicTextBlock> =>
  value.trim().length === 0 ? [] : [{ type: "text", text: value }]

/** A final assistant message is a prefill, and a prefill may not end with whitespace. */
const trimPrefill = (drafts: ReadonlyArray<Draft>): ReadonlyArray<Draft> => {
  const last = drafts[drafts.length - 1]
  const block = last?.content[last.content.length - 1]
  if (last === undefined || last.role !== "assistant" || block?.type !== "text") return drafts
  const trimmed: AnthropicTextBlock = { ...block, text: block.text.trimEnd() }
  return [...drafts.slice(0, -1), { ...last, content: [...last.content.slice(0, -1), trimmed] }]
}

/** A reasoning part as the API gave it: thinking with its signature, or redacted data; else nothing. */
const thinkingOf = (
  part: Message.ReasoningPart
): ReadonlyArray<AnthropicThinkingBlock | AnthropicRedactedThinkingBlock> => {
  if (part.redactedData !== undefined && part.redactedData.length > 0) {
    return [{ type: "redacted_thinking", data: part.redactedData }]
  }
  if (part.signature !== undefined && part.signature.length > 0) {
    return [{ type: "thinking", thinking: part.text, signature: part.signature }]
  }
  return []
}

const decodeText = (data: string): string | undefined => {
  try {
    const binary = atob(data)
    return new TextDecoder().decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)))
  } catch {
    return undefined
  }
}

/** The image media types the Messages API takes. */
export const imageMediaTypes: ReadonlyArray<string> = ["image/jpeg", "image/png", "image/gif", "image/webp"]

/**
 * An image or a document as an Anthropic block, or why the API would refuse it (it answers 400 for
 * an image that is not JPEG, PNG, GIF or WebP, and for a base64 document that is not a PDF).
 * Plain-text documents go as text sources (their data is the text itself, not base64); a document
 * keeps its title.
 */
export const mediaBlock = (
  part: Message.ImagePart | Message.DocumentPart
): Either.Either<AnthropicImageBlock | AnthropicDocumentBlock, string> => {
  const source = part.source
  if (part.type === "image") {
    if (source.type === "base64" && !imageMediaTypes.includes(source.mediaType)) {
      return Either.left(`image media type ${source.mediaType} is not one of ${imageMediaTypes.join(", ")}`)
    }
    const block: AnthropicImageBlock = {
      type: "image",
      source:
        source.type === "url"
          ? { type: "url", url: source.url }
          : { type: "base64", media_type: source.mediaType, data: source.data }
    }
    return Either.right(block)
  }
  let documentSource: AnthropicSource
  if (source.type === "url") documentSource = { type: "url", url: source.url }
  else if (source.mediaType === "application/pdf") {
    documentSource = { type: "base64", media_type: "application/pdf", data: source.data }
  } else if (source.mediaType.startsWith("text/")) {
    const plain = decodeText(source.data)
    if (plain === undefined) return Either.left(`document data of type ${source.mediaType} is not base64 text`)
    documentSource = { type: "text", media_type: "text/plain", data: plain }
  } else {
    return Either.left(`document media type ${source.mediaType} is not application/pdf or text/plain`)
  }
  const document: AnthropicDocumentBlock = {
    type: "document",
    source: documentSource,
    // A request body: absent stays absent (the golden tests compare it whole).
    ...(part.title === undefined ? {} : { title: part.title })
  }
  return Either.right(document)
}

const userBlocks = (
  messageId: string,
  parts: ReadonlyArray<Message.Part>,
  content: ReadonlyArray<UserContent>
): Either.Either<ReadonlyArray<AnthropicContentBlock>, InvalidRequest> => {
  const blocks: Array<AnthropicContentBlock> = []
  for (const part of content) {
    if (part.type === "text") {
      blocks.push(...text(part.text))
      continue
    }
    const block = mediaBlock(part)
    if (Either.isLeft(block)) {
      return Either.left(invalid("anthropic", block.left, { messageId, partIndex: parts.indexOf(part) }))
    }
    blocks.push(block.right)
  }
  return Either.right(blocks)
}

/** A tool result's `content`: its text, or text, image and document blocks when it is made of parts. */
export const toolResultBlockContent = (
  part: Message.ToolResultPart
): Either.Either<AnthropicToolResultBlock["content"], string> => {
  const content = Message.toolResultContentOf(part)
  const only = content[0]
  if (content.length === 1 && only?.type === "text" && only.citations === undefined) return Either.right(only.text)
  const blocks: Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> = []
  for (const [index, inner] of content.entries()) {
    if (inner.type === "text") {
      if (inner.text.trim().length > 0) blocks.push(textBlock(inner))
      continue
    }
    const block = mediaBlock(inner)
    if (Either.isLeft(block)) return Either.left(`tool result part ${index}: ${block.left}`)
    blocks.push(block.right)
  }
  return Either.right(blocks)
}

/** A text part as a text block, its citations kept. */
const textBlock = (part: Message.TextPart): AnthropicTextBlock =>
  part.citations === undefined || part.citations.length === 0
    ? { type: "text", text: part.text }
    : { type: "text", text: part.text, citations: part.citations }

/** Whether an assistant message needs its parts rendered in order (citations, server tools). */
const needsOrderedParts = (parts: ReadonlyArray<Message.Part>): boolean =>
  parts.some(
    (part) =>
      part.type === "server_tool_call" ||
      part.type === "server_tool_result" ||
      (part.type === "text" && part.citations !== undefined && part.citations.length > 0)
  )

/**
 * An assistant message's blocks in part order: text (with citations), `tool_use`, and the
 * provider-executed `server_tool_use` / `*_tool_result` blocks, which go back only to Anthropic.
 */
export const orderedAssistantBlocks = (
  messageId: string,
  parts: ReadonlyArray<Message.Part>
): Either.Either<ReadonlyArray<AnthropicContentBlock>, InvalidRequest> => {
  const blocks: Array<AnthropicContentBlock> = []
  for (const [partIndex, part] of parts.entries()) {
    switch (part.type) {
      case "text":
        if (part.text.trim().length > 0) blocks.push(textBlock(part))
        break
      case "tool_call":
        if (!isJsonObject(part.input)) {
          return Either.left(
            invalid("anthropic", "tool_use input must be a JSON object", { messageId, toolCallId: part.id, partIndex })
          )
        }
        blocks.push({ type: "tool_use", id: part.id, name: part.name, input: part.input })
        break
      case "server_tool_call":
      case "server_tool_result": {
        if (part.provider !== "anthropic") {
          return Either.left(
            invalid("anthropic", `a ${part.type} part ran by ${part.provider} goes back only to ${part.provider}`, {
              messageId,
              partIndex
            })
          )
        }
        if (part.type === "server_tool_call") {
          blocks.push({ type: "server_tool_use", id: part.id, name: part.name, input: part.input })
        } else if (!part.resultType.endsWith("_tool_result")) {
          return Either.left(
            invalid("anthropic", `server tool result type ${part.resultType} is not an Anthropic block type`, {
              messageId,
              partIndex
            })
          )
        } else {
          blocks.push({
            type: part.resultType as `${string}_tool_result`,
            tool_use_id: part.toolCallId,
            content: part.content
          })
        }
        break
      }
      default:
        break
    }
  }
  return Either.right(blocks)
}

const isThinking = (block: AnthropicContentBlock): boolean =>
  block.type === "thinking" || block.type === "redacted_thinking"

/** A draft with the caller's hints placed: the last block each hinted message renders to is marked. */
const hinted = (turn: Turn, draft: Draft, hints: HintMap | undefined): Draft => {
  if (hints === undefined || draft.content.length === 0) return draft
  if (turn._tag !== "Results") {
    const control = hints.get(turn.messageId)
    return control === undefined ? draft : { ...draft, content: markLast(draft.content, control) }
  }
  // One tool_result block per result, in order: mark the last block of each hinted message.
  const lastOf = new Map<string, number>()
  for (const [index, { messageId }] of turn.results.entries()) lastOf.set(messageId, index)
  const content = draft.content.map((block, index) => {
    const messageId = turn.results[index]?.messageId
    const control = messageId === undefined ? undefined : hints.get(messageId)
    return control !== undefined && lastOf.get(messageId ?? "") === index ? mark(block, control) : block
  })
  return { ...draft, content }
}

export const draftOf = (turn: Turn, keepThinking: boolean, hints?: HintMap): Either.Either<Draft, InvalidRequest> =>
  Either.map(plainDraftOf(turn, keepThinking), (draft) => hinted(turn, draft, hints))

const plainDraftOf = (turn: Turn, keepThinking: boolean): Either.Either<Draft, InvalidRequest> => {
  switch (turn._tag) {
    case "User":
      return Either.map(userBlocks(turn.messageId, turn.parts, turn.content), (content) => ({
        role: "user" as const,
        content,
        tokens: turn.tokens,
        fromHistory: true
      }))
    case "Context":
      return Either.right({
        role: "user",
        content: text(wrapContext(turn.kind === "chat" ? turn.role : turn.kind, turn.text)),
        tokens: turn.tokens,
        fromHistory: true
      })
    case "Results": {
      const content: Array<AnthropicContentBlock> = []
      for (const { messageId, part } of turn.results) {
        const result = toolResultBlockContent(part)
        if (Either.isLeft(result)) {
          return Either.left(invalid("anthropic", result.left, { messageId, toolCallId: part.toolCallId }))
        }
        content.push({
          type: "tool_result",
          tool_use_id: part.toolCallId,
          content: result.right,
          ...(part.isError ? { is_error: true } : {})
        })
      }
      return Either.right({ role: "user", content, tokens: turn.tokens, fromHistory: true })
    }
    case "Assistant": {
      if (needsOrderedParts(turn.parts)) {
        return Either.map(orderedAssistantBlocks(turn.messageId, turn.parts), (blocks) => ({
          role: "assistant" as const,
          content: [...(keepThinking && blocks.length > 0 ? turn.reasoning.flatMap(thinkingOf) : []), ...blocks],
          tokens: turn.tokens,
          fromHistory: true
        }))
      }
      const blocks: Array<AnthropicContentBlock> = [...text(turn.text)]
      for (const call of turn.calls) {
        if (!isJsonObject(call.input)) {
          return Either.left(
            invalid("anthropic", "tool_use input must be a JSON object", {
              messageId: turn.messageId,
              toolCallId: call.id
            })
          )
        }
        blocks.push({ type: "tool_use", id: call.id, name: call.name, input: call.input })
      }
      // Thinking leads the turn it belongs to; a turn with nothing else is not sent at all.
      const thinking = keepThinking && blocks.length > 0 ? turn.reasoning.flatMap(thinkingOf) : []
      return Either.right({
        role: "assistant",
        content: [...thinking, ...blocks],
        tokens: turn.tokens,
        fromHistory: true
      })
    }
  }
}

/** Merge same-role neighbours; in user messages tool results go first (the API requires it). */
export const alternate = (drafts: ReadonlyArray<Draft>): ReadonlyArray<Draft> => {
  const merged: Array<Draft> = []
  for (const draft of drafts) {
    if (draft.content.length === 0) continue
    const last = merged[merged.length - 1]
    if (last !== undefined && last.role === draft.role) {
      merged[merged.length - 1] = {
        role: last.role,
        content: [...last.content, ...draft.content],
        tokens: last.tokens + draft.tokens,
        fromHistory: last.fromHistory || draft.fromHistory
      }
    } else {
      merged.push(draft)
    }
  }
  // Tool results lead a user message; thinking leads an assistant message (two merged assistant
  // turns are one turn to the API, and its thinking must come first).
  return merged.map((draft) => {
    const first = draft.role === "user" ? (block: AnthropicContentBlock) => block.type === "tool_result" : isThinking
    return draft.content.some(first) && !draft.content.every(first)
      ? {
          ...draft,
          content: [...draft.content.filter(first), ...draft.content.filter((block) => !first(block))]
        }
      : draft
  })
}

const lastUserIndex = (drafts: ReadonlyArray<Draft>): number => {
  for (let index = drafts.length - 1; index >= 0; index--) if (drafts[index]?.role === "user") return index
  return -1
}

const withReminder = (drafts: ReadonlyArray<Draft>, reminder: string | undefined): ReadonlyArray<Draft> => {
  if (reminder === undefined || reminder.length === 0) return drafts
  const index = lastUserIndex(drafts)
  const target = drafts[index]
  if (target === undefined) {
    return [...drafts, { role: "user", content: text(reminder), tokens: roughTokens(reminder), fromHistory: false }]
  }
  // Right before the newest text of the message (merged turns may hold several), else at its end:
  // tool results must lead the message, so the reminder never goes before them.
  const lastText = target.content.map((block) => block.type).lastIndexOf("text")
  const at = lastText === -1 ? target.content.length : lastText
  const content = [...target.content.slice(0, at), ...text(reminder), ...target.content.slice(at)]
  // A copy with one draft replaced (no callback per draft: this runs on every render of a long window).
  const out = drafts.slice()
  out[index] = { ...target, content }
  return out
}

const mark = <B extends { readonly cache_control?: CacheControl }>(block: B, control: CacheControl): B => ({
  ...block,
  cache_control: control
})

const markLast = <B extends { readonly cache_control?: CacheControl }>(
  blocks: ReadonlyArray<B>,
  control: CacheControl
): ReadonlyArray<B> => blocks.map((block, index) => (index === blocks.length - 1 ? mark(block, control) : block))

/** The first user turn: task state and signals, when there are any. */
export const stateDraft = (sections: Sections): Draft | undefined =>
  sections.state === undefined
    ? undefined
    : { role: "user", content: text(sections.state.text), tokens: sections.state.tokens, fromHistory: false }

/** Turn drafts in order: the task state, then each history turn. */
export const turnDrafts = (sections: Sections, settings: Settings): Either.Either<Array<Draft>, InvalidRequest> => {
  const drafts: Array<Draft> = []
  const state = stateDraft(sections)
  if (state !== undefined) drafts.push(state)
  // The turn whose tool calls the request answers: the last assistant turn, if only results follow it.
  let current = -1
  sections.turns.forEach((turn, index) => {
    if (turn._tag === "Assistant") current = turn.calls.length > 0 ? index : -1
    else if (turn._tag !== "Results") current = -1
  })
  const keepAll = (settings.thinking ?? "all") === "all"
  const hints = hintsOf(settings)
  for (const [index, turn] of sections.turns.entries()) {
    add(counters.turnsRendered)
    const draft = draftOf(turn, keepAll || index === current, hints)
    if (Either.isLeft(draft)) return Either.left(draft.left)
    drafts.push(draft.right)
  }
  return Either.right(drafts)
}

/** The error of a render with nothing in it. */
export const nothingToSend = (): InvalidRequest =>
  invalid("anthropic", "nothing to send: no task state, no history and no turn reminder")

/** Render sections; validates the result with the Messages API rules. */
export const render = (sections: Sections, settings: Settings): Either.Either<Rendered, InvalidRequest> =>
  Either.flatMap(turnDrafts(sections, settings), (drafts) => {
    const { request, breakpoints } = assemble(sections, alternate(drafts), settings)
    if (request.messages.length === 0) return Either.left(nothingToSend())
    return Either.map(validateAnthropic(request), () => ({ request, breakpoints }))
  })

// One placeholder draft shared by every render that needs it (so its cached request message is too).
const continuationDraft: Draft = { role: "user", content: text(continuationText), tokens: 0, fromHistory: false }

/** A request message for a draft; a cache may hand back the same object for the same draft. */
export type MessageOf = (draft: Draft) => AnthropicMessage

const freshMessage: MessageOf = (draft) => ({ role: draft.role, content: draft.content })

/**
 * The request from merged drafts (what {@link alternate} returns): the placeholder first turn, the
 * reminder, the prefill trim, system blocks, tools and breakpoints. Not validated. `tail` is the
 * message that carries the conversation-prefix breakpoint (the one before the last user message).
 */
export const assemble = (
  sections: Sections,
  merged: ReadonlyArray<Draft>,
  settings: Settings,
  messageOf: MessageOf = freshMessage
): Rendered & { readonly tail: number } => {
  let drafts = merged
  if (drafts[0]?.role === "assistant") drafts = [continuationDraft, ...drafts]
  // The stable prefix ends right before the last user message (which carries the reminder).
  const lastUser = lastUserIndex(drafts)
  drafts = trimPrefill(withReminder(drafts, settings.reminder))

  const hints = hintsOf(settings)
  // A system piece renders to at most one text block: a hinted one carries its message's breakpoint.
  const pieceBlocks = (
    piece: { readonly messageId?: string | undefined },
    blocks: ReadonlyArray<AnthropicTextBlock>
  ) => {
    const control = hints === undefined || piece.messageId === undefined ? undefined : hints.get(piece.messageId)
    return control === undefined ? blocks : markLast(blocks, control)
  }
  const identity: ReadonlyArray<AnthropicTextBlock> = sections.identity.flatMap((piece) =>
    pieceBlocks(piece, text(piece.text))
  )
  const stable: ReadonlyArray<AnthropicTextBlock> = sections.stable.flatMap((piece) =>
    pieceBlocks(piece, text(piece.text))
  )
  const injected: ReadonlyArray<AnthropicTextBlock> = sections.injected.flatMap((piece) =>
    pieceBlocks(piece, text(wrapContext(piece.kind, piece.text)))
  )
  const tools: ReadonlyArray<AnthropicTool> = (settings.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.inputSchema
  }))

  // Candidate breakpoints, each with the length of the prefix it would cache.
  const sum = (pieces: ReadonlyArray<{ readonly tokens: number }>) =>
    pieces.reduce((total, piece) => total + piece.tokens, 0)
  const toolsEnd = tools.length === 0 ? 0 : roughTokens(JSON.stringify(tools))
  const identityEnd = toolsEnd + sum(sections.identity)
  const stableEnd = identityEnd + sum(sections.stable)
  const injectedEnd = stableEnd + sum(sections.injected)
  const tail = lastUser - 1
  const tailDraft = drafts[tail]
  let historyTokens = 0
  for (let index = 0; index <= tail; index++) historyTokens += drafts[index]?.tokens ?? 0
  const tailEnd = injectedEnd + historyTokens
  type Slot = "tools" | "identity" | "stable" | "injected" | "history"
  const candidates: ReadonlyArray<{ readonly slot: Slot; readonly present: boolean; readonly prefix: number }> = [
    // Highest value first: the conversation prefix grows every turn; tools are covered by identity.
    { slot: "history", present: tailDraft?.fromHistory === true, prefix: tailEnd },
    { slot: "injected", present: injected.length > 0, prefix: injectedEnd },
    { slot: "stable", present: stable.length > 0, prefix: stableEnd },
    { slot: "identity", present: identity.length > 0, prefix: identityEnd },
    { slot: "tools", present: tools.length > 0, prefix: toolsEnd }
  ]
  // The caller's hints replace the builder's own breakpoints.
  const chosen = new Set<Slot>(
    settings.cache && hints === undefined
      ? candidates
          .filter((candidate) => candidate.present && candidate.prefix >= settings.minCacheableTokens)
          .slice(0, maxCacheBreakpoints)
          .map((candidate) => candidate.slot)
      : []
  )
  const control: CacheControl =
    settings.cacheTtl === undefined ? { type: "ephemeral" } : { type: "ephemeral", ttl: settings.cacheTtl }
  const at = <B extends { readonly cache_control?: CacheControl }>(slot: Slot, blocks: ReadonlyArray<B>) =>
    chosen.has(slot) ? markLast(blocks, control) : blocks

  const system = [...at("identity", identity), ...at("stable", stable), ...at("injected", injected)]
  const messages: ReadonlyArray<AnthropicMessage> = drafts.map((draft, index) =>
    index === tail && chosen.has("history")
      ? { role: draft.role, content: at("history", draft.content) }
      : messageOf(draft)
  )
  const request: AnthropicRequest = {
    model: settings.model,
    max_tokens: settings.maxTokens,
    // The API accepts no temperature other than 1 with thinking on: leave it out.
    ...(settings.temperature === undefined || settings.thinkingBudget !== undefined
      ? {}
      : { temperature: settings.temperature }),
    ...(system.length === 0 ? {} : { system }),
    ...(tools.length === 0 ? {} : { tools: at("tools", tools) }),
    messages,
    ...(settings.thinkingBudget === undefined
      ? {}
      : { thinking: { type: "enabled", budget_tokens: settings.thinkingBudget } }),
    stream: true
  }
  return { request, breakpoints: hints === undefined ? chosen.size : cacheControlCount(request), tail }
}
