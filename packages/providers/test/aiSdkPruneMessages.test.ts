/**
 * The AI SDK's own `pruneMessages` cases, run on conversations that went through ctxlog (issue 35).
 * Source: vercel/ai `packages/ai/src/generate-text/prune-messages.test.ts` at commit
 * b8e4215ea7ddf4cca6551bdadfada8f1bbadd8cf (branch `release-v6.0`), Apache-2.0, Copyright Vercel, Inc.:
 * its fixtures, options and expected outputs copied, test names kept, all 9 cases. Each case checks
 * first that the installed `ai`'s `pruneMessages` gives what the case expects on the fixture as is
 * (so the case holds for the version we run), then runs `pruneMessages` on the fixture after a trip
 * through ctxlog (`fromModelMessages` → ctxlog messages → `toModelMessages`) and compares: the same, or
 * a stated rule by which ctxlog differs. `aiSdkPruning.test.ts` has our own scenarios.
 */
import { assert, describe, it } from "@effect/vitest"
import { convertToModelMessages, type ModelMessage, pruneMessages, type UIMessage } from "ai"
import * as Either from "effect/Either"
import { fromModelMessages, toModelMessages } from "../src/adapters/aiSdk.js"
import { assertCoverageRow, type Outcome } from "./support/coverage.js"

type Options = Omit<Parameters<typeof pruneMessages>[0], "messages">
type Json = Record<string, unknown>

interface Differs {
  readonly rule: string
  readonly expected: (upstream: ReadonlyArray<Json>) => ReadonlyArray<Json>
}
interface Case {
  readonly name: string
  readonly messages: () => Promise<ReadonlyArray<ModelMessage>> | ReadonlyArray<ModelMessage>
  readonly options: Options
  readonly expected: ReadonlyArray<Json>
  /** Where the installed `ai` prunes differently from the case's snapshot: why, and what it gives. */
  readonly installed?: { readonly note: string; readonly expected: ReadonlyArray<Json> }
  readonly verdict: "same" | Differs
}

const plain = <A>(value: A): A => JSON.parse(JSON.stringify(value))

const throughCtxlog = (messages: ReadonlyArray<ModelMessage>): Array<ModelMessage> =>
  Either.getOrThrow(Either.flatMap(fromModelMessages(messages), toModelMessages))

const splitRule: Differs = {
  rule:
    "ctxlog holds one tool result per tool message (as `Message.tool` makes them): a tool message with several " +
    "results comes back as one tool message per result, its approval responses first in a tool message of their own",
  expected: (upstream) =>
    upstream.flatMap((message) => {
      if (message.role !== "tool" || !Array.isArray(message.content)) return [message]
      const content = message.content as ReadonlyArray<Json>
      const approvals = content.filter((part) => part.type !== "tool-result")
      const results = content.filter((part) => part.type === "tool-result")
      return [
        ...(approvals.length === 0 ? [] : [{ role: "tool", content: approvals }]),
        ...results.map((part) => ({ role: "tool", content: [part] }))
      ]
    })
}

const countRule = (expected: ReadonlyArray<Json>): Differs => ({
  rule:
    "`before-last-N-messages` counts messages, and ctxlog's form has one tool message per result (approval " +
    "responses in one of their own): the last N messages hold the tool calls of fewer results, so fewer are kept " +
    "(here call-1 and the approval go)",
  expected: () => expected
})

// --- the case file's fixtures -----------------------------------------------------------------------

const text = (value: string) => ({ type: "text" as const, text: value })
const reasoning = (value: string) => ({ type: "reasoning" as const, text: value })
const question = "Weather in Tokyo and Busan?"
const thinkFirst = reasoning("I need to get the weather in Tokyo and Busan.")
const thinkAfter = reasoning("I have got the weather in Tokyo and Busan.")
const answer = text("The weather in Tokyo is sunny. I could not get the weather in Busan.")
const call = (n: 1 | 2, input: unknown = n === 1 ? '{"city": "Tokyo"}' : '{"city": "Busan"}') => ({
  type: "tool-call" as const,
  toolCallId: `call-${n}`,
  toolName: `get-weather-tool-${n}`,
  input
})
const approvalRequest = (n: 1 | 2) => ({
  type: "tool-approval-request" as const,
  toolCallId: `call-${n}`,
  approvalId: "approval-1"
})
const approved = { type: "tool-approval-response" as const, approvalId: "approval-1", approved: true }
const sunny = {
  type: "tool-result" as const,
  toolCallId: "call-1",
  toolName: "get-weather-tool-1",
  output: { type: "text" as const, value: "sunny" }
}
const failed = {
  type: "tool-result" as const,
  toolCallId: "call-2",
  toolName: "get-weather-tool-2",
  output: { type: "error-text" as const, value: "Error: Fetching weather data failed" }
}

const messagesFixture1: Array<ModelMessage> = [
  { role: "user", content: [text(question)] },
  { role: "assistant", content: [thinkFirst, call(1), call(2), approvalRequest(2)] },
  { role: "tool", content: [approved, sunny, failed] },
  { role: "assistant", content: [thinkAfter, answer] }
]

const messagesFixture2: Array<ModelMessage> = [
  { role: "user", content: [text(question)] },
  { role: "assistant", content: [thinkFirst, call(1), call(2), approvalRequest(1)] }
]

const ask = (id: string, q: string, n: 1 | 2) => ({
  type: "tool-call" as const,
  toolCallId: id,
  toolName: "AskUserQuestion",
  input: { question: q, options: [1, 2, 3].map((o) => `Tool ${n} Option ${o}`) }
})
const told = (id: string, value: string) => ({
  type: "tool-result" as const,
  toolCallId: id,
  toolName: "AskUserQuestion",
  output: { type: "text" as const, value }
})
const multiTurnToolCallMessagesFixture: Array<ModelMessage> = [
  { role: "user", content: [text("ask me a question")] },
  {
    role: "assistant",
    content: [
      text("What can i help you with"),
      ask("toolu_01P9s4havAQSjDmS4eWT1N2V", "What would you like help with today?", 1)
    ]
  },
  { role: "tool", content: [told("toolu_01P9s4havAQSjDmS4eWT1N2V", "Something else")] },
  { role: "assistant", content: [ask("toolu_01TMAuwWKLmBoQtx7K88dxsQ", "Ok what else?", 2)] },
  { role: "tool", content: [told("toolu_01TMAuwWKLmBoQtx7K88dxsQ", "Other - I'll describe it")] },
  { role: "assistant", content: [text("What would you like to discuss or work on?")] },
  { role: "user", content: [text("never mind. lets end this conversation")] },
  { role: "assistant", content: [text("ok, have a nice day")] },
  { role: "user", content: [text("thank you")] }
]

const tokyoCall = call(1, { city: "Tokyo" })

const cases: ReadonlyArray<Case> = [
  // describe('reasoning')
  {
    name: "should prune all reasoning parts",
    messages: () => messagesFixture1,
    options: { reasoning: "all" },
    expected: [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [call(1), call(2), approvalRequest(2)] },
      { role: "tool", content: [approved, sunny, failed] },
      { role: "assistant", content: [answer] }
    ],
    verdict: splitRule
  },
  {
    name: "should prune the trailing message",
    messages: () => messagesFixture1,
    options: { reasoning: "before-last-message" },
    expected: [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [call(1), call(2), approvalRequest(2)] },
      { role: "tool", content: [approved, sunny, failed] },
      { role: "assistant", content: [thinkAfter, answer] }
    ],
    verdict: splitRule
  },
  // describe('toolCalls')
  {
    name: "should prune all tool calls, results, errors, and approvals (all)",
    messages: () => messagesFixture1,
    options: { toolCalls: "all" },
    expected: [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [thinkFirst] },
      { role: "assistant", content: [thinkAfter, answer] }
    ],
    installed: {
      note: "ai 6.0.326 also prunes reasoning whose following parts were all pruned (the snapshot is of 6.0.264)",
      expected: [
        { role: "user", content: [text(question)] },
        { role: "assistant", content: [thinkAfter, answer] }
      ]
    },
    verdict: "same"
  },
  {
    name: "should prune tool calls before last message",
    messages: () => messagesFixture2,
    options: { toolCalls: "before-last-message" },
    expected: [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [thinkFirst, call(1), call(2), approvalRequest(1)] }
    ],
    verdict: "same"
  },
  {
    name: "should prune tool calls and results from multi-turn conversation when last message has no tool calls",
    messages: () => multiTurnToolCallMessagesFixture,
    options: { toolCalls: "before-last-message" },
    expected: [
      { role: "user", content: [text("ask me a question")] },
      { role: "assistant", content: [text("What can i help you with")] },
      { role: "assistant", content: [text("What would you like to discuss or work on?")] },
      { role: "user", content: [text("never mind. lets end this conversation")] },
      { role: "assistant", content: [text("ok, have a nice day")] },
      { role: "user", content: [text("thank you")] }
    ],
    verdict: "same"
  },
  {
    name: "should prune all tool calls, results, errors, and approvals (before-last-2-messages)",
    messages: () => messagesFixture1,
    options: { toolCalls: "before-last-2-messages" },
    expected: [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [thinkFirst, call(1), call(2), approvalRequest(2)] },
      { role: "tool", content: [approved, sunny, failed] },
      { role: "assistant", content: [thinkAfter, answer] }
    ],
    verdict: countRule([
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [thinkFirst, call(2)] },
      { role: "tool", content: [failed] },
      { role: "assistant", content: [thinkAfter, answer] }
    ])
  },
  {
    name: "should prune all tool calls, results, errors, and approvals (two tool settings)",
    messages: () => messagesFixture1,
    options: {
      toolCalls: [
        { type: "all", tools: ["get-weather-tool-1"] },
        { type: "before-last-2-messages", tools: ["get-weather-tool-2"] }
      ]
    },
    expected: [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [thinkFirst, call(2), approvalRequest(2)] },
      { role: "tool", content: [approved, failed] },
      { role: "assistant", content: [thinkAfter, answer] }
    ],
    verdict: countRule([
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [thinkFirst, call(2)] },
      { role: "tool", content: [failed] },
      { role: "assistant", content: [thinkAfter, answer] }
    ])
  },
  // describe('selective tool pruning with approvals (regression)')
  {
    name: "should prune the approval response together with its request and tool-call",
    messages: async () =>
      plain(
        await convertToModelMessages([
          { role: "user", parts: [text(question)] },
          {
            role: "assistant",
            parts: [
              { type: "step-start" },
              {
                type: "tool-get-weather-tool-1",
                toolCallId: "call-1",
                state: "output-available",
                input: { city: "Tokyo" },
                output: "sunny"
              },
              {
                type: "tool-get-weather-tool-2",
                toolCallId: "call-2",
                state: "output-available",
                input: { city: "Busan" },
                output: "rainy",
                approval: { id: "approval-1", approved: true }
              }
            ]
          }
        ] as unknown as Array<UIMessage>)
      ),
    options: { toolCalls: [{ type: "all", tools: ["get-weather-tool-2"] }] },
    expected: [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [tokyoCall] },
      { role: "tool", content: [sunny] }
    ],
    verdict: "same"
  },
  {
    name: "should drop unresolved approval responses during selective pruning",
    messages: () => [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [tokyoCall] },
      {
        role: "tool",
        content: [{ type: "tool-approval-response", approvalId: "unknown-approval", approved: true }, sunny]
      }
    ],
    options: { toolCalls: [{ type: "all", tools: ["get-weather-tool-2"] }] },
    expected: [
      { role: "user", content: [text(question)] },
      { role: "assistant", content: [tokyoCall] },
      { role: "tool", content: [sunny] }
    ],
    verdict: "same"
  }
]

describe("AI SDK pruneMessages cases on conversations that went through ctxlog", () => {
  for (const scenario of cases) {
    it(scenario.name, async () => {
      const messages = await scenario.messages()
      // What the installed `ai` gives on the fixture as is: the case's expectation, or (where the
      // installed version prunes differently from the case's snapshot) the stated installed answer.
      const installed = plain(pruneMessages({ messages: [...messages], ...scenario.options }))
      assert.deepStrictEqual(installed, plain(scenario.installed?.expected ?? scenario.expected))
      const upstream = installed
      const ours = plain(pruneMessages({ messages: throughCtxlog(messages), ...scenario.options }))
      if (scenario.verdict === "same") return assert.deepStrictEqual(ours, upstream)
      const wanted = plain(scenario.verdict.expected(upstream))
      assert.notDeepEqual(wanted, upstream, "the rule changes nothing")
      assert.deepStrictEqual(ours, wanted, scenario.verdict.rule)
    })
  }

  it("tally (test/conversionCoverage.md)", () => {
    assert.strictEqual(cases.length, 9)
    assertCoverageRow(
      "aiSdkPruneMessages",
      cases.map(({ verdict }): Outcome => (verdict === "same" ? "same" : "differs"))
    )
  })
})
