// Issue 11 acceptance: over generated conversations with large tool outputs at small budgets (4K–16K),
// every render plus its output reserve fits the model window, and every tool result appears in full or
// truncated (never only as a summary) in the first render after it arrived. Runs: CTXLOG_PROPERTY_RUNS
// (CI default 20; the nightly job sets 500).
import { DeferredSummaries, TemplateCompactor, TieredCompaction, ToolOutputPruning } from "@ctxlog/compaction"
import { Budget, ContextService, Ids, type LanguageModel, Message, TokenCounter, ToolPairs, Window } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import fc from "fast-check"
import { CtxBuilder } from "@ctxlog/providers"
import { stringsOf } from "./support.js"

const runs = Number(process.env.CTXLOG_PROPERTY_RUNS ?? "20")

/** The counter of the window below: the character heuristic. */
const counter = TokenCounter.heuristic(4)

const live = Layer.merge(
  ContextService.layerMemory({
    tokenCounter: Layer.succeed(TokenCounter.TokenCounter, counter),
    ids: Ids.layerSequential("p")
  }),
  TemplateCompactor.layer()
)

const bash: LanguageModel.ToolSpec = {
  name: "bash",
  description: "Run a shell command and return its output.",
  inputSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] }
}

/** Varied text (not one repeated character) so head and tail are distinguishable. */
const text = (seed: string, chars: number) => {
  let out = ""
  for (let line = 0; out.length < chars; line++) out += `${seed} line ${line}: value=${(line * 7919) % 1000}\n`
  return out.slice(0, chars)
}

const turn = fc.record({
  userChars: fc.integer({ min: 10, max: 3000 }),
  thoughtChars: fc.integer({ min: 0, max: 1500 }),
  outputs: fc.array(fc.integer({ min: 50, max: 60_000 }), { minLength: 0, maxLength: 3 }),
  answerChars: fc.integer({ min: 5, max: 1500 }),
  // Extra operations between tool calls and turns.
  midIteration: fc.boolean(),
  summarizePairs: fc.boolean(),
  flush: fc.boolean(),
  injectSummaries: fc.boolean(),
  // Signals and subgoals are rendered with labels and wrappers; the window counts them that way.
  signal: fc.option(fc.integer({ min: 5, max: 400 }), { nil: undefined }),
  subgoals: fc.option(fc.array(fc.integer({ min: 5, max: 200 }), { minLength: 1, maxLength: 4 }), { nil: undefined }),
  // Injected knowledge (replacing its kind), sent inside its `<context kind="…">` wrapper and counted so.
  inject: fc.option(
    fc.record({
      kind: fc.constantFrom("recall", "graph_facts", "document_rag"),
      pieces: fc.array(fc.integer({ min: 5, max: 300 }), { minLength: 0, maxLength: 2 })
    }),
    { nil: undefined }
  )
})

const scenario = fc.record({
  provider: fc.constantFrom("anthropic", "openai", "openai-responses", "ollama", "default"),
  contextWindow: fc.integer({ min: 4096, max: 16_384 }),
  maxOutputTokens: fc.option(fc.integer({ min: 256, max: 2048 }), { nil: undefined }),
  tools: fc.boolean(),
  reminder: fc.boolean(),
  goal: fc.option(fc.integer({ min: 5, max: 400 }), { nil: undefined }),
  turns: fc.array(turn, { minLength: 1, maxLength: 10 })
})

const builderFor = (s: typeof scenario extends fc.Arbitrary<infer A> ? A : never) => {
  const common = {
    model: s.provider === "anthropic" ? "claude-sonnet-4-5" : "m",
    contextWindow: s.contextWindow,
    ...(s.maxOutputTokens === undefined ? {} : { maxOutputTokens: s.maxOutputTokens })
  }
  switch (s.provider) {
    case "anthropic":
      return CtxBuilder.forProvider({ provider: "anthropic", ...common })
    case "openai":
      return CtxBuilder.forProvider({ provider: "openai", ...common })
    case "openai-responses":
      return CtxBuilder.forProvider({ provider: "openai", api: "responses", ...common })
    case "ollama":
      return CtxBuilder.forProvider({ provider: "ollama", ...common })
    case "default":
      return CtxBuilder.forProvider({ provider: "default", ...common })
  }
}

describe("budget fit over generated conversations (issue 11 acceptance)", () => {
  it("every render plus its output reserve fits the window; a new tool result is whole or truncated, never a summary", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, (s) =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const stream = "fit"
          const builder = builderFor(s)
          const options: CtxBuilder.BuildOptions = {
            ...(s.tools ? { tools: [bash] } : {}),
            ...(s.reminder ? { turnReminder: "<reminder>Stay on the task; keep edits minimal.</reminder>" } : {})
          }
          const budget = builder.budget(options)
          const config: TieredCompaction.Config = { budget }
          yield* ctx.setSystemPrompt(stream, "You are a careful coding agent.")
          if (s.goal !== undefined) yield* ctx.setTaskGoal(stream, text("goal", s.goal))
          let call = 0
          const render = (arrived: ReadonlyMap<string, string>) =>
            Effect.gen(function* () {
              const window = yield* ctx.load(stream)
              const built = builder.build(window, options)
              expect(Either.isRight(built)).toBe(true)
              if (Either.isLeft(built)) return
              const { stats } = built.right
              // The render plus its output reserve fits the model's window.
              expect(stats.total + stats.reminderTokens + stats.outputReserve).toBeLessThanOrEqual(budget.contextWindow)
              expect(Budget.fits(budget, stats.total + stats.reminderTokens)).toBe(true)
              // Every result that arrived since the last render is there, whole or truncated to fit.
              const results = new Map(
                window.history
                  .flatMap((message) => Message.toolResultsOf(message))
                  .map((part) => [part.toolCallId, part])
              )
              for (const [id, original] of arrived) {
                const part = results.get(id)
                expect(part, `result ${id} missing from the first render after it arrived`).toBeDefined()
                const content = part?.content ?? ""
                if (content !== original) {
                  expect(content).toContain("characters cut to fit the context window")
                  expect(content.startsWith(ToolOutputPruning.stubPrefix)).toBe(false)
                  const head = content.slice(0, content.indexOf("\n[... "))
                  expect(original.startsWith(head)).toBe(true)
                }
              }
              expect(ToolPairs.problems(window.history, window.completedToolIds)).toEqual([])
              // Injected knowledge goes out wrapped, and the window counts at least the wrapped text.
              const sent = stringsOf(built.right.request).join("\n")
              for (const message of window.knowledge.filter((item) => item.kind !== "chat")) {
                const wrapped = Window.renderContext(message.kind, Message.textOf(message))
                expect(sent).toContain(wrapped)
                expect(message.tokens).toBeGreaterThanOrEqual(counter.count(wrapped))
              }
            })
          for (const [index, t] of s.turns.entries()) {
            if (t.subgoals !== undefined) {
              yield* ctx.setSubgoals(
                stream,
                t.subgoals.map((chars, i) => text(`subgoal ${i}`, chars))
              )
            }
            if (t.signal !== undefined) yield* ctx.raiseSignal(stream, text(`signal ${index}`, t.signal))
            if (t.injectSummaries) yield* ctx.injectSummaries(stream, 200)
            if (t.inject !== undefined) {
              const { kind, pieces } = t.inject
              yield* ctx.inject(
                stream,
                kind,
                pieces.map((chars, i) => text(`${kind} ${index}.${i}`, chars))
              )
            }
            yield* ctx.appendMessages(stream, [Message.user(text(`user ${index}`, t.userChars))])
            yield* TieredCompaction.maybeCompact(stream, config)
            yield* render(new Map())
            if (t.outputs.length > 0) {
              const ids = t.outputs.map(() => `call-${++call}`)
              const outputs = new Map(ids.map((id, i) => [id, text(`output of ${id}`, t.outputs[i] ?? 0)]))
              yield* ctx.appendMessages(stream, [
                Message.assistant(
                  text("thinking", t.thoughtChars),
                  ids.map((id) => Message.toolCall(id, "bash", { command: `run ${id}` }))
                ),
                ...ids.map((id) => Message.tool(id, outputs.get(id) ?? ""))
              ])
              if (t.summarizePairs) yield* DeferredSummaries.maybeSummarizeToolPair(stream, { cutoffTokens: 500 })
              if (t.flush) yield* DeferredSummaries.flushDeferredSummaries(stream)
              if (t.midIteration) yield* TieredCompaction.maybeSoftCompactMidIteration(stream, config)
              yield* TieredCompaction.maybeCompact(stream, config)
              yield* render(outputs)
            }
            yield* ctx.appendMessages(stream, [Message.assistant(text(`answer ${index}`, t.answerChars))])
            yield* TieredCompaction.maybeCompact(stream, config)
            yield* render(new Map())
            yield* ctx.completeTurn(stream)
          }
        }).pipe(Effect.provide(live), Effect.runPromise)
      ),
      { numRuns: runs }
    )
  }, 120_000)
})
