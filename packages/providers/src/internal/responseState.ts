/** Accumulates a streamed response into the final `ModelResponse`. */
import { type LanguageModel, Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { providerError } from "./http.js"

interface PendingCall {
  id: string
  name: string
  json: string
}

interface PendingReasoning {
  readonly reasoning: true
  text: string
  signature?: string
  redactedData?: string
  itemId?: string
  encryptedContent?: string
}

export class ResponseState {
  private readonly parts: Array<{ text: string } | PendingCall | PendingReasoning> = []
  private readonly thoughts = new Map<string, PendingReasoning>()
  stopReason: LanguageModel.StopReason = "other"
  usage: LanguageModel.Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
  model: string
  finished = false
  /** What the provider edited on its side, when it said so. */
  contextEdits: LanguageModel.ContextEdits | undefined = undefined
  private readonly calls = new Map<string, PendingCall>()

  constructor(
    readonly provider: string,
    model: string
  ) {
    this.model = model
  }

  text(delta: string): void {
    const last = this.parts[this.parts.length - 1]
    if (last !== undefined && !("id" in last) && !("reasoning" in last)) last.text += delta
    else this.parts.push({ text: delta })
  }

  /**
   * Start (or extend) a reasoning part under a key (an Anthropic block index, a Responses output
   * index, or `chat` for `reasoning_content`).
   */
  reasoning(key: string, delta: { text?: string; signature?: string; redactedData?: string }): void {
    let part = this.thoughts.get(key)
    if (part === undefined) {
      part = { reasoning: true, text: "" }
      this.thoughts.set(key, part)
      this.parts.push(part)
    }
    if (delta.text !== undefined) part.text += delta.text
    // A signature arrives whole (one signature_delta); data of a redacted block likewise.
    if (delta.signature !== undefined) part.signature = (part.signature ?? "") + delta.signature
    if (delta.redactedData !== undefined) part.redactedData = (part.redactedData ?? "") + delta.redactedData
  }

  /**
   * A finished Responses `reasoning` item under its output index: its id, `encrypted_content` and
   * summary text replace what the deltas built (the finished item is the one to send back).
   */
  reasoningItem(key: string, item: { itemId?: string; encryptedContent?: string; text?: string }): void {
    this.reasoning(key, {})
    const part = this.thoughts.get(key)
    if (part === undefined) return
    if (item.itemId !== undefined) part.itemId = item.itemId
    if (item.encryptedContent !== undefined) part.encryptedContent = item.encryptedContent
    if (item.text !== undefined) part.text = item.text
  }

  /** Start (or find) a tool call under a key (block index or call index). */
  call(key: string, id: string, name: string): void {
    const existing = this.calls.get(key)
    if (existing !== undefined) {
      if (id.length > 0) existing.id = id
      if (name.length > 0) existing.name = existing.name + name
      return
    }
    const call = { id, name, json: "" }
    this.calls.set(key, call)
    this.parts.push(call)
  }

  callJson(key: string, delta: string): PendingCall | undefined {
    const call = this.calls.get(key)
    if (call !== undefined) call.json += delta
    return call
  }

  /** The complete response, or a malformed_response error when a tool input is not JSON. */
  response(): Either.Either<LanguageModel.ModelResponse, LanguageModel.ProviderError> {
    const parts: Array<Message.Part> = []
    for (const part of this.parts) {
      if ("reasoning" in part) {
        parts.push(
          Message.reasoning(part.text, {
            ...(part.signature === undefined ? {} : { signature: part.signature }),
            ...(part.redactedData === undefined ? {} : { redactedData: part.redactedData }),
            ...(part.itemId === undefined ? {} : { itemId: part.itemId }),
            ...(part.encryptedContent === undefined ? {} : { encryptedContent: part.encryptedContent })
          })
        )
        continue
      }
      if (!("id" in part)) {
        if (part.text.length > 0) parts.push(Message.text(part.text))
        continue
      }
      if (part.id.length === 0 || part.name.length === 0) {
        return Either.left(providerError(this.provider, "malformed_response", "a tool call has no id or no name"))
      }
      let input: unknown
      try {
        input = part.json.trim().length === 0 ? {} : JSON.parse(part.json)
      } catch {
        return Either.left(
          providerError(this.provider, "malformed_response", `tool call ${part.id} input is not JSON: ${part.json}`)
        )
      }
      const decoded = Schema.decodeUnknownEither(Message.JsonValue)(input)
      if (Either.isLeft(decoded)) {
        return Either.left(providerError(this.provider, "malformed_response", `tool call ${part.id} input is not JSON`))
      }
      parts.push(Message.toolCall(part.id, part.name, decoded.right))
    }
    return Either.right({
      provider: this.provider,
      model: this.model,
      parts,
      stopReason: this.stopReason,
      usage: this.usage,
      ...(this.contextEdits === undefined ? {} : { contextEdits: this.contextEdits })
    })
  }
}
