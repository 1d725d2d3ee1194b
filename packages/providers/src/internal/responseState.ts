/** Accumulates a streamed response into the final `ModelResponse`. */
import { type LanguageModel, Message } from "@ctxlog/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { providerError } from "./http.js"

/**
 * A stream that closed cleanly before its final event: transient, like a reset at the same point
 * (`network`, so the retry policy retries it).
 */
export const endedEarly = (provider: string, finalEvent: string): LanguageModel.ProviderError =>
  providerError(provider, "network", `the stream closed before its final event (${finalEvent})`)

/**
 * Output characters allowed per requested output token before a stream is stopped. Generous: a token is
 * a few characters in any real text (long whitespace or repeated-character tokens stay well under 32);
 * the point is to stop a stream that runs far past `max_tokens` (a broken or hostile endpoint), not to
 * police the limit.
 */
export const outputCharsPerToken = 32
/** The least output allowed before the check applies, whatever `max_tokens` says. */
export const outputCharsFloor = 64 * 1024

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
  /** The provider's id of the response, when it gave one. */
  responseId: string | undefined = undefined
  finished = false
  /** What the provider edited on its side, when it said so. */
  contextEdits: LanguageModel.ContextEdits | undefined = undefined
  private readonly calls = new Map<string, PendingCall>()
  /** Characters of output received: text, reasoning and tool arguments. */
  private outputChars = 0
  private readonly outputLimit: number | undefined

  constructor(
    readonly provider: string,
    model: string,
    /** The request's output limit (`max_tokens` and kin), when it had one. */
    private readonly maxOutputTokens?: number | undefined
  ) {
    this.model = model
    this.outputLimit =
      maxOutputTokens === undefined ? undefined : Math.max(outputCharsFloor, maxOutputTokens * outputCharsPerToken)
  }

  /**
   * A `malformed_response` once the output received is far past the request's output limit (more than
   * {@link outputCharsPerToken} characters per token): the decoders check after every event, so a stream
   * that never ends is stopped (and its connection closed) holding at most the limit plus one event.
   */
  overLimit(): LanguageModel.ProviderError | undefined {
    if (this.outputLimit === undefined || this.outputChars <= this.outputLimit) return undefined
    return providerError(
      this.provider,
      "malformed_response",
      `the stream sent ${this.outputChars} characters of output for max_tokens ${this.maxOutputTokens} ` +
        `(more than ${outputCharsPerToken} characters per token): stopped reading and closed the connection`
    )
  }

  text(delta: string): void {
    this.outputChars += delta.length
    const last = this.parts[this.parts.length - 1]
    if (last !== undefined && !("id" in last) && !("reasoning" in last)) last.text += delta
    else this.parts.push({ text: delta })
  }

  /**
   * Start (or extend) a reasoning part under a key (an Anthropic block index, a Responses output
   * index, or `chat` for `reasoning_content`).
   */
  reasoning(
    key: string,
    delta: { text?: string | undefined; signature?: string | undefined; redactedData?: string | undefined }
  ): void {
    this.outputChars += (delta.text?.length ?? 0) + (delta.redactedData?.length ?? 0)
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
  reasoningItem(
    key: string,
    item: { itemId?: string | undefined; encryptedContent?: string | undefined; text?: string | undefined }
  ): void {
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
    this.outputChars += delta.length
    if (call !== undefined) call.json += delta
    return call
  }

  /**
   * The complete response, or a malformed_response error when a tool input is not JSON. When the output
   * limit stopped the reply (`stopReason` `max_tokens`), a call whose arguments are not whole JSON was
   * cut there: it is kept with the input `{}` and listed in `cutToolCalls`, and the text is kept.
   */
  response(): Either.Either<LanguageModel.ModelResponse, LanguageModel.ProviderError> {
    const parts: Array<Message.Part> = []
    const cut: Array<LanguageModel.CutToolCall> = []
    for (const part of this.parts) {
      if ("reasoning" in part) {
        parts.push(
          Message.reasoning(part.text, {
            signature: part.signature,
            redactedData: part.redactedData,
            itemId: part.itemId,
            encryptedContent: part.encryptedContent
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
        if (this.stopReason === "max_tokens") {
          cut.push({ id: part.id, name: part.name, receivedChars: part.json.length })
          parts.push(Message.toolCall(part.id, part.name, {}))
          continue
        }
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
      ...(this.responseId === undefined ? {} : { id: this.responseId }),
      parts,
      stopReason: this.stopReason,
      usage: this.usage,
      // The response is public data (recorded by `recordUsage`, compared whole): absent stays absent.
      ...(this.contextEdits === undefined ? {} : { contextEdits: this.contextEdits }),
      ...(cut.length === 0 ? {} : { cutToolCalls: cut })
    })
  }
}

/** A decoder step's result, failed instead when the output is now past the limit (`overLimit`). */
export const guarded = <A>(
  state: ResponseState,
  result: Either.Either<A, LanguageModel.ProviderError>
): Either.Either<A, LanguageModel.ProviderError> =>
  Either.flatMap(result, (out) => {
    const over = state.overLimit()
    return over === undefined ? Either.right(out) : Either.left(over)
  })
