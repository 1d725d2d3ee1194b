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

/** The line that says what failed (an error line, a failed test), else the first line with text. */
const failureLine = (value: string): string =>
  value
    .split("\n")
    .map((line) => line.trim())
    .find((line) => errorPattern.test(line) || /^not ok\b/.test(line)) ?? firstMeaningfulLine(value)

const decisionPattern =
  /\b(i will|i'll|let me|let's|we will|we'll|decided|decide|plan|going to|instead|the fix|the issue is|the problem is|root cause|should)\b/i

const pathsIn = (value: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (const match of value.matchAll(pathPattern)) {
    // A sentence's full stop is not part of the path (the pattern's characters include dots).
    const path = match[1]?.replace(/\.+$/, "")
    if (path === undefined || path.length < 3 || path.length > 160) continue
    if (/^https?:/.test(path) || /^\d+(\.\d+)+$/.test(path)) continue
    // Node's own modules in stack traces (node:internal/…) and words like I/O are not files.
    if (value.slice(Math.max(0, (match.index ?? 0) - 4), (match.index ?? 0) + 1).endsWith("node:")) continue
    if (path.split("/").every((segment) => segment.length <= 1)) continue
    found.push(path)
  }
  return found
}

const sentencesMatching = (value: string, pattern: RegExp): ReadonlyArray<string> =>
  value
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    // A sentence that only opens a list ("Plan:") says nothing once the list is gone.
    .filter((sentence) => sentence.length > 0 && !sentence.endsWith(":") && pattern.test(sentence))

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

const emptySections: Sections = {
  goal: null,
  earlier: null,
  requests: [],
  decisions: [],
  tools: [],
  files: [],
  errors: []
}

/** Two previous summaries as one: the older's goal, both carried-over texts, their items in order. */
const merged = (older: Sections, newer: Sections): Sections => ({
  goal: older.goal ?? newer.goal,
  earlier:
    older.earlier === null
      ? newer.earlier
      : newer.earlier === null
        ? older.earlier
        : `${older.earlier}\n\n${newer.earlier}`,
  requests: unique([...older.requests, ...newer.requests]),
  decisions: unique([...older.decisions, ...newer.decisions]),
  tools: [...older.tools, ...newer.tools],
  files: unique([...older.files, ...newer.files]),
  errors: unique([...older.errors, ...newer.errors])
})

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
  // A summary among the messages (a seam or a later compaction folding an earlier summary) is a previous
  // summary, never a user request: taken as one, it became the goal and a request, nesting its headings
  // ("## Goal # Summary of earlier conversation ## Goal …", issue 39).
  const priors: Array<Sections> = []
  const prior = (text: string): Sections => parse(text) ?? { ...emptySections, earlier: text.trim() }
  if (previousSummary !== null) priors.push(prior(previousSummary))
  for (const message of messages) {
    const body = Message.textOf(message)
    if (message.kind === "summary" || parse(body) !== null) {
      if (body.trim().length > 0) priors.push(prior(body))
      continue
    }
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
      if (failed) errors.push(`${name}: ${oneLine(failureLine(result.content), 200)}`)
      files.push(...pathsIn(result.content).slice(0, 20))
    }
  }
  const firstRequest = requests[0]
  // A previous summary of our own format is merged section by section (its items first, so the oldest
  // drop first under the cap); anything else is carried over as opaque text. Merging, not nesting:
  // nested carry-overs repeated the goal once per roll and buried the oldest items deepest.
  const previous = priors.length === 0 ? null : priors.reduce(merged)
  if (previous !== null) {
    return {
      goal: goal ?? previous.goal ?? firstRequest ?? null,
      earlier: previous.earlier,
      requests: unique([...previous.requests, ...requests]),
      decisions: unique([...previous.decisions, ...decisions]),
      tools: [...previous.tools, ...tools],
      files: unique([...previous.files, ...files]),
      errors: unique([...previous.errors, ...errors])
    }
  }
  return {
    goal: goal ?? firstRequest ?? null,
    earlier: null,
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

const listSections = {
  "User requests": "requests",
  Decisions: "decisions",
  "Files touched": "files",
  "Tool calls and outcomes": "tools",
  Errors: "errors"
} as const satisfies Record<string, keyof Sections>

/**
 * Read a summary this module rendered back into its sections; `null` for any other text (an LLM's
 * summary, a seam), which is then carried over whole. A summary of the older, nested format (an
 * "Earlier (carried over)" section holding a whole summary) flattens: its repeated sections merge.
 */
export const parse = (summary: string): Sections | null => {
  const trimmed = summary.trim()
  if (!trimmed.startsWith(title)) return null
  const lists: Record<(typeof listSections)[keyof typeof listSections], Array<string>> = {
    requests: [],
    decisions: [],
    files: [],
    tools: [],
    errors: []
  }
  const goalLines: Array<string> = []
  let goalsSeen = 0
  const earlier: Array<string> = []
  let current: string | null = null
  for (const line of trimmed.slice(title.length).split("\n")) {
    const heading = /^## (.+)$/.exec(line)
    if (heading !== null) {
      const name = heading[1] ?? ""
      if (name !== "Goal" && name !== "Earlier (carried over)" && !(name in listSections)) return null
      current = name
      if (name === "Goal") goalsSeen++
      continue
    }
    if (line.trim().length === 0) continue
    if (current === null) return null
    if (current === "Goal") {
      // A nested summary repeats the goal; the first one is the oldest.
      if (goalsSeen === 1) goalLines.push(line)
    } else if (current === "Earlier (carried over)") {
      if (line.trim() !== title) earlier.push(line)
    } else {
      const key = listSections[current as keyof typeof listSections]
      if (!line.startsWith("- ")) return null
      lists[key].push(line.slice(2))
    }
  }
  return {
    goal: goalLines.length === 0 ? null : goalLines.join("\n"),
    earlier: earlier.length === 0 ? null : earlier.join("\n"),
    requests: unique(lists.requests),
    decisions: unique(lists.decisions),
    tools: lists.tools,
    files: unique(lists.files),
    errors: unique(lists.errors)
  }
}

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
