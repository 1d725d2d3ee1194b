import { Compactor, ContextService, LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { LlmCompactor, TemplateCompactor, TieredCompaction } from "../src/index.js"
import { coreLayer } from "./harness.js"

let n = 0
const msg = (input: Message.MessageInput): Message.Message => ({
  id: `m${++n}`,
  role: input.role,
  kind: input.kind ?? "chat",
  parts: input.parts,
  tokens: 10
})

const conversation: ReadonlyArray<Message.Message> = [
  msg(Message.user("Fix the failing test in src/parser.ts")),
  msg(Message.assistant("Let me run the tests first.", [Message.toolCall("c1", "bash", { command: "npm test" })])),
  msg(Message.tool("c1", "Error: expected 3 but got 4\n  at src/parser.ts:12", true)),
  msg(
    Message.assistant("The issue is an off-by-one in parse(). I will change the loop bound.", [
      Message.toolCall("c2", "edit", { path: "src/parser.ts", old: "<=", new: "<" })
    ])
  ),
  msg(Message.tool("c2", "edited src/parser.ts"))
]

describe("TemplateCompactor", () => {
  it.effect("keeps goal, decisions, tools with outcomes, files and errors", () =>
    Effect.gen(function* () {
      const { summary } = yield* TemplateCompactor.make().compact({
        messages: conversation,
        previousSummary: null,
        goal: "make the parser tests pass"
      })
      assert.include(summary, "## Goal\nmake the parser tests pass")
      assert.include(summary, "off-by-one")
      assert.include(summary, "bash(command=npm test) → error")
      assert.include(summary, "edit(path=src/parser.ts) → ok")
      assert.include(summary, "- src/parser.ts")
      assert.include(summary, "## Errors\n- bash: Error: expected 3 but got 4")
    })
  )

  it.effect("is deterministic", () =>
    Effect.gen(function* () {
      const compactor = TemplateCompactor.make()
      const a = yield* compactor.compact({ messages: conversation, previousSummary: "before" })
      const b = yield* compactor.compact({ messages: conversation, previousSummary: "before" })
      assert.strictEqual(a.summary, b.summary)
    })
  )

  it.effect("rolls the previous summary forward and respects maxBytes", () =>
    Effect.gen(function* () {
      const compactor = TemplateCompactor.make({ maxBytes: 600 })
      const first = yield* compactor.compact({ messages: conversation, previousSummary: null })
      const many = Array.from({ length: 60 }, (_, i) =>
        msg(Message.user(`request number ${i} about file lib/module${i}.py with a long explanation attached`))
      )
      const second = yield* compactor.compact({ messages: many, previousSummary: first.summary })
      assert.isAtMost(new TextEncoder().encode(second.summary).length, 600)
      assert.include(second.summary, "# Summary of earlier conversation")
      // Our own summary merges section by section instead of nesting under "Earlier".
      assert.notInclude(second.summary, "## Earlier (carried over)")
      // The newest requests survive the cap; the oldest go first. The goal is the first summary's.
      assert.include(second.summary, "request number 59")
      assert.notInclude(second.summary, "- request number 0 ")
      assert.include(second.summary, `## Goal\n${(firstGoal(first.summary) ?? "").trim()}`)
    })
  )

  it.effect("rolling many times keeps one goal and one copy of each section (no nesting)", () =>
    Effect.gen(function* () {
      const compactor = TemplateCompactor.make({ maxBytes: 4000 })
      let summary: string | null = null
      for (let roll = 0; roll < 8; roll++) {
        const chunk = [
          msg(Message.user(`step ${roll}: look at src/mod${roll}.ts`)),
          msg(Message.assistant(`I will read src/mod${roll}.ts next.`))
        ]
        summary = (yield* compactor.compact({ messages: chunk, previousSummary: summary, goal: "ship it" })).summary
      }
      const text = summary ?? ""
      assert.strictEqual(text.split("## Goal").length - 1, 1)
      assert.strictEqual(text.split("## User requests").length - 1, 1)
      assert.notInclude(text, "## Earlier (carried over)")
      for (let roll = 0; roll < 8; roll++) assert.include(text, `- step ${roll}: look at src/mod${roll}.ts`)
      // A previous summary that is not ours is carried over whole.
      const foreign = yield* compactor.compact({ messages: [msg(Message.user("next"))], previousSummary: "before" })
      assert.include(foreign.summary, "## Earlier (carried over)\nbefore")
    })
  )

  it.effect("stack-trace module paths, words like I/O and list openers are not files or decisions", () =>
    Effect.gen(function* () {
      const { summary } = yield* TemplateCompactor.make().compact({
        messages: [
          msg(Message.user("Run it; keep I/O out of src/cart.js.")),
          msg(Message.assistant("Plan:")),
          msg(Message.assistant("", [Message.toolCall("t1", "bash", { command: "node --test" })])),
          msg(
            Message.tool(
              "t1",
              "$ node --test\nnot ok 1 - discount\n    at Test.run (node:internal/test_runner/test:796:25)",
              true
            )
          )
        ],
        previousSummary: null
      })
      assert.include(summary, "- src/cart.js\n")
      assert.notInclude(summary, "- internal/test_runner")
      // The error line says what failed, not the command echo.
      assert.include(summary, "## Errors\n- bash: not ok 1 - discount")
      assert.notInclude(summary, "- I/O")
      assert.notInclude(summary, "## Decisions")
    })
  )

  it.effect("fails with a typed error on empty input", () =>
    Effect.gen(function* () {
      const result = yield* Effect.either(TemplateCompactor.make().compact({ messages: [], previousSummary: null }))
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) assert.strictEqual(result.left.reason, "input")
    })
  )

  it.effect("compactNow answers what compact answers, at once, failures included (ADR 0168)", () =>
    Effect.gen(function* () {
      const compactor = TemplateCompactor.make({ maxBytes: 600 })
      const compactNow = compactor.compactNow
      if (compactNow === undefined) return assert.fail("the template compactor answers at once")
      for (const input of [
        { messages: conversation, previousSummary: null, goal: "make the parser tests pass" },
        { messages: conversation, previousSummary: "before", maxSummaryTokens: 50, workspace: "/repo" },
        { messages: [], previousSummary: null }
      ]) {
        assert.deepStrictEqual(compactNow(input), yield* Effect.either(compactor.compact(input)))
      }
    })
  )

  it.effect("a tier summarizes with compactNow when the compactor has one, and with compact otherwise", () =>
    Effect.gen(function* () {
      const asked: Array<string> = []
      const template = TemplateCompactor.make()
      const both: Compactor.Compactor.Service = {
        name: "both",
        compact: (input) =>
          Effect.flatMap(
            Effect.sync(() => asked.push("compact")),
            () => template.compact(input)
          ),
        compactNow: (input) => {
          asked.push("compactNow")
          return (
            template.compactNow?.(input) ??
            Either.left(new Compactor.CompactionError({ compactor: "both", reason: "input", detail: "none" }))
          )
        }
      }
      const effectOnly: Compactor.Compactor.Service = { name: "effect-only", compact: both.compact }
      const summarized = (compactor: Compactor.Compactor.Service, stream: string) =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          yield* ctx.appendMessages(
            stream,
            conversation.map(({ role, parts }): Message.MessageInput => ({ role, parts }))
          )
          return yield* TieredCompaction.compactContext(stream, 200, { keepTokens: 0 })
        }).pipe(Effect.provideService(Compactor.Compactor, compactor))
      const now = yield* summarized(both, "now")
      const later = yield* summarized(effectOnly, "later")
      assert.deepStrictEqual(asked, ["compactNow", "compact"])
      assert.strictEqual(now._tag, "Compacted")
      assert.strictEqual(later._tag, "Compacted")
      if (now._tag === "Compacted" && later._tag === "Compacted") {
        assert.strictEqual(Message.textOf(now.summary), Message.textOf(later.summary))
      }
    }).pipe(Effect.provide(coreLayer))
  )

  it.effect("the layer provides the Compactor service", () =>
    Effect.gen(function* () {
      const compactor = yield* Compactor.Compactor
      assert.strictEqual(compactor.name, "template")
    }).pipe(Effect.provide(TemplateCompactor.layer({ maxBytes: 1000 })))
  )
})

/** A scripted language model: `generate` answers; streaming is not used by compactors. */
const scripted = (generate: LanguageModel.LanguageModel.Service["generate"]): LanguageModel.LanguageModel.Service => ({
  provider: "scripted",
  model: "test",
  generate,
  stream: () => Stream.dieMessage("streaming is not used by compactors")
})

const modelLayer = (
  generate: LanguageModel.LanguageModel.Service["generate"]
): Layer.Layer<LanguageModel.LanguageModel> => Layer.succeed(LanguageModel.LanguageModel, scripted(generate))

const answer = (text: string): LanguageModel.ModelResponse => ({
  provider: "scripted",
  model: "test",
  parts: [Message.text(text)],
  stopReason: "end_turn",
  usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }
})

describe("LlmCompactor", () => {
  it.effect("asks for the sections, rolls the previous summary in, returns the answer", () => {
    const seen: Array<LanguageModel.ModelRequest> = []
    return Effect.gen(function* () {
      const compactor = yield* Compactor.Compactor
      const out = yield* compactor.compact({
        messages: conversation,
        previousSummary: "PREVIOUS",
        maxSummaryTokens: 200
      })
      assert.strictEqual(out.summary, "## Goal\nfix parser")
      const request = seen[0]
      assert.isDefined(request)
      assert.strictEqual(request?.maxOutputTokens, 200)
      for (const title of LlmCompactor.sections) assert.include(request?.system ?? "", `## ${title}`)
      const body = Message.textOf(request?.messages[0] ?? { parts: [] })
      assert.include(body, "PREVIOUS")
      assert.include(body, "[tool call bash")
    }).pipe(
      Effect.provide(
        LlmCompactor.layer({ maxSummaryTokens: 500 }).pipe(
          Layer.provide(
            modelLayer((request) => {
              seen.push(request)
              return Effect.succeed(answer("  ## Goal\nfix parser  "))
            })
          )
        )
      )
    )
  })

  it.effect("maps a provider failure and an empty answer to typed errors", () =>
    Effect.gen(function* () {
      const failing = LlmCompactor.make(
        scripted(() =>
          Effect.fail(new LanguageModel.ProviderError({ provider: "p", reason: "server", detail: "boom" }))
        )
      )
      const error = yield* Effect.flip(failing.compact({ messages: conversation, previousSummary: null }))
      assert.strictEqual(error.reason, "model")
      const empty = LlmCompactor.make(scripted(() => Effect.succeed(answer("   "))))
      const error2 = yield* Effect.flip(empty.compact({ messages: conversation, previousSummary: null }))
      assert.strictEqual(error2.reason, "empty")
    })
  )

  it.effect("times out with a typed error", () =>
    Effect.gen(function* () {
      const hanging = LlmCompactor.make(
        scripted(() => Effect.never),
        { timeout: "5 seconds" }
      )
      const fiber = yield* Effect.fork(Effect.flip(hanging.compact({ messages: conversation, previousSummary: null })))
      yield* TestClock.adjust("6 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error.reason, "timeout")
    })
  )
})

describe("LlmCompactor in tiered compaction", () => {
  it.effect("a hard compaction summarizes through the language model and bounds the answer", () => {
    const requests: Array<LanguageModel.ModelRequest> = []
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      for (let i = 0; i < 12; i++) {
        yield* ctx.appendMessages("llm", [
          Message.user(`question ${i} ${"q ".repeat(300)}`),
          Message.assistant("a ".repeat(300))
        ])
      }
      const result = yield* TieredCompaction.maybeCompact("llm", { budget: 4000, maxSummaryTokens: 100 })
      assert.strictEqual(result._tag, "Compacted")
      if (result._tag !== "Compacted") return
      assert.strictEqual(requests.length, 1)
      assert.strictEqual(requests[0]?.maxOutputTokens, 100)
      assert.isTrue(Message.textOf(result.summary).startsWith("## Goal\nanswer questions"))
      // The model answered far more than asked: the summary is cut to the bound.
      assert.isAtMost(result.summary.tokens, 100)
    }).pipe(
      Effect.provide(
        Layer.merge(
          coreLayer,
          LlmCompactor.layer().pipe(
            Layer.provide(
              modelLayer((request) => {
                requests.push(request)
                return Effect.succeed(
                  answer(`## Goal\nanswer questions\n## Decisions\n${"- keep going\n".repeat(200)}`)
                )
              })
            )
          )
        )
      )
    )
  })
})

const firstGoal = (summary: string): string | undefined => /## Goal\n([^\n]*)/.exec(summary)?.[1]
