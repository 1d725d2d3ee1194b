// `ctxlog import` of real sessions (fixtures/sessions, provenance in its README): every fixture imports,
// every model call is a rebuildable PromptRendered at the call's original time followed by the usage the
// provider recorded; a malformed line (fuzzed) is a typed error naming file:line and writes nothing of its
// session; unknown line types are counted; sidechains, a resumed/branched chain and a compaction boundary
// (derived in the tests from the real lines, as said at each) come out as the tool had them.
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Window, type WindowEvent } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import fc from "fast-check"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import * as Import from "../src/importers/Import.js"
import * as Session from "../src/importers/Session.js"
import { ctxlogInProcess, tempDir } from "./support/cli.js"

const root = fileURLToPath(new URL("../../../fixtures/sessions/", import.meta.url))
const fixtures = (format: string) =>
  readdirSync(join(root, format))
    .filter((name) => name.endsWith(".jsonl"))
    .map((name) => join(root, format, name))
const claudeFiles = fixtures("claude-code")
const codexFiles = fixtures("codex")
const temp = tempDir("ctxlog-import-sessions-")
afterAll(() => temp.cleanup())

type Json = Record<string, unknown>
const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const linesOf = (file: string): Array<Json> =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Json)
const field = (value: unknown, ...path: Array<string>): unknown =>
  path.reduce<unknown>((at, key) => (isJson(at) ? at[key] : undefined), value)

const readFile = (file: string, text = readFileSync(file, "utf8")) =>
  Import.readSessions(file, text, Import.detect(text) as "claude-code" | "codex", { provider: "openai", model: "m" })

const recordAll = (file: string, text?: string) =>
  Effect.gen(function* () {
    const read = yield* readFile(file, text)
    const recorded = []
    for (const session of read.sessions) recorded.push({ session, recorded: yield* Session.record(session) })
    return { read, recorded }
  })

/** Every render rebuilt from the log and checked against its hash (what `verify --renders` does). */
const verify = (events: ReadonlyArray<WindowEvent.WindowEvent>) =>
  RenderRecord.verifyAll(events.map((event, index) => ({ event, version: index + 1 })))

describe("format detection", () => {
  it("tells each fixture's format from its content", () => {
    for (const file of claudeFiles) assert.strictEqual(Import.detect(readFileSync(file, "utf8")), "claude-code", file)
    for (const file of codexFiles) assert.strictEqual(Import.detect(readFileSync(file, "utf8")), "codex", file)
    assert.strictEqual(Import.detect(JSON.stringify({ messages: [{ role: "user", content: "hi" }] })), "openai-chat")
    assert.strictEqual(
      Import.detect(JSON.stringify([{ type: "function_call", call_id: "c", name: "f", arguments: "{}" }])),
      "openai-responses"
    )
    assert.strictEqual(Import.detect(JSON.stringify([{ id: "1", role: "user", parts: [] }])), "ai-sdk")
  })
})

describe("Claude Code sessions (real fixtures)", () => {
  it("finds at least two real sessions", () => assert.isAtLeast(claudeFiles.length, 2))

  for (const file of claudeFiles) {
    it.effect(
      `${file.replace(/^.*[\\/]/, "")}: one call per message.id, rebuildable, at its time, with its usage`,
      () =>
        Effect.gen(function* () {
          const { recorded } = yield* recordAll(file)
          const [main] = recorded
          assert.isDefined(main)
          if (main === undefined) return
          const events = main.recorded.events
          const check = verify(events)
          assert.deepStrictEqual(check.failures, [])
          // The model calls the file records: distinct message ids of real (not synthetic) assistant lines.
          const firstLine = new Map<string, Json>()
          for (const line of linesOf(file)) {
            const id = field(line, "message", "id")
            const model = field(line, "message", "model")
            if (line.type === "assistant" && typeof id === "string" && model !== "<synthetic>" && !firstLine.has(id)) {
              firstLine.set(id, line)
            }
          }
          assert.strictEqual(check.renders, firstLine.size)
          assert.strictEqual(check.verified, firstLine.size)
          // Each render: its answer's line time, then the answer, then the usage as the provider reported it.
          let checked = 0
          events.forEach((event, index) => {
            if (event._tag !== "PromptRendered") return
            const answer = events[index + 1]
            const usage = events[index + 2]
            assert.strictEqual(answer?._tag, "MessageAppended")
            assert.strictEqual(usage?._tag, "UsageReported")
            if (answer?._tag !== "MessageAppended" || usage?._tag !== "UsageReported") return
            const line = firstLine.get(answer.message.id)
            assert.isDefined(line, answer.message.id)
            const recordedUsage = field(line, "message", "usage")
            const n = (key: string) => Number(field(recordedUsage, key) ?? 0)
            assert.strictEqual(
              usage.inputTokens,
              n("input_tokens") + n("cache_read_input_tokens") + n("cache_creation_input_tokens")
            )
            assert.strictEqual(usage.cacheReadTokens, n("cache_read_input_tokens"))
            assert.strictEqual(usage.cacheWriteTokens, n("cache_creation_input_tokens"))
            assert.strictEqual(
              usage.cacheWrite1hTokens,
              Number(field(recordedUsage, "cache_creation", "ephemeral_1h_input_tokens"))
            )
            assert.strictEqual(event.model, field(line, "message", "model"))
            assert.strictEqual(event.provider, "anthropic")
            assert.strictEqual(main.recorded.recordedAt[index], Date.parse(String(field(line, "timestamp"))))
            checked++
          })
          assert.strictEqual(checked, firstLine.size)
        })
    )
  }
})

describe("Codex rollouts (real fixtures)", () => {
  it("finds at least two real rollouts", () => assert.isAtLeast(codexFiles.length, 2))

  for (const file of codexFiles) {
    it.effect(`${file.replace(/^.*[\\/]/, "")}: one call per token_count, rebuildable, cached input kept`, () =>
      Effect.gen(function* () {
        const { recorded } = yield* recordAll(file)
        const [main] = recorded
        if (main === undefined) return assert.fail("no session")
        const check = verify(main.recorded.events)
        assert.deepStrictEqual(check.failures, [])
        // The distinct token counts of the file, in order: one per model call.
        const counts: Array<Json> = []
        let previous = ""
        for (const line of linesOf(file)) {
          const info = field(line, "payload", "info")
          if (field(line, "payload", "type") !== "token_count" || !isJson(info)) continue
          const totals = JSON.stringify(info.total_token_usage)
          if (totals === previous) continue
          previous = totals
          counts.push(info)
        }
        const usages = main.recorded.events.filter((event) => event._tag === "UsageReported")
        assert.strictEqual(check.renders, main.recorded.calls)
        assert.strictEqual(usages.length, counts.length)
        usages.forEach((usage, index) => {
          const last = field(counts[index], "last_token_usage")
          assert.strictEqual(usage.inputTokens, Number(field(last, "input_tokens")))
          assert.strictEqual(usage.cacheReadTokens, Number(field(last, "cached_input_tokens")))
          assert.strictEqual(usage.model, "gpt-5-codex")
        })
        const renders = main.recorded.events.filter((event) => event._tag === "PromptRendered")
        assert.isTrue(renders.every((render) => render.render?.config.api === "responses"))
      })
    )
  }
})

describe("ctxlog import on the fixture folder", () => {
  it("imports every session, verify --renders rebuilds every render, times are the recorded ones", async () => {
    const db = join(temp.dir, "all.db")
    const result = await ctxlogInProcess(["import", "--db", db, "--json", root])
    assert.strictEqual(result.code, 0, result.stderr)
    const report = JSON.parse(result.stdout) as Json
    const sessions = Array.isArray(report.sessions) ? report.sessions : []
    assert.strictEqual(sessions.length, claudeFiles.length + codexFiles.length)
    assert.deepStrictEqual(report.failed, [])
    const verified = JSON.parse((await ctxlogInProcess(["verify", "--db", db, "--renders", "--json"])).stdout) as Json
    assert.strictEqual(verified.ok, true)
    const streams = Array.isArray(verified.streams) ? verified.streams : []
    const calls = sessions.reduce((total: number, session: unknown) => total + Number(field(session, "calls")), 0)
    const rebuilt = streams.reduce(
      (total: number, stream: unknown) => total + Number(field(stream, "rendersVerified")),
      0
    )
    assert.strictEqual(rebuilt, calls)
    // The export keeps each event's original time: the first event of full-session-two is its first message's.
    const exported = await ctxlogInProcess(["export", "--db", db, "full-session-two"])
    const [, first] = exported.stdout.split("\n")
    const firstMessage = linesOf(join(root, "claude-code", "full-session-two.jsonl")).find(
      (line) => line.type === "user"
    )
    assert.strictEqual(JSON.parse(first ?? "{}").recordedAt, Date.parse(String(firstMessage?.timestamp)))
  })

  it("a malformed session writes nothing, the others import, unknown line types are counted, exit 1", async () => {
    const dir = join(temp.dir, "mixed")
    const db = join(temp.dir, "mixed.db")
    const { mkdirSync } = await import("node:fs")
    mkdirSync(dir)
    const good = readFileSync(join(root, "claude-code", "full-session-five.jsonl"), "utf8")
    writeFileSync(join(dir, "a-good.jsonl"), `${good}{"type":"brand-new-line-type","x":1}\n`)
    const lines = readFileSync(join(root, "claude-code", "full-session-two.jsonl"), "utf8").split("\n")
    lines[6] = lines[6]?.slice(0, 40) ?? ""
    writeFileSync(join(dir, "b-bad.jsonl"), lines.join("\n"))
    const missing = join(temp.dir, "no-such-session.jsonl")
    const result = await ctxlogInProcess(["import", "--db", db, "--json", dir, missing])
    assert.strictEqual(result.code, 1)
    const report = JSON.parse(result.stdout) as Json
    assert.deepStrictEqual(report.unknown, { "brand-new-line-type": 1 })
    const failures = Array.isArray(report.failed) ? report.failed : []
    assert.strictEqual(failures.length, 2)
    assert.isTrue(failures.some((failure: unknown) => field(failure, "file") === missing))
    const failed = failures.find((failure: unknown) => String(field(failure, "file")).includes("b-bad"))
    assert.strictEqual(field(failed, "line"), 7)
    assert.include(String(field(failed, "file")), "b-bad.jsonl")
    assert.include(String(field(failed, "detail")), "not JSON")
    const streams = await ctxlogInProcess(["streams", "--db", db, "--json"])
    assert.include(streams.stdout, "a-good")
    assert.notInclude(streams.stdout, "b-bad")
  })
})

/** A mutation that makes any line malformed, whatever its type. */
const breakers: ReadonlyArray<readonly [string, (line: string) => string]> = [
  ["cut", (line) => line.slice(0, Math.max(1, Math.floor(line.length / 2)))],
  ["array", () => "[1, 2, 3]"],
  ["number", () => "42"],
  ["no type", (line) => JSON.stringify({ ...(JSON.parse(line) as Json), type: undefined })]
]

describe("fuzz: a malformed line is a typed error naming file:line", () => {
  const files = [...claudeFiles, ...codexFiles]
  it("every format, any line, any breaking mutation", async () => {
    const texts = new Map(files.map((file) => [file, readFileSync(file, "utf8").split("\n")]))
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...files),
        fc.nat(),
        fc.constantFrom(...breakers),
        async (file, pick, [, mutate]) => {
          await yieldToEventLoop()
          const lines = [...(texts.get(file) ?? [])]
          const nonEmpty = lines.flatMap((line, index) => (line.trim() === "" ? [] : [index]))
          const index = nonEmpty[pick % nonEmpty.length] ?? 0
          lines[index] = mutate(lines[index] ?? "")
          const text = lines.join("\n")
          const format = file.includes("claude-code") ? "claude-code" : "codex"
          const read = await Effect.runPromise(
            Effect.either(Import.readSessions(file, text, format, { provider: "openai", model: "m" }))
          )
          assert.isTrue(Either.isLeft(read), `line ${index + 1} of ${file} was accepted`)
          if (Either.isLeft(read)) {
            assert.strictEqual(read.left._tag, "ImportError")
            assert.strictEqual(read.left.file, file)
            assert.strictEqual(read.left.line, index + 1)
          }
        }
      ),
      { numRuns: propertyRuns(40) }
    )
  })

  it("message-level damage on a conversation line names that line", async () => {
    const file = join(root, "claude-code", "full-session-four.jsonl")
    const lines = readFileSync(file, "utf8").split("\n")
    const conversation = lines.flatMap((line, index) =>
      line.includes('"type":"user"') || line.includes('"type":"assistant"') ? [index] : []
    )
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...conversation),
        fc.constantFrom<ReadonlyArray<(value: Json) => Json>>(
          [(value) => ({ ...value, message: 7 })],
          [(value) => ({ ...value, message: { ...(value.message as Json), content: 42 } })],
          [(value) => ({ ...value, timestamp: "not a time" })],
          [(value) => ({ ...value, message: { ...(value.message as Json), content: [{ type: "tool_use" }] } })]
        ),
        async (index, [mutate]) => {
          await yieldToEventLoop()
          const copy = [...lines]
          copy[index] = JSON.stringify(mutate?.(JSON.parse(copy[index] ?? "{}") as Json))
          const read = await Effect.runPromise(Effect.either(readFile(file, copy.join("\n"))))
          assert.isTrue(Either.isLeft(read))
          if (Either.isLeft(read)) assert.strictEqual(read.left.line, index + 1)
        }
      ),
      { numRuns: propertyRuns(30) }
    )
  })
})

describe("unknown line types", () => {
  it.effect("are counted per type and skipped, in both session formats", () =>
    Effect.gen(function* () {
      const claude = join(root, "claude-code", "full-session-five.jsonl")
      const claudeText = `${readFileSync(claude, "utf8")}{"type":"hologram","a":1}\n{"type":"hologram"}\n`
      const a = yield* readFile(claude, claudeText)
      assert.deepStrictEqual(a.unknown, { hologram: 2 })
      const codex = codexFiles[0] ?? ""
      const codexText = `${readFileSync(codex, "utf8")}{"timestamp":"2025-09-25T02:20:00.000Z","type":"telemetry","payload":{}}\n`
      const b = yield* readFile(codex, codexText)
      assert.deepStrictEqual(b.unknown, { telemetry: 1 })
    })
  )
})

// The real fixtures hold no sidechain, branch or compaction: these tests derive them from the real lines
// of full-session-four (the same message lines, re-linked the way Claude Code links them).
const four = join(root, "claude-code", "full-session-four.jsonl")
const fourLines = linesOf(four)
const conversation = fourLines.filter((line) => line.type === "user" || line.type === "assistant")
const userTexts = conversation.filter(
  (line) => line.type === "user" && typeof field(line, "message", "content") === "string"
)
// The user's own prompts (a line an answer follows), not the tool's caveat and command lines.
const prompts = userTexts.filter((line) =>
  conversation.some((other) => other.type === "assistant" && other.parentUuid === line.uuid)
)
const jsonl = (lines: ReadonlyArray<Json>) => `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`

describe("sidechains", () => {
  it.effect("become their own streams, linked to the parent stream and the Task call that spawned them", () =>
    Effect.gen(function* () {
      const [prompt] = prompts
      const answer = conversation.find((line) => line.type === "assistant" && line.parentUuid === prompt?.uuid)
      if (prompt === undefined || answer === undefined) return assert.fail("fixture shape")
      const promptText = String(field(prompt, "message", "content"))
      // The main conversation's last assistant line spawns the subagent with that prompt.
      const spawnLine = [...conversation].reverse().find((line) => line.type === "assistant")
      const spawned = {
        ...spawnLine,
        message: {
          ...(spawnLine?.message as Json),
          content: [{ type: "tool_use", id: "toolu_task_1", name: "Task", input: { prompt: promptText } }]
        }
      }
      const side = [
        { ...prompt, uuid: "side-1", parentUuid: null, isSidechain: true },
        { ...answer, uuid: "side-2", parentUuid: "side-1", isSidechain: true }
      ]
      const lines = fourLines.map((line) => (line === spawnLine ? spawned : line))
      const { recorded } = yield* recordAll(four, jsonl([...lines, ...side]))
      assert.strictEqual(recorded.length, 2)
      const [main, sidechain] = recorded
      assert.strictEqual(sidechain?.session.stream, `${main?.session.stream}/sidechain-1`)
      assert.deepStrictEqual(sidechain?.session.parent, { stream: "full-session-four", toolCallId: "toolu_task_1" })
      assert.deepStrictEqual(sidechain?.recorded.metadata[0], {
        actor: "import.claude-code",
        correlationId: "full-session-four",
        causationId: "toolu_task_1"
      })
      assert.strictEqual(sidechain?.recorded.calls, 1)
      assert.deepStrictEqual(verify(sidechain?.recorded.events ?? []).failures, [])
      // The main stream holds none of the sidechain's lines.
      const mainIds = (main?.recorded.events ?? []).flatMap((event) =>
        event._tag === "MessageAppended" ? [event.message.id] : []
      )
      assert.notInclude(mainIds, "side-1")
    })
  )
})

describe("a subagent's own file (subagents/agent-<id>.jsonl)", () => {
  it.effect("is a stream of its own under the session's, linked to the session's stream", () =>
    Effect.gen(function* () {
      // Newer Claude Code writes a subagent's lines to their own file, each marked isSidechain with its
      // agentId: derived here from full-session-four's first prompt and the answers that follow it.
      const [prompt] = prompts
      const sessionId = String(prompt?.sessionId)
      const path = conversation.slice(conversation.indexOf(prompt ?? {}), conversation.indexOf(prompts[1] ?? {}))
      const lines = path.map((line) => ({ ...line, isSidechain: true, agentId: "a7f3" }))
      const file = join(temp.dir, "agent-a7f3.jsonl")
      const { recorded } = yield* recordAll(file, jsonl(lines))
      assert.strictEqual(recorded.length, 1)
      const [agent] = recorded
      assert.strictEqual(agent?.session.stream, `${sessionId}/agent-a7f3`)
      assert.deepStrictEqual(agent?.session.parent, { stream: sessionId })
      assert.strictEqual(agent?.recorded.metadata[0]?.correlationId, sessionId)
      assert.isAbove(agent?.recorded.calls ?? 0, 0)
      assert.deepStrictEqual(verify(agent?.recorded.events ?? []).failures, [])
    })
  )
})

describe("a resumed session's branches", () => {
  it.effect("are linearized along the branch the tool continued", () =>
    Effect.gen(function* () {
      // A rewind: a new user message re-parented onto the second user turn's parent, then an answer.
      const rewindTo = prompts[1]
      if (rewindTo === undefined) return assert.fail("fixture shape")
      const replyTemplate = conversation.find(
        (line) => line.type === "assistant" && field(line, "message", "model") !== "<synthetic>"
      )
      const branch = [
        {
          ...rewindTo,
          uuid: "branch-user",
          message: { role: "user", content: "Actually, do it another way." },
          timestamp: "2025-10-27T00:00:00.000Z"
        },
        {
          ...replyTemplate,
          uuid: "branch-answer",
          parentUuid: "branch-user",
          message: {
            ...(replyTemplate?.message as Json),
            id: "msg_branch",
            content: [{ type: "text", text: "Sure." }]
          },
          timestamp: "2025-10-27T00:00:05.000Z"
        }
      ]
      const { recorded } = yield* recordAll(four, jsonl([...fourLines, ...branch]))
      const events = recorded[0]?.recorded.events ?? []
      const ids = events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message.id] : []))
      assert.include(ids, "branch-user")
      assert.include(ids, "msg_branch")
      // The abandoned branch (the original second turn on) is not in the stream.
      assert.notInclude(ids, String(rewindTo.uuid))
      assert.include(ids, String(prompts[0]?.uuid))
      assert.deepStrictEqual(verify(events).failures, [])
    })
  )
})

describe("the tool's own compaction", () => {
  it.effect("a compact_boundary and its summary become Compacted; later renders hold only what followed", () =>
    Effect.gen(function* () {
      // Claude Code's shape: a system compact_boundary (no parent, logicalParentUuid), then the
      // isCompactSummary user message, then the conversation goes on from the summary.
      const at = conversation.indexOf(prompts[1] ?? {})
      const before = conversation[at - 1]
      const next = conversation[at]
      if (before === undefined || next === undefined) return assert.fail("fixture shape")
      const boundary = {
        type: "system",
        subtype: "compact_boundary",
        content: "Conversation compacted",
        parentUuid: null,
        logicalParentUuid: before.uuid,
        uuid: "boundary-1",
        isSidechain: false,
        timestamp: next.timestamp,
        compactMetadata: { trigger: "manual", preTokens: 40000 }
      }
      const summary = {
        ...next,
        uuid: "summary-1",
        parentUuid: "boundary-1",
        isCompactSummary: true,
        message: { role: "user", content: "This session is being continued from a previous conversation. Summary: ..." }
      }
      const lines = fourLines.flatMap((line) =>
        line === next ? [boundary, summary, { ...next, parentUuid: "summary-1" }] : [line]
      )
      const { recorded } = yield* recordAll(four, jsonl(lines))
      const events = recorded[0]?.recorded.events ?? []
      const compacted = events.findIndex((event) => event._tag === "Compacted")
      const event = events[compacted]
      if (event?._tag !== "Compacted") return assert.fail("no Compacted event")
      assert.isAbove(event.removedIds.length, 5)
      assert.strictEqual(event.summary?.id, "summary-1")
      assert.strictEqual(recorded[0]?.recorded.recordedAt[compacted], Date.parse(String(next.timestamp)))
      assert.deepStrictEqual(verify(events).failures, [])
      // The first render after the boundary starts from the summary: nothing from before it is sent.
      let window = Window.empty
      for (const [index, current] of events.entries()) {
        if (index > compacted && current._tag === "PromptRendered") {
          const ids = Window.messages(window).map((message) => message.id)
          assert.strictEqual(ids[0], "summary-1")
          for (const removed of event.removedIds) assert.notInclude(ids, removed)
          break
        }
        window = Window.evolve(window, current)
      }
    })
  )
})

// Claude Code 2.1 writes `attachment` lines for what it adds to the next prompt itself. The fixtures
// (2.0.x) hold none: this test derives one from full-session-four's real lines, linked the way 2.1
// links it (after a tool result, the next assistant line its child).
describe("attachment lines", () => {
  it.effect("a nested_memory file is carried into the next render; other kinds are counted, not carried", () =>
    Effect.gen(function* () {
      const result = conversation.find(
        (line) =>
          line.type === "user" &&
          Array.isArray(field(line, "message", "content")) &&
          conversation.some((other) => other.type === "assistant" && other.parentUuid === line.uuid)
      )
      const next = conversation.find((line) => line.type === "assistant" && line.parentUuid === result?.uuid)
      if (result === undefined || next === undefined) return assert.fail("fixture shape")
      const body = "# apps/app\n\nRun `pnpm --filter app test` before each commit; routes live in src/routes.ts."
      const envelope = { isSidechain: false, sessionId: result.sessionId, timestamp: result.timestamp }
      const memory = {
        ...envelope,
        type: "attachment",
        uuid: "attach-1",
        parentUuid: result.uuid,
        attachment: {
          type: "nested_memory",
          path: "/repo/apps/app/CLAUDE.md",
          content: { path: "/repo/apps/app/CLAUDE.md", type: "Project", content: body, contentDiffersFromDisk: false },
          displayPath: "apps/app/CLAUDE.md"
        }
      }
      const listing = {
        ...envelope,
        type: "attachment",
        uuid: "attach-2",
        parentUuid: "attach-1",
        attachment: { type: "skill_listing", content: "..." }
      }
      const lines = fourLines.flatMap((line) =>
        line === result ? [line, memory, listing] : line === next ? [{ ...next, parentUuid: "attach-2" }] : [line]
      )
      const plain = yield* recordAll(four)
      const attached = yield* recordAll(four, jsonl(lines))
      assert.deepStrictEqual(attached.read.unknown, { "attachment:skill_listing": 1 })
      const events = attached.recorded[0]?.recorded.events ?? []
      const plainEvents = plain.recorded[0]?.recorded.events ?? []
      assert.deepStrictEqual(verify(events).failures, [])
      // The same calls and turns as without it: an attachment is neither a call nor the end of a turn.
      const tags = (list: ReadonlyArray<WindowEvent.WindowEvent>, tag: string) =>
        list.filter((event) => event._tag === tag).length
      assert.strictEqual(tags(events, "PromptRendered"), tags(plainEvents, "PromptRendered"))
      assert.strictEqual(tags(events, "TurnCompleted"), tags(plainEvents, "TurnCompleted"))
      // Appended as a user message after the tool result, and in every later render's window.
      const at = events.findIndex((event) => event._tag === "MessageAppended" && event.message.id === "attach-1")
      const appended = events[at]
      if (appended?._tag !== "MessageAppended") return assert.fail("attachment not appended")
      assert.strictEqual(appended.message.role, "user")
      const text = appended.message.parts.map((part) => (part.type === "text" ? part.text : "")).join("")
      assert.include(text, "Contents of /repo/apps/app/CLAUDE.md:")
      assert.include(text, body)
      let window = Window.empty
      let rendersAfter = 0
      for (const [index, current] of events.entries()) {
        if (index > at && current._tag === "PromptRendered") {
          rendersAfter++
          assert.include(
            Window.messages(window).map((message) => message.id),
            "attach-1"
          )
        }
        window = Window.evolve(window, current)
      }
      assert.isAbove(rendersAfter, 0)
    })
  )
})
