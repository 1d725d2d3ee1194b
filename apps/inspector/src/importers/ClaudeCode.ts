/**
 * Claude Code session JSONL (`~/.claude/projects/<project>/<session>.jsonl`, and a subagent's
 * `<session>/subagents/agent-<id>.jsonl`), read into {@link Session.Session}s.
 *
 * - Lines form a tree by `uuid` / `parentUuid`. The conversation is the path from the root to the
 *   last message line of the file: the branch the tool itself continued (a rewind or an edited
 *   message leaves the abandoned branch off it). A `compact_boundary` line has no parent but a
 *   `logicalParentUuid`, which the path follows through.
 * - One API response is written as several `assistant` lines sharing `message.id` (one per content
 *   block, the same usage on each): they are one model call. Its time is its first line's.
 * - `compact_boundary` and the `isCompactSummary` user message after it are the tool's own
 *   compaction: a `Compaction` step whose summary is that message.
 * - Sidechain lines (`isSidechain`, a subagent's run) become their own sessions, linked to the parent
 *   stream and, when the spawning `Task` call is found (its prompt equals the sidechain's first
 *   message), to that call.
 * - `model: "<synthetic>"` assistant lines (an API error, an interruption) are messages, not calls.
 * - Images are kept as references (`claude-code-image:sha256:<hex>`), not their bytes.
 * - An `attachment` line (Claude Code 2.0.x late and 2.1) is what the tool itself put into the next
 *   prompt. A `nested_memory` one (a `CLAUDE.md` or rule file loaded when the agent worked under its
 *   directory) is carried as a user message of the file's text under its path, in a
 *   `<system-reminder>`. The session file records the text, not the words Claude Code wraps around
 *   it, so those few tokens are an approximation. Other attachment kinds are counted in the import
 *   report as `attachment:<kind>`, not carried.
 *
 * @since 0.8.0
 */
import { createHash } from "node:crypto"
import { type LanguageModel, Message } from "@ctxlog/core"
import * as Effect from "effect/Effect"
import { ImportError } from "../Transfer.js"
import { count, type FileRead, isRecord, millisOf, type Session, type Step } from "./Session.js"

/** Line types Claude Code writes that carry nothing a prompt is made of. */
const bookkeeping: ReadonlySet<string> = new Set([
  "summary",
  "file-history-snapshot",
  "queue-operation",
  "progress",
  "custom-title",
  "agent-name",
  "last-prompt",
  "pr-link"
])

interface Line {
  readonly line: number
  readonly type: string
  readonly raw: Record<string, unknown>
  readonly uuid: string | undefined
  readonly parent: string | undefined
  readonly sidechain: boolean
}

/** Whether a parsed JSONL text looks like a Claude Code session (for format detection). @since 0.8.0 */
export const looksLike = (first: ReadonlyArray<Record<string, unknown>>): boolean =>
  first.some(
    (value) =>
      ("parentUuid" in value && "sessionId" in value) ||
      value.type === "file-history-snapshot" ||
      (value.type === "summary" && "leafUuid" in value)
  )

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** The stream id of a session file: its file name without `.jsonl`. */
const baseName = (file: string) => file.replace(/^.*[\\/]/, "").replace(/\.jsonl$/i, "")

/** The provider's recorded usage of a response, in ctxlog's terms (`inputTokens` is the whole prompt). @since 0.8.0 */
export const usageOf = (usage: Record<string, unknown>): LanguageModel.Usage => {
  const fresh = count(usage.input_tokens)
  const read = count(usage.cache_read_input_tokens)
  const write = count(usage.cache_creation_input_tokens)
  const split = isRecord(usage.cache_creation) ? usage.cache_creation : undefined
  return {
    inputTokens: fresh + read + write,
    outputTokens: count(usage.output_tokens),
    cacheReadTokens: read,
    cacheWriteTokens: write,
    ...(split === undefined ? {} : { cacheWrite1hTokens: count(split.ephemeral_1h_input_tokens) })
  }
}

const imageRef = (source: Record<string, unknown>): Message.ImagePart => {
  const url = str(source.url)
  if (url !== undefined && url !== "") return Message.imageUrl(url)
  const data = str(source.data) ?? ""
  return Message.imageUrl(`claude-code-image:sha256:${createHash("sha256").update(data).digest("hex")}`)
}

/** The parts of a content block list; `fail` names what is malformed. */
const partsOf = (
  content: unknown,
  fail: (detail: string) => ImportError,
  unknown: (type: string) => void
): Effect.Effect<ReadonlyArray<Message.Part>, ImportError> =>
  Effect.gen(function* () {
    if (typeof content === "string") return [Message.text(content)]
    if (!Array.isArray(content)) return yield* fail("message.content is neither text nor a list of blocks")
    const parts: Array<Message.Part> = []
    for (const [index, block] of content.entries()) {
      const where = `message.content[${index}]`
      if (!isRecord(block) || typeof block.type !== "string") return yield* fail(`${where} is not a typed block`)
      switch (block.type) {
        case "text":
          if (typeof block.text !== "string") return yield* fail(`${where}: a text block without text`)
          parts.push(Message.text(block.text))
          break
        case "thinking":
          if (typeof block.thinking !== "string") return yield* fail(`${where}: a thinking block without thinking`)
          parts.push(
            Message.reasoning(block.thinking, typeof block.signature === "string" ? { signature: block.signature } : {})
          )
          break
        case "redacted_thinking":
          if (typeof block.data !== "string") return yield* fail(`${where}: a redacted_thinking block without data`)
          parts.push(Message.reasoning("", { redactedData: block.data }))
          break
        case "tool_use": {
          if (typeof block.id !== "string" || block.id === "" || typeof block.name !== "string" || block.name === "") {
            return yield* fail(`${where}: a tool_use block without id or name`)
          }
          parts.push(Message.toolCall(block.id, block.name, (block.input ?? {}) as Message.JsonValue))
          break
        }
        case "server_tool_use":
          if (typeof block.id !== "string" || typeof block.name !== "string") {
            return yield* fail(`${where}: a server_tool_use block without id or name`)
          }
          parts.push(
            Message.serverToolCall("anthropic", block.id, block.name, (block.input ?? {}) as Message.JsonValue)
          )
          break
        case "web_search_tool_result":
        case "web_fetch_tool_result":
        case "code_execution_tool_result":
          if (typeof block.tool_use_id !== "string") return yield* fail(`${where}: a ${block.type} without tool_use_id`)
          parts.push(
            Message.serverToolResult(
              "anthropic",
              block.tool_use_id,
              block.type,
              (block.content ?? null) as Message.JsonValue
            )
          )
          break
        case "image":
          if (!isRecord(block.source)) return yield* fail(`${where}: an image block without a source`)
          parts.push(imageRef(block.source))
          break
        case "document":
          parts.push(Message.text("[document]"))
          break
        case "tool_result": {
          if (typeof block.tool_use_id !== "string" || block.tool_use_id === "") {
            return yield* fail(`${where}: a tool_result block without tool_use_id`)
          }
          const isError = block.is_error === true
          const inner = block.content
          if (inner === undefined || inner === null || typeof inner === "string") {
            parts.push(Message.toolResult(block.tool_use_id, typeof inner === "string" ? inner : "", isError))
            break
          }
          if (!Array.isArray(inner)) return yield* fail(`${where}: tool_result content is neither text nor a list`)
          const pieces: Array<Message.ToolResultContent> = []
          for (const piece of inner) {
            if (!isRecord(piece)) return yield* fail(`${where}: a tool_result piece is not an object`)
            if (piece.type === "text" && typeof piece.text === "string") pieces.push(Message.text(piece.text))
            else if (piece.type === "image" && isRecord(piece.source)) pieces.push(imageRef(piece.source))
            else unknown(`block:${String(piece.type)}`)
          }
          parts.push(Message.toolResultParts(block.tool_use_id, pieces, isError))
          break
        }
        default:
          unknown(`block:${block.type}`)
      }
    }
    return parts
  })

/** Parse the lines: JSON objects with a `type`; the first malformed one fails naming its line. */
const parseLines = (file: string, text: string): Effect.Effect<ReadonlyArray<Line>, ImportError> =>
  Effect.gen(function* () {
    const lines: Array<Line> = []
    for (const [index, raw] of text
      .replace(/^\uFEFF/, "")
      .split("\n")
      .entries()) {
      if (raw.trim() === "") continue
      const line = index + 1
      let value: unknown
      try {
        value = JSON.parse(raw)
      } catch (cause) {
        return yield* new ImportError({
          file,
          line,
          detail: `not JSON (${cause instanceof Error ? cause.message : String(cause)})`
        })
      }
      if (!isRecord(value)) return yield* new ImportError({ file, line, detail: "expected a JSON object" })
      if (typeof value.type !== "string") {
        return yield* new ImportError({ file, line, detail: 'expected a "type" naming the line' })
      }
      lines.push({
        line,
        type: value.type,
        raw: value,
        uuid: str(value.uuid),
        parent: str(value.parentUuid) ?? str(value.logicalParentUuid),
        sidechain: value.isSidechain === true
      })
    }
    return lines
  })

/** The kind of an `attachment` line (`attachment.type`), or undefined when it names none. */
const attachmentKind = (raw: Record<string, unknown>): string | undefined =>
  isRecord(raw.attachment) ? str(raw.attachment.type) : undefined

/**
 * The text a carried attachment put into the prompt: a `nested_memory` file's content under its path.
 * Its `content` is `{ path, content }` (2.1) or the text itself (earlier).
 */
const attachmentText = (raw: Record<string, unknown>): string | undefined => {
  const attachment = raw.attachment
  if (!isRecord(attachment) || attachment.type !== "nested_memory") return undefined
  const inner = attachment.content
  const body = typeof inner === "string" ? inner : isRecord(inner) ? str(inner.content) : undefined
  const path = str(attachment.path) ?? (isRecord(inner) ? str(inner.path) : undefined)
  if (body === undefined || path === undefined) return undefined
  return `<system-reminder>\nContents of ${path}:\n\n${body}\n</system-reminder>`
}

const isMessageLine = (line: Line) =>
  line.type === "user" ||
  line.type === "assistant" ||
  (line.type === "system" && line.raw.subtype === "compact_boundary") ||
  (line.type === "attachment" && attachmentText(line.raw) !== undefined)

/** The path from the root to `leaf`, root first (a cycle or a missing parent ends it). */
const pathTo = (leaf: Line, byUuid: ReadonlyMap<string, Line>): ReadonlyArray<Line> => {
  const path: Array<Line> = []
  const seen = new Set<string>()
  let current: Line | undefined = leaf
  while (current !== undefined) {
    path.push(current)
    if (current.uuid !== undefined) seen.add(current.uuid)
    const parent: string | undefined = current.parent
    current = parent === undefined || seen.has(parent) ? undefined : byUuid.get(parent)
  }
  return path.reverse().filter(isMessageLine)
}

/** The prompt text a sidechain starts with (what the spawning `Task` call passed). */
const textOfContent = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .flatMap((block) =>
            isRecord(block) && block.type === "text" && typeof block.text === "string" ? [block.text] : []
          )
          .join("\n")
      : ""

/** Steps of one linear conversation. */
const stepsOf = (
  file: string,
  path: ReadonlyArray<Line>,
  unknown: (type: string) => void
): Effect.Effect<ReadonlyArray<Step>, ImportError> =>
  Effect.gen(function* () {
    const steps: Array<Step> = []
    type Open = {
      id: string
      at: number
      line: number
      model: string
      parts: Array<Message.Part>
      usage: LanguageModel.Usage | undefined
    }
    let call: Open | undefined
    let results: Array<Message.MessageInput> = []
    let resultsAt = 0
    let resultsLine = 0
    let callsInTurn = 0
    let boundary: { at: number; line: number } | undefined
    const flush = () => {
      if (call !== undefined) {
        steps.push({
          _tag: "Call",
          at: call.at,
          line: call.line,
          model: call.model,
          answer: call.parts,
          answerId: call.id,
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
    for (const line of path) {
      const fail = (detail: string) => new ImportError({ file, line: line.line, detail })
      const at = millisOf(line.raw.timestamp)
      if (at === undefined) return yield* fail("a message line without a valid timestamp")
      if (line.type === "system") {
        flush()
        if (callsInTurn > 0) steps.push({ _tag: "TurnEnd", at, line: line.line })
        callsInTurn = 0
        boundary = { at, line: line.line }
        continue
      }
      if (line.type === "attachment") {
        // The tool's own addition to the next prompt: neither the user's words nor the end of a turn.
        flush()
        const text = attachmentText(line.raw) ?? ""
        const input: Message.MessageInput = {
          role: "user",
          parts: [Message.text(text)],
          ...(line.uuid === undefined ? {} : { id: line.uuid })
        }
        steps.push({ _tag: "Messages", at, line: line.line, messages: [input] })
        continue
      }
      const message = line.raw.message
      if (!isRecord(message)) return yield* fail(`a ${line.type} line without a message object`)
      const parts = yield* partsOf(message.content, fail, unknown)
      if (line.type === "assistant") {
        const id = str(message.id)
        const model = str(message.model) ?? ""
        if (model === "" || model === "<synthetic>" || id === undefined) {
          // An API error or an interruption the tool wrote itself: history, not a model call.
          flush()
          if (parts.length > 0)
            steps.push({ _tag: "Messages", at, line: line.line, messages: [{ role: "assistant", parts }] })
          continue
        }
        const usage = isRecord(message.usage) ? usageOf(message.usage) : undefined
        if (call !== undefined && call.id === id) {
          call.parts.push(...parts)
          // Streaming writes the output count so far: the largest is the response's.
          if (usage !== undefined && (call.usage === undefined || usage.outputTokens > call.usage.outputTokens)) {
            call.usage = usage
          }
          continue
        }
        flush()
        call = { id, at, line: line.line, model, parts: [...parts], usage }
        continue
      }
      // A user line: tool results answer the open call; anything else is the user's (or the tool's) words.
      const answers = parts.filter((part): part is Message.ToolResultPart => part.type === "tool_result")
      const words = parts.filter((part) => part.type !== "tool_result")
      if (answers.length > 0) {
        if (results.length === 0) {
          resultsAt = at
          resultsLine = line.line
        }
        results.push(...answers.map((part): Message.MessageInput => ({ role: "tool", parts: [part] })))
      }
      if (words.length === 0) continue
      flush()
      const input: Message.MessageInput = {
        role: "user",
        parts: words,
        ...(line.uuid === undefined ? {} : { id: line.uuid })
      }
      if (line.raw.isCompactSummary === true) {
        steps.push({ _tag: "Compaction", at: boundary?.at ?? at, line: line.line, summary: input })
        boundary = undefined
        continue
      }
      if (boundary !== undefined) {
        // A boundary whose summary line is missing: the history is dropped all the same.
        steps.push({ _tag: "Compaction", at: boundary.at, line: boundary.line, summary: undefined })
        boundary = undefined
      }
      if (callsInTurn > 0 && answers.length === 0) {
        steps.push({ _tag: "TurnEnd", at, line: line.line })
        callsInTurn = 0
      }
      steps.push({ _tag: "Messages", at, line: line.line, messages: [input] })
    }
    flush()
    if (boundary !== undefined)
      steps.push({ _tag: "Compaction", at: boundary.at, line: boundary.line, summary: undefined })
    if (callsInTurn > 0) {
      const last = steps.at(-1)
      if (last !== undefined) steps.push({ _tag: "TurnEnd", at: last.at, line: last.line })
    }
    return steps
  })

/** The context window the renders are checked against: 1M when a recorded prompt needs it. */
const windowOf = (steps: ReadonlyArray<Step>): number =>
  steps.some((step) => step._tag === "Call" && (step.usage?.inputTokens ?? 0) > 180_000) ? 1_000_000 : 200_000

/**
 * Read a Claude Code session file: its main conversation and each sidechain, as sessions. A malformed
 * line fails the whole file (no session of it is written), naming the line.
 * @since 0.8.0
 */
export const read = (file: string, text: string): Effect.Effect<FileRead, ImportError> =>
  Effect.gen(function* () {
    const lines = yield* parseLines(file, text)
    const unknownCounts: Record<string, number> = {}
    const unknown = (type: string) => {
      unknownCounts[type] = (unknownCounts[type] ?? 0) + 1
    }
    const byUuid = new Map<string, Line>()
    for (const line of lines) {
      if (line.type === "attachment") {
        if (!isMessageLine(line)) unknown(`attachment:${attachmentKind(line.raw) ?? "?"}`)
      } else if (!isMessageLine(line) && line.type !== "system" && !bookkeeping.has(line.type)) unknown(line.type)
      if (line.uuid !== undefined) byUuid.set(line.uuid, line)
    }
    const messageLines = lines.filter(isMessageLine)
    const first = messageLines[0]
    const sessionId = str(first?.raw.sessionId)
    const agentId = str(first?.raw.agentId)
    // A subagent's own file: every message line is a sidechain; it links to its session's stream.
    const subagentFile = messageLines.length > 0 && messageLines.every((line) => line.sidechain)
    const main =
      subagentFile && sessionId !== undefined ? `${sessionId}/agent-${agentId ?? baseName(file)}` : baseName(file)
    const sessions: Array<Session> = []
    const mainLines = subagentFile ? messageLines : messageLines.filter((line) => !line.sidechain)
    const mainLeaf = mainLines.at(-1)
    const mainPath = mainLeaf === undefined ? [] : pathTo(mainLeaf, byUuid)
    const mainSteps = yield* stepsOf(file, mainPath, unknown)
    sessions.push({
      file,
      format: "claude-code",
      stream: main,
      wire: "anthropic",
      contextWindow: windowOf(mainSteps),
      parent: subagentFile && sessionId !== undefined ? { stream: sessionId } : undefined,
      steps: mainSteps
    })
    if (!subagentFile) {
      // Sidechains in the session's own file (older Claude Code): one per root, its path to its last line.
      const rootOf = new Map<string, Line>()
      const leaves = new Map<Line, Line>()
      for (const line of messageLines) {
        if (!line.sidechain) continue
        const parent = line.parent === undefined ? undefined : byUuid.get(line.parent)
        const root = parent?.sidechain === true && parent.uuid !== undefined ? rootOf.get(parent.uuid) : undefined
        const own = root ?? line
        if (line.uuid !== undefined) rootOf.set(line.uuid, own)
        leaves.set(own, line)
      }
      // The Task calls of the main conversation, by the prompt they passed.
      const spawners = new Map<string, string>()
      for (const line of mainPath) {
        const message = line.raw.message
        if (line.type !== "assistant" || !isRecord(message) || !Array.isArray(message.content)) continue
        for (const block of message.content) {
          if (isRecord(block) && block.type === "tool_use" && isRecord(block.input) && typeof block.id === "string") {
            const prompt = block.input.prompt
            if (typeof prompt === "string") spawners.set(prompt, block.id)
          }
        }
      }
      let index = 0
      for (const [root, leaf] of leaves) {
        index++
        const path = pathTo(leaf, byUuid).filter((line) => line.sidechain)
        const steps = yield* stepsOf(file, path, unknown)
        const prompt = isRecord(root.raw.message) ? textOfContent(root.raw.message.content) : ""
        sessions.push({
          file,
          format: "claude-code",
          stream: `${main}/sidechain-${index}`,
          wire: "anthropic",
          contextWindow: windowOf(steps),
          parent: { stream: main, toolCallId: spawners.get(prompt) },
          steps
        })
      }
    }
    return { file, format: "claude-code" as const, sessions, unknown: unknownCounts }
  })
