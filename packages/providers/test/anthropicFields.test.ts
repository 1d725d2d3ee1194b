/**
 * Anthropic Messages conversions keep or refuse by name, never drop (issue 35, build item 5): cache
 * hints wherever the frameworks put them (a message, a block, a tool result, one item of a tool
 * result's content), `sendReasoning`, the AI SDK's form of citations and of provider-executed results,
 * and the request fields `fromAnthropic` used to drop (`cache_control`, document `context` and
 * `citations` settings). What has no Anthropic form is an `AdapterError` naming the part.
 */
import { Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages"
import * as Either from "effect/Either"
import { fromAnthropic, toAnthropic } from "../src/adapters/anthropic.js"

const ephemeral = { type: "ephemeral" } as const
const hint = (cacheControl: Message.JsonValue = ephemeral): Message.ProviderOptions => ({ anthropic: { cacheControl } })
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))
const ok = <A>(result: Either.Either<A, { readonly message: string }>): A =>
  Either.isRight(result) ? result.right : assert.fail(result.left.message)
const refusal = (result: Either.Either<unknown, { readonly message: string }>): string =>
  Either.isLeft(result) ? result.left.message : assert.fail("expected an AdapterError")

describe("toAnthropic: cache hints wherever the frameworks put them", () => {
  it("on a system message, a message (its last block), a block, a tool call", () => {
    const out = ok(
      toAnthropic([
        { role: "system", parts: [Message.text("Be brief.")], providerOptions: hint() },
        { role: "user", parts: [Message.text("a"), Message.text("b")], providerOptions: hint() },
        {
          role: "assistant",
          parts: [
            { ...Message.text("calling"), providerOptions: hint({ type: "ephemeral", ttl: "1h" }) },
            { ...Message.toolCall("c1", "f", {}), providerOptions: hint() }
          ]
        }
      ])
    )
    assert.deepStrictEqual(plain(out), {
      system: [{ type: "text", text: "Be brief.", cache_control: ephemeral }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "a" },
            { type: "text", text: "b", cache_control: ephemeral }
          ]
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "calling", cache_control: { type: "ephemeral", ttl: "1h" } },
            { type: "tool_use", id: "c1", name: "f", input: {}, cache_control: ephemeral }
          ]
        }
      ]
    })
  })

  it("on a tool result, and on one item of a tool result's content", () => {
    const out = ok(
      toAnthropic([
        { role: "assistant", parts: [Message.toolCall("c1", "f", {}), Message.toolCall("c2", "g", {})] },
        { role: "tool", parts: [{ ...Message.toolResult("c1", "one"), providerOptions: hint() }] },
        {
          role: "tool",
          parts: [
            Message.toolResultParts("c2", [
              { ...Message.text("first"), providerOptions: hint() },
              Message.imageUrl("https://example.com/a.png")
            ])
          ]
        }
      ])
    )
    assert.deepStrictEqual(plain(out.messages[1]), {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "c1", content: "one", cache_control: ephemeral },
        {
          type: "tool_result",
          tool_use_id: "c2",
          content: [
            { type: "text", text: "first", cache_control: ephemeral },
            { type: "image", source: { type: "url", url: "https://example.com/a.png" } }
          ]
        }
      ]
    })
  })

  it("a fifth breakpoint is refused, naming the part", () => {
    const user = (text: string): Message.MessageInput => ({
      role: "user",
      parts: [{ ...Message.text(text), providerOptions: hint() }]
    })
    assert.include(refusal(toAnthropic(["a", "b", "c", "d", "e"].map(user))), "Anthropic message 4 parts[0]")
  })

  it("a hint on thinking is refused (the API caches thinking only with its turn)", () => {
    const result = toAnthropic([
      { role: "assistant", parts: [{ ...Message.reasoning("hm", { signature: "sig" }), providerOptions: hint() }] }
    ])
    assert.include(refusal(result), "Anthropic message 0 parts[0]")
  })
})

describe("toAnthropic: sendReasoning, citations, names, unknown options", () => {
  const thinking: Message.MessageInput = {
    role: "assistant",
    parts: [
      Message.reasoning("hm", { signature: "sig" }),
      Message.reasoning("", { redactedData: "xyz" }),
      Message.text("answer")
    ]
  }

  it("sendReasoning false omits thinking and redacted thinking; true (the default) sends them", () => {
    assert.deepStrictEqual(plain(ok(toAnthropic([thinking], { sendReasoning: false })).messages), [
      { role: "assistant", content: [{ type: "text", text: "answer" }] }
    ])
    assert.strictEqual(ok(toAnthropic([thinking])).messages[0]?.content.length, 3)
  })

  it("the AI SDK's form of citations (providerOptions.anthropic.citations) is sent as citations", () => {
    const citation = {
      type: "web_search_result_location",
      url: "https://x",
      title: "X",
      cited_text: "c",
      encrypted_index: "e"
    }
    const out = ok(
      toAnthropic([
        {
          role: "assistant",
          parts: [{ ...Message.text("cited"), providerOptions: { anthropic: { citations: [citation] } } }]
        },
        { role: "user", parts: [Message.text("more")] }
      ])
    )
    assert.deepStrictEqual(plain(out.messages[0]), {
      role: "assistant",
      content: [{ type: "text", text: "cited", citations: [citation] }]
    })
  })

  it("an Anthropic option it does not know is refused by name; other providers' options are theirs", () => {
    const unknown = toAnthropic([
      { role: "user", parts: [{ ...Message.text("x"), providerOptions: { anthropic: { somethingNew: 1 } } }] }
    ])
    assert.include(refusal(unknown), "Anthropic message 0 parts[0].providerOptions.anthropic.somethingNew")
    const other = toAnthropic([
      { role: "user", parts: [{ ...Message.text("x"), providerOptions: { openai: { itemId: "msg_1" } } }] }
    ])
    assert.isTrue(Either.isRight(other))
  })

  it("a speaker's name has no Anthropic field: refused, unless it is the called tool's name", () => {
    assert.include(
      refusal(toAnthropic([{ role: "user", parts: [Message.text("hi")], name: "alice" }])),
      "Anthropic message 0 name"
    )
    const call: Message.MessageInput = { role: "assistant", parts: [Message.toolCall("c1", "search", {})] }
    assert.isTrue(Either.isRight(toAnthropic([call, { ...Message.tool("c1", "ok"), name: "search" }])))
  })
})

describe("toAnthropic: the AI SDK's provider-executed results as Anthropic blocks", () => {
  it("a web_search call and its json result", () => {
    const out = ok(
      toAnthropic([
        {
          role: "assistant",
          parts: [
            Message.serverToolCall("anthropic", "srvtoolu_1", "web_search", { query: "news" }),
            Message.serverToolResult("anthropic", "srvtoolu_1", "tool-result", {
              type: "json",
              value: [
                { url: "https://a", title: "A", pageAge: null, encryptedContent: "enc", type: "web_search_result" }
              ]
            })
          ]
        }
      ])
    )
    assert.deepStrictEqual(plain(out.messages[0]?.content), [
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "news" } },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_1",
        content: [{ url: "https://a", title: "A", page_age: null, encrypted_content: "enc", type: "web_search_result" }]
      }
    ])
  })

  it("a result of a tool it has no block for is refused, naming the part", () => {
    const result = toAnthropic([
      {
        role: "assistant",
        parts: [
          Message.serverToolCall("anthropic", "s1", "mystery", {}),
          Message.serverToolResult("anthropic", "s1", "tool-result", { type: "json", value: {} })
        ]
      }
    ])
    assert.include(refusal(result), "Anthropic message 0 parts[1]")
  })
})

describe("system messages keep or refuse too", () => {
  it("toAnthropic: an image in a system message, or system text with citations, is refused; a part's hint marks the block", () => {
    const image = toAnthropic([{ role: "system", parts: [Message.text("a"), Message.imageUrl("https://x/a.png")] }])
    assert.include(refusal(image), "Anthropic message 0 parts[1]")
    const cited = toAnthropic([
      { role: "system", parts: [{ ...Message.text("a"), citations: [{ type: "char_location", cited_text: "a" }] }] }
    ])
    assert.include(refusal(cited), "Anthropic message 0 parts[0]")
    const hinted = ok(toAnthropic([{ role: "system", parts: [{ ...Message.text("a"), providerOptions: hint() }] }]))
    assert.deepStrictEqual(plain(hinted.system), [{ type: "text", text: "a", cache_control: ephemeral }])
  })

  it("fromAnthropic: citations on a system block are refused, not dropped", () => {
    const system = [
      {
        type: "text" as const,
        text: "a",
        citations: [
          {
            type: "char_location" as const,
            cited_text: "a",
            document_index: 0,
            document_title: null,
            start_char_index: 0,
            end_char_index: 1
          }
        ]
      }
    ]
    assert.include(refusal(fromAnthropic([], system)), "system[0]")
  })
})

describe("fromAnthropic keeps the request fields it used to drop", () => {
  it("cache_control on a block and on a system block, document context and citations: kept and given back", () => {
    const messages: Array<MessageParam> = [
      {
        role: "user",
        content: [
          {
            type: "document",
            source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
            title: "Report",
            context: "Q3 numbers",
            citations: { enabled: true },
            cache_control: { type: "ephemeral" }
          },
          { type: "text", text: "Summarise.", cache_control: { type: "ephemeral", ttl: "1h" } }
        ]
      }
    ]
    const system = [{ type: "text" as const, text: "Be brief.", cache_control: { type: "ephemeral" as const } }]
    const inputs = ok(fromAnthropic(messages, system))
    const back = ok(toAnthropic(inputs))
    assert.deepStrictEqual(plain(back), plain({ system, messages }))
  })

  it("a block field it does not model is refused by name", () => {
    const messages = [
      { role: "user", content: [{ type: "text", text: "x", mystery: true }] }
    ] as unknown as Array<MessageParam>
    assert.include(refusal(fromAnthropic(messages)), "Anthropic message 0 content[0].mystery")
  })
})
