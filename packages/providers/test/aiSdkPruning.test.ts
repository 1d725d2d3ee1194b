/**
 * The AI SDK's message pruning (`pruneMessages` of `ai`, 6.x: `dist/index.mjs`, with its options
 * `reasoning`, `toolCalls` and `emptyMessages`) on conversations with tool approvals, the content that
 * made all of its cases unsupported before 0.4 (issue 23). Each scenario runs the AI SDK's own
 * `pruneMessages` twice: on the conversation as the AI SDK holds it, and on the same conversation after
 * a trip through ctxlog (`fromModelMessages` → a window's messages → `toModelMessages`). Equal outputs
 * mean a window keeps everything the pruning reads: reasoning, tool calls and results, approval requests
 * and responses, tool names. Our own test code.
 */
import { assert, describe, it } from "@effect/vitest"
import { type ModelMessage, pruneMessages } from "ai"
import * as Either from "effect/Either"
import { fromModelMessages, toModelMessages } from "../src/adapters/aiSdk.js"
import { assertCoverageRow } from "./support/coverage.js"

const conversation: Array<ModelMessage> = [
  { role: "system", content: "You are a file assistant." },
  { role: "user", content: [{ type: "text", text: "Clean up the build folder." }] },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "I should list it first." },
      { type: "tool-call", toolCallId: "call-1", toolName: "list", input: { path: "build" } }
    ]
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "call-1", toolName: "list", output: { type: "text", value: "a.o b.o" } }
    ]
  },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Deleting needs approval." },
      { type: "text", text: "I will delete a.o and b.o." },
      { type: "tool-call", toolCallId: "call-2", toolName: "delete", input: { paths: ["a.o", "b.o"] } },
      { type: "tool-approval-request", approvalId: "approval-1", toolCallId: "call-2" }
    ]
  },
  { role: "tool", content: [{ type: "tool-approval-response", approvalId: "approval-1", approved: true }] },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "call-2", toolName: "delete", output: { type: "text", value: "deleted 2" } }
    ]
  },
  {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: "call-3", toolName: "delete", input: { paths: ["build"] } },
      { type: "tool-approval-request", approvalId: "approval-2", toolCallId: "call-3" }
    ]
  },
  {
    role: "tool",
    content: [{ type: "tool-approval-response", approvalId: "approval-2", approved: false, reason: "keep the folder" }]
  },
  { role: "user", content: [{ type: "text", text: "Thanks." }] }
]

const throughCtxlog = (messages: ReadonlyArray<ModelMessage>): Array<ModelMessage> =>
  Either.getOrThrow(Either.flatMap(fromModelMessages(messages), toModelMessages))

const scenarios: ReadonlyArray<
  readonly [string, Parameters<typeof pruneMessages>[0] extends infer P ? Omit<P & object, "messages"> : never]
> = [
  ["reasoning: all", { reasoning: "all" }],
  ["reasoning: before-last-message", { reasoning: "before-last-message" }],
  ["toolCalls: all", { toolCalls: "all" }],
  ["toolCalls: before-last-message", { toolCalls: "before-last-message" }],
  ["toolCalls: before-last-2-messages", { toolCalls: "before-last-2-messages" }],
  ["toolCalls: before-last-5-messages", { toolCalls: "before-last-5-messages" }],
  ["toolCalls of one tool only", { toolCalls: [{ type: "all", tools: ["delete"] }] }],
  ["emptyMessages: keep", { toolCalls: "all", emptyMessages: "keep" }],
  ["reasoning and tool calls together", { reasoning: "all", toolCalls: "before-last-2-messages" }]
]

describe("AI SDK pruneMessages scenarios on a conversation that went through ctxlog", () => {
  it("the conversation itself survives the trip", () => {
    assert.deepStrictEqual(throughCtxlog(conversation), conversation)
  })

  for (const [label, options] of scenarios) {
    it(label, () => {
      const expected = pruneMessages({ messages: conversation, ...options })
      const actual = pruneMessages({ messages: throughCtxlog(conversation), ...options })
      assert.deepStrictEqual(actual, expected)
    })
  }

  it("tally (test/conversionCoverage.md)", () => {
    // Every scenario, and the trip itself, comes back the same.
    assertCoverageRow("aiSdkPruning", ["same", ...scenarios.map((): "same" => "same")])
  })
})

/*
 * Issue 35: the AI SDK's own `pruneMessages` cases, ported. Source: vercel/ai
 * `packages/ai/src/generate-text/prune-messages.test.ts` at f66ac323267e3be1ad7a183dff5e9e145a427cb2 (the
 * file as of release-v6.0, b8e4215ea7ddf4cca6551bdadfada8f1bbadd8cf; Apache-2.0, © Vercel, Inc.): its
 * fixtures and options, test names kept. Each case runs the AI SDK's own `pruneMessages` (ai 6,
 * installed) and requires, both ways, that ctxlog expresses it: pruning the conversation after a trip
 * through ctxlog gives what pruning it before gives, and the pruned conversation itself (reasoning or tool
 * calls gone, approvals left over, empty messages) survives the trip. Before this port the file held the
 * approval scenarios above only. All 9 pass; with ctxlog's old tool-message split (one result per message,
 * given back so) the two `before-last-2-messages` cases counted messages differently and failed.
 */
const fixture1: Array<ModelMessage> = [
  { role: "user", content: [{ type: "text", text: "Weather in Tokyo and Busan?" }] },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "I need to get the weather in Tokyo and Busan." },
      { type: "tool-call", toolCallId: "call-1", toolName: "get-weather-tool-1", input: '{"city": "Tokyo"}' },
      { type: "tool-call", toolCallId: "call-2", toolName: "get-weather-tool-2", input: '{"city": "Busan"}' },
      { type: "tool-approval-request", toolCallId: "call-2", approvalId: "approval-1" }
    ]
  },
  {
    role: "tool",
    content: [
      { type: "tool-approval-response", approvalId: "approval-1", approved: true },
      {
        type: "tool-result",
        toolCallId: "call-1",
        toolName: "get-weather-tool-1",
        output: { type: "text", value: "sunny" }
      },
      {
        type: "tool-result",
        toolCallId: "call-2",
        toolName: "get-weather-tool-2",
        output: { type: "error-text", value: "Error: Fetching weather data failed" }
      }
    ]
  },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "I have got the weather in Tokyo and Busan." },
      { type: "text", text: "The weather in Tokyo is sunny. I could not get the weather in Busan." }
    ]
  }
]

const fixture2: Array<ModelMessage> = [
  { role: "user", content: [{ type: "text", text: "Weather in Tokyo and Busan?" }] },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "I need to get the weather in Tokyo and Busan." },
      { type: "tool-call", toolCallId: "call-1", toolName: "get-weather-tool-1", input: '{"city": "Tokyo"}' },
      { type: "tool-call", toolCallId: "call-2", toolName: "get-weather-tool-2", input: '{"city": "Busan"}' },
      { type: "tool-approval-request", toolCallId: "call-1", approvalId: "approval-1" }
    ]
  }
]

const ask = (id: string, question: string, options: ReadonlyArray<string>): ModelMessage => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName: "AskUserQuestion", input: { question, options } }]
})
const answer = (id: string, value: string): ModelMessage => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName: "AskUserQuestion", output: { type: "text", value } }]
})
const multiTurn: Array<ModelMessage> = [
  { role: "user", content: [{ type: "text", text: "ask me a question" }] },
  {
    role: "assistant",
    content: [
      { type: "text", text: "What can i help you with" },
      ...((ask("toolu_01P9s4havAQSjDmS4eWT1N2V", "What would you like help with today?", [
        "Tool 1 Option 1",
        "Tool 1 Option 2",
        "Tool 1 Option 3"
      ]).content as Array<never>) ?? [])
    ]
  },
  answer("toolu_01P9s4havAQSjDmS4eWT1N2V", "Something else"),
  ask("toolu_01TMAuwWKLmBoQtx7K88dxsQ", "Ok what else?", ["Tool 2 Option 1", "Tool 2 Option 2", "Tool 2 Option 3"]),
  answer("toolu_01TMAuwWKLmBoQtx7K88dxsQ", "Other - I'll describe it"),
  { role: "assistant", content: [{ type: "text", text: "What would you like to discuss or work on?" }] },
  { role: "user", content: [{ type: "text", text: "never mind. lets end this conversation" }] },
  { role: "assistant", content: [{ type: "text", text: "ok, have a nice day" }] },
  { role: "user", content: [{ type: "text", text: "thank you" }] }
]

const unresolved: Array<ModelMessage> = [
  { role: "user", content: [{ type: "text", text: "Weather in Tokyo and Busan?" }] },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "call-1", toolName: "get-weather-tool-1", input: { city: "Tokyo" } }]
  },
  {
    role: "tool",
    content: [
      { type: "tool-approval-response", approvalId: "unknown-approval", approved: true },
      {
        type: "tool-result",
        toolCallId: "call-1",
        toolName: "get-weather-tool-1",
        output: { type: "text", value: "sunny" }
      }
    ]
  }
]

type PruneOptions = Omit<Parameters<typeof pruneMessages>[0], "messages">
const ported: ReadonlyArray<readonly [string, Array<ModelMessage>, PruneOptions]> = [
  ["reasoning all: should prune all reasoning parts", fixture1, { reasoning: "all" }],
  [
    "reasoning before-trailing-message: should prune the trailing message",
    fixture1,
    { reasoning: "before-last-message" }
  ],
  ["toolCalls all: should prune all tool calls, results, errors, and approvals", fixture1, { toolCalls: "all" }],
  [
    "toolCalls before-last-message: should prune tool calls before last message",
    fixture2,
    { toolCalls: "before-last-message" }
  ],
  [
    "toolCalls before-last-message: should prune tool calls and results from multi-turn conversation when last message has no tool calls",
    multiTurn,
    { toolCalls: "before-last-message" }
  ],
  [
    "toolCalls before-last-2-messages: should prune all tool calls, results, errors, and approvals",
    fixture1,
    { toolCalls: "before-last-2-messages" }
  ],
  [
    "toolCalls two tool settings: should prune all tool calls, results, errors, and approvals",
    fixture1,
    {
      toolCalls: [
        { type: "all", tools: ["get-weather-tool-1"] },
        { type: "before-last-2-messages", tools: ["get-weather-tool-2"] }
      ]
    }
  ],
  [
    "selective tool pruning with approvals (regression): should prune the approval response together with its request and tool-call",
    fixture1,
    { toolCalls: [{ type: "all", tools: ["get-weather-tool-2"] }] }
  ],
  [
    "selective tool pruning with approvals (regression): should drop unresolved approval responses during selective pruning",
    unresolved,
    { toolCalls: [{ type: "all", tools: ["get-weather-tool-2"] }] }
  ]
]

const plainJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

describe("the AI SDK's pruneMessages cases, through ctxlog (ported, issue 35)", () => {
  for (const [name, messages, options] of ported) {
    it(name, () => {
      const pruned = pruneMessages({ messages, ...options })
      // Pruning after the trip gives what pruning before gives.
      const afterTrip = pruneMessages({ messages: throughCtxlog(messages), ...options })
      assert.deepStrictEqual(plainJson(afterTrip), plainJson(pruned))
      // The pruned conversation itself is expressible: it comes back as it went.
      assert.deepStrictEqual(plainJson(throughCtxlog(pruned)), plainJson(pruned))
    })
  }

  it("tally (test/conversionCoverage.md)", () => {
    // Every ported case passes both ways above: each is the same.
    assertCoverageRow(
      "aiSdkPruneMessages",
      ported.map((): "same" => "same")
    )
  })
})
