/**
 * Content parts (issue 23): round trips per part kind and per adapter, the builders' rendering of tool
 * results made of parts and of provider-executed tools, and the five bugs, each with the case that
 * failed before the fix.
 */
import { Message, TokenCounter, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import { AIMessage } from "@langchain/core/messages"
import * as Either from "effect/Either"
import {
  fromLanguageModelPrompt,
  fromModelMessages,
  toLanguageModelPrompt,
  toModelMessages
} from "../src/adapters/aiSdk.js"
import { fromAnthropic, toAnthropic } from "../src/adapters/anthropic.js"
import { fromLangChain, toLangChain } from "../src/adapters/langchain.js"
import { fromAgentItems, fromOpenAI, toAgentItems, toOpenAI } from "../src/adapters/openai.js"
import { AnthropicCtx, OpenAICtx } from "../src/index.js"
import type { AdapterError } from "../src/AdapterError.js"

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64")
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==" // 1×1 PNG

type Trip = (
  messages: ReadonlyArray<Message.MessageInput>
) => Either.Either<ReadonlyArray<Message.MessageInput>, AdapterError>

const adapters: Record<"aiSdk" | "langchain" | "openai" | "anthropic", Trip> = {
  aiSdk: (messages) =>
    Either.flatMap(toModelMessages(messages), (out) => fromModelMessages(out, { provider: "anthropic" })),
  langchain: (messages) => Either.flatMap(toLangChain(messages), fromLangChain),
  openai: (messages) => Either.flatMap(toOpenAI(messages), fromOpenAI),
  anthropic: (messages) =>
    Either.flatMap(toAnthropic(messages), ({ messages: rest, system }) => fromAnthropic(rest, system))
}

type Outcome =
  | "lossless"
  | { readonly refused: string }
  | { readonly rule: string; readonly expect: ReadonlyArray<Message.MessageInput> }

const call = Message.toolCall("c1", "read", { path: "a.png" })
const user = (...parts: ReadonlyArray<Message.Part>): Message.MessageInput => ({ role: "user", parts })
const assistant = (...parts: ReadonlyArray<Message.Part>): Message.MessageInput => ({ role: "assistant", parts })
const tool = (...parts: ReadonlyArray<Message.Part>): Message.MessageInput => ({ role: "tool", parts })
const cited: Message.TextPart = {
  ...Message.text("Paris is the capital."),
  citations: [{ type: "char_location", cited_text: "Paris", document_index: 0, start_char_index: 0, end_char_index: 5 }]
}
const signed = Message.reasoning("think", { signature: "sig==" })
const redacted = Message.reasoning("", { redactedData: "opaque" })
const responsesReasoning = Message.reasoning("sum", { itemId: "rs_1", encryptedContent: "enc" })
const mediaResult = Message.toolResultParts("c1", [Message.text("the file:"), Message.imageBase64("image/png", png)])
const serverCall = Message.serverToolCall("anthropic", "srv_1", "web_search", { query: "ctxlog" })
const serverResult = Message.serverToolResult("anthropic", "srv_1", "web_search_tool_result", [
  { type: "web_search_result", url: "https://example.com", title: "Example", encrypted_content: "e" }
])

/** Each part kind, in the messages it lives in, and what each adapter does with it. */
const kinds: ReadonlyArray<{
  readonly kind: string
  readonly messages: ReadonlyArray<Message.MessageInput>
  readonly outcomes: Record<keyof typeof adapters, Outcome>
}> = [
  {
    kind: "text",
    messages: [user(Message.text("hi")), assistant(Message.text("hello"))],
    outcomes: { aiSdk: "lossless", langchain: "lossless", openai: "lossless", anthropic: "lossless" }
  },
  {
    kind: "text with citations",
    messages: [user(Message.text("capital?")), assistant(cited)],
    outcomes: {
      aiSdk: { refused: "parts[0]" },
      langchain: { refused: "parts[0]" },
      openai: { refused: "parts[0]" },
      anthropic: "lossless"
    }
  },
  {
    kind: "signed and redacted reasoning",
    messages: [user(Message.text("q")), assistant(signed, redacted, Message.text("a"))],
    outcomes: {
      aiSdk: "lossless",
      langchain: "lossless",
      openai: {
        rule: "Chat Completions takes no reasoning back: it is not sent",
        expect: [user(Message.text("q")), assistant(Message.text("a"))]
      },
      anthropic: "lossless"
    }
  },
  {
    kind: "Responses reasoning (item id, encrypted content)",
    messages: [user(Message.text("q")), assistant(responsesReasoning, Message.text("a"))],
    outcomes: {
      aiSdk: "lossless",
      langchain: { refused: "parts[0]" },
      openai: {
        rule: "Chat Completions takes no reasoning back: it is not sent",
        expect: [user(Message.text("q")), assistant(Message.text("a"))]
      },
      anthropic: {
        rule: "Anthropic takes back only its own signed or redacted thinking",
        expect: [user(Message.text("q")), assistant(Message.text("a"))]
      }
    }
  },
  {
    kind: "images (base64 with detail where kept, URL)",
    messages: [
      user(Message.text("see"), Message.imageBase64("image/png", png), Message.imageUrl("https://example.com/a.jpg"))
    ],
    outcomes: { aiSdk: "lossless", langchain: "lossless", openai: "lossless", anthropic: "lossless" }
  },
  {
    kind: "documents (PDF with title, plain text, URL; Chat Completions takes no document URL)",
    messages: [
      user(
        Message.documentBase64("application/pdf", b64("%PDF-1.4"), { title: "spec.pdf" }),
        Message.documentBase64("text/plain", b64("notes"), { title: "notes" }),
        Message.documentUrl("https://example.com/a.pdf")
      )
    ],
    outcomes: {
      aiSdk: "lossless",
      langchain: "lossless",
      openai: { refused: "parts[2]" },
      anthropic: "lossless"
    }
  },
  {
    kind: "tool call and text result (error flag)",
    messages: [user(Message.text("go")), assistant(call), tool(Message.toolResult("c1", "denied", true))],
    outcomes: { aiSdk: "lossless", langchain: "lossless", openai: "lossless", anthropic: "lossless" }
  },
  {
    kind: "tool result made of parts",
    messages: [user(Message.text("go")), assistant(call), tool(mediaResult)],
    outcomes: { aiSdk: "lossless", langchain: "lossless", openai: { refused: "parts[0]" }, anthropic: "lossless" }
  },
  {
    kind: "provider-executed tool call and result",
    messages: [user(Message.text("search")), assistant(serverCall, serverResult, Message.text("found"))],
    outcomes: {
      aiSdk: "lossless",
      langchain: { refused: "parts[0]" },
      openai: { refused: "parts[0]" },
      anthropic: "lossless"
    }
  },
  {
    kind: "tool approvals (request, grant, denial)",
    messages: [
      user(Message.text("delete it")),
      assistant(Message.toolCall("c1", "rm", { path: "x" }), Message.toolApprovalRequest("ap1", "c1")),
      tool(Message.toolApprovalResponse("ap1", false, "not now")),
      tool(Message.toolResult("c1", "not now", true))
    ],
    outcomes: {
      aiSdk: "lossless",
      langchain: { refused: "parts[1]" },
      openai: {
        rule: "approvals steer the loop and are not model input: Chat Completions is sent none",
        expect: [
          user(Message.text("delete it")),
          assistant(Message.toolCall("c1", "rm", { path: "x" })),
          tool(Message.toolResult("c1", "not now", true))
        ]
      },
      anthropic: {
        rule: "approvals steer the loop and are not model input: Anthropic is sent none",
        expect: [
          user(Message.text("delete it")),
          assistant(Message.toolCall("c1", "rm", { path: "x" })),
          tool(Message.toolResult("c1", "not now", true))
        ]
      }
    }
  }
]

const shape = (messages: ReadonlyArray<Message.MessageInput>) =>
  messages.map((message) => ({ role: message.role, parts: message.parts }))

describe("round trips per part kind and per adapter", () => {
  for (const { kind, messages, outcomes } of kinds) {
    for (const [name, trip] of Object.entries(adapters)) {
      const outcome = outcomes[name as keyof typeof adapters]
      const label =
        outcome === "lossless" ? "lossless" : "refused" in outcome ? `refused at ${outcome.refused}` : outcome.rule
      it(`${kind} via ${name}: ${label}`, () => {
        const back = trip(messages)
        if (outcome !== "lossless" && "refused" in outcome) {
          if (Either.isRight(back)) return assert.fail(`expected a refusal, got ${JSON.stringify(back.right)}`)
          assert.strictEqual(back.left._tag, "AdapterError")
          assert.strictEqual(back.left.path, outcome.refused)
          return
        }
        if (Either.isLeft(back)) return assert.fail(back.left.message)
        assert.deepStrictEqual(shape(back.right), shape(outcome === "lossless" ? messages : outcome.expect))
      })
    }
  }

  it("LangChain keeps message ids and separate text blocks", () => {
    const messages: ReadonlyArray<Message.MessageInput> = [
      { role: "user", id: "u1", parts: [Message.text("one"), Message.text("two")] },
      { role: "assistant", id: "a1", parts: [signed, Message.text("x"), Message.text("y")] }
    ]
    const out = Either.getOrThrow(toLangChain(messages))
    assert.deepStrictEqual(
      out.map((message) => message.id),
      ["u1", "a1"]
    )
    assert.deepStrictEqual(out[0]?.content, [
      { type: "text", text: "one" },
      { type: "text", text: "two" }
    ])
    assert.deepStrictEqual(Either.getOrThrow(fromLangChain(out)), messages)
  })
})

const windowOf = (messages: ReadonlyArray<Message.MessageInput>): Window.Window => {
  const counter = TokenCounter.heuristic()
  return Window.replay(
    messages.map((input, index) => ({
      _tag: "MessageAppended" as const,
      id: `e${index}`,
      message: {
        id: input.id ?? `m${index}`,
        role: input.role,
        kind: input.kind ?? "chat",
        parts: input.parts,
        tokens: counter.countMessage(input)
      }
    }))
  )
}

describe("builders render content parts", () => {
  const anthropic = AnthropicCtx.make({ model: "claude-sonnet-4-5", promptCaching: false })
  const openai = OpenAICtx.make({ model: "gpt-4o" })
  const responses = OpenAICtx.makeResponses({ model: "gpt-4o" })

  it("Anthropic: a tool result made of parts is a tool_result content array", () => {
    const built = anthropic.build(windowOf([user(Message.text("go")), assistant(call), tool(mediaResult)]))
    if (Either.isLeft(built)) return assert.fail(built.left.message)
    const result = built.right.request.messages[2]?.content[0]
    assert.deepStrictEqual(result, {
      type: "tool_result",
      tool_use_id: "c1",
      content: [
        { type: "text", text: "the file:" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: png } }
      ]
    })
  })

  it("OpenAI Responses: a tool result made of parts is an output of input parts; Chat Completions names the media", () => {
    const window = windowOf([user(Message.text("go")), assistant(call), tool(mediaResult)])
    const built = responses.build(window)
    if (Either.isLeft(built)) return assert.fail(built.left.message)
    const output = built.right.request.input.find((item) => item.type === "function_call_output")
    assert.deepStrictEqual(output, {
      type: "function_call_output",
      call_id: "c1",
      output: [
        { type: "input_text", text: "the file:" },
        { type: "input_image", image_url: `data:image/png;base64,${png}`, detail: "auto" }
      ]
    })
    const chat = openai.build(window)
    if (Either.isLeft(chat)) return assert.fail(chat.left.message)
    const messages = chat.right.request.messages
    assert.deepStrictEqual(
      messages.find((message) => message.role === "tool"),
      { role: "tool", tool_call_id: "c1", content: "the file:\n[image: image/png]" }
    )
  })

  it("a pruned tool result renders its new content, not the parts it was made of", () => {
    const pruned: Message.ToolResultPart = { ...mediaResult, content: "[pruned]" }
    const built = anthropic.build(windowOf([user(Message.text("go")), assistant(call), tool(pruned)]))
    if (Either.isLeft(built)) return assert.fail(built.left.message)
    assert.deepStrictEqual(built.right.request.messages[2]?.content[0], {
      type: "tool_result",
      tool_use_id: "c1",
      content: "[pruned]"
    })
  })

  it("Anthropic sends its own server tool blocks back in order, with citations", () => {
    const built = anthropic.build(
      windowOf([user(Message.text("search")), assistant(serverCall, serverResult, cited), user(Message.text("thanks"))])
    )
    if (Either.isLeft(built)) return assert.fail(built.left.message)
    assert.deepStrictEqual(built.right.request.messages[1]?.content, [
      { type: "server_tool_use", id: "srv_1", name: "web_search", input: { query: "ctxlog" } },
      { type: "web_search_tool_result", tool_use_id: "srv_1", content: serverResult.content },
      { type: "text", text: cited.text, citations: cited.citations ?? [] }
    ])
  })

  it("tool-result media is counted by the media formula", () => {
    const counter = TokenCounter.heuristic()
    const plain = counter.countMessage(tool(Message.toolResult("c1", "the file:")))
    const withImage = counter.countMessage(tool(mediaResult))
    assert.isAbove(withImage - plain, 0)
  })
})

describe("the five bugs", () => {
  it("fromModelMessages keeps reasoning parts and their provider data", () => {
    const back = fromModelMessages([
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "think", providerOptions: { anthropic: { signature: "sig==" } } },
          { type: "text", text: "answer" }
        ]
      }
    ])
    assert.deepStrictEqual(Either.getOrThrow(back), [
      { role: "assistant", parts: [Message.reasoning("think", { signature: "sig==" }), Message.text("answer")] }
    ])
  })

  it("AnthropicCtx refuses a video/mp4 image or document with an InvalidRequest naming the part", () => {
    const anthropic = AnthropicCtx.make({ model: "claude-sonnet-4-5" })
    for (const part of [Message.imageBase64("video/mp4", "AAAA"), Message.documentBase64("video/mp4", "AAAA")]) {
      const built = anthropic.build(windowOf([{ role: "user", id: "u1", parts: [Message.text("look"), part] }]))
      if (Either.isRight(built)) return assert.fail(`built ${JSON.stringify(built.right.request.messages)}`)
      assert.strictEqual(built.left._tag, "InvalidRequest")
      assert.strictEqual(built.left.messageId, "u1")
      assert.strictEqual(built.left.partIndex, 1)
      assert.include(built.left.detail, "video/mp4")
    }
    const inResult = anthropic.build(
      windowOf([
        user(Message.text("go")),
        assistant(call),
        tool(Message.toolResultParts("c1", [Message.text("clip"), Message.imageBase64("video/mp4", "AAAA")]))
      ])
    )
    assert.isTrue(Either.isLeft(inResult) && inResult.left.toolCallId === "c1")
  })

  it("toAnthropic keeps a document's media type and title", () => {
    const out = Either.getOrThrow(
      toAnthropic([
        user(
          Message.documentBase64("text/plain", b64("hello"), { title: "greeting" }),
          Message.documentBase64("application/pdf", b64("%PDF"), { title: "spec" })
        )
      ])
    )
    assert.deepStrictEqual(out.messages[0]?.content, [
      { type: "document", source: { type: "text", media_type: "text/plain", data: "hello" }, title: "greeting" },
      { type: "document", source: { type: "base64", media_type: "application/pdf", data: b64("%PDF") }, title: "spec" }
    ])
    const video = toAnthropic([user(Message.documentBase64("video/mp4", "AAAA"))])
    assert.isTrue(Either.isLeft(video) && video.left.path === "parts[0]")
  })

  it("the LangChain adapter keeps text blocks, message ids and reasoning", () => {
    const messages: ReadonlyArray<Message.MessageInput> = [
      {
        role: "assistant",
        id: "a1",
        parts: [Message.reasoning("plan", { signature: "s" }), Message.text("a"), Message.text("b")]
      }
    ]
    const [ai] = Either.getOrThrow(toLangChain(messages))
    assert.isTrue(ai !== undefined && AIMessage.isInstance(ai))
    assert.strictEqual(ai?.id, "a1")
    assert.deepStrictEqual(ai?.content, [
      { type: "thinking", thinking: "plan", signature: "s" },
      { type: "text", text: "a" },
      { type: "text", text: "b" }
    ])
    assert.deepStrictEqual(Either.getOrThrow(fromLangChain([ai as AIMessage])), messages)
  })

  it("provider-executed tool calls stay server parts, never client tool calls, and other providers refuse them", () => {
    const back = Either.getOrThrow(
      fromModelMessages(
        [
          {
            role: "assistant",
            content: [
              {
                type: "tool-call",
                toolCallId: "srv_1",
                toolName: "web_search",
                input: { q: "x" },
                providerExecuted: true
              },
              { type: "tool-result", toolCallId: "srv_1", toolName: "web_search", output: { type: "json", value: [] } },
              { type: "text", text: "done" }
            ]
          }
        ],
        { provider: "openai" }
      )
    )
    const parts = back[0]?.parts ?? []
    assert.deepStrictEqual(
      parts.map((part) => part.type),
      ["server_tool_call", "server_tool_result", "text"]
    )
    assert.strictEqual(Message.toolCallsOf({ parts }).length, 0)
    const window = windowOf([user(Message.text("search")), { role: "assistant", id: "a1", parts }])
    const anthropic = AnthropicCtx.make({ model: "claude-sonnet-4-5" }).build(window)
    assert.isTrue(Either.isLeft(anthropic) && anthropic.left.messageId === "a1" && anthropic.left.partIndex === 0)
    const chat = OpenAICtx.make({ model: "gpt-4o" }).build(window)
    assert.isTrue(Either.isLeft(chat) && chat.left.detail.includes("server_tool_call"))
  })
})

describe("AI SDK language-model prompt (LanguageModelV3Prompt) ⇄ messages", () => {
  it("round-trips every part kind the AI SDK carries; images travel as file parts", () => {
    const messages: ReadonlyArray<Message.MessageInput> = [
      { role: "system", parts: [Message.text("be brief")] },
      user(
        Message.text("see"),
        Message.imageBase64("image/png", png),
        Message.documentBase64("application/pdf", "JVBERi0=", { title: "spec" })
      ),
      assistant(
        signed,
        Message.text("reading"),
        call,
        serverCall,
        serverResult,
        Message.toolApprovalRequest("ap1", "c1")
      ),
      tool(Message.toolApprovalResponse("ap1", true)),
      tool(mediaResult)
    ]
    const prompt = Either.getOrThrow(toLanguageModelPrompt(messages))
    const userParts = prompt[1]?.role === "user" ? prompt[1].content : []
    assert.deepStrictEqual(
      userParts.map((part) => part.type),
      ["text", "file", "file"]
    )
    const back = Either.getOrThrow(fromLanguageModelPrompt(prompt, { provider: "anthropic" }))
    assert.deepStrictEqual(shape(back), shape(messages))
  })

  it("reads a prompt as a middleware receives it: file bytes, provider-executed calls", () => {
    const back = Either.getOrThrow(
      fromLanguageModelPrompt(
        [
          { role: "system", content: "sys" },
          {
            role: "user",
            content: [
              { type: "file", data: new Uint8Array([137, 80, 78, 71]), mediaType: "image/png" } as {
                readonly type: string
              }
            ]
          },
          {
            role: "assistant",
            content: [
              { type: "tool-call", toolCallId: "s1", toolName: "web_search", input: {}, providerExecuted: true } as {
                readonly type: string
              }
            ]
          }
        ],
        { provider: "openai" }
      )
    )
    assert.deepStrictEqual(back[1]?.parts, [Message.imageBase64("image/png", "iVBORw==")])
    assert.deepStrictEqual(back[2]?.parts, [Message.serverToolCall("openai", "s1", "web_search", {})])
  })
})

describe("OpenAI Agents SDK items ⇄ messages", () => {
  it("round-trips messages, reasoning, function calls and results (error flag, parts), hosted calls, ids", () => {
    const messages: ReadonlyArray<Message.MessageInput> = [
      { role: "system", id: "s1", parts: [Message.text("be brief")] },
      {
        role: "user",
        id: "u1",
        parts: [Message.text("see"), Message.imageBase64("image/png", png, { detail: "low" })]
      },
      {
        role: "assistant",
        id: "a1",
        parts: [
          responsesReasoning,
          Message.text("searching"),
          Message.serverToolCall("openai", "ws_1", "web_search", '{"query":"x"}'),
          Message.serverToolResult("openai", "ws_1", "hosted_tool_call", "3 results"),
          call
        ]
      },
      tool(Message.toolResult("c1", "no such file", true)),
      { role: "assistant", id: "a2", parts: [Message.toolCall("c2", "read", { path: "b.png" })] },
      tool(mediaResult)
    ]
    const items = Either.getOrThrow(toAgentItems(messages))
    assert.deepStrictEqual(
      items.map((item) => item.type ?? "message"),
      [
        "message",
        "message",
        "reasoning",
        "message",
        "hosted_tool_call",
        "function_call",
        "function_call_result",
        "function_call",
        "function_call_result"
      ]
    )
    // One message per item (issue 35: items are never merged), each keeping its item: back to items
    // exactly, and the parts of each assistant turn in the same order as the ctxlog message had them.
    const back = Either.getOrThrow(fromAgentItems(items))
    assert.strictEqual(back.length, items.length)
    assert.deepStrictEqual(Either.getOrThrow(toAgentItems(back)), items)
    const strip = (parts: ReadonlyArray<Message.Part>) =>
      parts.map((part) => {
        const { providerOptions: _options, ...bare } = part
        return bare
      })
    assert.deepStrictEqual(
      back.slice(2, 5).flatMap((message) => strip(message.parts)),
      messages[2]?.parts.slice(0, 4)
    )
    // No item is given an id ctxlog made (issue 35: the Responses API rejects them); a reasoning
    // part's item id and a hosted call's id are the provider's own.
    assert.deepStrictEqual(
      items.map((item) => item.id),
      [undefined, undefined, "rs_1", undefined, "ws_1", undefined, undefined, undefined, undefined]
    )
  })

  it("refuses what Agents items cannot carry, naming the part", () => {
    const refused = toAgentItems([assistant(Message.text("a"), signed)])
    assert.isTrue(Either.isLeft(refused) && refused.left.path === "parts[1]")
    const approvals = toAgentItems([assistant(call, Message.toolApprovalRequest("ap", "c1"))])
    assert.isTrue(Either.isLeft(approvals) && approvals.left.path === "parts[1]")
    const anthropicServer = toAgentItems([assistant(serverCall)])
    assert.isTrue(Either.isLeft(anthropicServer) && anthropicServer.left.path === "parts[0]")
  })
})
