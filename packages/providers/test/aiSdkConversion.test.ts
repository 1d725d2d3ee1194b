/**
 * The AI SDK's own message-conversion scenarios (issue 23), ported as our own test code. Source:
 * vercel/ai `packages/ai/src/ui/convert-to-model-messages.test.ts` (the `convertToModelMessages`
 * suite; UI inputs copied from its cases, test names kept). Each scenario runs the AI SDK's own
 * `convertToModelMessages` (ai 6, installed) on the UI messages of the case — the output that case
 * asserts — and then sends that output through ctxlog's adapter (`fromModelMessages` → ctxlog messages
 * → `toModelMessages`). Each case either comes back the same, or is refused with an `AdapterError`
 * naming the part, or states the rule by which ctxlog differs (the rule, as code, maps the AI SDK's
 * output to what ctxlog gives back). Pruning cases: `aiSdkPruning.test.ts`.
 *
 * Counts (issue 35): before, 34 same, 10 refused (other providers' options, "provider option … is not
 * kept"), 16 differing by a rule (images, `json` outputs, reasoning metadata, a cache hint, split tool
 * messages); now that the adapter keeps every provider option opaque and notes how a tool output, a
 * file part and a split tool message came, 59 same, none refused, 1 differing (the Anthropic cache hint,
 * a render option).
 */
import { assert, describe, it } from "@effect/vitest"
import { convertToModelMessages, type ModelMessage, tool, type UIMessage } from "ai"
import * as Either from "effect/Either"
import { z } from "zod"
import { cacheControlOf, fromModelMessages, toModelMessages } from "../src/adapters/aiSdk.js"
import { assertCoverageRow } from "./support/coverage.js"

type Options = Parameters<typeof convertToModelMessages>[1]
type Json = unknown
type Out = Array<Record<string, Json>>

/** The rule a differing case follows: what ctxlog gives back for the AI SDK's output. */
interface Differs {
  readonly rule: string
  readonly expected: (sdk: Out) => Out
}
type Verdict = "same" | { readonly refused: string } | Differs

interface Case {
  readonly name: string
  readonly ui: ReadonlyArray<unknown>
  readonly options?: Options
  readonly verdict: Verdict
}

// JSON form for comparing: `undefined` fields go, a URL becomes its text.
const plain = (value: unknown): Out => JSON.parse(JSON.stringify(value))

const sdkOf = async (scenario: Case): Promise<Array<ModelMessage>> =>
  convertToModelMessages(scenario.ui as Array<UIMessage>, scenario.options)

const throughCtxlog = (messages: ReadonlyArray<ModelMessage>) =>
  Either.flatMap(fromModelMessages(messages), toModelMessages)

const without = (record: Record<string, Json>, ...keys: ReadonlyArray<string>) =>
  Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)))

// Rules by which ctxlog differs, each a function of the AI SDK's output.
const cacheHintRule: Differs = {
  rule:
    "an Anthropic `cacheControl` is a render option (`BuildOptions.cacheHints`, read by `cacheControlOf`), " +
    "not message content: the message comes back without it",
  expected: (sdk) => sdk.map((message) => without(message, "providerOptions"))
}

const user = (text: string) => ({ role: "user", parts: [{ type: "text", text }] })
const tokyo = { text: "What is the weather in Tokyo?", type: "text" }

const cases: ReadonlyArray<Case> = [
  // describe('system message')
  {
    name: "should convert a simple system message",
    ui: [{ role: "system", parts: [{ text: "System message", type: "text" }] }],
    verdict: "same"
  },
  {
    name: "should convert a system message with provider metadata",
    ui: [
      {
        role: "system",
        parts: [
          {
            text: "System message with metadata",
            type: "text",
            providerMetadata: { testProvider: { systemSignature: "abc123" } }
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should merge provider metadata from multiple text parts in system message",
    ui: [
      {
        role: "system",
        parts: [
          { text: "Part 1", type: "text", providerMetadata: { provider1: { key1: "value1" } } },
          { text: " Part 2", type: "text", providerMetadata: { provider2: { key2: "value2" } } }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should convert a system message with Anthropic cache control metadata",
    ui: [
      {
        id: "system",
        role: "system",
        parts: [
          {
            type: "text",
            text: "You are a helpful assistant.",
            providerMetadata: { anthropic: { cacheControl: { type: "ephemeral" } } }
          }
        ]
      }
    ],
    verdict: cacheHintRule
  },
  // describe('user message')
  { name: "should convert a simple user message", ui: [user("Hello, AI!")], verdict: "same" },
  {
    name: "should convert a simple user message with provider metadata",
    ui: [
      {
        role: "user",
        parts: [{ text: "Hello, AI!", type: "text", providerMetadata: { testProvider: { signature: "1234567890" } } }]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle user message file parts",
    ui: [
      {
        role: "user",
        parts: [
          { type: "file", mediaType: "image/jpeg", url: "https://example.com/image.jpg" },
          { type: "text", text: "Check this image" }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle user message file parts with provider metadata",
    ui: [
      {
        role: "user",
        parts: [
          {
            type: "file",
            mediaType: "image/jpeg",
            url: "https://example.com/image.jpg",
            providerMetadata: { testProvider: { signature: "1234567890" } }
          },
          { type: "text", text: "Check this image" }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should include filename for user file parts when provided",
    ui: [
      {
        role: "user",
        parts: [{ type: "file", mediaType: "image/jpeg", url: "https://example.com/image.jpg", filename: "image.jpg" }]
      }
    ],
    verdict: "same"
  },
  {
    name: "should not include filename for user file parts when not provided",
    ui: [{ role: "user", parts: [{ type: "file", mediaType: "image/jpeg", url: "https://example.com/image.jpg" }] }],
    verdict: "same"
  },
  // describe('assistant message')
  {
    name: "should convert a simple assistant text message",
    ui: [{ role: "assistant", parts: [{ type: "text", text: "Hello, human!", state: "done" }] }],
    verdict: "same"
  },
  {
    name: "should convert a simple assistant text message with provider metadata",
    ui: [
      {
        role: "assistant",
        parts: [
          {
            type: "text",
            text: "Hello, human!",
            state: "done",
            providerMetadata: { testProvider: { signature: "1234567890" } }
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should convert an assistant message with reasoning",
    ui: [
      {
        role: "assistant",
        parts: [
          {
            type: "reasoning",
            text: "Thinking...",
            providerMetadata: { testProvider: { signature: "1234567890" } },
            state: "done"
          },
          {
            type: "reasoning",
            text: "redacted-data",
            providerMetadata: { testProvider: { isRedacted: true } },
            state: "done"
          },
          { type: "text", text: "Hello, human!", state: "done" }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should convert an assistant message with file parts",
    ui: [
      { role: "assistant", parts: [{ type: "file", mediaType: "image/png", url: "data:image/png;base64,dGVzdA==" }] }
    ],
    verdict: "same"
  },
  {
    name: "should include filename for assistant file parts when provided",
    ui: [
      {
        role: "assistant",
        parts: [{ type: "file", mediaType: "image/png", url: "data:image/png;base64,dGVzdA==", filename: "test.png" }]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle assistant message file parts with provider metadata",
    ui: [
      {
        role: "assistant",
        parts: [
          {
            type: "file",
            mediaType: "image/png",
            url: "data:image/png;base64,dGVzdA==",
            providerMetadata: { testProvider: { signature: "test-signature" } }
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle assistant message with tool output available",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "Let me calculate that for you.", state: "done" },
          {
            type: "tool-calculator",
            state: "output-available",
            toolCallId: "call1",
            input: { operation: "add", numbers: [1, 2] },
            output: "3",
            callProviderMetadata: { testProvider: { signature: "1234567890" } }
          }
        ]
      }
    ],
    verdict: "same"
  },
  // describe('tool output error')
  {
    name: "should handle assistant message with tool output error that has raw input",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "Let me calculate that for you.", state: "done" },
          {
            type: "tool-calculator",
            state: "output-error",
            toolCallId: "call1",
            errorText: "Error: Invalid input",
            input: undefined,
            rawInput: '{"operation":"add","numbers":[1,2]'
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should preserve the deprecated rawInput fallback when input is null",
    ui: [
      {
        role: "assistant",
        parts: [
          {
            type: "tool-calculator",
            state: "output-error",
            toolCallId: "call1",
            errorText: "Error: Invalid input",
            input: null,
            rawInput: "legacy input"
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle assistant message with tool output error that has no raw input",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "Let me calculate that for you.", state: "done" },
          {
            type: "tool-calculator",
            state: "output-error",
            toolCallId: "call1",
            input: { operation: "add", numbers: [1, 2] },
            errorText: "Error: Invalid input"
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle assistant message with provider-executed tool output available",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "Let me calculate that for you.", state: "done" },
          {
            type: "tool-calculator",
            state: "output-available",
            toolCallId: "call1",
            input: { operation: "add", numbers: [1, 2] },
            output: "3",
            providerExecuted: true
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle assistant message with provider-executed tool output error",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "Let me calculate that for you.", state: "done" },
          {
            type: "tool-calculator",
            state: "output-error",
            toolCallId: "call1",
            input: { operation: "add", numbers: [1, 2] },
            errorText: "Error: Invalid input",
            providerExecuted: true
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should propagate provider metadata to provider-executed tool-result",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "tool-calculator",
            state: "output-available",
            toolCallId: "call1",
            input: { operation: "multiply", numbers: [3, 4] },
            output: "12",
            providerExecuted: true,
            callProviderMetadata: { testProvider: { executionTime: 75 } }
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should prefer result provider metadata over call provider metadata for provider-executed tool-result",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "tool-calculator",
            state: "output-available",
            toolCallId: "call1",
            input: { operation: "multiply", numbers: [3, 4] },
            output: "12",
            providerExecuted: true,
            callProviderMetadata: { testProvider: { itemId: "call-item" } },
            resultProviderMetadata: { testProvider: { itemId: "result-item" } }
          }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle assistant message with tool invocations that have multi-part responses",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "Let me calculate that for you.", state: "done" },
          { type: "tool-screenshot", state: "output-available", toolCallId: "call1", input: {}, output: "imgbase64" }
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle conversation with an assistant message that has empty tool invocations",
    ui: [user("text1"), { role: "assistant", parts: [{ type: "text", text: "text2", state: "done" }] }],
    verdict: "same"
  },
  {
    name: "should handle conversation with multiple tool invocations that have step information",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "response", state: "done" },
          screenshot(1),
          { type: "step-start" },
          screenshot(2),
          screenshot(3),
          { type: "step-start" },
          screenshot(4)
        ]
      }
    ],
    verdict: "same"
  },
  {
    name: "should handle conversation with mix of tool invocations and text",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "text", text: "i am gonna use tool1", state: "done" },
          screenshot(1),
          { type: "step-start" },
          { type: "text", text: "i am gonna use tool2 and tool3", state: "done" },
          screenshot(2),
          screenshot(3),
          { type: "step-start" },
          screenshot(4),
          { type: "step-start" },
          { type: "text", text: "final response", state: "done" }
        ]
      }
    ],
    verdict: "same"
  },
  // describe('multiple messages')
  {
    name: "should handle a conversation with multiple messages",
    ui: [
      user("What's the weather like?"),
      { role: "assistant", parts: [{ type: "text", text: "I'll check that for you.", state: "done" }] },
      user("Thanks!")
    ],
    verdict: "same"
  },
  {
    name: "should handle conversation with multiple tool invocations and user message at the end",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          screenshot(1),
          { type: "step-start" },
          screenshot(2),
          screenshot(3),
          { type: "step-start" },
          screenshot(4),
          { type: "step-start" },
          { type: "text", text: "response", state: "done" }
        ]
      },
      user("Thanks!")
    ],
    verdict: "same"
  },
  // describe('when ignoring incomplete tool calls')
  {
    name: "should ignore preliminary tool outputs",
    ui: [
      {
        role: "assistant",
        parts: [
          {
            type: "tool-streamingTool",
            state: "output-available",
            toolCallId: "call-preliminary",
            input: { task: "finish the work" },
            output: { complete: false, progress: "half finished" },
            preliminary: true
          }
        ]
      },
      user("Continue.")
    ],
    options: {
      ignoreIncompleteToolCalls: true,
      tools: {
        streamingTool: tool({
          inputSchema: z.object({ task: z.string() }),
          toModelOutput: ({ output }) => ({ type: "json", value: output as never })
        })
      }
    },
    verdict: "same"
  },
  {
    name: "should ignore tool calls that are awaiting approval or have no state",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "text", text: "Waiting for completed tool calls.", state: "done" },
          {
            type: "tool-weather",
            state: "approval-requested",
            toolCallId: "call-awaiting-approval",
            input: { city: "Tokyo" },
            approval: { id: "approval-1" }
          },
          { type: "tool-weather", toolCallId: "call-without-state", input: { city: "Berlin" } }
        ]
      },
      user("Continue.")
    ],
    options: { ignoreIncompleteToolCalls: true },
    verdict: "same"
  },
  {
    name: "should preserve tool calls with approval responses",
    ui: [
      {
        role: "assistant",
        parts: [
          {
            type: "tool-weather",
            state: "approval-responded",
            toolCallId: "call-approved",
            input: { city: "Tokyo" },
            approval: { id: "approval-1", approved: true }
          }
        ]
      }
    ],
    options: { ignoreIncompleteToolCalls: true },
    verdict: "same"
  },
  {
    name: "should handle conversation with multiple tool invocations and user message at the end (ignoring incomplete)",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          screenshot(1),
          { type: "step-start" },
          { type: "tool-screenshot", state: "input-streaming", toolCallId: "call-2", input: { value: "value-2" } },
          { type: "tool-screenshot", state: "input-available", toolCallId: "call-3", input: { value: "value-3" } },
          {
            type: "dynamic-tool",
            toolName: "tool-screenshot2",
            state: "input-available",
            toolCallId: "call-3",
            input: { value: "value-3" }
          },
          { type: "text", text: "response", state: "done" }
        ]
      },
      user("Thanks!")
    ],
    options: { ignoreIncompleteToolCalls: true },
    verdict: "same"
  },
  // describe('when converting dynamic tool invocations')
  {
    name: "should convert a dynamic tool invocation",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "dynamic-tool",
            toolName: "screenshot",
            state: "output-available",
            toolCallId: "call-1",
            input: { value: "value-1" },
            output: "result-1"
          }
        ]
      },
      user("Thanks!")
    ],
    options: { ignoreIncompleteToolCalls: true },
    verdict: "same"
  },
  {
    name: "should convert a provider-executed dynamic tool invocation",
    ui: [
      {
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "dynamic-tool",
            toolName: "screenshot",
            state: "output-available",
            toolCallId: "call-1",
            input: { value: "value-1" },
            output: "result-1",
            providerExecuted: true,
            callProviderMetadata: { "test-provider": { "key-a": "test-value-1", "key-b": "test-value-2" } }
          }
        ]
      },
      user("Thanks!")
    ],
    options: { ignoreIncompleteToolCalls: true },
    verdict: "same"
  },
  // describe('when converting tool approval request responses')
  ...(["static", "dynamic"] as const).flatMap(
    (kind): ReadonlyArray<Case> => [
      {
        name: `should convert an approved tool approval request (${kind} tool)`,
        ui: [
          { parts: [tokyo], role: "user" },
          {
            parts: [
              { type: "step-start" },
              weather(kind, {
                approval: { approved: true, id: "approval-1", reason: undefined },
                state: "approval-responded"
              })
            ],
            role: "assistant"
          }
        ],
        verdict: "same"
      },
      {
        name: `should convert a denied tool approval request and follow up text (${kind} tool)`,
        ui: [
          { parts: [tokyo], role: "user" },
          {
            parts: [
              { type: "step-start" },
              weather(kind, {
                approval: { approved: false, id: "approval-1", reason: "I don't want to approve this" },
                state: "approval-responded"
              }),
              { type: "step-start" },
              { type: "text", text: "I was not able to retrieve the weather.", state: "done" }
            ],
            role: "assistant"
          }
        ],
        verdict: "same"
      },
      {
        name: `should convert tool output denied (${kind} tool)`,
        ui: [
          { parts: [tokyo], role: "user" },
          {
            parts: [
              { type: "step-start" },
              weather(kind, {
                approval: { approved: false, id: "approval-1", reason: "I don't want to approve this" },
                state: "output-denied"
              })
            ],
            role: "assistant"
          }
        ],
        verdict: "same"
      }
    ]
  ),
  {
    name: "should convert tool output denied without approval (static tool)",
    ui: [
      { parts: [tokyo], role: "user" },
      {
        role: "assistant",
        parts: [{ input: { city: "Tokyo" }, state: "output-denied", toolCallId: "call-1", type: "tool-weather" }]
      }
    ],
    verdict: "same"
  },
  {
    name: "should convert tool output result with approval and follow up text (static tool)",
    ui: [
      { parts: [tokyo], role: "user" },
      {
        parts: [
          { type: "step-start" },
          weather("static", {
            approval: { approved: true, id: "approval-1" },
            output: { weather: "Sunny", temperature: "20°C" },
            state: "output-available"
          }),
          { type: "step-start" },
          { type: "text", text: "The weather in Tokyo is sunny.", state: "done" }
        ],
        role: "assistant"
      }
    ],
    verdict: "same"
  },
  {
    name: "should convert tool error result with approval and follow up text (static tool)",
    ui: [
      { parts: [tokyo], role: "user" },
      {
        parts: [
          { type: "step-start" },
          weather("static", {
            approval: { approved: true, id: "approval-1" },
            errorText: "Error: Fetching weather data failed",
            state: "output-error"
          }),
          { type: "step-start" },
          { type: "text", text: "The weather in Tokyo is sunny.", state: "done" }
        ],
        role: "assistant"
      }
    ],
    verdict: "same"
  },
  // describe('data part conversion') — `convertDataPart` runs inside the AI SDK; ctxlog sees its result.
  ...(["user", "assistant"] as const).flatMap(
    (role): ReadonlyArray<Case> => [
      {
        name: `should convert data parts to text when converter provided (${role})`,
        ui: [{ role, parts: [{ type: "data-url", data: { url: "https://example.com", content: "Article text" } }] }],
        options: {
          convertDataPart: (part: { data: { url: string; content: string } }) => ({
            type: "text",
            text: `\n\n[${part.data.url}]\n${part.data.content}`
          })
        } as Options,
        verdict: "same"
      },
      {
        name: `should skip data parts when no converter provided (${role})`,
        ui: [
          {
            role,
            parts: [
              { type: "text", text: "Hello" },
              { type: "data-url", data: { url: "https://example.com" } }
            ]
          }
        ],
        verdict: "same"
      },
      {
        name: `should selectively convert data parts (${role})`,
        ui: [
          {
            role,
            parts: [
              { type: "data-url", data: { url: "https://example.com" } },
              { type: "data-ui-state", data: { enabled: true } }
            ]
          }
        ],
        options: {
          convertDataPart: (part: { type: string; data: { url: string } }) =>
            part.type === "data-url" ? { type: "text", text: part.data.url } : undefined
        } as Options,
        verdict: "same"
      }
    ]
  ),
  ...(["user", "assistant"] as const).flatMap(
    (role): ReadonlyArray<Case> => [
      {
        name: `should convert data parts to file parts (${role})`,
        ui: [
          {
            role,
            parts: [
              { type: "text", text: "Check this file" },
              {
                type: "data-attachment",
                data: { mediaType: "application/pdf", filename: `document.pdf (${role})`, data: "base64data" }
              }
            ]
          }
        ],
        options: {
          convertDataPart: (part: { data: { mediaType: string; filename: string; data: string } }) => ({
            type: "file",
            mediaType: part.data.mediaType,
            filename: part.data.filename,
            data: part.data.data
          })
        } as Options,
        verdict: "same"
      },
      {
        name: `should handle multiple data parts of different types (${role})`,
        ui: [
          {
            role,
            parts: [
              { type: "text", text: "Review these:" },
              { type: "data-url", data: { url: "https://example.com", title: "Example" } },
              { type: "data-code", data: { code: 'console.log("test")', language: "javascript" } },
              { type: "data-note", data: { text: "Internal note" } }
            ]
          }
        ],
        options: {
          convertDataPart: (part: { type: string; data: Record<string, string> }) =>
            part.type === "data-url"
              ? { type: "text", text: `[${part.data.title}](${part.data.url})` }
              : part.type === "data-code"
                ? { type: "text", text: `\`\`\`${part.data.language}\n${part.data.code}\n\`\`\`` }
                : undefined
        } as Options,
        verdict: "same"
      },
      {
        name: `should work with messages that have no data parts (${role})`,
        ui: [
          {
            role,
            parts: [
              { type: "text", text: "Hello" },
              { type: "file", mediaType: "image/png", url: "https://example.com/image.png" }
            ]
          }
        ],
        options: { convertDataPart: () => ({ type: "text", text: "converted" }) } as Options,
        verdict: "same"
      },
      {
        name: `should preserve order of parts including converted data parts (${role})`,
        ui: [
          {
            role,
            parts: [
              { type: "text", text: "First" },
              { type: "data-tag", data: { value: "tag1" } },
              { type: "text", text: "Second" },
              { type: "data-tag", data: { value: "tag2" } },
              { type: "text", text: "Third" }
            ]
          }
        ],
        options: {
          convertDataPart: (part: { data: { value: string } }) => ({ type: "text", text: `[${part.data.value}]` })
        } as Options,
        verdict: "same"
      }
    ]
  ),
  {
    // The case records the message from UI stream chunks; this is the message its inline snapshot shows.
    name: "should not emit empty assistant message for persistent data written before model stream starts",
    ui: [
      {
        id: "msg-123",
        role: "assistant",
        parts: [
          { type: "data-weather", id: "weather-1", data: { city: "San Francisco", status: "loading" } },
          { type: "step-start" },
          { type: "text", text: "It is sunny.", state: "done" }
        ]
      }
    ],
    verdict: "same"
  }
]

function screenshot(n: number) {
  return {
    type: "tool-screenshot",
    state: "output-available",
    toolCallId: `call-${n}`,
    input: { value: `value-${n}` },
    output: `result-${n}`
  }
}

function weather(kind: "static" | "dynamic", fields: Record<string, unknown>) {
  return {
    input: { city: "Tokyo" },
    toolCallId: "call-1",
    ...(kind === "static" ? { type: "tool-weather" } : { type: "dynamic-tool", toolName: "weather" }),
    ...fields
  }
}

describe("AI SDK convertToModelMessages scenarios through ctxlog's adapter", () => {
  const tally = { same: 0, refused: 0, differs: 0 }
  for (const scenario of cases) {
    it(scenario.name, async () => {
      const sdk = await sdkOf(scenario)
      const ours = throughCtxlog(sdk)
      const verdict = scenario.verdict
      if (verdict !== "same" && "refused" in verdict) {
        tally.refused++
        assert.isTrue(Either.isLeft(ours), "expected the adapter to refuse")
        if (Either.isLeft(ours)) assert.include(ours.left.message, verdict.refused)
        return
      }
      if (Either.isLeft(ours)) return assert.fail(ours.left.message)
      if (verdict === "same") {
        tally.same++
        assert.deepStrictEqual(plain(ours.right), plain(sdk))
      } else {
        tally.differs++
        assert.notDeepEqual(plain(ours.right), plain(sdk), `the rule changes nothing: ${verdict.rule}`)
        assert.deepStrictEqual(plain(ours.right), plain(verdict.expected(plain(sdk))), verdict.rule)
      }
    })
  }

  it("the Anthropic cache hint the system case drops is read as a render option", async () => {
    const scenario = cases.find((entry) => entry.verdict === cacheHintRule)
    if (scenario === undefined) return assert.fail("no cache-hint case")
    const [system] = await sdkOf(scenario)
    if (system === undefined) return assert.fail("no message")
    assert.deepStrictEqual(cacheControlOf(system), {})
  })

  it("should throw an error for unhandled roles: the adapter refuses the message by its index", () => {
    const unknown = [{ role: "unknown", content: "unknown role message" }] as unknown as Array<ModelMessage>
    const result = fromModelMessages(unknown)
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) assert.include(result.left.message, "AI SDK message 0 role: unsupported role unknown")
  })

  it("tally", () => {
    console.log(`convertToModelMessages scenarios: ${JSON.stringify(tally)} of ${cases.length}`)
    assert.strictEqual(tally.same + tally.refused + tally.differs, cases.length)
    // The suite's row of test/conversionCoverage.md, from the verdicts above.
    assertCoverageRow(
      "aiSdkConversion",
      cases.map(({ verdict }) => (verdict === "same" ? "same" : "refused" in verdict ? "refused" : "differs"))
    )
  })
})
