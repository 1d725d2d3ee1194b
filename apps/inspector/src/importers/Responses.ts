/**
 * OpenAI Responses API items and OpenAI Agents SDK items (`AgentInputItem[]`, what `result.history`
 * and a session's `getItems()` give), as one JSON document: a bare list, or `{ items }` / `{ input }`.
 * Read as Codex reads its `response_item`s (the same items), after the Agents SDK's spellings are
 * mapped to the Responses API's (`callId` → `call_id`, `function_call_result` →
 * `function_call_output`, a message without `type`). Items carry no time and no usage: the calls
 * are recorded at the time of the import, with no `UsageReported`; the model is `--model`.
 * A malformed item fails the session naming its index (`item N`).
 *
 * @since 0.8.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { ImportError } from "../Transfer.js"
import { readEntries } from "./Codex.js"
import { type FileRead, isRecord } from "./Session.js"

const itemTypes: ReadonlySet<string> = new Set([
  "function_call",
  "function_call_output",
  "function_call_result",
  "reasoning",
  "computer_call",
  "hosted_tool_call",
  "custom_tool_call",
  "custom_tool_call_output",
  "web_search_call",
  "local_shell_call"
])

/** Whether a JSON document's items look like Responses / Agents items. @since 0.8.0 */
export const looksLike = (items: ReadonlyArray<unknown>): boolean =>
  items.some(
    (item) =>
      isRecord(item) &&
      typeof item.type === "string" &&
      (itemTypes.has(item.type) ||
        (item.type === "message" &&
          Array.isArray(item.content) &&
          item.content.some((part) => isRecord(part) && /^(input|output)_text$/.test(String(part.type)))))
  )

const baseName = (file: string) => file.replace(/^.*[\\/]/, "").replace(/\.json$/i, "")

/** An Agents SDK item in the Responses API's spelling. */
const normalized = (item: unknown): unknown => {
  if (!isRecord(item)) return item
  const out: Record<string, unknown> = { ...item }
  if (out.type === undefined && typeof out.role === "string") out.type = "message"
  if (typeof out.callId === "string" && out.call_id === undefined) out.call_id = out.callId
  if (out.type === "function_call_result") {
    out.type = "function_call_output"
    const output = out.output
    if (isRecord(output) && typeof output.text === "string") out.output = output.text
  }
  if (out.type === "reasoning" && out.summary === undefined && Array.isArray(out.content)) out.summary = out.content
  return out
}

/** Read a Responses / Agents item list: one session. @since 0.8.0 */
export const read = (file: string, text: string, model: string): Effect.Effect<FileRead, ImportError> =>
  Effect.gen(function* () {
    let json: unknown
    try {
      json = JSON.parse(text.replace(/^\uFEFF/, ""))
    } catch (cause) {
      return yield* new ImportError({
        file,
        line: 0,
        detail: `not JSON (${cause instanceof Error ? cause.message : String(cause)})`
      })
    }
    const items = Array.isArray(json)
      ? json
      : isRecord(json) && Array.isArray(json.items)
        ? json.items
        : isRecord(json) && Array.isArray(json.input)
          ? json.input
          : undefined
    if (items === undefined) {
      return yield* new ImportError({ file, line: 0, detail: "expected a list of items, or { items } / { input }" })
    }
    const at = yield* Clock.currentTimeMillis
    const entries = items.map((item, index) => ({ line: 0, label: `item ${index}`, value: normalized(item) }))
    const read = yield* readEntries(file, entries, { model, at })
    return {
      file,
      format: "openai-responses" as const,
      sessions: [
        {
          file,
          format: "openai-responses" as const,
          stream: baseName(file),
          wire: "openai-responses" as const,
          ...read.session
        }
      ],
      unknown: read.unknown
    }
  })
