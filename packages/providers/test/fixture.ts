/** The shared fixture window: every partition filled, a parallel tool call pair, a recall injection. */
import { type LanguageModel, Message, Window, WindowEvent } from "@ctxlog/core"
import { assert } from "@effect/vitest"

let counter = 0
const eventId = () => `ev-${++counter}`

/** A message as the log would hold it (tokens given explicitly, so tests control cache thresholds). */
export const msg = (
  id: string,
  input: Message.MessageInput,
  tokens: number,
  kind: Message.MessageKind = input.kind ?? "chat"
): Message.Message => ({ id, role: input.role, kind, parts: input.parts, tokens })

/** Replay events onto the empty window. */
export const windowOf = (events: ReadonlyArray<WindowEvent.Draft>): Window.Window =>
  Window.replay(events.map((draft, index) => WindowEvent.stamp(draft, `fixture-${index + 1}-${eventId()}`)))

export const fixtureEvents: ReadonlyArray<WindowEvent.Draft> = [
  {
    _tag: "SystemPromptSet",
    messages: [
      msg(
        "sys-1",
        Message.system("You are a careful coding agent. Follow the repository's conventions. Never invent file paths."),
        1200
      )
    ]
  },
  {
    _tag: "KnowledgeSet",
    messages: [msg("kn-1", Message.system("The project uses pnpm workspaces and vitest."), 300)]
  },
  {
    _tag: "MessagesInjected",
    kind: "recall",
    messages: [msg("rc-1", Message.system("Earlier, the user asked to keep commits small."), 40, "recall")],
    replacesInHistory: false
  },
  { _tag: "TaskGoalSet", goal: "Fix the failing date parser test", tokens: 8 },
  { _tag: "SubgoalsSet", subgoals: ["Find the test", "Read the parser", "Patch and rerun"], tokens: 12 },
  {
    _tag: "SignalRaised",
    signal: { id: "sig-1", text: "Build cache is cold; the first test run is slow.", tokens: 12 }
  },
  { _tag: "MessageAppended", message: msg("u-1", Message.user("The date parser test fails on leap years."), 14) },
  {
    _tag: "MessageAppended",
    message: msg(
      "a-1",
      Message.assistant("Let me look at the test and the parser together.", [
        Message.toolCall("call_read_test", "read_file", { path: "test/date.test.ts" }),
        Message.toolCall("call_read_src", "read_file", { path: "src/date.ts" })
      ]),
      40
    )
  },
  {
    _tag: "MessageAppended",
    message: msg("t-1", Message.tool("call_read_test", "expect(parse('2024-02-29'))..."), 20)
  },
  {
    _tag: "MessageAppended",
    message: msg("t-2", Message.tool("call_read_src", "export const parse = (s) => { /* no leap years */ }", true), 24)
  },
  {
    _tag: "MessageAppended",
    message: msg("a-2", Message.assistant("The parser ignores February 29. I will patch it."), 16)
  },
  { _tag: "MessageAppended", message: msg("u-2", Message.user("Go ahead."), 6) }
]

/** The fixture window. */
export const fixtureWindow: Window.Window = windowOf(fixtureEvents)

/** A tool the fixture offers. */
export const readFileTool = {
  name: "read_file",
  description: "Read a file from the workspace. Returns its text. Paths are relative to the repository root.",
  inputSchema: {
    type: "object",
    title: "ReadFileInput",
    properties: { path: { type: "string", description: "The path of the file to read, relative to the root." } },
    required: ["path"]
  }
} as const

/** What the scripted servers answer to the fixture request: a text and one `read_file` call. */
export const expectedParts = [
  Message.text("Reading."),
  Message.toolCall("call_1", "read_file", { path: "src/date.ts" })
]

/**
 * The chunks of the scripted streamed answer, as every client must produce them: the text in two deltas,
 * the call's arguments in pieces, then `Done` with the whole response (a tool-use stop and the usage the
 * server reported, cached tokens included). Returns the final response for client-specific checks.
 */
export const assertStreamedReadFile = (
  chunks: ReadonlyArray<LanguageModel.ModelChunk>
): LanguageModel.ModelResponse => {
  assert.deepStrictEqual(
    chunks.filter((c) => c._tag === "TextDelta").map((c) => c.text),
    ["Read", "ing."]
  )
  assert.deepStrictEqual(
    chunks.flatMap((c) => (c._tag === "ToolCallDelta" ? [`${c.id}:${c.inputJson}`] : [])),
    ["call_1:", 'call_1:{"path":', 'call_1:"src/date.ts"}']
  )
  const done = chunks[chunks.length - 1]
  if (done?._tag !== "Done") return assert.fail("no Done chunk")
  assert.deepStrictEqual(done.response.parts, expectedParts)
  assert.strictEqual(done.response.stopReason, "tool_use")
  assert.deepStrictEqual(done.response.usage, {
    inputTokens: 1800,
    outputTokens: 20,
    cacheReadTokens: 1536,
    cacheWriteTokens: 0
  })
  return done.response
}
