/**
 * Codex CLI rollout JSONL (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), read into one
 * {@link Session.Session} rendered in the OpenAI Responses format.
 *
 * - `response_item` lines are the conversation (the Responses API's own items): user and assistant
 *   `message`s, `reasoning` (summary text and `encrypted_content`), `function_call` /
 *   `custom_tool_call` / `local_shell_call` and their outputs, `web_search_call`.
 * - A model call is a run of the model's output items (reasoning, assistant message, tool calls)
 *   with no input between them. Its usage is the `token_count` event next to it
 *   (`last_token_usage`: `input_tokens` is the whole prompt, `cached_input_tokens` the cache read;
 *   a repeated count, same totals as the one before, is the same call). Its model is the last
 *   `turn_context`'s. `model_context_window` sets the window the renders are checked against.
 * - A `compacted` line is the tool's own compaction: its `message` becomes the summary.
 * - `developer` messages are sent as user messages (ctxlog has no developer role in history).
 * - `event_msg` lines other than `token_count` repeat what the items hold (agent_message,
 *   user_message, agent_reasoning, ...) and are not read. The older layout (a first line with
 *   `instructions`, then bare items) is read too.
 *
 * @since 0.8.0
 */
import { createHash } from "node:crypto"
import { type LanguageModel, Message } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { ImportError } from "../Transfer.js"
import { count, type FileRead, isRecord, millisOf, type Step } from "./Session.js"

const itemTypes: ReadonlySet<string> = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "local_shell_call",
  "local_shell_call_output",
  "web_search_call"
])
/** Items the model produced (a call's output); the rest are inputs. */
const outputTypes: ReadonlySet<string> = new Set([
  "reasoning",
  "function_call",
  "custom_tool_call",
  "local_shell_call",
  "web_search_call"
])
const known: ReadonlySet<string> = new Set(["session_meta", "response_item", "event_msg", "turn_context", "compacted"])

/** Whether parsed lines look like a Codex rollout (for format detection). @since 0.8.0 */
export const looksLike = (first: ReadonlyArray<Record<string, unknown>>): boolean =>
  first.some(
    (value) =>
      (typeof value.type === "string" && known.has(value.type) && "payload" in value) ||
      ("instructions" in value && "id" in value && "timestamp" in value && !("role" in value))
  )

const baseName = (file: string) => file.replace(/^.*[\\/]/, "").replace(/\.jsonl$/i, "")

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** The usage of a `token_count` event's `last_token_usage`. @since 0.8.0 */
export const usageOf = (last: Record<string, unknown>): LanguageModel.Usage => ({
  inputTokens: count(last.input_tokens),
  outputTokens: count(last.output_tokens),
  cacheReadTokens: count(last.cached_input_tokens),
  cacheWriteTokens: 0
})

const jsonOf = (text: string): Message.JsonValue => {
  try {
    return JSON.parse(text) as Message.JsonValue
  } catch {
    return text
  }
}

const contentParts = (
  content: unknown,
  fail: (detail: string) => ImportError
): Effect.Effect<ReadonlyArray<Message.Part>, ImportError> =>
  Effect.gen(function* () {
    if (typeof content === "string") return [Message.text(content)]
    if (!Array.isArray(content)) return yield* fail("a message item without a content list")
    const parts: Array<Message.Part> = []
    for (const [index, piece] of content.entries()) {
      if (!isRecord(piece) || typeof piece.type !== "string")
        return yield* fail(`content[${index}] is not a typed part`)
      if (piece.type === "input_image") {
        const url = str(piece.image_url) ?? ""
        parts.push(
          Message.imageUrl(
            url.startsWith("data:") || url === ""
              ? `codex-image:sha256:${createHash("sha256").update(url).digest("hex")}`
              : url
          )
        )
        continue
      }
      if (typeof piece.text !== "string") return yield* fail(`content[${index}] (${piece.type}) has no text`)
      parts.push(Message.text(piece.text))
    }
    return parts
  })

const outputText = (output: unknown): string =>
  typeof output === "string" ? output : output === undefined || output === null ? "" : JSON.stringify(output)

/** One parsed line (or, for a JSON document, one item: `line` 0 and `label` naming it). @since 0.8.0 */
export interface Entry {
  readonly line: number
  readonly label?: string | undefined
  readonly value: unknown
}

/** What {@link readEntries} is told by the file around the items. @since 0.8.0 */
export interface Defaults {
  readonly model: string
  /** The time of an item that carries none (epoch ms). */
  readonly at: number
}

/**
 * Read a Codex rollout: one session. A malformed line fails it, naming the line.
 * @since 0.8.0
 */
export const read = (file: string, text: string): Effect.Effect<FileRead, ImportError> =>
  Effect.gen(function* () {
    const entries: Array<Entry> = []
    for (const [index, raw] of text
      .replace(/^\uFEFF/, "")
      .split("\n")
      .entries()) {
      if (raw.trim() === "") continue
      try {
        entries.push({ line: index + 1, value: JSON.parse(raw) })
      } catch (cause) {
        return yield* new ImportError({
          file,
          line: index + 1,
          detail: `not JSON (${cause instanceof Error ? cause.message : String(cause)})`
        })
      }
    }
    const read = yield* readEntries(file, entries, { model: "", at: 0 })
    return {
      file,
      format: "codex" as const,
      sessions: [
        { file, format: "codex" as const, stream: baseName(file), wire: "openai-responses" as const, ...read.session }
      ],
      unknown: read.unknown
    }
  })

/**
 * Steps of Responses items, as Codex wraps them (`response_item` lines with `event_msg` token counts
 * and `turn_context` models) or bare (an OpenAI Responses / Agents SDK item list).
 * @since 0.8.0
 */
export const readEntries = (
  file: string,
  entries: ReadonlyArray<Entry>,
  defaults: Defaults
): Effect.Effect<
  {
    readonly session: { readonly contextWindow: number; readonly steps: ReadonlyArray<Step> }
    readonly unknown: Record<string, number>
  },
  ImportError
> =>
  Effect.gen(function* () {
    const unknown: Record<string, number> = {}
    const steps: Array<Step> = []
    let model = defaults.model
    let contextWindow = 272_000
    let at = defaults.at
    type Open = {
      at: number
      line: number
      model: string
      parts: Array<Message.Part>
      usage: LanguageModel.Usage | undefined
    }
    let call: Open | undefined
    let pending: LanguageModel.Usage | undefined
    let lastTotals: string | undefined
    let inputSinceCall = true
    let callsInTurn = 0
    let results: Array<Message.MessageInput> = []
    let resultsLine = 0
    let resultsAt = 0
    const flush = () => {
      if (call !== undefined) {
        steps.push({
          _tag: "Call",
          at: call.at,
          line: call.line,
          model: call.model,
          answer: call.parts,
          usage: call.usage
        })
        callsInTurn++
        call = undefined
      }
      if (results.length > 0) {
        steps.push({ _tag: "Messages", at: resultsAt, line: resultsLine, messages: results })
        results = []
      }
    }
    for (const entry of entries) {
      const line = entry.line
      const fail = (detail: string) =>
        new ImportError({ file, line, detail: entry.label === undefined ? detail : `${entry.label}: ${detail}` })
      const value = entry.value
      if (!isRecord(value)) return yield* fail("expected a JSON object")
      // The older layout: a header line, `record_type` state lines, then bare items.
      if (value.record_type !== undefined) continue
      const legacyHeader = !("type" in value) && "instructions" in value
      if (legacyHeader) {
        at = millisOf(value.timestamp) ?? at
        continue
      }
      if (typeof value.type !== "string") return yield* fail('expected a "type" naming the line')
      const bare = itemTypes.has(value.type) && !("payload" in value)
      if (!bare && !known.has(value.type)) {
        unknown[value.type] = (unknown[value.type] ?? 0) + 1
        continue
      }
      if (value.timestamp !== undefined) {
        const time = millisOf(value.timestamp)
        if (time === undefined) return yield* fail(`the timestamp ${JSON.stringify(value.timestamp)} is not a time`)
        at = time
      }
      const payload = bare ? value : value.payload
      if (!isRecord(payload)) return yield* fail(`a ${value.type} line without a payload object`)
      const kind = bare ? "response_item" : value.type
      if (kind === "session_meta") continue
      if (kind === "turn_context") {
        if (typeof payload.model === "string" && payload.model !== "") model = payload.model
        continue
      }
      if (kind === "compacted") {
        flush()
        const summary = str(payload.message)
        if (callsInTurn > 0) steps.push({ _tag: "TurnEnd", at, line })
        callsInTurn = 0
        steps.push({
          _tag: "Compaction",
          at,
          line,
          summary: summary === undefined ? undefined : { role: "user", parts: [Message.text(summary)] }
        })
        continue
      }
      if (kind === "event_msg") {
        if (payload.type !== "token_count") continue
        const info = payload.info
        if (!isRecord(info)) continue
        if (typeof info.model_context_window === "number" && info.model_context_window > 0) {
          contextWindow = Math.round(info.model_context_window)
        }
        const last = info.last_token_usage
        if (!isRecord(last)) return yield* fail("a token_count without last_token_usage")
        const totals = JSON.stringify(info.total_token_usage ?? last)
        if (totals === lastTotals) continue
        lastTotals = totals
        const usage = usageOf(last)
        // The count of the call being written (its items came first), or of the next one (it comes first).
        if (call !== undefined && call.usage === undefined && !inputSinceCall) call.usage = usage
        else pending = usage
        continue
      }
      // A response item.
      const type = str(payload.type)
      if (type === undefined || !itemTypes.has(type)) {
        unknown[`item:${String(payload.type)}`] = (unknown[`item:${String(payload.type)}`] ?? 0) + 1
        continue
      }
      const role = str(payload.role)
      const isOutput = outputTypes.has(type) || (type === "message" && role === "assistant")
      if (isOutput) {
        if (call === undefined || inputSinceCall) {
          flush()
          call = { at, line, model: model === "" ? "unknown" : model, parts: [], usage: pending }
          pending = undefined
          inputSinceCall = false
        }
        switch (type) {
          case "message":
            call.parts.push(...(yield* contentParts(payload.content, fail)))
            break
          case "reasoning": {
            const summary = Array.isArray(payload.summary)
              ? payload.summary
                  .flatMap((piece) => (isRecord(piece) && typeof piece.text === "string" ? [piece.text] : []))
                  .join("\n")
              : ""
            const encrypted = str(payload.encrypted_content)
            const id = str(payload.id)
            call.parts.push(
              Message.reasoning(summary, {
                ...(encrypted === undefined ? {} : { encryptedContent: encrypted }),
                ...(id === undefined ? {} : { itemId: id })
              })
            )
            break
          }
          case "function_call":
          case "custom_tool_call": {
            const id = str(payload.call_id)
            const name = str(payload.name)
            if (id === undefined || id === "" || name === undefined || name === "") {
              return yield* fail(`a ${type} without call_id or name`)
            }
            const input = type === "function_call" ? jsonOf(str(payload.arguments) ?? "{}") : (str(payload.input) ?? "")
            call.parts.push(Message.toolCall(id, name, input))
            break
          }
          case "local_shell_call": {
            const id = str(payload.call_id) ?? str(payload.id)
            if (id === undefined || id === "") return yield* fail("a local_shell_call without call_id")
            call.parts.push(Message.toolCall(id, "local_shell", (payload.action ?? {}) as Message.JsonValue))
            break
          }
          case "web_search_call":
            call.parts.push(
              Message.serverToolCall(
                "openai",
                str(payload.id) ?? `ws_${line}`,
                "web_search",
                (payload.action ?? {}) as Message.JsonValue
              )
            )
            break
        }
        continue
      }
      inputSinceCall = true
      if (type === "function_call_output" || type === "custom_tool_call_output" || type === "local_shell_call_output") {
        const id = str(payload.call_id)
        if (id === undefined || id === "") return yield* fail(`a ${type} without call_id`)
        const output = payload.output
        const content = isRecord(output) && typeof output.content === "string" ? output.content : outputText(output)
        if (results.length === 0) {
          resultsAt = at
          resultsLine = line
        }
        results.push({ role: "tool", parts: [Message.toolResult(id, content, false)] })
        continue
      }
      // A user (or developer, or system) message: a new input.
      const parts = yield* contentParts(payload.content, fail)
      flush()
      if (callsInTurn > 0) {
        steps.push({ _tag: "TurnEnd", at, line })
        callsInTurn = 0
      }
      steps.push({ _tag: "Messages", at, line, messages: [{ role: "user", parts }] })
    }
    flush()
    if (callsInTurn > 0) {
      const last = steps.at(-1)
      if (last !== undefined) steps.push({ _tag: "TurnEnd", at: last.at, line: last.line })
    }
    return { session: { contextWindow, steps }, unknown }
  })
