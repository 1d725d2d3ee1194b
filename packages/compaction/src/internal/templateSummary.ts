import { Message } from "@ctxlog/core"

const encoder = new TextEncoder()

/** UTF-8 length of a string. */
export const byteLength = (value: string): number => encoder.encode(value).length

/** Cut `value` to at most `maxBytes` UTF-8 bytes, never splitting a character, marking the cut. */
export const truncateBytes = (value: string, maxBytes: number): string => {
  if (byteLength(value) <= maxBytes) return value
  const marker = " …"
  const room = Math.max(0, maxBytes - byteLength(marker))
  let out = ""
  let used = 0
  for (const char of value) {
    const size = byteLength(char)
    if (used + size > room) break
    out += char
    used += size
  }
  return `${out}${marker}`
}

const oneLine = (value: string, max: number): string => {
  const flat = value.replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

const firstMeaningfulLine = (value: string): string =>
  value
    .split("\n")
    .map((line) => line.trim())
    .find((line) => line.length > 0) ?? ""

// Paths like src/a.ts, ./x/y, /etc/passwd, file.py. Kept conservative: a slash or a known extension.
const pathPattern =
  /(?:^|[\s"'`(=:])((?:\.{0,2}\/)?(?:[\w@.-]+\/)+[\w@.-]+|[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|rs|go|c|h|cc|cpp|hpp|java|kt|rb|php|pl|cgi|sh|json|yaml|yml|toml|md|txt|html|css|sql|pony|cmake|lock))(?=$|[\s"'`),:;])/g

const errorPattern = /\b(error|exception|traceback|failed|failure|fatal|panic|denied|not found)\b/i

const decisionPattern =
  /\b(i will|i'll|let me|let's|we will|we'll|decided|decide|plan|going to|instead|the fix|the issue is|the problem is|root cause|should)\b/i

const pathsIn = (value: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (const match of value.matchAll(pathPattern)) {
    const path = match[1]
    if (path === undefined || path.length < 3 || path.length > 160) continue
    if (/^https?:/.test(path) || /^\d+(\.\d+)+$/.test(path)) continue
    found.push(path)
  }
  return found
}

const sentencesMatching = (value: string, pattern: RegExp): ReadonlyArray<string> =>
  value
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0 && pattern.test(sentence))

const unique = (values: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(values)]

type JsonRecord = { readonly [key: string]: Message.JsonValue }

// Array.isArray does not narrow readonly arrays away, hence a guard of our own.
const isRecord = (value: Message.JsonValue): value is JsonRecord =>
  value !== null && typeof value === "object" && !Array.isArray(value)

const inputPreview = (input: Message.JsonValue): string => {
  if (typeof input === "string") return oneLine(input, 100)
  if (isRecord(input)) {
    // Most tools take one meaningful argument (command, path, query): show it first.
    const record = input
    const preferred = ["command", "cmd", "path", "file_path", "filePath", "query", "pattern", "url"]
    const key = preferred.find((candidate) => record[candidate] !== undefined)
    const value = key === undefined ? undefined : record[key]
    if (key !== undefined && value !== undefined) {
      return oneLine(`${key}=${typeof value === "string" ? value : JSON.stringify(value)}`, 100)
    }
  }
  return oneLine(JSON.stringify(input), 100)
}

/** The sections a template summary is made of, newest items last. */
export interface Sections {
  readonly goal: string | null
  readonly earlier: string | null
  readonly requests: ReadonlyArray<string>
  readonly decisions: ReadonlyArray<string>
  readonly tools: ReadonlyArray<string>
  readonly files: ReadonlyArray<string>
  readonly errors: ReadonlyArray<string>
}

/** Extract the sections from messages, deterministically. */
export const extract = (
  messages: ReadonlyArray<Message.Message>,
  previousSummary: string | null,
  goal: string | null
): Sections => {
  const calls = new Map<string, Message.ToolCallPart>()
  const requests: Array<string> = []
  const decisions: Array<string> = []
  const tools: Array<string> = []
  const files: Array<string> = []
  const errors: Array<string> = []
  for (const message of messages) {
    const body = Message.textOf(message)
    if (message.role === "user" && body.trim().length > 0) requests.push(oneLine(body, 240))
    if (message.role === "assistant") {
      decisions.push(...sentencesMatching(body, decisionPattern).map((sentence) => oneLine(sentence, 200)))
    }
    files.push(...pathsIn(body))
    for (const call of Message.toolCallsOf(message)) {
      calls.set(call.id, call)
      files.push(...pathsIn(JSON.stringify(call.input)))
    }
    for (const result of Message.toolResultsOf(message)) {
      const call = calls.get(result.toolCallId)
      const name = call?.name ?? "tool"
      const args = call === undefined ? "" : `(${inputPreview(call.input)})`
      const failed = result.isError || errorPattern.test(firstMeaningfulLine(result.content))
      const outcome =
        result.content.trim().length === 0 ? "no output" : oneLine(firstMeaningfulLine(result.content), 120)
      tools.push(`${name}${args} → ${failed ? "error" : "ok"}: ${outcome}`)
      if (failed) errors.push(`${name}: ${oneLine(firstMeaningfulLine(result.content), 200)}`)
      files.push(...pathsIn(result.content).slice(0, 20))
    }
  }
  const firstRequest = requests[0]
  return {
    goal: goal ?? (firstRequest === undefined && previousSummary !== null ? null : (firstRequest ?? null)),
    earlier: previousSummary,
    requests: unique(requests),
    decisions: unique(decisions),
    tools,
    files: unique(files),
    errors: unique(errors)
  }
}

const section = (title: string, items: ReadonlyArray<string>): string =>
  items.length === 0 ? "" : `\n## ${title}\n${items.map((item) => `- ${item}`).join("\n")}\n`

const title = "# Summary of earlier conversation"

/** A carried-over summary without its own title line, so titles do not pile up as summaries roll. */
const withoutTitle = (summary: string): string => {
  const trimmed = summary.trim()
  return trimmed.startsWith(title) ? trimmed.slice(title.length).trim() : trimmed
}

/** Render sections to text. */
export const render = (sections: Sections): string =>
  [
    `${title}\n`,
    sections.goal === null ? "" : `\n## Goal\n${sections.goal}\n`,
    sections.earlier === null ? "" : `\n## Earlier (carried over)\n${withoutTitle(sections.earlier)}\n`,
    section("User requests", sections.requests),
    section("Decisions", sections.decisions),
    section("Files touched", sections.files),
    section("Tool calls and outcomes", sections.tools),
    section("Errors", sections.errors)
  ].join("")

/**
 * Render within `maxBytes`: drop the oldest items of the longest list first, then shorten the
 * carried-over text, and finally cut the whole text. Goal and errors go last.
 */
export const renderWithin = (sections: Sections, maxBytes: number): string => {
  let current = sections
  let text = render(current)
  const droppable = ["tools", "decisions", "files", "requests", "errors"] as const
  while (byteLength(text) > maxBytes) {
    const earlierBytes = current.earlier === null ? 0 : byteLength(current.earlier)
    // The carry-over may take at most half the budget; beyond that it shrinks before lists do.
    if (earlierBytes > maxBytes / 2 && current.earlier !== null) {
      current = { ...current, earlier: truncateBytes(current.earlier, Math.floor(maxBytes / 2)) }
    } else {
      const longest = droppable
        .filter((key) => current[key].length > 0)
        .sort((a, b) => current[b].length - current[a].length)[0]
      if (longest === undefined) return truncateBytes(text, maxBytes)
      current = { ...current, [longest]: current[longest].slice(1) }
    }
    text = render(current)
  }
  return text
}
