// Issue 11 item 10: the window counts injected context as the builders send it, inside its
// `<context kind="…">` wrapper, so its total matches the text each builder sends for the system,
// knowledge, task-state, signals and history sections (plus the per-message overhead every window
// message carries, TokenCounter.messageOverhead, which stands for the framing a provider adds).
import { ContextService, Message, TokenCounter, Window } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { CtxBuilder } from "../src/index.js"
import { memoryContext } from "./services.js"

const live = (counter: TokenCounter.TokenCounter.Service) => memoryContext(counter, "k")

interface Case {
  readonly label: string
  readonly builder: CtxBuilder.CtxBuilder<CtxBuilder.RenderedRequest>
  /** The text strings the builder sent as content, in order. */
  readonly sent: (request: unknown) => ReadonlyArray<string>
  /** `\n\n` joins the builder adds between pieces it merges into one message. */
  readonly joins: (window: Window.Window) => number
  /** Whether it sends a `chat` system message found in history bare (the window counts it wrapped). */
  readonly bareSystemInHistory: boolean
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const arrayAt = (value: unknown, key: string): ReadonlyArray<unknown> => {
  const item = isRecord(value) ? value[key] : undefined
  return Array.isArray(item) ? item : []
}
const stringAt = (value: unknown, key: string): ReadonlyArray<string> => {
  const item = isRecord(value) ? value[key] : undefined
  return typeof item === "string" ? [item] : []
}
/** A content field: a string, or text parts. */
const contentTexts = (value: unknown): ReadonlyArray<string> => {
  const content = isRecord(value) ? value.content : undefined
  if (typeof content === "string") return [content]
  return Array.isArray(content) ? content.flatMap((part) => stringAt(part, "text")) : []
}

const injected = (window: Window.Window) => window.knowledge.filter((message) => message.kind !== "chat").length
const stable = (window: Window.Window) => window.knowledge.filter((message) => message.kind === "chat").length
const separate = (window: Window.Window) =>
  Math.max(0, window.system.length - 1) + Math.max(0, stable(window) - 1) + Math.max(0, injected(window) - 1)

const chatSent = (request: unknown) => arrayAt(request, "messages").flatMap(contentTexts)

const cases: ReadonlyArray<Case> = [
  {
    label: "anthropic",
    builder: CtxBuilder.forProvider({ provider: "anthropic", model: "claude-sonnet-4-5" }),
    // One system block per piece; message content as text blocks.
    sent: (request) => [
      ...arrayAt(request, "system").flatMap((block) => stringAt(block, "text")),
      ...arrayAt(request, "messages").flatMap(contentTexts)
    ],
    joins: () => 0,
    bareSystemInHistory: false
  },
  {
    label: "openai",
    builder: CtxBuilder.forProvider({ provider: "openai", model: "gpt-4o" }),
    sent: chatSent,
    joins: separate,
    bareSystemInHistory: true
  },
  {
    label: "openai-responses",
    builder: CtxBuilder.forProvider({ provider: "openai", api: "responses", model: "gpt-5" }),
    sent: (request) => arrayAt(request, "input").flatMap(contentTexts),
    joins: separate,
    bareSystemInHistory: true
  },
  {
    label: "ollama",
    builder: CtxBuilder.forProvider({ provider: "ollama", model: "qwen2.5:7b" }),
    sent: chatSent,
    // One system message: identity, stable and injected knowledge all joined.
    joins: (window) => Math.max(0, window.system.length + window.knowledge.length - 1),
    bareSystemInHistory: false
  },
  {
    label: "default",
    builder: CtxBuilder.forProvider({ provider: "default", model: "local-model" }),
    sent: chatSent,
    joins: separate,
    bareSystemInHistory: true
  }
]

/** A window with every section: identity, stable and injected knowledge, task state, signals, history. */
const fullWindow = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  const stream = "knowledge-tokens"
  yield* ctx.setSystemPrompt(stream, "You are a careful coding agent. Keep edits minimal.")
  yield* ctx.setKnowledge(stream, [
    "The repository uses pnpm workspaces and Biome.",
    "Dates are parsed by src/date/parse.ts."
  ])
  yield* ctx.inject(stream, "recall", [
    "Last week the leap-year branch was rewritten by Ana (PR #412).",
    "The parser test fixtures live in test/fixtures/dates.json"
  ])
  yield* ctx.inject(stream, "graph_facts", ["parse.ts -> imports -> calendar.ts"])
  yield* ctx.inject(stream, "summary", ["Earlier: the user asked to keep the public API unchanged."])
  yield* ctx.setTaskGoal(stream, "Fix the failing date parser test on leap years")
  yield* ctx.setSubgoals(stream, ["Find the test", "Patch the parser"])
  yield* ctx.raiseSignal(stream, "CI is red on main since 09:12.")
  const { window } = yield* ctx.appendMessages(stream, [
    Message.user("The date parser test fails on leap years."),
    Message.assistant("Looking at the parser now."),
    // Injected context that compaction or a seam left in history, and a system note in history.
    { role: "user", kind: "summary", parts: [Message.text("Summary: the failure is in Feb 29 handling.")] },
    Message.system("Note: the user is on a metered connection."),
    Message.user("Please fix it without touching the public API.")
  ])
  return window
})

/** Window messages a builder sends (each carries the per-message overhead in the window's count). */
const messageCount = (window: Window.Window) => Window.messages(window).length

describe("injected context is counted as rendered (issue 11 item 10)", () => {
  it.effect(
    "with o200k the window's total is the tokens of the text each builder sends, plus the per-message overhead",
    () =>
      Effect.gen(function* () {
        const counter = TokenCounter.gpt("o200k_base")
        const window = yield* fullWindow.pipe(Effect.provide(live(counter)))
        const systemNote = Message.textOf(window.history[3] ?? Message.user(""))
        expect(systemNote).toBe("Note: the user is on a metered connection.")
        const systemWrapper = counter.count(Window.renderContext("system", systemNote)) - counter.count(systemNote)
        const text = window.tokens.total - TokenCounter.messageOverhead * messageCount(window)
        for (const { label, builder, sent, joins, bareSystemInHistory } of cases) {
          const built = builder.build(window)
          if (Either.isLeft(built)) throw new Error(`${label}: ${built.left.message}`)
          const strings = sent(built.right.request)
          // The wrapped form is what goes out, byte for byte.
          expect(strings.join("\n"), label).toContain(
            Window.renderContext("recall", "Last week the leap-year branch was rewritten by Ana (PR #412).")
          )
          expect(strings.join("\n"), label).toContain(
            Window.renderContext("summary", "Summary: the failure is in Feb 29 handling.")
          )
          const sentTokens = strings.reduce((total, item) => total + counter.count(item), 0)
          // Builders that send the system note bare send its wrapper's tokens less than the window counts.
          const expected = text - (bareSystemInHistory ? systemWrapper : 0)
          // Each `\n\n` join costs at most one token (none after a closing `>` or `.`).
          expect(sentTokens - expected, label).toBeGreaterThanOrEqual(0)
          expect(sentTokens - expected, label).toBeLessThanOrEqual(joins(window))
          // needsCompression counts the window's total: never short of the text sent.
          expect(window.tokens.total, label).toBeGreaterThanOrEqual(sentTokens)
          expect(built.right.stats.tokens.total, label).toBe(window.tokens.total)
        }
      })
  )

  it.effect(
    "each injected message's tokens are its wrapped text plus the overhead, under o200k and the heuristic",
    () =>
      Effect.gen(function* () {
        for (const counter of [TokenCounter.gpt("o200k_base"), TokenCounter.heuristic(4)]) {
          const window = yield* fullWindow.pipe(Effect.provide(live(counter)))
          const wrapped = [
            ...window.knowledge.filter((message) => message.kind !== "chat"),
            ...window.history.filter((message) => message.kind !== "chat" || message.role === "system")
          ]
          expect(wrapped.length, counter.name).toBe(6)
          for (const message of wrapped) {
            const label = message.kind === "chat" ? message.role : message.kind
            expect(message.tokens, `${counter.name} ${message.id}`).toBe(
              counter.count(Window.renderContext(label, Message.textOf(message))) + TokenCounter.messageOverhead
            )
          }
          // Stable knowledge and the system prompt go bare and are counted bare.
          for (const message of [...window.system, ...window.knowledge.filter((m) => m.kind === "chat")]) {
            expect(message.tokens, counter.name).toBe(counter.countMessage(message))
          }
        }
      })
  )
})
