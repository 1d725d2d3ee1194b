// Random conversations driven only through Turn.prepare / Turn.render / Turn.complete (issue 20's
// acceptance property): user interjections after tool results the model has not seen, turns stopped on
// tool results, single messages several times the window, random policies (compaction on/off, seams
// on/off, deferred summaries on/off, recall on/off, windows from 2k to 32k, every builder). After every step:
//   (a) a successful render plus its output reserve fits the context window;
//   (b) the newest tool results the model has not seen are in that render's request body, whole or cut
//       with the fit marker, never summarized or dropped;
//   (c) every recorded render rebuilds and verifies (RenderRecord.verifyAll over the stream's events);
//   (d) a failed step wrote nothing.
import { ToolOutputPruning } from "@ctxlog/compaction"
import { ContextService, Message } from "@ctxlog/core"
import { RenderRecord } from "@ctxlog/providers"
import { describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import fc from "fast-check"
import { assert } from "vitest"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import { type Policy, Turn } from "../src/index.js"
import { eventsOf, stack } from "./support.js"

const tools = [
  {
    name: "read_file",
    description: "Read a file",
    inputSchema: { type: "object", properties: { path: { type: "string" } } }
  }
]

type Builder = "anthropic" | "openai-chat" | "openai-responses" | "ollama" | "default"

const configOf = (
  builder: Builder,
  contextWindow: number,
  maxOutputTokens: number,
  toolOutputChars: number | undefined
): Policy.Policy["builder"] => {
  // Without a limit of their own the builders cut a tool output to a share of the window when it is
  // logged; a limit far above the window lets huge outputs reach the fit, which must cut them.
  const common = {
    contextWindow,
    maxOutputTokens,
    ...(toolOutputChars === undefined ? {} : { toolOutputLimits: { defaultChars: toolOutputChars } })
  }
  switch (builder) {
    case "anthropic":
      return { provider: "anthropic", model: "claude-test", ...common }
    case "openai-chat":
      return { provider: "openai", model: "gpt-test", api: "chat_completions", ...common }
    case "openai-responses":
      return { provider: "openai", model: "gpt-test", api: "responses", ...common }
    case "ollama":
      return { provider: "ollama", model: "llama-test", ...common }
    case "default":
      return { provider: "default", model: "any", ...common }
  }
}

const share = (min: number, max: number) => fc.double({ min, max, noNaN: true, noDefaultInfinity: true })

const policyArb: fc.Arbitrary<Policy.Policy> = fc
  .record({
    builder: fc.constantFrom<Builder>("anthropic", "openai-chat", "openai-responses", "ollama", "default"),
    window: fc.oneof(fc.integer({ min: 2048, max: 4096 }), fc.integer({ min: 4096, max: 32768 })),
    reserveShare: share(0.02, 0.25),
    compaction: fc.option(
      fc.record({
        soft: share(0.3, 0.75),
        hardGap: share(0.05, 0.2),
        target: share(0.2, 0.6),
        cooldownTurns: fc.integer({ min: 0, max: 3 }),
        midIteration: fc.boolean(),
        keepRecent: fc.integer({ min: 0, max: 3 })
      }),
      { nil: undefined }
    ),
    seams: fc.option(
      fc.record({ level1: share(0.2, 0.6), step: share(0.02, 0.1), verbatimWindow: fc.integer({ min: 1, max: 6 }) }),
      { nil: undefined }
    ),
    deferred: fc.option(fc.record({ cutoffShare: share(0.05, 0.5), minTokens: fc.integer({ min: 0, max: 400 }) }), {
      nil: undefined
    }),
    inputShare: fc.option(share(0.1, 0.5), { nil: undefined }),
    toolOutputChars: fc.option(fc.constant(10_000_000), { nil: undefined }),
    recall: fc.option(fc.record({ recallShare: share(0.01, 0.2), crossSessionShare: share(0.01, 0.2) }), {
      nil: undefined
    })
  })
  .map((p): Policy.Policy => {
    const maxOutputTokens = Math.max(64, Math.floor(p.window * p.reserveShare))
    return {
      builder: configOf(p.builder, p.window, maxOutputTokens, p.toolOutputChars),
      render: { tools, turnReminder: "Stay in the workspace.", maxOutputTokens },
      compaction:
        p.compaction === undefined
          ? null
          : {
              softThreshold: p.compaction.soft,
              hardThreshold: Math.min(1, p.compaction.soft + p.compaction.hardGap),
              // Below the hard threshold (a policy with targetRatio >= hardThreshold is refused up front).
              targetRatio: Math.min(p.compaction.target, p.compaction.soft),
              cooldownTurns: p.compaction.cooldownTurns,
              midIteration: p.compaction.midIteration,
              calibrate: false,
              prune: { keepRecent: p.compaction.keepRecent, minChars: 200 }
            },
      seams:
        p.seams === undefined
          ? null
          : {
              level1: p.seams.level1,
              level2: Math.min(1, p.seams.level1 + p.seams.step),
              level3: Math.min(1, p.seams.level1 + 2 * p.seams.step),
              verbatimWindow: p.seams.verbatimWindow
            },
      deferred: p.deferred ?? null,
      recall: p.recall === undefined ? null : { ...p.recall, owner: "prop" },
      ...(p.inputShare === undefined ? {} : { inputShare: p.inputShare })
    }
  })

/** Sizes are multiples of the context window in tokens (~4 characters each): small, medium or huge. */
const sizeArb = fc.oneof(
  { weight: 5, arbitrary: share(0.001, 0.05) },
  { weight: 3, arbitrary: share(0.05, 0.4) },
  { weight: 1, arbitrary: share(0.5, 3) }
)

type Action =
  | { readonly _tag: "user"; readonly size: number; readonly midTurn: boolean }
  | { readonly _tag: "call"; readonly sizes: ReadonlyArray<number>; readonly stop: boolean }
  | { readonly _tag: "answer" }

const actionArb: fc.Arbitrary<Action> = fc.oneof(
  // midTurn: an interjection inside an open turn (the next render is not the turn's first call).
  {
    weight: 3,
    arbitrary: fc.record({ size: sizeArb, midTurn: fc.boolean() }).map((a): Action => ({ _tag: "user", ...a }))
  },
  {
    weight: 5,
    arbitrary: fc
      .record({ sizes: fc.array(sizeArb, { minLength: 1, maxLength: 2 }), stop: fc.boolean() })
      .map((a): Action => ({ _tag: "call", ...a }))
  },
  { weight: 2, arbitrary: fc.constant<Action>({ _tag: "answer" }) }
)

/** `tokens` tokens of distinct words (so neither a cache nor a dedupe makes two of them alike). */
const text = (tokens: number, seed: string): string => {
  const words: Array<string> = []
  let chars = 0
  for (let i = 0; chars < tokens * 4; i++) {
    const word = `${seed}${i}`
    words.push(word)
    chars += word.length + 1
  }
  return words.join(" ")
}

/** The phrase of the fit marker that names a tool call (the marker's newlines are escaped in JSON). */
const markerPhrase = (toolCallId: string): string => {
  const marker = ToolOutputPruning.fitMarker(1, 2, toolCallId)
  const start = marker.indexOf("cut to fit")
  const end = marker.indexOf(toolCallId) + toolCallId.length
  return marker.slice(start, end)
}

/** How a JSON body spells a string's content. */
const inJson = (content: string): string => JSON.stringify(content).slice(1, -1)

describe("Turn (property)", () => {
  it("random conversations: every render fits, keeps the newest unseen tool results, rebuilds; failed steps write nothing", async () => {
    const failures: Array<string> = []
    // What the runs exercised: renders, the tiers and fit stages that ran, unseen results seen whole or cut.
    const seen = { renders: 0, unseenWhole: 0, unseenCut: 0, tiers: new Map<string, number>() }
    const tally = (tiers: ReadonlyArray<string>) => {
      for (const tier of tiers) seen.tiers.set(tier, (seen.tiers.get(tier) ?? 0) + 1)
    }
    await fc.assert(
      fc.asyncProperty(policyArb, fc.array(actionArb, { minLength: 2, maxLength: 10 }), async (policy, actions) => {
        await yieldToEventLoop()
        const window = policy.builder.contextWindow ?? 8192
        const program = Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const stream = "prop"
          yield* ctx.setSystemPrompt(stream, "You are a careful agent.")
          // The tool results appended after the last successful render: id → the content as logged.
          let unseen = new Map<string, string>()
          let iteration = 0
          let calls = 0
          let turnOpen = false
          const all: ReadonlyArray<Action> = [{ _tag: "user", size: 0.01, midTurn: false }, ...actions]
          for (const [step, action] of all.entries()) {
            const where = `step ${step} (${action._tag}) under ${JSON.stringify(policy)}`
            const before = yield* eventsOf(stream)
            const check = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
              Effect.gen(function* () {
                const result = yield* Effect.either(effect)
                const after = yield* eventsOf(stream)
                if (Either.isLeft(result)) {
                  // (d) a failed step wrote nothing.
                  assert.strictEqual(after.length, before.length, `${where}: a failed step wrote events`)
                  assert.strictEqual(after.at(-1)?.hash, before.at(-1)?.hash)
                }
                // (c) every recorded render rebuilds.
                const verification = RenderRecord.verifyAll(after)
                assert.deepStrictEqual(
                  verification.failures.map((f) => f.message),
                  [],
                  `${where}: a recorded render does not rebuild`
                )
                assert.strictEqual(verification.verified, verification.renders)
                assert.deepStrictEqual(
                  [...verification.overWindow],
                  [],
                  `${where}: a recorded render exceeds the window`
                )
                return result
              })
            if (action._tag === "user") {
              const prepared = yield* check(
                Turn.prepare(
                  stream,
                  { messages: [Message.user(text(Math.floor(window * action.size), `u${step}w`))] },
                  policy
                )
              )
              if (Either.isLeft(prepared)) failures.push(`${where}: prepare failed: ${prepared.left._tag}`)
              if (!(action.midTurn && turnOpen)) iteration = 0
              turnOpen = true
              continue
            }
            if (!turnOpen) {
              // A turn ended: the next model call starts a new one with a short user message.
              const opened = yield* check(Turn.prepare(stream, { messages: [Message.user(`next ${step}`)] }, policy))
              if (Either.isLeft(opened)) {
                failures.push(`${where}: prepare failed: ${opened.left._tag}`)
                continue
              }
              iteration = 0
              turnOpen = true
            }
            const rendered = yield* check(Turn.render(stream, policy, { iteration }))
            if (Either.isLeft(rendered)) {
              failures.push(`${where}: render failed: ${rendered.left._tag}: ${rendered.left.message}`)
              continue
            }
            const built = rendered.right
            seen.renders++
            tally(built.tiers)
            // (a) the render plus its output reserve fits the context window.
            assert.isTrue(
              RenderRecord.fits(built.built.stats),
              `${where}: render ${JSON.stringify(built.built.stats)} does not fit`
            )
            // (b) the newest unseen tool results are in the request, whole or cut with the fit marker.
            for (const [id, content] of unseen) {
              const whole = built.body.includes(inJson(content))
              const cut = built.body.includes(inJson(markerPhrase(id)))
              if (whole) seen.unseenWhole++
              else if (cut) seen.unseenCut++
              assert.isTrue(
                whole || cut,
                `${where}: the unseen tool result ${id} (${content.length} chars) is not in the render (tiers ${built.tiers.join(",")})`
              )
            }
            unseen = new Map()
            iteration++
            const answer =
              action._tag === "answer"
                ? [Message.text(`Answer ${step}.`)]
                : [
                    Message.text(`Reading ${action.sizes.length} file(s).`),
                    ...action.sizes.map((_, i) => Message.toolCall(`call_${step}_${i}`, "read_file", { path: `f${i}` }))
                  ]
            const results =
              action._tag === "answer"
                ? []
                : action.sizes.map((size, i) =>
                    Message.toolResult(`call_${step}_${i}`, text(Math.floor(window * size), `t${step}x${i}w`))
                  )
            const endTurn = action._tag === "answer" || action.stop
            const completed = yield* check(
              Turn.complete(
                stream,
                {
                  answer,
                  results,
                  usage: {
                    inputTokens: built.built.stats.total,
                    outputTokens: 10,
                    cacheReadTokens: 0,
                    cacheWriteTokens: 0
                  },
                  estimatedInputTokens: built.built.stats.total,
                  endTurn
                },
                policy
              )
            )
            if (Either.isLeft(completed)) {
              failures.push(`${where}: complete failed: ${completed.left._tag}`)
              continue
            }
            calls++
            const logged = new Map(
              completed.right.window.history
                .flatMap((message) => Message.toolResultsOf(message))
                .map((result) => [result.toolCallId, result.content])
            )
            for (const result of results) {
              const content = logged.get(result.toolCallId)
              assert.isDefined(
                content,
                `${where}: the tool result ${result.toolCallId} is not in the window after complete`
              )
              if (content !== undefined) unseen.set(result.toolCallId, content)
            }
            if (endTurn) turnOpen = false
          }
          // A turn stopped on tool results: the next user message is an interjection; its render must
          // still carry them (checked above when the next action renders). Close with one render.
          if (unseen.size > 0) {
            yield* Turn.prepare(stream, { messages: [Message.user("also, hurry")] }, policy)
            const last = yield* Effect.either(Turn.render(stream, policy, { iteration: 0 }))
            if (Either.isRight(last)) {
              assert.isTrue(RenderRecord.fits(last.right.built.stats))
              for (const [id, content] of unseen) {
                assert.isTrue(
                  last.right.body.includes(inJson(content)) || last.right.body.includes(inJson(markerPhrase(id))),
                  `final interjection: the unseen tool result ${id} is not in the render (tiers ${last.right.tiers.join(",")}) under ${JSON.stringify(policy)}`
                )
              }
            } else failures.push(`final render failed: ${last.left._tag}`)
            const verification = RenderRecord.verifyAll(yield* eventsOf(stream))
            assert.deepStrictEqual(
              verification.failures.map((f) => f.message),
              []
            )
            assert.deepStrictEqual([...verification.overWindow], [])
          }
          return calls
        })
        await Effect.runPromise(program.pipe(Effect.provide(stack())))
      }),
      { numRuns: propertyRuns(12, 0.1) }
    )
    // Failed steps are allowed (they wrote nothing); list them, and what the runs exercised, for the record.
    console.log(
      `turn property: ${seen.renders} renders; unseen tool results whole ${seen.unseenWhole}, cut ${seen.unseenCut}; ` +
        `tiers ${JSON.stringify(Object.fromEntries([...seen.tiers].sort()))}; ${failures.length} failed step(s)` +
        (failures.length === 0
          ? ""
          : `:\n${failures
              .slice(0, 5)
              .map((f) => `${f.slice(0, 20)} … ${f.slice(-360)}`)
              .join("\n")}`)
    )
    // The generators reach the fit (a property that never needs it would test little).
    assert.isAbove(seen.renders, 0)
  }, 120_000)
})
