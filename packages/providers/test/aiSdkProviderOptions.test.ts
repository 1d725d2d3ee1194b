/**
 * Issue 35: every provider option an AI SDK message carries survives ctxlog — kept opaque on the message
 * or part it was on and given back there — with a case per namespace the official providers put on
 * their answers (which the AI SDK hands back as `providerOptions` on the next step's prompt). Anthropic's
 * cache hint is a render option, read wherever the AI SDK puts it (message, part, tool output, an item of
 * a `content` output). Before the fix each case was refused ("provider option … is not kept") or lost.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ModelMessage } from "ai"
import * as Either from "effect/Either"
import {
  cacheControlOf,
  fromLanguageModelPrompt,
  fromModelMessages,
  type LanguageModelPrompt,
  toLanguageModelPrompt,
  toModelMessages
} from "../src/adapters/aiSdk.js"
import { toAnthropic } from "../src/adapters/anthropic.js"

const roundTrip = (messages: ReadonlyArray<ModelMessage>) =>
  Either.getOrThrow(Either.flatMap(fromModelMessages(messages), toModelMessages))

const call = (providerOptions: Record<string, Record<string, unknown>>): ModelMessage => ({
  role: "assistant",
  content: [
    {
      type: "tool-call",
      toolCallId: "call_1",
      toolName: "read_file",
      input: { path: "a.ts" },
      providerOptions: providerOptions as never
    }
  ]
})

const user: ModelMessage = { role: "user", content: [{ type: "text", text: "Read a.ts" }] }

// Each namespace as the official provider emits it (providerMetadata on the answer's part).
const namespaces: ReadonlyArray<readonly [string, ModelMessage]> = [
  [
    "openai.itemId on text (@ai-sdk/openai Responses)",
    {
      role: "assistant",
      content: [{ type: "text", text: "Reading.", providerOptions: { openai: { itemId: "msg_1" } } }]
    }
  ],
  ["openai.itemId on a tool call", call({ openai: { itemId: "fc_1" } })],
  [
    "openai.itemId and reasoningEncryptedContent on reasoning, with other openai keys",
    {
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "",
          providerOptions: { openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAAA", extra: 1 } }
        }
      ]
    }
  ],
  [
    "openai.reasoningEncryptedContent null (no encrypted content asked for)",
    {
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "",
          providerOptions: { openai: { itemId: "rs_2", reasoningEncryptedContent: null } }
        }
      ]
    }
  ],
  [
    "anthropic.signature on reasoning",
    {
      role: "assistant",
      content: [{ type: "reasoning", text: "I think.", providerOptions: { anthropic: { signature: "sig==" } } }]
    }
  ],
  [
    "anthropic.redactedData on reasoning",
    {
      role: "assistant",
      content: [{ type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "EmwKAhgB" } } }]
    }
  ],
  [
    "anthropic.citations on text (@ai-sdk/anthropic after a web search)",
    {
      role: "assistant",
      content: [
        {
          type: "text",
          text: "It is sunny.",
          providerOptions: {
            anthropic: {
              citations: [
                {
                  type: "web_search_result_location",
                  cited_text: "Sunny today",
                  url: "https://example.com/weather",
                  title: "Weather",
                  encrypted_index: "Eo8BCioIAhgBIiQ"
                }
              ]
            }
          }
        }
      ]
    }
  ],
  ["google.thoughtSignature on a tool call", call({ google: { thoughtSignature: "CiQB0e2Kb" } })],
  [
    "google.thoughtSignature on reasoning",
    {
      role: "assistant",
      content: [{ type: "reasoning", text: "Plan.", providerOptions: { google: { thoughtSignature: "CiQB" } } }]
    }
  ],
  [
    "vertex and bedrock namespaces together",
    call({ vertex: { thoughtSignature: "x" }, bedrock: { reasoningId: "r" } })
  ],
  [
    "message-level options of a user message",
    { role: "user", content: [{ type: "text", text: "Hi" }], providerOptions: { openai: { user: "u-1" } } }
  ],
  [
    "message-level options of a system message",
    { role: "system", content: "Terse.", providerOptions: { acme: { tag: 1 } } }
  ],
  [
    "a tool result's part and output options",
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "read_file",
          output: { type: "text", value: "a", providerOptions: { acme: { seen: true } } },
          providerOptions: { openai: { itemId: "fco_1" } }
        }
      ]
    }
  ],
  [
    "options on items of a content output",
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "read_file",
          output: {
            type: "content",
            value: [
              { type: "text", text: "page 1", providerOptions: { acme: { page: 1 } } },
              {
                type: "image-data",
                data: "iVBORw0KGgo=",
                mediaType: "image/png",
                providerOptions: { acme: { page: 2 } }
              }
            ]
          }
        }
      ]
    }
  ],
  [
    "json, error-json and execution-denied outputs keep their type",
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "call_1", toolName: "a", output: { type: "json", value: { ok: [1, 2] } } },
        {
          type: "tool-result",
          toolCallId: "call_2",
          toolName: "a",
          output: { type: "error-json", value: { code: 7 } }
        },
        { type: "tool-result", toolCallId: "call_3", toolName: "a", output: { type: "execution-denied" } },
        { type: "tool-result", toolCallId: "call_4", toolName: "a", output: { type: "execution-denied", reason: "no" } }
      ]
    }
  ],
  [
    "approval parts' options",
    {
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: "call_1", toolName: "rm", input: {} },
        {
          type: "tool-approval-request",
          approvalId: "ap_1",
          toolCallId: "call_1",
          providerOptions: { acme: { a: 1 } }
        } as never
      ]
    }
  ]
]

describe("AI SDK provider options survive ctxlog (issue 35)", () => {
  for (const [label, message] of namespaces) {
    it(label, () => {
      // A tool message goes after the calls it answers (a result's tool name is its call's).
      const results = message.role === "tool" && Array.isArray(message.content) ? message.content : []
      const calls: ReadonlyArray<ModelMessage> =
        results.length === 0
          ? []
          : [
              {
                role: "assistant",
                content: results.flatMap((part) =>
                  part.type === "tool-result"
                    ? [{ type: "tool-call" as const, toolCallId: part.toolCallId, toolName: part.toolName, input: {} }]
                    : []
                )
              }
            ]
      const back = roundTrip([...calls, message]).slice(calls.length)
      assert.deepStrictEqual(JSON.parse(JSON.stringify(back)), JSON.parse(JSON.stringify([message])))
    })
  }

  it("the interpreted reasoning data lands in ctxlog's reasoning fields, the rest stays opaque", () => {
    const [message] = Either.getOrThrow(fromModelMessages([namespaces[2]?.[1] as ModelMessage]))
    assert.deepStrictEqual(message?.parts[0], {
      type: "reasoning",
      text: "",
      itemId: "rs_1",
      encryptedContent: "gAAAA",
      providerOptions: { openai: { extra: 1 } }
    })
  })

  it("a provider prompt (V3) keeps them too: the middleware's step 2 with @ai-sdk/openai", () => {
    const prompt: LanguageModelPrompt = [
      user as never,
      {
        role: "assistant",
        content: [
          { type: "text", text: "Reading.", providerOptions: { openai: { itemId: "msg_1" } } },
          {
            type: "tool-call",
            toolCallId: "call_1",
            toolName: "read_file",
            input: { path: "a.ts" },
            providerOptions: { openai: { itemId: "fc_1" } }
          }
        ] as never
      }
    ]
    const back = Either.getOrThrow(Either.flatMap(fromLanguageModelPrompt(prompt), toLanguageModelPrompt))
    assert.deepStrictEqual(back, prompt)
  })

  it("a provider option that is not JSON is refused, named", () => {
    const result = fromModelMessages([call({ acme: { when: 10n } })])
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) assert.include(result.left.message, "content[0]: provider option acme is not JSON")
  })

  it("Anthropic's cache hint is a render option wherever the AI SDK puts it, never message content", () => {
    const hint = { anthropic: { cacheControl: { type: "ephemeral", ttl: "1h" } } }
    const onOutput: ModelMessage = {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "read_file",
          output: { type: "text", value: "a", providerOptions: hint }
        }
      ]
    }
    const onItem: ModelMessage = {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "read_file",
          output: {
            type: "content",
            value: [
              { type: "text", text: "a", providerOptions: hint },
              { type: "text", text: "b" }
            ]
          }
        }
      ]
    }
    assert.deepStrictEqual(cacheControlOf(onOutput as never), { ttl: "1h" })
    assert.deepStrictEqual(cacheControlOf(onItem as never), { ttl: "1h" })
    // Not stored with the message: the breakpoint is placed per render (`BuildOptions.cacheHints`).
    const [stored] = Either.getOrThrow(fromModelMessages([onOutput]))
    assert.strictEqual(JSON.stringify(stored).includes("cacheControl"), false)
  })

  it("a provider prompt's cache hints stay where they sit (for toAnthropic), or apart for history; never lost", () => {
    const ephemeral = { type: "ephemeral", ttl: "1h" } as const
    const hint = { anthropic: { cacheControl: ephemeral } }
    const prompt = [
      { role: "system", content: "s", providerOptions: hint },
      { role: "user", content: [{ type: "text", text: "u", providerOptions: hint }] },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "a", toolName: "t", input: {} },
          { type: "tool-call", toolCallId: "b", toolName: "t", input: {} }
        ]
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "a", toolName: "t", output: { type: "text", value: "1" } },
          {
            type: "tool-result",
            toolCallId: "b",
            toolName: "t",
            output: { type: "text", value: "2", providerOptions: hint }
          }
        ],
        providerOptions: hint
      }
    ] as unknown as LanguageModelPrompt
    const kept = Either.getOrThrow(fromLanguageModelPrompt(prompt))
    const hintOf = (options: unknown) =>
      (options as { anthropic?: { cacheControl?: unknown } } | undefined)?.anthropic?.cacheControl
    assert.deepStrictEqual(hintOf(kept[0]?.providerOptions), ephemeral)
    assert.deepStrictEqual(hintOf(kept[1]?.parts[0]?.providerOptions), ephemeral)
    // The tool message is split per result: its message-level hint goes on the last piece only, and the
    // output's hint on that result (one breakpoint, where the AI SDK's Anthropic provider puts it).
    assert.strictEqual(kept.length, 5)
    assert.isUndefined(hintOf(kept[3]?.providerOptions))
    assert.deepStrictEqual(hintOf(kept[4]?.providerOptions), ephemeral)
    assert.deepStrictEqual(hintOf(kept[4]?.parts[0]?.providerOptions), ephemeral)
    // toAnthropic places them: the system block, the user text, the last tool_result (3 breakpoints).
    const sent = Either.getOrThrow(toAnthropic(kept))
    assert.strictEqual(JSON.stringify(sent).split('"cache_control"').length - 1, 3)
    assert.deepStrictEqual(sent.system[0], { type: "text", text: "s", cache_control: ephemeral })
    assert.deepStrictEqual(
      ((sent.messages[2]?.content ?? []) as ReadonlyArray<{ cache_control?: unknown }>).map(
        (block) => block.cache_control
      ),
      [undefined, ephemeral]
    )
    // Apart (the middleware, prepareStep): nothing on the messages; cacheControlOf reads each one.
    const apart = Either.getOrThrow(fromLanguageModelPrompt(prompt, { cacheHints: "apart" }))
    assert.strictEqual(JSON.stringify(apart).includes("cacheControl"), false)
    assert.deepStrictEqual(
      prompt.map((message) => cacheControlOf(message as never)),
      [{ ttl: "1h" }, { ttl: "1h" }, undefined, { ttl: "1h" }]
    )
    // Five hints kept: toAnthropic refuses the fifth by name, never sends it nor drops it.
    const five = Either.getOrThrow(
      fromLanguageModelPrompt(
        ["a", "b", "c", "d", "e"].map((text) => ({
          role: "user",
          content: [{ type: "text", text, providerOptions: hint }]
        })) as unknown as LanguageModelPrompt
      )
    )
    const refused = toAnthropic(five)
    assert.isTrue(Either.isLeft(refused))
    if (Either.isLeft(refused)) assert.include(refused.left.message, "a cache breakpoint beyond the API's 4")
  })
})

describe("ai 7's provider-specific `custom` parts (a streamed Anthropic answer's `anthropic.message_start`)", () => {
  // What ai 7 hands back on the next step after `streamText` with @ai-sdk/anthropic v4 (before the fix:
  // "unsupported assistant part", the second step of every streamed run refused).
  const streamed = {
    role: "assistant",
    content: [
      {
        type: "custom",
        kind: "anthropic.message_start",
        providerOptions: { anthropic: { id: "msg_1", model: "claude-sonnet-4-6", usage: { input_tokens: 599 } } }
      },
      { type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: { path: "a.ts" } }
    ]
  } as unknown as ModelMessage

  it("is kept as it came and given back in place, through ModelMessages and the language-model prompt", () => {
    const [message] = Either.getOrThrow(fromModelMessages([streamed]))
    assert.deepStrictEqual(message?.parts[0], {
      type: "custom",
      kind: "anthropic.message_start",
      providerOptions: { anthropic: { id: "msg_1", model: "claude-sonnet-4-6", usage: { input_tokens: 599 } } }
    })
    assert.deepStrictEqual(JSON.parse(JSON.stringify(roundTrip([streamed]))), JSON.parse(JSON.stringify([streamed])))
    const prompt = [streamed] as unknown as LanguageModelPrompt
    const back = Either.getOrThrow(Either.flatMap(fromLanguageModelPrompt(prompt), toLanguageModelPrompt))
    assert.deepStrictEqual(JSON.parse(JSON.stringify(back)), JSON.parse(JSON.stringify(prompt)))
  })

  it("a kind not of the form {provider}.{type} is refused, naming the part", () => {
    const bad = { role: "assistant", content: [{ type: "custom", kind: "nodot" }] } as unknown as ModelMessage
    const refused = fromModelMessages([bad])
    assert.isTrue(Either.isLeft(refused))
    if (Either.isLeft(refused)) {
      assert.include(refused.left.message, "content[0]")
      assert.include(refused.left.message, '"nodot"')
    }
  })

  it("the native builders send none of it (the AI SDK provider decides its wire form)", () => {
    const messages = Either.getOrThrow(fromModelMessages([user, streamed]))
    const sent = Either.getOrThrow(toAnthropic(messages))
    assert.notInclude(JSON.stringify(sent), "message_start")
    assert.include(JSON.stringify(sent), "tool_use")
  })
})
