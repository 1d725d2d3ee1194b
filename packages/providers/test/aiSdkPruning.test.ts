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
